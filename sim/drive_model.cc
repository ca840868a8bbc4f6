#include "sim/drive_model.h"

#include <algorithm>
#include <cmath>

namespace granary::sim {

DriveTiming DriveTiming::from_profile(const models::DriveProfile& drive) {
  DriveTiming t;
  t.read_latency_s = drive.read_latency_us * 1e-6;
  t.write_latency_s = drive.write_latency_us * 1e-6;
  if (drive.read_kiops > 0 && drive.write_kiops > 0) {
    const double read_iops = drive.read_kiops * 1e3;
    const double write_iops = drive.write_kiops * 1e3;
    t.units = std::max(1, static_cast<int>(std::lround(read_iops * t.read_latency_s)));
    t.read_hold_s = t.units / read_iops;
    t.write_hold_s = t.units / write_iops;
  }
  return t;
}

DriveQueue::DriveQueue(DriveTiming timing) : timing_(timing) {
  for (int i = 0; i < timing_.units; ++i) free_at_.push(0.0);
}

double DriveQueue::admit(double now_s, bool write) {
  ++operations_;
  const double latency = (write ? timing_.write_latency_s : timing_.read_latency_s) * slowdown_;
  if (timing_.units == 0) return now_s + latency;
  const double start = std::max(now_s, free_at_.top());
  free_at_.pop();
  free_at_.push(start + (write ? timing_.write_hold_s : timing_.read_hold_s) * slowdown_);
  queued_s_ += start - now_s;
  return start + latency;
}

}  // namespace granary::sim

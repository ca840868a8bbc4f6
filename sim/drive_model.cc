#include "sim/drive_model.h"

#include <algorithm>
#include <cmath>

#include "engine/status.h"

namespace granary::sim {

namespace {
constexpr double kRatedOpBytes = 4096;  // the IOPS and QD1 figures are for 4 KiB operations
}  // namespace

double HeadTiming::positioning_s(double queue_depth, bool write) const {
  const double t1 = write ? write_positioning_qd1_s : read_positioning_qd1_s;
  const double tq = write ? write_positioning_rated_s : read_positioning_rated_s;
  const double q = std::max(1.0, queue_depth);
  const double depth = rated_queue_depth;
  if (q >= depth) return tq;
  return tq + (t1 - tq) * 2 * (depth - q) / ((q + 1) * (depth - 1));
}

DriveTiming DriveTiming::from_profile(const models::DriveProfile& drive) {
  DriveTiming t;
  t.read_latency_s = drive.read_latency_us * 1e-6;
  t.write_latency_s = drive.write_latency_us * 1e-6;
  if (drive.kind == models::DriveKind::kHdd) {
    const double read_iops = drive.read_kiops * 1e3;
    const double write_iops = drive.write_kiops * 1e3;
    HeadTiming& h = t.head;
    h.rated_queue_depth = drive.queue_depth;
    h.read_bytes_per_s = drive.read_gbytes_per_s * 1e9;
    h.write_bytes_per_s = drive.write_gbytes_per_s * 1e9;
    GRANARY_CHECK(h.rated_queue_depth >= 2 && read_iops > 0 && write_iops > 0 &&
                  h.read_bytes_per_s > 0 && h.write_bytes_per_s > 0);
    h.read_positioning_qd1_s = t.read_latency_s - kRatedOpBytes / h.read_bytes_per_s;
    h.read_positioning_rated_s = 1 / read_iops - kRatedOpBytes / h.read_bytes_per_s;
    h.write_positioning_qd1_s = t.write_latency_s - kRatedOpBytes / h.write_bytes_per_s;
    h.write_positioning_rated_s = 1 / write_iops - kRatedOpBytes / h.write_bytes_per_s;
    GRANARY_CHECK(h.read_positioning_rated_s > 0 &&
                  h.read_positioning_qd1_s >= h.read_positioning_rated_s &&
                  h.write_positioning_rated_s > 0 &&
                  h.write_positioning_qd1_s >= h.write_positioning_rated_s);
    t.hard_disk = true;
    t.units = 1;
    t.read_hold_s = 1 / read_iops;
    t.write_hold_s = 1 / write_iops;
    return t;
  }
  if (const int c = drive.littles_law_units(); c > 0) {
    // c units held c / R each reach the rated IOPS; queue_depth may leave fewer of them.
    t.units = drive.command_units();
    t.read_hold_s = c / (drive.read_kiops * 1e3);
    t.write_hold_s = c / (drive.write_kiops * 1e3);
  }
  return t;
}

DriveTiming DriveTiming::sliced(double s) const {
  GRANARY_CHECK(s > 0 && s <= 1);
  DriveTiming t = *this;
  t.share = share * s;
  t.read_hold_s /= s;
  t.write_hold_s /= s;
  return t;
}

DriveQueue::DriveQueue(DriveTiming timing) : timing_(timing) {
  if (!timing_.hard_disk) {
    free_at_.assign(static_cast<size_t>(std::max(0, timing_.units)), 0.0);
  }
}

double DriveQueue::admit(double now_s, bool write, uint64_t bytes) {
  ++operations_;
  if (timing_.hard_disk) return admit_head(now_s, write, bytes);
  const double latency = (write ? timing_.write_latency_s : timing_.read_latency_s) * slowdown_;
  if (timing_.units == 0) return now_s + latency;
  // The unit that frees first (the heap's front), held from when it is free.
  std::pop_heap(free_at_.begin(), free_at_.end(), std::greater<double>());
  const double start = std::max(now_s, free_at_.back());
  const double hold = (write ? timing_.write_hold_s : timing_.read_hold_s) * slowdown_;
  free_at_.back() = start + hold;
  std::push_heap(free_at_.begin(), free_at_.end(), std::greater<double>());
  hold_admitted_s_ += hold;
  queued_s_ += start - now_s;
  return start + latency;
}

double DriveQueue::admit_head(double now_s, bool write, uint64_t bytes) {
  while (!head_done_at_.empty() && head_done_at_.front() <= now_s) head_done_at_.pop_front();
  // The operations at the drive, this one included; a slice's drive stands for the full
  // cluster's, which has 1 / share as many.
  const double q = static_cast<double>(head_done_at_.size() + 1) / timing_.share;
  queue_depth_sum_ += q;
  const HeadTiming& h = timing_.head;
  const double scale = slowdown_ / timing_.share;
  const double positioning = h.positioning_s(q, write) * scale;
  const double transfer =
      static_cast<double>(bytes) / (write ? h.write_bytes_per_s : h.read_bytes_per_s) * scale;
  const double start = head_done_at_.empty() ? now_s : std::max(now_s, head_done_at_.back());
  head_done_at_.push_back(start + positioning + transfer);
  hold_admitted_s_ += positioning + transfer;
  queued_s_ += start - now_s;
  return start + positioning;
}

double DriveQueue::work_done_s(double now_s) const {
  // Work still to do after now_s: a unit's operations run back to back once queued, so what is
  // left on it is the time until it frees.
  double left = 0;
  if (timing_.hard_disk) {
    if (!head_done_at_.empty()) left = std::max(0.0, head_done_at_.back() - now_s);
  } else {
    for (double f : free_at_) left += std::max(0.0, f - now_s);
  }
  return std::max(0.0, hold_admitted_s_ - left);
}

}  // namespace granary::sim

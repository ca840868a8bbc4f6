// DriveQueue: how long a drive takes to start moving an operation's data — its command
// processing, the part of a drive's time that IOPS and queue-depth figures describe (the data
// itself then moves over the drive's link at its bandwidth, shared with the other operations).
//
// The drive is `units` parallel command units served first come, first served (an M/D/c queue
// when arrivals are random): an operation takes the unit that frees first, holds it for the
// op's hold time, and its access completes `latency` after it started. From a drive profile
// (models/hardware.h: 4 KiB random read IOPS R_r, write IOPS R_w, queue-depth-1 latencies L_r,
// L_w):
//
//   units        c = max(1, round(R_r * L_r))   (Little's law at the rated IOPS)
//   read hold    c / R_r   (~ L_r)              -> at most R_r reads per second
//   write hold   c / R_w                        -> at most R_w writes per second
//   latency      L_r or L_w                     (an idle drive's answer time)
//
// so one operation at a time sees L + size / bandwidth, and a deep queue saturates at the
// rated IOPS with the extra waiting showing as queueing latency. A write's hold is longer than
// its latency on flash (the drive acknowledges from its power-protected cache; programming the
// flash is what limits sustained write IOPS). A profile without IOPS figures (0) has no unit
// limit: every operation just pays its latency.
//
// A slowdown factor (a failing drive) multiplies holds and latencies. Not thread-safe
// (simulation only).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "models/hardware.h"

namespace granary::sim {

struct DriveTiming {
  int units = 0;  // 0: no unit limit
  double read_hold_s = 0;
  double write_hold_s = 0;
  double read_latency_s = 0;
  double write_latency_s = 0;

  static DriveTiming from_profile(const models::DriveProfile& drive);
};

class DriveQueue {
 public:
  explicit DriveQueue(DriveTiming timing);

  // Admits an operation arriving at `now_s`; returns the time its access completes (>= now_s).
  // Operations must be admitted in nondecreasing `now_s` order.
  double admit(double now_s, bool write);
  // Holds and latencies times `factor` (> 0; 1: the profile's own speed).
  void set_slowdown(double factor) { slowdown_ = factor; }

  const DriveTiming& timing() const { return timing_; }
  uint64_t operations() const { return operations_; }
  // Seconds operations waited for a free unit, summed.
  double queued_s() const { return queued_s_; }

 private:
  DriveTiming timing_;
  double slowdown_ = 1;
  // Times at which each unit frees, smallest first.
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at_;
  uint64_t operations_ = 0;
  double queued_s_ = 0;
};

}  // namespace granary::sim

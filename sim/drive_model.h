// DriveQueue: how long a drive takes to serve an operation. Two models, chosen by the drive's
// kind (models/hardware.h DriveProfile, 4 KiB random read IOPS R_r, write IOPS R_w, queue-depth-1
// latencies L_r, L_w, the queue depth Q at which the IOPS figures hold, sequential rates B_r,
// B_w):
//
// Flash (nvme, sata-ssd): command processing, then the data moves over the drive's link at its
// bandwidth, shared with the other operations. The drive is `units` parallel command units
// served first come, first served (an M/D/c queue when arrivals are random): an operation takes
// the unit that frees first, holds it for the op's hold time, and its data is ready `latency`
// after it started:
//
//   units        c = max(1, round(R_r * L_r))   (Little's law at the rated IOPS)
//   read hold    c / R_r   (~ L_r)              -> at most R_r reads per second
//   write hold   c / R_w                        -> at most R_w writes per second
//   latency      L_r or L_w                     (an idle drive's answer time)
//
// The drive works on at most Q commands at once (the profile's queue_depth), so it has
// min(c, Q) units with the same holds: a Q below c caps it at Q / L_r reads per second
// (Little's law), under its rated IOPS (models::DriveProfile::command_units).
//
// so one operation at a time sees L + size / bandwidth, and a deep queue saturates at the
// rated IOPS with the extra waiting showing as queueing latency. A write's hold is longer than
// its latency on flash (the drive acknowledges from its power-protected cache; programming the
// flash is what limits sustained write IOPS). A profile without IOPS figures (0) has no unit
// limit: every operation just pays its latency.
//
// Hard disk (hdd): one head that positions (seek and rotation) and then transfers, in series:
// an operation of S bytes holds the head for t_pos(q) + S / B and its data starts moving (over
// the drive's link, at B) when positioning ends, so the transfer fills the rest of the hold and
// the link adds no second serial time. t_pos falls with the number q of operations at the drive
// (the one admitted included) as native command queueing picks the nearest request:
//
//   t_pos(q) = t_Q + (t_1 - t_Q) * 2 (Q - q) / ((q + 1) (Q - 1))   for 1 <= q <= Q
//   t_pos(q) = t_Q                                                  for q >= Q
//   t_1 = L - 4096 / B   (the QD1 latency of a 4 KiB op, less its transfer)
//   t_Q = 1 / R - 4096 / B   (the rated IOPS at queue depth Q, less the transfer)
//
// (docs/models.md, "Drives", gives the reasoning), so a stream of S-byte operations at queue
// depth q runs at S / (t_pos(q) + S / B) bytes per second, the drive's own equation.
//
// A slice's drive (`share` < 1) runs at `share` of the capacity and sees `share` of the
// operations of the full cluster's drive: flash holds are divided by it (DriveTiming::sliced);
// a hard disk counts q / share operations at itself and takes (t_pos + S / B) / share, so its
// per-drive queue depth and service equation are the full cluster's.
//
// A slowdown factor (a failing drive) multiplies holds, latencies, positioning and transfer
// times. Not thread-safe (simulation only).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/hardware.h"

namespace granary::sim {

// The head of a hard disk (DriveTiming::head): its positioning times at queue depth 1 and at
// the rated depth, and its media rates.
struct HeadTiming {
  int rated_queue_depth = 2;                                          // Q >= 2
  double read_positioning_qd1_s = 0, read_positioning_rated_s = 0;    // t_1, t_Q of reads
  double write_positioning_qd1_s = 0, write_positioning_rated_s = 0;  // of writes
  double read_bytes_per_s = 0, write_bytes_per_s = 0;                 // B_r, B_w

  // t_pos(q) of the header comment; q >= 1 (not necessarily whole: a slice's drive scales it).
  double positioning_s(double queue_depth, bool write) const;
};

struct DriveTiming {
  int units = 0;  // 0: no unit limit; a hard disk's one head: 1
  // Flash: per operation. Hard disk: a 4 KiB operation at the rated queue depth (1 / R), which
  // is what the analytic IOPS bound uses; the queue computes each operation's own.
  double read_hold_s = 0;
  double write_hold_s = 0;
  double read_latency_s = 0;
  double write_latency_s = 0;
  bool hard_disk = false;  // `head` applies
  HeadTiming head;
  double share = 1;  // of the full cluster's drive (a slice's drive: m / k)

  // A hard disk needs Q >= 2, R and B > 0 and t_1 >= t_Q > 0 for reads and writes
  // (parse_scenario refuses a profile without them; a broken one here is a Granary bug).
  static DriveTiming from_profile(const models::DriveProfile& drive);
  // This drive at `share` (0 < share <= 1) of its capacity, for a slice.
  DriveTiming sliced(double share) const;
};

class DriveQueue {
 public:
  explicit DriveQueue(DriveTiming timing);

  // Admits an operation of `bytes` arriving at `now_s`; returns the time its data is ready to
  // move (>= now_s). Operations must be admitted in nondecreasing `now_s` order. Ready times
  // never decrease from one admission to the next unless the slowdown changes in between.
  double admit(double now_s, bool write, uint64_t bytes);
  // Holds and latencies times `factor` (> 0; 1: the profile's own speed).
  void set_slowdown(double factor) { slowdown_ = factor; }

  const DriveTiming& timing() const { return timing_; }
  uint64_t operations() const { return operations_; }
  // Seconds operations waited for a free unit (the head), summed.
  double queued_s() const { return queued_s_; }
  // Hard disk: the queue depth q each operation saw at admission, summed (the full cluster's
  // equivalent in a slice: the count over `share`); 0 for flash.
  double queue_depth_sum() const { return queue_depth_sum_; }
  // Seconds of work the drive's units (the head) have done by `now_s` (>= the last admission's
  // now_s): every admitted operation's hold, less what the units still have to do after now_s.
  // Its increase over an interval, over units x the interval, is the drive's busy fraction (its
  // IOPS utilisation). 0 for a drive without a unit limit.
  double work_done_s(double now_s) const;
  // Units working in parallel: `units`, 1 for a hard disk's head, 0 without a unit limit.
  int busy_units() const { return timing_.hard_disk ? 1 : timing_.units; }

 private:
  double admit_head(double now_s, bool write, uint64_t bytes);

  DriveTiming timing_;
  double slowdown_ = 1;
  // Flash: times at which each unit frees, a min-heap (std::push_heap with std::greater).
  std::vector<double> free_at_;
  // Hard disk: when the head finishes each operation admitted and not yet done, in admission
  // order (first come, first served on one head, so increasing).
  std::deque<double> head_done_at_;
  uint64_t operations_ = 0;
  double queued_s_ = 0;
  double queue_depth_sum_ = 0;
  double hold_admitted_s_ = 0;  // every admitted operation's hold (head time), summed
};

}  // namespace granary::sim

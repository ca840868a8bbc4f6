// BlockWorkloadDriver: the I/O of a block or boot_storm workload (models/scenario.h,
// BlockWorkload) on the nodes' RBD volumes (engine/services/block_volume.h), and what it
// measures: IOPS, bandwidth, and latency percentiles of every I/O; for a boot storm, each
// node's boot time.
//
//  - block: queue_depth tasks per volume, each issuing one I/O after another (a closed loop,
//    as fio's iodepth with one job): a block-aligned offset drawn uniformly over the volume, a
//    read with probability read_fraction, else a write. I/Os completing in
//    [ramp_s, ramp_s + duration_s] are measured; the tasks stop at the end of that window.
//    With rate_iops, each task starts an I/O every queue_depth / rate_iops seconds (or when
//    its last one ends, if later), as fio's rate_iops paces its queue.
//  - boot_storm: every node boots at time 0 from the same list of I/Os (the image's boot set:
//    boot_read_bytes of reads in blocks at offsets drawn once, uniformly over the volume, and
//    boot_write_bytes of writes appended to one region drawn once (a journal, logs), spread
//    evenly among the reads), queue_depth at a time; a node has booted when its last I/O
//    completes.
//
// With carry_data(seed) (real mode's granary-bench, on volumes that are not clones): every write
// carries the bytes its range holds in the image's known content (carry_data.h's fill_content,
// keyed by the image's path), the same bytes the image was filled with, so whatever order
// writes and reads of a block run in, a read must return that content; each read is compared
// with it and a mismatch fails the run (first_error). It checks that no byte is corrupted or
// lands elsewhere, not that a write was not lost (a lost write leaves the same bytes).
//
// Times are measured from start()'s `origin_s` (0 in a simulation; a real run starts its clock
// before it connects). Determinism: offsets and read/write draws come from generators seeded
// from `seed` and the node and task numbers. The I/O tasks may run on threads (a RealEnv): the
// counters are atomics or under a lock; summary() and the rest after the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/env.h"
#include "engine/services/block_volume.h"
#include "models/scenario.h"
#include "sim/metrics.h"

namespace granary::sim {

class BlockWorkloadDriver {
 public:
  // `volumes` (one per node, on that node's host) must outlive the driver.
  BlockWorkloadDriver(Env& env, const models::BlockWorkload& spec, bool boot_storm,
                      std::vector<services::BlockVolume*> volumes, std::vector<HostId> hosts,
                      uint64_t seed);

  // Spawns the I/O tasks: non-daemons when the block workload is the run (the run lasts until
  // they are done), daemons beside another workload (they stop when it ends).
  void start(TaskOptions options = {}, double origin_s = 0);
  // Before start(): writes carry the images' content and reads are compared with it (see the
  // header comment).
  void carry_data(uint64_t content_seed) {
    carry_seed_ = content_seed;
    carry_ = true;
  }
  // Every task has finished.
  bool done() const { return tasks_done_.load() == tasks_; }
  // Completed I/Os and the bytes they moved so far (for progress).
  uint64_t completed() const { return completed_.load(); }
  // The simulated time the workload ended (the last I/O, or the end of the window).
  double end_s() const { return end_s_; }
  size_t volume_count() const { return volumes_.size(); }
  // The first I/O that failed (OK if none did).
  Status first_error() const {
    std::lock_guard lock(mu_);
    return first_error_;
  }
  // With carry_data: reads compared with the content, and their bytes; writes that carried it.
  uint64_t reads_verified() const { return reads_verified_.load(); }
  uint64_t bytes_verified() const { return bytes_verified_.load(); }
  uint64_t writes_carried() const { return writes_carried_.load(); }

  // Reads the volumes' counters: call from a task (their locks are Env semaphores) at the end
  // of the run, before summary(); `now_s` closes the measured window when the I/O is still
  // going (beside another workload).
  void collect(double now_s);
  // The workload's figures (docs/report-format.md, "block"): call after collect().
  nlohmann::json summary() const;
  // Read and write latencies (docs/report-format.md, "Latencies"), in ms.
  nlohmann::json latency_ms() const;
  const LatencyRecorder& read_latency() const { return read_latency_; }
  const LatencyRecorder& write_latency() const { return write_latency_; }
  // I/Os completed per interval of `interval_s` up to `end_s` (the last one partial), per
  // second.
  std::vector<double> iops_series(double interval_s, double end_s) const;

 private:
  struct Io {
    uint64_t offset;
    bool write;
  };
  void run_random(int node, int task);
  void run_boot(int node);
  // One I/O on `vol` (with bytes when carrying data); OK or why it failed.
  Status io(services::BlockVolume& vol, bool write, uint64_t offset);
  void fail(const Status& s);
  bool failed() const;
  double now_s() const { return env_.now_s() - origin_s_; }
  void record(bool write, double start_s, double end_s, uint64_t bytes);

  Env& env_;
  models::BlockWorkload spec_;
  bool boot_;
  std::vector<services::BlockVolume*> volumes_;
  std::vector<HostId> hosts_;
  uint64_t seed_;
  double origin_s_ = 0;
  bool carry_ = false;
  uint64_t carry_seed_ = 0;
  mutable std::mutex mu_;            // what the I/O tasks share below, but the atomics
  std::vector<Io> boot_ios_;         // boot storm: the image's boot set
  std::vector<size_t> boot_next_;    // per node: the next I/O of boot_ios_ to issue
  std::vector<double> boot_done_s_;  // per node: when its last I/O completed
  std::vector<int> boot_inflight_;   // per node: I/Os in progress
  int tasks_ = 0;
  std::atomic<int> tasks_done_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> reads_verified_{0}, bytes_verified_{0}, writes_carried_{0};
  double end_s_ = 0;
  Status first_error_;
  LatencyRecorder read_latency_, write_latency_;
  uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0;  // in the window
  std::vector<double> completions_s_;         // every completion time (the series)
  services::BlockVolumeStats volume_totals_;  // collect()
  double collected_s_ = 0;                    // collect()
};

}  // namespace granary::sim

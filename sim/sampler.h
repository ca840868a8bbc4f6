// The sampler: what the workload drivers' monitor tasks measure over simulated time — from
// SimGrid's instantaneous link usage at every tick (its link-load plugin cannot be used, it
// crashes on the cancelled receives of daemons killed at the end of a run) the drives' read and
// write rates and every resource's busy fraction over time (links, drives, CPUs, metadata servers;
// docs/report-format.md, "Utilisation"), accelerators' partial MLPerf utilisation and the loaders'
// step rates a steady state is judged by.
//
// Deterministic: the same ticks give the same figures bit for bit. Simulation only (read from a
// task).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/services/gpu_consumer.h"
#include "engine/services/mds.h"
#include "models/topology.h"
#include "sim/platform.h"
#include "sim/sim_env.h"

namespace granary::sim {

// A resource whose busy fraction is followed over time.
struct ResourceInfo {
  std::string name;  // a topology link's ("client3.nic", "storage0.drive4") or "storage0.cpu"
  std::string kind;  // snake_case: client_nic, client_memory, storage_nic, drive, mds_nic,
                     // fabric, client_cpu, storage_cpu, mds (docs/report-format.md)
};

// Busy fractions of many resources over time, in bins of whole ticks: at most kMaxBins bins, two
// neighbours merged (and the bin width doubled) whenever a run outgrows them, so a series never
// holds more than kMaxBins figures per resource whatever the run's length. Deterministic.
class UtilizationSeries {
 public:
  static constexpr size_t kMaxBins = 256;
  explicit UtilizationSeries(size_t resources = 0) : resources_(resources) {}
  // One tick of `dt_s` seconds over which resource r was busy the fraction busy[r] (in [0, 1]).
  void add_tick(double dt_s, const std::vector<double>& busy);
  size_t bins() const { return end_s_.size(); }
  size_t resources() const { return resources_; }
  double bin_end_s(size_t bin) const { return end_s_[bin]; }
  double bin_width_s(size_t bin) const { return width_s_[bin]; }
  // Resource r's mean busy fraction in `bin`, and over every tick.
  double busy(size_t r, size_t bin) const;
  double mean(size_t r) const;

 private:
  void merge_pairs();
  size_t resources_;
  size_t ticks_per_bin_ = 1, ticks_in_last_ = 0;
  std::vector<double> end_s_, width_s_;  // [bin]
  std::vector<double> busy_s_;           // [bin * resources_ + r]: busy seconds
  std::vector<double> total_busy_s_;     // [r]
  double total_s_ = 0;
};

class LinkSampler {
 public:
  // Samples `platform`, built from `topology`, and `env`'s drive queues; `mds`: the metadata
  // servers, whose workers' busy time is read from a task (may be empty). All must outlive the
  // sampler.
  LinkSampler(const models::Topology& topology, const Platform& platform, const SimEnv& env,
              const std::vector<std::unique_ptr<services::MetadataService>>& mds);

  // What one tick saw on the drives' links: reads flow forward, writes in reverse.
  struct DriveBytes {
    double read = 0, write = 0;
  };
  // Adds every resource's busy fraction over the interval (a link's usage now over its bandwidth in
  // its busier direction; a drive's the larger of its link's and its command units' (drive_model.h
  // work_done_s); a host's CPU load over its cores; a metadata server's workers' service time over
  // its workers); returns the bytes the drives read and wrote over it (their links' usage now x
  // interval_s). Call from a task, every interval_s seconds.
  DriveBytes sample(double interval_s);

  // The resources followed ([topology link] first, then CPUs and metadata servers) and their
  // busy fractions over time.
  const std::vector<ResourceInfo>& resources() const { return resources_; }
  const UtilizationSeries& utilization() const { return utilization_; }

 private:
  const models::Topology& topology_;
  const Platform& platform_;
  const SimEnv& env_;
  const std::vector<std::unique_ptr<services::MetadataService>>& mds_;
  std::vector<ResourceInfo> resources_;
  std::vector<int> link_drive_;                    // [topology link]: its drive's DeviceId, or -1
  std::vector<int> cpu_nodes_;                     // topology nodes whose CPU is followed
  std::vector<double> drive_work_s_, mds_busy_s_;  // at the last tick
  std::vector<double> busy_;                       // this tick's, [resource]
  UtilizationSeries utilization_;
};

// A link role's report name in snake_case: "client NIC" -> "client_nic".
std::string role_key(models::LinkRole role);

// Partial MLPerf AU of one loader at `now`, as DLIO counts it (engine/services/gpu_consumer.h):
// the compute of every step but the first over the time since its start, without the first
// step's processing (its I/O wait and its compute).
double partial_au(const services::ConsumerMetrics& m, double compute_s_per_step, double now_s);

// Windowed accelerator utilisation: in each interval [i x interval_s, (i + 1) x interval_s) up to
// end_s (the last one partial), the time the accelerators spent computing — every completed
// step's compute, [its end - compute_s_per_step, its end] — over the accelerators x the
// interval. Unlike MLPerf's AU (cumulative, the first step left out) it shows a dip when it
// happens. `step_end_s`: each accelerator's step ends, ascending.
std::vector<double> windowed_au(const std::vector<const std::vector<double>*>& step_end_s,
                                double compute_s_per_step, double interval_s, double end_s);

// The loaders' step rates since `warm_s` (every loader past its start-up), summed over the
// loaders: over each loader's steps since then, its first half, its second half and the whole,
// each between its own step completions (so the lockstep of compute-bound loaders cannot bias
// them). Nullopt while some loader has fewer than 3 steps since `warm_s`.
struct StepRates {
  double first_half = 0, second_half = 0, whole = 0;
};
std::optional<StepRates> step_rates(const std::vector<const std::vector<double>*>& step_end_s,
                                    double warm_s);

}  // namespace granary::sim

// The sampler: what the workload drivers' monitor tasks measure over simulated time — the bytes
// every topology link carries each way (integrated from SimGrid's instantaneous link usage at
// every tick: its link-load plugin cannot be used, it crashes on the cancelled receives of
// daemons killed at the end of a run), the drives' read and write rates, accelerators' partial
// MLPerf utilisation and the loaders' step rates a steady state is judged by.
//
// Deterministic: the same ticks give the same figures bit for bit. Simulation only (read from a
// task).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "engine/services/gpu_consumer.h"
#include "models/topology.h"
#include "sim/platform.h"

namespace granary::sim {

class LinkSampler {
 public:
  // Samples `platform`, built from `topology`; both must outlive the sampler.
  LinkSampler(const models::Topology& topology, const Platform& platform);

  // What one tick saw on the drives' links: reads flow forward, writes in reverse.
  struct DriveBytes {
    double read = 0, write = 0;
  };
  // Adds `interval_s` of every link's current usage, both ways; returns the drives' share.
  DriveBytes sample(double interval_s);

  // Bytes each link carried ([topology link]), forward and reverse.
  const std::vector<double>& forward_bytes() const { return forward_; }
  const std::vector<double>& reverse_bytes() const { return reverse_; }

 private:
  const models::Topology& topology_;
  const Platform& platform_;
  std::vector<double> forward_, reverse_;
};

// Partial MLPerf AU of one loader at `now`, as DLIO counts it (engine/services/gpu_consumer.h):
// the compute of every step but the first over the time since its start, without the first
// step's processing (its I/O wait and its compute).
double partial_au(const services::ConsumerMetrics& m, double compute_s_per_step, double now_s);

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

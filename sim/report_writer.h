// The report writer: a run's report (docs/report-format.md) assembled from the cluster plan,
// the world and what the workload driver measured — scenario and fidelity, the workload's
// summary, the analytic bounds, latencies, per-resource utilisation, the time series, the
// recovery story of a failure run, and a mixed run's sections for the workloads beside the main
// one. Whole-cluster figures of a slice are scaled up here. No figure is measured here: the
// drivers (sim/workloads/workloads.h) and the sampler (sampler.h) measure, the writer writes.
//
// Deterministic; called after the simulation has ended, on one thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/services/client.h"
#include "models/read_bounds.h"
#include "sim/cluster_plan.h"
#include "sim/drive_model.h"
#include "sim/metrics.h"
#include "sim/platform.h"
#include "sim/sampler.h"
#include "sim/world.h"

namespace granary::sim {

// What a checkpoint run measured.
struct CheckpointMeasurements {
  std::vector<std::vector<double>> write_s, read_s;         // [checkpoint][rank]
  double end_s = 0;                                         // the last phase's end
  double interval_s = 0;                                    // of the series
  std::vector<double> drive_write_gibps, drive_read_gibps;  // whole cluster, per interval
  std::vector<ResourceInfo> resources;                      // the sampler's
  UtilizationSeries utilization;                            // [resource] over time
  uint64_t drive_bytes_written = 0;                         // simulated
  uint64_t writes_discarded = 0;
  std::vector<services::ClientStats> client_stats;
};

// What a block run measured (the driver's own figures are in its summary).
struct BlockMeasurements {
  double end_s = 0;
  double interval_s = 0;  // of the monitor
  double drive_ops = 0, drive_queued_s = 0;
  std::vector<ResourceInfo> resources;  // the sampler's
  UtilizationSeries utilization;        // [resource] over time
};

// A checkpoint written beside a training read: what its ranks measured.
struct AsyncCheckpoint {
  int ranks = 0;  // simulated
  uint64_t rank_bytes = 0;
  std::vector<std::vector<double>> write_s;  // [checkpoint][rank], -1 when unfinished
  double end_s = 0;
  Status error;
};

// What a training read measured.
struct TrainingMeasurements {
  double interval_s = 0;  // of the monitor and the series
  double end_s = 0;
  double stopped_at_s = -1;  // when a steady state or max_simulated_s stopped it (-1: no stop)
  bool extrapolated = false;
  double epoch_s = 0;
  double steady_steps_per_s = 0;
  double warm_at_s = -1, bytes_at_warm = 0;  // the end of the loaders' prefetch fill
  double bytes = 0;                          // delivered to the simulated loaders
  int64_t samples = 0;
  std::vector<double> aus;  // per loader
  LatencyRecorder file_latency;
  uint64_t simulated_requests = 0;
  int64_t steps_per_epoch = 0;
  double mean_sample_bytes = 0;
  std::vector<double> read_bytes_per_s;  // per interval, simulated
  std::vector<double> au_series;         // cumulative MLPerf AU at each interval's end
  std::vector<double> au_windowed;       // busy fraction in each interval (sampler.h windowed_au)
  std::vector<double> drive_write_bytes_per_s;  // per interval, simulated (a checkpoint beside)
  std::vector<ResourceInfo> resources;          // the sampler's
  UtilizationSeries utilization;                // [resource] over time
  std::vector<services::ClientStats> client_stats;
  models::PlacementLoad load;  // how the simulated dataset lies on the drives
};

// The analytic write bound (docs/models.md, "Checkpoints"): every byte crosses a client NIC
// once, enters the storage servers `copies_in` times (from the client, then from the primary to
// each other copy or shard) and lands on the drives `amplification` times; the bound is the
// tightest of the three, for `client_nodes` writers at the protocol's `efficiency`.
struct WriteBound {
  double bytes_per_s = 0;
  std::string bottleneck;
};
WriteBound write_bound(const models::Scenario& s, int client_nodes, double efficiency);

nlohmann::json checkpoint_report(const ClusterPlan& plan, const World& world,
                                 const CheckpointMeasurements& m);
nlohmann::json block_report(const ClusterPlan& plan, const DriveTiming& drive_timing,
                            const BlockWorkloadDriver& driver, const BlockMeasurements& m);
// The report's "checkpoint" section of a checkpoint written beside a training read: its time is
// the slowest rank's, averaged over the checkpoints every rank finished; `slice_factor` k of a
// slice (1: every rank ran). Also real mode's (realmode/bench.cc).
nlohmann::json async_checkpoint_json(const models::WorkloadSpec& spec, const AsyncCheckpoint& a,
                                     int slice_factor);
// `async`: the checkpoint beside the training read (with plan.async_checkpoint).
nlohmann::json training_report(const ClusterPlan& plan, const World& world,
                               const TrainingMeasurements& m, const AsyncCheckpoint& async);

}  // namespace granary::sim

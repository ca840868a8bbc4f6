// The workload client of real mode (granary-bench, realmode/README.md, "Running a scenario's
// workload"): a scenario's training read or checkpoint run for real against a cluster of
// daemons (granary-osd, granary-mon), by the same engine code the simulator runs — the
// StorageClient over the cluster's CRUSH pool, one GpuConsumer per accelerator (DLIO's loader,
// its compute time emulated by sleeping), the checkpoint ranks meeting between phases — on a
// RealEnv instead of SimGrid. Every file carries known content (sim/carry_data.h's
// content_of(seed, path, offset), the seed the scenario's) and every read is compared with it.
//
//  - plan_bench: the scenario's plan as a real run takes it (every client node, request by
//    request) and the checks that it can run here: design rados, a replicated pool with the
//    cluster file's replicas and pg_num, one training_read, checkpoint, block or boot_storm
//    workload or a training read with a checkpoint beside it (its ranks writing while the
//    loaders read, as the simulator runs it), no failure timeline (`granary real run` injects
//    one), block I/O beside it or beside a checkpoint (the simulator's BlockWorkloadDriver on
//    each block node's volume, stopped when the main workload ends), no clone volumes.
//  - fill: writes the training read's dataset (the files of this process's share), and the
//    volume images of block I/O beside it.
//  - run: the workload; the report (docs/report-format.md's keys where they apply, marked
//    "mode": "real").
//  - verify: reads every file of the share back and compares it with its content.
// Shares: a process of `share_count` takes client node c when c % share_count == share_index,
// and file i when i % share_count == share_index (a checkpoint run needs one process: its
// ranks meet between phases).
//
// Thread-safety: one call at a time per ClusterProcess (each runs its Env to completion).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/services/dataset.h"
#include "engine/status.h"
#include "realmode/cluster_config.h"
#include "realmode/cluster_process.h"
#include "sim/cluster_plan.h"

namespace granary::realmode {

struct BenchPlan {
  sim::ClusterPlan plan;
  std::shared_ptr<const services::Dataset> dataset;  // the training read's, or the shares
  // Block I/O beside the training read: the client nodes' volume images (one per block node).
  std::shared_ptr<const services::Dataset> volume_images;
  uint64_t content_seed = 0;  // files' content: the scenario's seed
  uint64_t shuffle_seed = 0;  // every loader's, every process's
};

struct BenchOptions {
  std::string name;  // a name of the cluster file's table on this process's host
  int share_index = 0;
  int share_count = 1;
  int writers = 8;  // fill and verify: files in flight
  // run: the report carries every latency sample (`latency_samples_s`, seconds, per operation;
  // in `block` for block I/O beside the read), so that `granary real` computes the quantiles
  // of all its shares exactly.
  bool latency_samples = false;
};

// The plan of the scenario at `scenario_path` for a real run against `config`'s cluster;
// errors name the file and the key.
Result<BenchPlan> plan_bench(const std::string& scenario_path, const ClusterConfig& config);

Result<nlohmann::json> bench_fill(ClusterProcess& process, const BenchPlan& plan,
                                  const BenchOptions& options);
Result<nlohmann::json> bench_run(ClusterProcess& process, const BenchPlan& plan,
                                 const BenchOptions& options);
Result<nlohmann::json> bench_verify(ClusterProcess& process, const BenchPlan& plan,
                                    const BenchOptions& options);

}  // namespace granary::realmode

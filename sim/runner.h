// Runs a scenario on SimGrid and produces its report: builds the (possibly sliced) cluster,
// starts the storage services and the workload — one data loader per accelerator for a
// training read (until the epoch ends, or a steady state can be extrapolated to it), or every
// rank of a checkpoint (write with fsync, then read back), or every node's block volume
// (block_workload.h: random I/O at a queue depth, or a boot storm), with a mixed run's block
// I/O beside a training read or checkpoint — injects the scenario's failures (failures.h), and
// measures. Block workloads are always simulated request by request.
//
// Fidelity (docs/models.md, "Fidelity"):
//  - request: every client node, every request, the whole epoch.
//  - slice: 1/k of the client nodes against every storage server (or 1/m of them beyond 16)
//    at m/k of its capacity, the fabric sized per host, the dataset cut by k (docs/models.md).
//    Chosen by "auto" for large clusters.
//  Either stops once the loaders' step rate is steady and extrapolates the epoch (unless the
//  scenario turns that off).
//
// The run is the scenario's plan (cluster_plan.h, with RunPlan and plan_run), the world built
// from it (world.h), the main workload's driver (workloads/workloads.h), the sampler
// (sampler.h) and the report writer (report_writer.h).
//
// One simulation per process (SimGrid keeps global state): call run_scenario once. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/status.h"
#include "models/scenario.h"
#include "sim/cluster_plan.h"

namespace granary::sim {

class SimEnv;
struct World;

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  // Called now and then with (simulated seconds, estimated fraction of the run done).
  std::function<void(double, double)> on_progress;
  // Tests: called once the world is built (a run that carries data: its dataset written),
  // before the clock starts; may inject faults (SimEnv::corrupt_device_byte).
  std::function<void(SimEnv& env, const World& world)> before_clock;
};

// Runs the scenario and returns the report (format in docs/report-format.md). The report is a
// pure function of the scenario and seed: wall-clock figures are not in it.
Result<nlohmann::json> run_scenario(const models::Scenario& scenario, const RunOptions& options);

}  // namespace granary::sim

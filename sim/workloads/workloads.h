// The workload drivers: one per kind of main workload, each adding its clients to a built world
// (sim/world.h), running the simulation with a monitor task that samples it (sim/sampler.h),
// and handing what it measured to the report writer (sim/report_writer.h).
//  - training read: one data loader per accelerator until the epochs end, or until the loaders'
//    step rate is steady and the epoch can be extrapolated, with a checkpoint beside it when the
//    scenario has one (asynchronous checkpointing);
//  - checkpoint: every simulated rank writes its share of each checkpoint (fsync), then reads
//    them back, the ranks meeting between phases;
//  - block and boot storm: every node's volume (sim/block_workload.h).
// A mixed run's block I/O beside the main workload was started with the world.
//
// One driver per simulation (SimGrid keeps global state). Not thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>

#include "engine/status.h"
#include "sim/cluster_plan.h"
#include "sim/drive_model.h"
#include "sim/platform.h"
#include "sim/runner.h"
#include "sim/sim_env.h"
#include "sim/world.h"

namespace granary::sim {

// What a driver runs on: the engine the platform was built in, the Env and the built world.
struct RunContext {
  const RunOptions& options;
  simgrid::s4u::Engine& engine;
  SimEnv& env;
  const Platform& platform;
  World& world;
  const DriveTiming& drive_timing;
};

// Each runs the plan's main workload to its end and returns the report; an error when a
// client or loader failed, the run stalled, or it did not finish within max_simulated_s
// (checkpoint, block).
Result<nlohmann::json> run_training_read(const ClusterPlan& plan, RunContext& ctx);
Result<nlohmann::json> run_checkpoint(const ClusterPlan& plan, RunContext& ctx);
Result<nlohmann::json> run_block(const ClusterPlan& plan, RunContext& ctx);

}  // namespace granary::sim

#include "sim/runner.h"

#include <simgrid/s4u.hpp>

#include "granary/version.h"
#include "sim/cluster_plan.h"
#include "sim/drive_model.h"
#include "sim/platform.h"
#include "sim/sim_env.h"
#include "sim/workloads/workloads.h"
#include "sim/world.h"

namespace granary::sim {

namespace {

// The simulation and its report, with the SimGrid settings `simgrid_config` added to Granary's:
// the scenario's plan (cluster_plan.h), the platform and Env it runs on, the world the plan
// builds there (world.h), and the main workload's driver (workloads/workloads.h), which runs
// the simulation and writes the report (report_writer.h).
Result<nlohmann::json> simulate(const models::Scenario& scenario, const RunOptions& options,
                                const std::vector<std::string>& simgrid_config) {
  auto planned = build_cluster_plan(scenario, options.seed.value_or(scenario.seed));
  if (!planned.ok()) return planned.status();
  const ClusterPlan& plan = *planned;

  static int argc = 1;
  static char arg0[] = "granary";
  static char* argv[] = {arg0, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  configure_engine(engine, simgrid_config);
  PlatformOptions po;
  po.link_scale = plan.link_scale;
  po.network_efficiency = plan.network_efficiency;
  po.client_cores = plan.client_cores;
  po.storage_cores = plan.storage_cores;
  auto platform = build_platform(plan.topology, po);
  if (!platform.ok()) return platform.status();
  SimEnv env(plan.topology, *platform, plan.seed);
  // A slice's drives run at m/k of their capacity: their IOPS too; a hard disk also sees its
  // queue depth as the full cluster's drive does (drive_model.h).
  const DriveTiming drive_timing =
      DriveTiming::from_profile(plan.sim.cluster.storage.drive)
          .sliced(plan.plan.slice_factor > 1 ? plan.storage_share : 1.0);
  env.set_drive_timing(drive_timing);

  World world;
  if (Status st = build_world(plan, env, *platform, world); !st.ok()) return st;
  RunContext ctx{options, engine, env, *platform, world, drive_timing};
  if (options.before_clock) options.before_clock(env, world);
  Result<nlohmann::json> report = plan.checkpoint ? run_checkpoint(plan, ctx)
                                  : plan.block    ? run_block(plan, ctx)
                                                  : run_training_read(plan, ctx);
  if (!report.ok()) return report;
  // Whether the run carried data, and why (docs/report-format.md, "run").
  const CarryDataPlan& carry = plan.carry_data;
  (*report)["run"]["carry_data"] = {{"carried", carry.on},
                                    {"automatic", carry.automatic},
                                    {"reason", carry.reason},
                                    {"limit_bytes", CarryDataPlan::kLimitBytes}};
  if (world.carried) {
    const CarryCounts& c = world.carried->counts();
    if (!c.scrub_error.empty()) {
      return Status::io_error(
          scenario.source_path +
          ": simulation.carry_data: the deep scrub after the run failed: " + c.scrub_error);
    }
  }
  return report;
}

}  // namespace

Result<nlohmann::json> run_scenario(const models::Scenario& scenario, const RunOptions& options) {
  // What the environment changes in a run is recorded in its report (docs/report-format.md).
  auto simgrid_config = simgrid_config_from_env();
  if (!simgrid_config.ok()) return simgrid_config.status();
  auto report = simulate(scenario, options, *simgrid_config);
  if (!report.ok()) return report;
  (*report)["run"]["simgrid_config"] = *simgrid_config;
  // Identity (docs/report-format.md): the scenario's text, and the Granary that ran it. (The
  // wall time is not in the report, which stays byte-identical for a scenario and a seed.)
  (*report)["scenario"]["sha256"] = scenario.source_sha256;
  (*report)["run"]["granary"] = {{"version", GRANARY_VERSION}, {"build", GRANARY_BUILD}};
  return report;
}

}  // namespace granary::sim

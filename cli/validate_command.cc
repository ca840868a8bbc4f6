// granary validate FILE...: reads each scenario file and reports it valid (with a one-line
// summary and the cost estimate of running it on stdout) or names its first problem (one line on
// stderr, exit status 2). A scenario whose run would be refused by its cost (past
// --max-wall-s, --max-memory-gib or this machine's task limit) or by the cluster plan run
// builds from it (sim/cluster_plan.h) is a problem too.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/resources.h"
#include "models/scenario_json.h"
#include "sim/cluster_plan.h"
#include "sim/cost_estimate.h"

namespace granary::cli {

namespace {
struct ValidateArgs {
  std::vector<std::string> files;
  ResourceArgs resources;
  bool json = false;
  std::string catalog_db;
};
}  // namespace

void register_validate_command(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check scenario files (format 1), summarise each valid one and estimate its run's cost");
  cmd->add_option("files", args->files, "scenario files (JSON)")->required()->type_name("FILE...");
  add_resource_options(*cmd, args->resources);
  cmd->add_flag("--json", args->json,
                "print one JSON object per valid file (its summary and cost estimate)");
  add_catalog_db_option(*cmd, args->catalog_db);
  cmd->callback([args, &code] {
    auto catalog = load_catalog(args->catalog_db);
    if (!catalog.ok()) return fail_input(code, catalog.status());
    for (const std::string& path : args->files) {
      Result<models::Scenario> s = models::load_scenario(path, *catalog);
      if (!s.ok()) {
        fail_input(code, s.status());
        continue;
      }
      // What run builds before it simulates (no SimGrid): what it would refuse, validate
      // refuses with the same line.
      if (Result<sim::ClusterPlan> plan = sim::build_cluster_plan(*s, s->seed); !plan.ok()) {
        fail_input(code, plan.status());
        continue;
      }
      const sim::CostEstimate cost = sim::estimate_cost(*s);
      if (Status st = sim::check_cost(*s, cost, args->resources.limits()); !st.ok()) {
        fail_input(code, st);
        continue;
      }
      if (args->json) {
        const nlohmann::json j = {{"file", path},
                                  {"summary", models::scenario_summary(*s)},
                                  {"plan", cost.plan.reason},
                                  {"estimate",
                                   {{"wall_s", cost.wall_s},
                                    {"memory_bytes", cost.memory_bytes},
                                    {"tasks", cost.actors},
                                    {"requests", cost.transfers},
                                    {"requests_in_flight", cost.flows},
                                    {"events", cost.events},
                                    {"simulated_s", cost.simulated_s},
                                    {"driver", cost.driver}}}};
        std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        continue;
      }
      std::cout << path << ": ok (" << models::scenario_summary(*s) << ")\n"
                << "  estimate: " << sim::cost_summary(cost) << "; " << cost.plan.reason << "\n";
    }
  });
}

}  // namespace granary::cli

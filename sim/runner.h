// Runs a scenario on SimGrid and produces its report: builds the (possibly sliced) cluster,
// starts the storage services and one data loader per accelerator, runs simulated time until
// the epoch ends (or a steady state can be extrapolated to it), and measures.
//
// Fidelity (docs/models.md, "Fidelity"):
//  - request: every client node, every request, the whole epoch.
//  - slice: a symmetric sub-cluster, 1/k of the client nodes and 1/k of the storage servers
//    at full per-node capacity, shared fabric links scaled to the slice's share, the dataset
//    cut by k; and the run stops once the measured throughput is steady and the epoch is
//    extrapolated from it. Chosen by "auto" for large clusters.
//
// One simulation per process (SimGrid keeps global state): call run_scenario once. Not
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/status.h"
#include "models/scenario.h"

namespace granary::sim {

struct RunOptions {
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  // Called now and then with (simulated seconds, estimated fraction of the run done).
  std::function<void(double, double)> on_progress;
};

// How a scenario will be simulated.
struct RunPlan {
  models::Fidelity fidelity = models::Fidelity::kRequest;  // kRequest or kSlice
  int slice_factor = 1;        // k: the slice has 1/k of the clients and storage servers
  int clients = 0;             // client nodes simulated
  int storage_servers = 0;     // storage servers simulated
  bool allow_early_stop = false;
  std::string reason;          // why this plan
};

// The plan for a scenario (no simulation): what "auto" resolves to, the slice factor.
RunPlan plan_run(const models::Scenario& scenario);

// Runs the scenario and returns the report (format in docs/report-format.md). The report is a
// pure function of the scenario and seed: wall-clock figures are not in it.
Result<nlohmann::json> run_scenario(const models::Scenario& scenario, const RunOptions& options);

}  // namespace granary::sim

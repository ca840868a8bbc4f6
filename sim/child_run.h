// Runs one simulation in a forked child process and returns its report: SimGrid allows one
// simulation per process, so commands that simulate several scenarios (plan accelerators, plan
// sweep) run each in its own child. Call from a single-threaded process (fork).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/status.h"
#include "models/scenario.h"
#include "sim/runner.h"

namespace granary::sim {

// The report of `s` (run_scenario in a child), or the run's error. `options` are the
// child's: its on_progress is called in the child process (it may write to stderr, which the
// child shares).
Result<nlohmann::json> run_in_child(const models::Scenario& s, const RunOptions& options = {});

// The reports of `runs` (or each run's error), in order, simulated in up to `jobs` children at
// once (each in its own process, as run_in_child). Call from a single-threaded process.
std::vector<Result<nlohmann::json>> run_in_children(
    const std::vector<const models::Scenario*>& runs, int jobs);

}  // namespace granary::sim

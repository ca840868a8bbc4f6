// Runs one simulation in a forked child process and returns its report: SimGrid allows one
// simulation per process, so commands that simulate several scenarios (plan accelerators, plan
// sweep) run each in its own child. Call from a single-threaded process (fork).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "models/scenario.h"
#include "sim/runner.h"

namespace granary::cli {

// The report of `s` (sim::run_scenario in a child), or the run's error. `options` are the
// child's: its on_progress is called in the child process (it may write to stderr, which the
// child shares).
Result<nlohmann::json> run_in_child(const models::Scenario& s, const sim::RunOptions& options = {});

}  // namespace granary::cli

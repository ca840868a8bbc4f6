// Runs one simulation in a forked child process and returns its report: SimGrid allows one
// simulation per process, so commands that simulate several scenarios (plan accelerators, plan
// sweep) run each in its own child. Call from a single-threaded process (fork).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "models/scenario.h"

namespace granary::cli {

// The report of `s` (sim::run_scenario in a child), or the run's error.
Result<nlohmann::json> run_in_child(const models::Scenario& s);

}  // namespace granary::cli

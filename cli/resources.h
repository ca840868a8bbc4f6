// The resource limits of a run (`--max-wall-s`, `--max-memory-gib`), shared by `granary run` and
// `granary validate`: the cost estimate (sim/cost_estimate.h) is checked against them before a
// run, and a watchdog holds the run to them while it goes (an estimate can be wrong).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "sim/cost_estimate.h"

namespace granary::cli {

struct ResourceArgs {
  double max_wall_s = 3600;
  double max_memory_gib = 0;  // 0: half of the physical memory
  sim::CostLimits limits() const;
};

// Adds --max-wall-s and --max-memory-gib, range-checked: up to a week, and up to 90% of this
// machine's physical memory.
void add_resource_options(CLI::App& cmd, ResourceArgs& args);

// Starts a thread that ends the process with exit status 2 and one line on stderr naming `path`
// when the run's wall time or resident memory passes the limits.
void start_watchdog(const std::string& path, const sim::CostLimits& limits);

}  // namespace granary::cli

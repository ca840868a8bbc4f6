// Registration of the granary subcommands. Each command reports its exit status through
// ExitCode: 0 success, 1 an expectation or check failed, 2 bad input (usage, file, map).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "engine/status.h"

namespace granary::cli {

// `v` with `digits` decimals ("%.*f"): how the commands print figures.
inline std::string fmt(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

struct ExitCode {
  int value = 0;
};

// Prints "granary: <message>" on stderr and sets the exit code to 2.
void fail_input(ExitCode& code, const std::string& message);
inline void fail_input(ExitCode& code, const Status& s) {
  fail_input(code, s.message());
}

void register_crush_commands(CLI::App& app, ExitCode& code);
void register_validate_command(CLI::App& app, ExitCode& code);
void register_run_commands(CLI::App& app, ExitCode& code);
void register_durability_command(CLI::App& app, ExitCode& code);
void register_test_command(CLI::App& app, ExitCode& code);
// `granary plan sweep`, added to the `plan` command (cli/sweep_command.cc).
void add_sweep_subcommand(CLI::App& plan, ExitCode& code);
// `granary plan capacity` (cli/plan_capacity_command.cc, planner/planner.h).
void add_capacity_subcommand(CLI::App& plan, ExitCode& code);
void register_history_commands(CLI::App& app, ExitCode& code);
void register_catalog_commands(CLI::App& app, ExitCode& code);
// `granary real up|run|verify|down` (cli/real_command.cc, realmode/launcher.h).
void register_real_commands(CLI::App& app, ExitCode& code);
// `granary report FILE --pdf --html --csv` (cli/report_command.cc, gui/report/).
void register_report_command(CLI::App& app, ExitCode& code);

}  // namespace granary::cli

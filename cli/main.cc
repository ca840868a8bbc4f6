// granary: the command line. Subcommands register themselves from their own files.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"

namespace {

// Exit status 3: Granary itself failed (a bug, or memory ran out), not the input. One line on
// stderr, however the failure surfaced: an exception out of a command, or one that escaped a
// simulated task (std::terminate).
[[noreturn]] void internal_error(const std::string& what) {
  std::string line = "granary: internal error: " + what;
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += " (please report it with the scenario)\n";
  std::fflush(stdout);
  (void)!write(STDERR_FILENO, line.data(), line.size());
  _exit(3);
}

void on_terminate() {
  std::string what = "terminate called";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      what = "out of memory";
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
      what = "an unknown exception";
    }
  }
  internal_error(what);
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  CLI::App app{"Granary: a storage digital twin for GPU clusters", "granary"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "granary 0.1.0");
  granary::cli::ExitCode code;
  granary::cli::register_crush_commands(app, code);
  granary::cli::register_validate_command(app, code);
  granary::cli::register_run_commands(app, code);
  granary::cli::register_durability_command(app, code);
  granary::cli::register_test_command(app, code);
  granary::cli::register_history_commands(app, code);
  granary::cli::register_catalog_commands(app, code);
  granary::cli::register_real_commands(app, code);
  granary::cli::register_report_command(app, code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // A missing subcommand: name the choices and what was found instead.
    const CLI::App* cur = &app;
    std::string path = "granary";
    while (!cur->get_subcommands().empty()) {
      cur = cur->get_subcommands().front();
      path += " " + cur->get_name();
    }
    std::string choices;
    for (const CLI::App* sub : cur->get_subcommands({})) {
      choices += (choices.empty() ? "" : ", ") + sub->get_name();
    }
    const auto rest = cur->remaining();
    if (choices.empty()) {
      std::cerr << "granary: " << e.what() << "\n";
    } else {
      std::cerr << path << ": expected a subcommand (" << choices << "), found "
                << (rest.empty() ? std::string("nothing") : "'" + rest.front() + "'") << "\n";
    }
    return 2;
  } catch (const CLI::ParseError& e) {
    // One line naming the flag and the problem; usage errors exit 2.
    std::cerr << "granary: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    internal_error("out of memory");
  } catch (const std::exception& e) {
    internal_error(e.what());
  }
  return code.value;
}

// granary: the command line. Subcommands register themselves from their own files.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Granary: a storage digital twin for GPU clusters", "granary"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "granary 0.1.0");
  granary::cli::ExitCode code;
  granary::cli::register_crush_commands(app, code);
  granary::cli::register_validate_command(app, code);
  granary::cli::register_run_commands(app, code);
  granary::cli::register_durability_command(app, code);
  granary::cli::register_test_command(app, code);
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
  }
  return code.value;
}

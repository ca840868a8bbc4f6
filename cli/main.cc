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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the flag and the problem; usage errors exit 2.
    std::cerr << "granary: " << e.what() << "\n";
    return 2;
  }
  return code.value;
}

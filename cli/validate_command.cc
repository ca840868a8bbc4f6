// granary validate FILE...: reads each scenario file and reports it valid (with a one-line
// summary on stdout) or names its first problem (one line on stderr, exit status 2).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "models/scenario_json.h"

namespace granary::cli {

void register_validate_command(CLI::App& app, ExitCode& code) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Check scenario files (format 1) and summarise each valid one");
  cmd->add_option("files", *files, "scenario files (JSON)")->required()->type_name("FILE...");
  cmd->callback([files, &code] {
    for (const std::string& path : *files) {
      Result<models::Scenario> s = models::load_scenario(path);
      if (!s.ok()) {
        fail_input(code, s.status());
        continue;
      }
      std::cout << path << ": ok (" << models::scenario_summary(*s) << ")\n";
    }
  });
}

}  // namespace granary::cli

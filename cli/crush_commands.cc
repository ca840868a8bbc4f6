// granary crush ...: placement commands (test, map-object, analyze, show).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "engine/crush/tester.h"
#include "engine/crush/text_format.h"

namespace granary::cli {

void fail_input(ExitCode& code, const std::string& message) {
  std::cerr << "granary: " << message << "\n";
  code.value = 2;
}

namespace {

struct TestArgs {
  std::string map_path;
  crush::TestOptions options;
  std::optional<int32_t> x;
  std::optional<int32_t> rule, num_rep, min_x, max_x;
  std::optional<int64_t> pool_id;
  std::optional<int64_t> choose_args;
  std::vector<std::string> weights;  // OSD W pairs, flattened
};

void run_test(TestArgs& a, ExitCode& code) {
  auto map = crush::load_text_map(a.map_path);
  if (!map.ok()) return fail_input(code, map.status());
  crush::TestOptions o = a.options;
  o.rule = a.rule;
  o.num_rep = a.num_rep;
  if (a.min_x) o.min_x = *a.min_x;
  if (a.max_x) o.max_x = *a.max_x;
  if (a.x) o.min_x = o.max_x = *a.x;
  if (a.pool_id) {
    if (*a.pool_id < 0 || *a.pool_id > 0xffffffffll) {
      return fail_input(code, "--pool-id: expected a pool id 0..4294967295, got " + std::to_string(*a.pool_id));
    }
    o.pool_id = static_cast<uint32_t>(*a.pool_id);
  }
  if (a.choose_args) o.choose_args_index = *a.choose_args;
  for (size_t i = 0; i + 1 < a.weights.size(); i += 2) {
    const std::string& osd_text = a.weights[i];
    const std::string& w_text = a.weights[i + 1];
    char* end = nullptr;
    const long osd = std::strtol(osd_text.c_str(), &end, 10);
    if (osd_text.empty() || *end || osd < 0 || osd >= map->max_devices()) {
      return fail_input(code, "--weight " + osd_text + " " + w_text + ": expected a device id 0.." +
                                  std::to_string(map->max_devices() - 1) + ", found '" + osd_text + "'");
    }
    const float w = std::strtof(w_text.c_str(), &end);
    if (w_text.empty() || *end) {
      return fail_input(code, "--weight " + osd_text + " " + w_text +
                                  ": expected a weight (0..1), found '" + w_text + "'");
    }
    o.weights[static_cast<int32_t>(osd)] = w;
  }
  // Mappings are many short lines: buffer stdout in large blocks.
  static char buf[1 << 16];
  std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
  std::ostringstream text;
  if (Status s = crush::run_crush_test(*map, o, text); !s.ok()) return fail_input(code, s);
  const std::string out = text.str();
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void add_test_command(CLI::App& crush, ExitCode& code) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd = crush.add_subcommand(
      "test", "Map inputs through a rule, as `crushtool --test` does (byte-identical output)");
  cmd->add_option("--map", args->map_path, "CRUSH map in Ceph's text format (crushtool -d)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--rule", args->rule, "rule id to test (default: every rule)");
  cmd->add_option("--num-rep", args->num_rep, "number of replicas (default: rule min..max size)");
  cmd->add_option("--min-x", args->min_x, "first input (default 0)");
  cmd->add_option("--max-x", args->max_x, "last input (default 1023)");
  cmd->add_option("--x", args->x, "a single input");
  cmd->add_option("--pool-id", args->pool_id, "mix inputs with this pool id (hashpspool)");
  cmd->add_option("--weight", args->weights, "reweight a device: --weight OSD W (W in 0..1)")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("OSD W");
  cmd->add_option("--choose-args", args->choose_args,
                  "weight set index to use (default: 0, else the -1 compat set)");
  cmd->add_flag("--show-mappings", args->options.show_mappings, "print each input's mapping");
  cmd->add_flag("--show-statistics", args->options.show_statistics, "print result-size statistics");
  cmd->add_flag("--show-utilization", args->options.show_utilization, "print per-device counts");
  cmd->add_flag("--show-utilization-all", args->options.show_utilization_all,
                "print per-device counts, devices without data included");
  cmd->add_flag("--show-bad-mappings", args->options.show_bad_mappings,
                "print inputs that got fewer results than asked");
  cmd->callback([args, &code] { run_test(*args, code); });
}

}  // namespace

void register_crush_commands(CLI::App& app, ExitCode& code) {
  CLI::App* crush = app.add_subcommand("crush", "CRUSH placement: test, map objects, analyze");
  crush->require_subcommand(1);
  add_test_command(*crush, code);
}

}  // namespace granary::cli

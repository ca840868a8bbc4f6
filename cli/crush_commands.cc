// granary crush ...: placement commands (test, map-object, analyze, show).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "engine/crush/tester.h"
#include "engine/crush/text_format.h"
#include "engine/placement/crush_pool.h"

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
  // As in crushtool, asking for utilisation also turns the statistics on.
  if (o.show_utilization || o.show_utilization_all) o.show_statistics = true;
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

struct MapObjectArgs {
  std::string map_path;
  uint32_t pg_num = 0;
  std::optional<uint32_t> pgp_num;
  int size = 3;
  int32_t rule = 0;
  std::optional<int32_t> max_osd;
  std::vector<int32_t> out_osds;
  int64_t pool = 1;
  std::string nspace;
  bool erasure = false;
  bool no_hashpspool = false;
  std::vector<std::string> names;
  std::string objects_path;
};

void run_map_object(MapObjectArgs& a, ExitCode& code) {
  auto map = crush::load_text_map(a.map_path);
  if (!map.ok()) return fail_input(code, map.status());
  const int32_t max_osd = a.max_osd.value_or(map->max_devices());
  if (max_osd < 0) return fail_input(code, "--max-osd must be >= 0, got " + std::to_string(max_osd));
  placement::OsdStates osds = placement::OsdStates::all_up_in(max_osd);
  for (int32_t osd : a.out_osds) {
    if (osd < 0 || osd >= max_osd) {
      return fail_input(code, "--out " + std::to_string(osd) + ": expected an OSD id 0.." +
                                  std::to_string(max_osd - 1));
    }
    osds.mark_out(osd);
  }
  placement::PoolSpec spec;
  spec.id = a.pool;
  spec.pg_num = a.pg_num;
  spec.pgp_num = a.pgp_num.value_or(a.pg_num);
  spec.size = a.size;
  spec.crush_rule = a.rule;
  spec.erasure = a.erasure;
  spec.hashpspool = !a.no_hashpspool;
  auto pool = placement::CrushPool::create(*map, spec, std::move(osds));
  if (!pool.ok()) return fail_input(code, pool.status());

  std::vector<std::string> names = a.names;
  if (!a.objects_path.empty()) {
    std::ifstream in(a.objects_path, std::ios::binary);
    if (!in) return fail_input(code, "--objects: cannot open '" + a.objects_path + "'");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      names.push_back(line);
    }
  }
  if (names.empty()) return fail_input(code, "no object names: give NAME... or --objects FILE");
  std::string out;
  std::vector<int32_t> osd_set;
  char pgid[48];
  for (const std::string& name : names) {
    const uint32_t pg = pool->group_of(name, a.nspace);
    pool->devices_of(pg, osd_set);
    std::snprintf(pgid, sizeof pgid, "%lld.%x", static_cast<long long>(a.pool), pg);
    out += " object '" + name + "' -> " + pgid + " -> [";
    for (size_t i = 0; i < osd_set.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(osd_set[i]);
    }
    out += "]\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void add_map_object_command(CLI::App& crush, ExitCode& code) {
  auto args = std::make_shared<MapObjectArgs>();
  CLI::App* cmd = crush.add_subcommand(
      "map-object",
      "Map object names to placement groups and OSDs, as `osdmaptool --test-map-object` does");
  cmd->add_option("--map", args->map_path, "CRUSH map in Ceph's text format")->required()->check(CLI::ExistingFile);
  cmd->add_option("--pg-num", args->pg_num, "placement groups in the pool")->required()->check(CLI::Range(1u, 1u << 30));
  cmd->add_option("--pgp-num", args->pgp_num, "placement groups for placement (default: pg_num)");
  cmd->add_option("--size", args->size, "replicas (or k+m) per placement group (default 3)")->check(CLI::Range(1, 64));
  cmd->add_option("--rule", args->rule, "CRUSH rule of the pool (default 0)");
  cmd->add_option("--max-osd", args->max_osd, "OSD ids 0..max-osd-1 exist (default: the map's devices)");
  cmd->add_option("--out", args->out_osds, "mark an OSD out (repeatable)");
  cmd->add_option("--pool", args->pool, "pool id (default 1)")->check(CLI::Range(int64_t{0}, int64_t{0xffffffff}));
  cmd->add_option("--namespace", args->nspace, "object namespace (default: none)");
  cmd->add_flag("--erasure", args->erasure, "erasure-coded pool: keep positions, holes as 2147483647");
  cmd->add_flag("--no-hashpspool", args->no_hashpspool, "legacy pool without the hashpspool flag");
  cmd->add_option("--objects", args->objects_path, "file with one object name per line")->check(CLI::ExistingFile);
  cmd->add_option("names", args->names, "object names");
  cmd->callback([args, &code] { run_map_object(*args, code); });
}

void add_print_command(CLI::App& crush, ExitCode& code) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = crush.add_subcommand(
      "print", "Parse a text map and print it back as `crushtool -d` would (canonical form)");
  cmd->add_option("--map", *path, "CRUSH map in Ceph's text format")->required()->check(CLI::ExistingFile);
  cmd->callback([path, &code] {
    auto map = crush::load_text_map(*path);
    if (!map.ok()) return fail_input(code, map.status());
    const std::string text = crush::write_text_map(*map);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

}  // namespace

void register_crush_commands(CLI::App& app, ExitCode& code) {
  CLI::App* crush = app.add_subcommand("crush", "CRUSH placement: test, map objects, analyze");
  crush->require_subcommand(1);
  add_test_command(*crush, code);
  add_map_object_command(*crush, code);
  add_print_command(*crush, code);
}

}  // namespace granary::cli

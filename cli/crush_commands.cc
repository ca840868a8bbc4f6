// granary crush ...: placement commands (test, map-object, analyze, show).
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "engine/crush/edit.h"
#include "engine/crush/tester.h"
#include "engine/crush/text_format.h"
#include "engine/placement/analysis.h"
#include "engine/placement/crush_pool.h"
#include "engine/placement/crush_to_ring.h"
#include "engine/random.h"

namespace granary::cli {

void fail_input(ExitCode& code, const std::string& message) {
  std::cerr << "granary: " << message << "\n";
  code.value = 2;
}

namespace {

struct TestArgs {
  std::string map_path;
  bool test_stage = false;  // crushtool's --test: accepted, it is what this command does
  crush::TestOptions options;
  std::optional<int32_t> x;
  std::optional<int32_t> rule, num_rep, min_x, max_x;
  std::optional<int64_t> pool_id;
  std::optional<int64_t> choose_args;
  std::vector<std::string> weights;  // OSD W pairs, flattened
  // crushtool options that granary does not implement, by name, with the values given.
  std::map<std::string, std::vector<std::string>> unsupported;
};

// A stream buffer that writes to stdout in large blocks as the test runs, so that memory does
// not grow with the number of inputs (--max-x 2^31 with --show-mappings is 60 GB of text).
class StdoutBuf : public std::streambuf {
 public:
  StdoutBuf() { setp(buf_, buf_ + sizeof buf_); }
  ~StdoutBuf() override { sync(); }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    const size_t n = static_cast<size_t>(pptr() - pbase());
    if (n && std::fwrite(pbase(), 1, n, stdout) != n) return -1;
    setp(buf_, buf_ + sizeof buf_);
    return std::fflush(stdout) == 0 ? 0 : -1;
  }

 private:
  char buf_[1 << 16];
};

void run_test(TestArgs& a, ExitCode& code) {
  if (!a.unsupported.empty()) {
    const auto& [name, values] = *a.unsupported.begin();
    return fail_input(code, name +
                                ": crushtool's option is not implemented by granary crush test "
                                "(it implements -i/--map, --test, --rule, --num-rep, --min-x, "
                                "--max-x, --x, --weight, --pool-id, --choose-args and the "
                                "--show-mappings/-bad-mappings/-statistics/-utilization(-all) "
                                "outputs)");
  }
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
      return fail_input(
          code, "--pool-id: expected a pool id 0..4294967295, got " + std::to_string(*a.pool_id));
    }
    o.pool_id = static_cast<uint32_t>(*a.pool_id);
  }
  if (a.choose_args) o.choose_args_index = *a.choose_args;
  // As in crushtool, asking for utilisation also turns the statistics on.
  if (o.show_utilization || o.show_utilization_all) o.show_statistics = true;
  for (size_t i = 0; i + 1 < a.weights.size(); i += 2) {
    const std::string& osd_text = a.weights[i];
    const std::string& w_text = a.weights[i + 1];
    // Short plain values are echoed as typed, anything else quoted (and shortened).
    auto shown = [](const std::string& v) {
      const bool plain =
          !v.empty() && v.size() <= 60 &&
          std::all_of(v.begin(), v.end(), [](char c) { return c > ' ' && c < 0x7f; });
      return plain ? v : crush::quote_for_message(v);
    };
    const std::string flag = "--weight " + shown(osd_text) + " " + shown(w_text);
    char* end = nullptr;
    errno = 0;
    const long osd = std::strtol(osd_text.c_str(), &end, 10);
    if (osd_text.empty() || *end || errno || osd < 0 || osd >= map->max_devices()) {
      return fail_input(code, flag + ": expected a device id 0.." +
                                  std::to_string(map->max_devices() - 1) + ", found " +
                                  crush::quote_for_message(osd_text));
    }
    const float w = std::strtof(w_text.c_str(), &end);
    if (w_text.empty() || *end || !std::isfinite(w)) {
      return fail_input(
          code, flag + ": expected a weight (0..1), found " + crush::quote_for_message(w_text));
    }
    // crushtool clamps the 16.16 value to 0..1; clamping first gives the same numbers without
    // converting an out-of-range float to int.
    o.weights[static_cast<int32_t>(osd)] = std::clamp(w, 0.0f, 1.0f);
  }
  // crushtool's statistics multiply the number of inputs by the replicas in an int.
  if (o.show_statistics && o.min_x <= o.max_x) {
    int64_t reps = o.num_rep.value_or(0);
    for (int32_t r = 0; !o.num_rep && r < map->max_rules(); ++r) {
      const crush::Rule* rule = map->rule(r);
      if (rule && (!o.rule || *o.rule == r)) reps = std::max<int64_t>(reps, rule->max_size);
    }
    const int64_t inputs = int64_t{o.max_x} - o.min_x + 1;
    if (inputs * reps > INT32_MAX) {
      return fail_input(code, "--min-x " + std::to_string(o.min_x) + " --max-x " +
                                  std::to_string(o.max_x) + ": expected at most 2147483647 " +
                                  "inputs x replicas with --show-statistics/--show-utilization "
                                  "(crushtool's counters are 32-bit), found " +
                                  std::to_string(inputs) + " x " + std::to_string(reps));
    }
  }
  StdoutBuf buf;
  std::ostream out(&buf);
  if (Status s = crush::run_crush_test(*map, o, out); !s.ok()) return fail_input(code, s);
  out.flush();
}

void add_test_command(CLI::App& crush, ExitCode& code) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd = crush.add_subcommand(
      "test",
      "Map inputs through a rule, as `crushtool --test` does (byte-identical output); a "
      "crushtool command line works as is, with the text map given to -i");
  cmd->add_option("--map,-i,--infn", args->map_path,
                  "CRUSH map in Ceph's text format (crushtool -d); a compiled map is refused")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--test", args->test_stage, "accepted for crushtool compatibility (no effect)");
  const CLI::Range x_range(0, INT32_MAX - 1);
  cmd->add_option("--rule", args->rule, "rule id to test (default: every rule)")
      ->check(CLI::Range(0, crush::kMaxRuleId));
  cmd->add_option("--num-rep,--num_rep", args->num_rep,
                  "number of replicas (default: rule min..max size)")
      ->check(CLI::Range(1, crush::kMaxRuleSize));
  cmd->add_option("--min-x,--min_x", args->min_x, "first input (default 0)")->check(x_range);
  cmd->add_option("--max-x,--max_x", args->max_x, "last input (default 1023)")->check(x_range);
  cmd->add_option("--x", args->x, "a single input")->check(x_range);
  cmd->add_option("--pool-id,--pool_id", args->pool_id,
                  "mix inputs with this pool id (hashpspool)");
  cmd->add_option("--weight,-w", args->weights, "reweight a device: --weight OSD W (W in 0..1)")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("OSD W");
  cmd->add_option("--choose-args,--choose_args", args->choose_args,
                  "weight set index to use (default: 0, else the -1 compat set)");
  cmd->add_flag("--show-mappings,--show_mappings", args->options.show_mappings,
                "print each input's mapping");
  cmd->add_flag("--show-statistics,--show_statistics", args->options.show_statistics,
                "print result-size statistics");
  cmd->add_flag("--show-utilization,--show_utilization", args->options.show_utilization,
                "print per-device counts");
  cmd->add_flag("--show-utilization-all,--show_utilization_all", args->options.show_utilization_all,
                "print per-device counts, devices without data included");
  cmd->add_flag("--show-bad-mappings,--show_bad_mappings", args->options.show_bad_mappings,
                "print inputs that got fewer results than asked");
  // crushtool options this command does not implement: accepted by the parser so that the
  // refusal names them (CLI11 would only say "arguments were not expected").
  const std::pair<const char*, int> kUnsupported[] = {
      {"--min-rule", 1},
      {"--max-rule", 1},
      {"--ruleset", 1},
      {"--batches", 1},
      {"--simulate", 0},
      {"--show-choose-tries", 0},
      {"--output-name", 1},
      {"--output-csv", 0},
      {"--compare", 1},
      {"--mark-down-device-ratio", 1},
      {"--mark-down-bucket-ratio", 1},
      {"-o", 1},
      {"--outfn", 1},
      {"-d", 1},
      {"--decompile", 1},
      {"-c", 1},
      {"--compile", 1},
      {"--tree", 0},
      {"--dump", 0},
      {"--build", 0},
      {"-v", 0},
      {"--verbose", 0},
      {"--check", 0},
  };
  for (const auto& [name, nargs] : kUnsupported) {
    std::string n = name;
    if (nargs == 0) {
      cmd->add_flag_callback(
             n, [args, n] { args->unsupported[n]; }, "")
          ->group("");
    } else {
      cmd->add_option_function<std::string>(
             n, [args, n](const std::string& v) { args->unsupported[n].push_back(v); }, "")
          ->group("");
    }
  }
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

  std::ifstream objects;
  if (!a.objects_path.empty()) {
    objects.open(a.objects_path, std::ios::binary);
    if (!objects) {
      return fail_input(code, "--objects: cannot open " + crush::quote_for_message(a.objects_path));
    }
  }
  if (a.names.empty() && a.objects_path.empty())
    return fail_input(code, "no object names: give NAME... or --objects FILE");
  // Names are mapped and printed one at a time (an objects file may be large); lines longer
  // than an object name can be are refused (RADOS' osd_max_object_name_len is 2048).
  constexpr size_t kMaxObjectNameBytes = 2048;
  std::string out;
  std::vector<int32_t> osd_set;
  char pgid[48];
  auto print = [&](const std::string& name) {
    const uint32_t pg = pool->group_of(name, a.nspace);
    pool->devices_of(pg, osd_set);
    std::snprintf(pgid, sizeof pgid, "%lld.%x", static_cast<long long>(a.pool), pg);
    out += " object '" + name + "' -> " + pgid + " -> [";
    for (size_t i = 0; i < osd_set.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(osd_set[i]);
    }
    out += "]\n";
    if (out.size() >= (1u << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  for (const std::string& name : a.names) {
    if (name.size() > kMaxObjectNameBytes) {
      return fail_input(code, "expected an object name of at most 2048 bytes, found " +
                                  crush::quote_for_message(name));
    }
  }
  for (const std::string& name : a.names) print(name);
  if (objects.is_open()) {
    std::string line;
    for (uint64_t n = 1;; ++n) {
      line.clear();
      char ch;
      while (objects.get(ch) && ch != '\n') {
        if (line.size() > kMaxObjectNameBytes) break;
        line += ch;
      }
      if (line.size() > kMaxObjectNameBytes) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        return fail_input(code, a.objects_path + ":" + std::to_string(n) +
                                    ": expected an object name of at most 2048 bytes, found " +
                                    crush::quote_for_message(line) + " and more");
      }
      if (!objects && line.empty()) break;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      print(line);
      if (!objects) break;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void add_map_object_command(CLI::App& crush, ExitCode& code) {
  auto args = std::make_shared<MapObjectArgs>();
  CLI::App* cmd = crush.add_subcommand(
      "map-object",
      "Map object names to placement groups and OSDs, as `osdmaptool --test-map-object` does");
  cmd->add_option("--map", args->map_path, "CRUSH map in Ceph's text format")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--pg-num", args->pg_num, "placement groups in the pool")
      ->required()
      ->check(CLI::Range(1u, 1u << 30));
  cmd->add_option("--pgp-num", args->pgp_num, "placement groups for placement (default: pg_num)")
      ->check(CLI::Range(1u, 1u << 30));
  cmd->add_option("--size", args->size, "replicas (or k+m) per placement group (default 3)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--rule", args->rule, "CRUSH rule of the pool (default 0)");
  cmd->add_option("--max-osd", args->max_osd,
                  "OSD ids 0..max-osd-1 exist (default: the map's devices)")
      ->check(CLI::Range(0, crush::kMaxDeviceId + 1));
  cmd->add_option("--out", args->out_osds, "mark an OSD out (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--pool", args->pool, "pool id (default 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{0xffffffff}));
  cmd->add_option("--namespace", args->nspace, "object namespace (default: none)");
  cmd->add_flag("--erasure", args->erasure,
                "erasure-coded pool: keep positions, holes as 2147483647");
  cmd->add_flag("--no-hashpspool", args->no_hashpspool, "legacy pool without the hashpspool flag");
  cmd->add_option("--objects", args->objects_path, "file with one object name per line")
      ->check(CLI::ExistingFile);
  cmd->add_option("names", args->names, "object names");
  cmd->callback([args, &code] { run_map_object(*args, code); });
}

void add_print_command(CLI::App& crush, ExitCode& code) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = crush.add_subcommand(
      "print", "Parse a text map and print it back as `crushtool -d` would (canonical form)");
  cmd->add_option("--map", *path, "CRUSH map in Ceph's text format")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->callback([path, &code] {
    auto map = crush::load_text_map(*path);
    if (!map.ok()) return fail_input(code, map.status());
    const std::string text = crush::write_text_map(*map);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
}

struct AnalyzeArgs {
  std::string map_path;
  int32_t rule = 0;
  int size = 3;
  uint32_t pg_num = 4096;
  int64_t pool = 1;
  std::vector<int32_t> out_osds;
  std::vector<std::string> add_like;
  bool compare_ring = false;
  uint64_t seed = 1;
  bool json = false;
};

std::string osd_label(const crush::CrushMap& m, int32_t osd) {
  const std::string* n = m.item_name(osd);
  return n ? *n : "osd." + std::to_string(osd);
}

std::string fixed(double x, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, x);
  return b;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100.0 * x);
  return b;
}

// The figures of one placement policy: its utilisation and the two what-ifs.
struct PolicyFigures {
  placement::UtilizationReport utilization;
  std::optional<placement::MovementReport> out_move;
  std::optional<placement::MovementReport> add_move;
};

nlohmann::json to_json(const PolicyFigures& f) {
  const placement::UtilizationReport& u = f.utilization;
  auto move_json = [](const placement::MovementReport& m) {
    return nlohmann::json{{"groups", m.groups},
                          {"shards_before", m.shards_before},
                          {"shards_moved", m.shards_moved},
                          {"groups_changed", m.groups_changed},
                          {"minimum_shards_moved", m.minimum_moved},
                          {"moved_over_minimum", m.ratio()}};
  };
  nlohmann::json j;
  j["utilization"] = {{"shards", u.shards},
                      {"devices_with_target", u.devices_with_target},
                      {"short_groups", u.short_groups},
                      {"failure_domain_violations", u.domain_violations},
                      {"shards_off_target", u.shards_off_target},
                      {"deviation_stddev", u.deviation_stddev},
                      {"deviation_max", u.deviation_max},
                      {"deviation_min", u.deviation_min},
                      {"most_loaded_osd", u.most_loaded},
                      {"least_loaded_osd", u.least_loaded}};
  if (f.out_move) j["osd_out"] = move_json(*f.out_move);
  if (f.add_move) j["host_added"] = move_json(*f.add_move);
  return j;
}

void print_figures(std::ostream& o, const crush::CrushMap& map, const AnalyzeArgs& a,
                   const PolicyFigures& f, const std::string& added_desc) {
  const placement::UtilizationReport& u = f.utilization;
  o << "  utilisation (shards per OSD against the weight-proportional ideal)\n";
  if (u.devices_with_target > 0) {
    o << "    standard deviation " << fixed(100.0 * u.deviation_stddev, 1) << "%\n";
    o << "    most loaded  " << osd_label(map, u.most_loaded) << " " << u.per_device[u.most_loaded]
      << " shards, ideal " << fixed(u.expected[u.most_loaded], 1) << " (" << pct(u.deviation_max)
      << ")\n";
    o << "    least loaded " << osd_label(map, u.least_loaded) << " "
      << u.per_device[u.least_loaded] << " shards, ideal " << fixed(u.expected[u.least_loaded], 1)
      << " (" << pct(u.deviation_min) << ")\n";
  }
  o << "    PGs with fewer than " << a.size << " OSDs: " << u.short_groups << "\n";
  o << "    PGs with two shards in one failure domain: " << u.domain_violations << "\n";
  auto print_move = [&](const placement::MovementReport& m) {
    o << "    shards moved " << m.shards_moved << " of " << m.shards_before << " ("
      << fixed(100.0 * m.shards_moved / std::max<uint64_t>(1, m.shards_before), 2)
      << "%), groups changed " << m.groups_changed << "\n";
    o << "    minimum possible " << fixed(m.minimum_moved, 1) << " shards; moved/minimum "
      << fixed(m.ratio(), 2) << "x\n";
  };
  if (f.out_move) {
    o << "  what if";
    for (int32_t osd : a.out_osds) o << " " << osd_label(map, osd);
    o << " go" << (a.out_osds.size() == 1 ? "es" : "") << " out\n";
    print_move(*f.out_move);
  }
  if (f.add_move) {
    o << "  what if " << added_desc << " join" << (a.add_like.size() == 1 ? "s" : "") << "\n";
    print_move(*f.add_move);
  }
}

// The same questions for a consistent-hash ring built over the rule's devices.
Result<PolicyFigures> ring_figures(const crush::CrushMap& map, const crush::CrushMap& grown,
                                   const AnalyzeArgs& a, const placement::MovementOptions& mopt) {
  placement::RingOptions ro;
  ro.replicas = a.size;
  ro.part_power = std::clamp(32 - __builtin_clz(std::max(1u, a.pg_num - 1)), 1, 24);
  auto builder = placement::ring_builder_from_crush(map, a.rule, ro);
  if (!builder.ok()) return builder.status();
  Random rng(a.seed);
  if (auto r = builder->rebalance(rng); !r.ok()) return r.status();
  auto base = builder->build();
  if (!base.ok()) return base.status();
  PolicyFigures f;
  f.utilization = placement::analyze_utilization(*base);
  if (!a.out_osds.empty()) {
    placement::RingBuilder b = *builder;
    for (int32_t osd : a.out_osds) {
      if (b.devices().count(osd)) {
        if (Status s = b.set_weight(osd, 0); !s.ok()) return s;
      }
    }
    if (auto r = b.rebalance(rng); !r.ok()) return r.status();
    auto after = b.build();
    if (!after.ok()) return after.status();
    f.out_move = placement::compare_placements(*base, *after, mopt);
  }
  if (!a.add_like.empty()) {
    // The devices the CRUSH what-if added (ids beyond the original map), in the zone of the
    // host they copy.
    placement::RingBuilder b = *builder;
    auto grown_builder = placement::ring_builder_from_crush(grown, a.rule, ro);
    if (!grown_builder.ok()) return grown_builder.status();
    for (const auto& [id, dev] : grown_builder->devices()) {
      if (b.devices().count(id)) continue;
      if (Status s = b.add_device(dev); !s.ok()) return s;
    }
    if (auto r = b.rebalance(rng); !r.ok()) return r.status();
    auto after = b.build();
    if (!after.ok()) return after.status();
    f.add_move = placement::compare_placements(*base, *after, mopt);
  }
  return f;
}

void run_analyze(AnalyzeArgs& a, ExitCode& code) {
  auto map = crush::load_text_map(a.map_path);
  if (!map.ok()) return fail_input(code, map.status());
  const crush::Rule* rule = map->rule(a.rule);
  if (!rule)
    return fail_input(code,
                      "--rule " + std::to_string(a.rule) + ": " + a.map_path + " has no such rule");
  placement::PoolSpec spec;
  spec.id = a.pool;
  spec.pg_num = a.pg_num;
  spec.size = a.size;
  spec.crush_rule = a.rule;
  spec.erasure = rule->type == crush::kRuleErasure;
  const int32_t max_osd = map->max_devices();
  for (int32_t osd : a.out_osds) {
    if (osd < 0 || osd >= max_osd) {
      return fail_input(code, "--out-osd " + std::to_string(osd) + ": expected an OSD id 0.." +
                                  std::to_string(max_osd - 1));
    }
  }
  auto pool = placement::CrushPool::create(*map, spec, placement::OsdStates::all_up_in(max_osd));
  if (!pool.ok()) return fail_input(code, pool.status());
  const placement::MovementOptions mopt{spec.erasure};

  PolicyFigures crush_fig;
  crush_fig.utilization = placement::analyze_utilization(*pool);
  if (!a.out_osds.empty()) {
    placement::OsdStates st = placement::OsdStates::all_up_in(max_osd);
    for (int32_t osd : a.out_osds) st.mark_out(osd);
    auto after = placement::CrushPool::create(*map, spec, st);
    if (!after.ok()) return fail_input(code, after.status());
    crush_fig.out_move = placement::compare_placements(*pool, *after, mopt);
  }
  crush::CrushMap grown = *map;
  std::string added_desc;
  if (!a.add_like.empty()) {
    for (size_t i = 0; i < a.add_like.size(); ++i) {
      const std::string name =
          "new-" + a.add_like[i] + (a.add_like.size() > 1 ? "-" + std::to_string(i) : "");
      auto id = crush::add_bucket_like(grown, a.add_like[i], name);
      if (!id.ok())
        return fail_input(code, "--add-host-like " + a.add_like[i] + ": " + id.status().message());
      added_desc += (added_desc.empty() ? "" : ", ") + name + " (" +
                    std::to_string(grown.bucket(*id)->size()) + " OSDs, weight " +
                    crush::format_fixed_16_16(grown.bucket(*id)->weight) + ")";
    }
    // Compare against the original map over the grown device id range so that shares line up.
    auto before = placement::CrushPool::create(
        *map, spec, placement::OsdStates::all_up_in(grown.max_devices()));
    auto after = placement::CrushPool::create(grown, spec,
                                              placement::OsdStates::all_up_in(grown.max_devices()));
    if (!before.ok() || !after.ok())
      return fail_input(code, before.ok() ? after.status() : before.status());
    crush_fig.add_move = placement::compare_placements(*before, *after, mopt);
  }
  std::optional<PolicyFigures> ring_fig;
  if (a.compare_ring) {
    auto r = ring_figures(*map, grown, a, mopt);
    if (!r.ok()) return fail_input(code, "--compare-ring: " + r.status().message());
    ring_fig = std::move(*r);
  }

  if (a.json) {
    nlohmann::json j;
    j["map"] = a.map_path;
    j["pool"] = {{"id", a.pool},   {"rule", a.rule},     {"rule_name", rule->name},
                 {"size", a.size}, {"pg_num", a.pg_num}, {"erasure", spec.erasure}};
    j["what_if"] = {{"osds_out", a.out_osds}, {"hosts_added", added_desc}};
    j["crush"] = to_json(crush_fig);
    if (ring_fig) {
      j["ring"] = to_json(*ring_fig);
      j["ring"]["seed"] = a.seed;
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ostringstream o;
  o << "Placement quality of " << a.map_path << "\n";
  o << "  pool " << a.pool << ": rule " << a.rule << " (" << rule->name << ", "
    << (spec.erasure ? "erasure" : "replicated") << "), size " << a.size << ", " << a.pg_num
    << " PGs\n";
  o << "  OSDs the rule can use: " << crush_fig.utilization.devices_with_target
    << "; shards placed: " << crush_fig.utilization.shards << " of " << uint64_t{a.pg_num} * a.size
    << "\n";
  o << "\nCRUSH\n";
  print_figures(o, *map, a, crush_fig, added_desc);
  if (ring_fig) {
    o << "\nConsistent-hash ring over the same OSDs (" << ring_fig->utilization.groups
      << " partitions, hosts kept apart within racks, seed " << a.seed << ")\n";
    print_figures(o, *map, a, *ring_fig, added_desc);
  }
  std::cout << o.str();
}

void add_analyze_command(CLI::App& crush, ExitCode& code) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = crush.add_subcommand(
      "analyze",
      "Placement quality: utilisation spread, and data moved when OSDs go out or a host is added");
  cmd->add_option("--map", args->map_path, "CRUSH map in Ceph's text format")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--rule", args->rule, "CRUSH rule of the pool (default 0)");
  cmd->add_option("--pool-size", args->size, "replicas, or k+m for an erasure rule (default 3)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--pg-num", args->pg_num, "placement groups (default 4096)")
      ->check(CLI::Range(1u, 1u << 22));
  cmd->add_option("--pool-id", args->pool, "pool id (default 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{0xffffffff}));
  cmd->add_option("--out-osd", args->out_osds, "what if this OSD is marked out (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--add-host-like", args->add_like,
                  "what if a host shaped like this one joins its parent (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--compare-ring", args->compare_ring,
                "also answer the same questions for a consistent-hash ring over the same OSDs");
  cmd->add_option("--seed", args->seed, "seed of the ring builder's tie-breaks (default 1)");
  cmd->add_flag("--json", args->json, "print the figures as JSON");
  cmd->callback([args, &code] { run_analyze(*args, code); });
}

}  // namespace

void register_crush_commands(CLI::App& app, ExitCode& code) {
  CLI::App* crush = app.add_subcommand("crush", "CRUSH placement: test, map objects, analyze");
  crush->require_subcommand(1);
  add_test_command(*crush, code);
  add_map_object_command(*crush, code);
  add_print_command(*crush, code);
  add_analyze_command(*crush, code);
}

}  // namespace granary::cli

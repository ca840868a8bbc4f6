// Reading plan files (plan.h, docs/plan-format.md).
#include "planner/plan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "models/json_diagnostics.h"
#include "models/scenario_json.h"
#include "planner/design_space.h"

namespace granary::planner {
namespace {

namespace fs = std::filesystem;
using models::json_diag::describe;
using models::json_diag::join;
using nlohmann::json;

// Axes hold at most this many values and a space this many points: enough for any question an
// architect asks of one plan, and every point is built and screened.
constexpr size_t kMaxAxisValues = 64;
constexpr int64_t kMaxPoints = 100000;

struct PlanError {
  std::string message;
};

class Reader {
 public:
  Reader(std::string source, fs::path dir, const models::Catalog& catalog)
      : source_(std::move(source)), dir_(std::move(dir)), catalog_(catalog) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw PlanError{source_ + ": " + (path.empty() ? "" : path + ": ") + what};
  }
  [[noreturn]] void expected(const std::string& path, const std::string& what,
                             const json* found) const {
    fail(path, "expected " + what + ", found " + (found ? describe(*found) : "nothing"));
  }
  // Fails on a key of object `j` (at `path`) that is not one of `known`.
  void keys(const json& j, const std::string& path, std::vector<std::string_view> known) const {
    if (!j.is_object()) expected(path, "an object", &j);
    for (const auto& [key, value] : j.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(join(path, key), models::json_diag::unknown_key(key, known));
      }
    }
  }
  std::string text(const json& j, const std::string& path) const {
    if (!j.is_string() || j.get<std::string>().empty()) expected(path, "a non-empty string", &j);
    return j.get<std::string>();
  }
  int integer(const json& j, const std::string& path, int min, int max) const {
    const std::string want = "an integer in " + std::to_string(min) + ".." + std::to_string(max);
    if (!j.is_number_integer()) expected(path, want, &j);
    const int64_t v = j.get<int64_t>();
    if (v < min || v > max) expected(path, want, &j);
    return static_cast<int>(v);
  }
  double number(const json& j, const std::string& path, double min, double max) const {
    std::ostringstream want;
    want << "a number in [" << min << ", " << max << "]";
    if (!j.is_number() || !std::isfinite(j.get<double>())) expected(path, want.str(), &j);
    const double v = j.get<double>();
    if (v < min || v > max) expected(path, want.str(), &j);
    return v;
  }
  // Reads `object[key]` (at `path`.key) into `out` when the key is there.
  void optional(const json& object, const std::string& path, const char* key, double min,
                double max, double& out) const {
    if (object.contains(key)) out = number(object[key], join(path, key), min, max);
  }
  void optional(const json& object, const std::string& path, const char* key, int min, int max,
                int& out) const {
    if (object.contains(key)) out = integer(object[key], join(path, key), min, max);
  }
  // The non-empty array at `path`, of distinct values read by `item`.
  template <class T, class F>
  std::vector<T> axis(const json& j, const std::string& path, F item) const {
    if (!j.is_array() || j.empty() || j.size() > kMaxAxisValues) {
      expected(path, "an array of 1.." + std::to_string(kMaxAxisValues) + " values", &j);
    }
    std::vector<T> out;
    std::set<std::string> seen;
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      out.push_back(item(j[i], at));
      if (!seen.insert(j[i].dump()).second) fail(at, "repeats " + describe(j[i]));
    }
    return out;
  }
  const std::string& source() const { return source_; }
  const fs::path& dir() const { return dir_; }
  const models::Catalog& catalog() const { return catalog_; }

 private:
  std::string source_;
  fs::path dir_;
  const models::Catalog& catalog_;
};

std::string read_file(const std::string& path, Status* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = Status::not_found(path + ": cannot open the file");
    return {};
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The profile `name` of `kind` exists in the catalog (else the lookup's message).
void check_profile(const Reader& r, const std::string& path, const std::string& kind,
                   const std::string& name) {
  const models::Catalog& c = r.catalog();
  Status s;
  if (kind == "drive") s = c.drive(name).status();
  if (kind == "nic") s = c.nic(name).status();
  if (kind == "server") s = c.server(name).status();
  if (kind == "switch") s = c.fabric_switch(name).status();
  if (kind == "protocol") s = c.protocol(name).status();
  if (!s.ok()) r.fail(path, s.message());
}

Redundancy parse_redundancy(const Reader& r, const json& j, const std::string& path) {
  const std::string want = "\"<r>x\" (replicas, 1..10) or \"ec<k>+<m>\" (k, m in 1..32)";
  if (!j.is_string()) r.expected(path, want, &j);
  const std::string s = j.get<std::string>();
  Redundancy out;
  int a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "ec%d+%d%c", &a, &b, &tail) == 2 && a >= 1 && a <= 32 && b >= 1 &&
      b <= 32) {
    out.k = a;
    out.m = b;
  } else if (std::sscanf(s.c_str(), "%dx%c", &a, &tail) == 1 && a >= 1 && a <= 10 &&
             s == std::to_string(a) + "x") {
    out.replicas = a;
  } else {
    r.expected(path, want, &j);
  }
  if (out.name() != s) r.expected(path, want, &j);
  return out;
}

models::StorageDesign parse_design(const Reader& r, const json& j, const std::string& path) {
  const std::string want = "one of \"rados\", \"pfs\", \"nfs\"";
  if (!j.is_string()) r.expected(path, want, &j);
  const std::string s = j.get<std::string>();
  if (s == "rados") return models::StorageDesign::kRados;
  if (s == "pfs") return models::StorageDesign::kPfs;
  if (s == "nfs") return models::StorageDesign::kNfs;
  if (s == "local") {
    r.fail(path,
           "design \"local\" keeps the drives in the client nodes: it has no storage "
           "servers to size (expected " +
               want + ")");
  }
  r.expected(path, want, &j);
}

DesignSpace parse_space(const Reader& r, const json& j) {
  r.keys(j, "space",
         {"storage_servers", "drives_per_server", "drive", "nic", "nics_per_server", "server",
          "redundancy", "design", "protocol", "gds"});
  DesignSpace s;
  auto ints = [&](const char* key, int max) {
    if (!j.contains(key)) return std::vector<int>{};
    return r.axis<int>(j[key], join("space", key), [&](const json& v, const std::string& at) {
      return r.integer(v, at, 1, max);
    });
  };
  auto names = [&](const char* key, const std::string& kind) {
    if (!j.contains(key)) return std::vector<std::string>{};
    return r.axis<std::string>(j[key], join("space", key),
                               [&](const json& v, const std::string& at) {
                                 std::string n = r.text(v, at);
                                 check_profile(r, at, kind, n);
                                 return n;
                               });
  };
  s.storage_servers = ints("storage_servers", 4096);
  s.drives_per_server = ints("drives_per_server", 1024);
  s.nics_per_server = ints("nics_per_server", 64);
  s.drives = names("drive", "drive");
  s.nics = names("nic", "nic");
  s.servers = names("server", "server");
  s.protocols = names("protocol", "protocol");
  if (j.contains("redundancy")) {
    s.redundancy = r.axis<Redundancy>(
        j["redundancy"], "space.redundancy",
        [&](const json& v, const std::string& at) { return parse_redundancy(r, v, at); });
  }
  if (j.contains("design")) {
    s.designs = r.axis<models::StorageDesign>(
        j["design"], "space.design",
        [&](const json& v, const std::string& at) { return parse_design(r, v, at); });
  }
  if (j.contains("gds")) {
    s.gds = r.axis<bool>(j["gds"], "space.gds", [&](const json& v, const std::string& at) {
      if (!v.is_boolean()) r.expected(at, "true or false", &v);
      return v.get<bool>();
    });
  }
  // Each axis holds at most kMaxAxisValues values: the product fits int64_t.
  if (const int64_t points = space_size(s); points > kMaxPoints) {
    r.fail("space", "the axes make " + std::to_string(points) + " design points (at most " +
                        std::to_string(kMaxPoints) + "): split the plan");
  }
  return s;
}

PlanCase parse_case(const Reader& r, const json& j, const std::string& path) {
  r.keys(j, path, {"name", "scenario", "targets"});
  PlanCase c;
  if (!j.contains("name")) r.expected(join(path, "name"), "a non-empty string", nullptr);
  c.name = r.text(j["name"], join(path, "name"));
  if (!j.contains("scenario")) r.expected(join(path, "scenario"), "a scenario file", nullptr);
  const std::string given = r.text(j["scenario"], join(path, "scenario"));
  fs::path p(given);
  if (p.is_relative()) p = r.dir() / p;
  c.scenario_path = p.lexically_normal().string();
  Status error;
  c.scenario_text = read_file(c.scenario_path, &error);
  if (!error.ok()) r.fail(join(path, "scenario"), error.message());
  auto s = models::parse_scenario(c.scenario_text, c.scenario_path, r.catalog());
  if (!s.ok()) r.fail(join(path, "scenario"), s.status().message());
  c.scenario = std::move(s).value();
  if (!c.scenario.storage.rados.crush_map_path.empty()) {
    r.fail(join(path, "scenario"),
           "the scenario names storage.rados.crush_map, which fixes the storage devices: the "
           "planner generates the map of each design (remove crush_map)");
  }
  if (!j.contains("targets")) r.expected(join(path, "targets"), "an array of targets", nullptr);
  auto targets = models::parse_expectations(j["targets"], r.source(), join(path, "targets"));
  if (!targets.ok()) throw PlanError{targets.status().message()};
  c.targets = std::move(targets).value();
  for (size_t i = 0; i < c.targets.size(); ++i) {
    const auto cmp = c.targets[i].comparator;
    if (cmp != models::Comparator::kAtLeast && cmp != models::Comparator::kAtMost) {
      r.fail(join(path, "targets") + "[" + std::to_string(i) + "]",
             "a target is at_least or at_most a number (the planner ranks designs by their "
             "margin), found " +
                 std::string(models::comparator_key(cmp)));
    }
  }
  return c;
}

StorageTargets parse_targets(const Reader& r, const json& j) {
  r.keys(j, "targets", {"usable_capacity_tb", "durability_nines", "power_kw", "rack_units"});
  StorageTargets t;
  r.optional(j, "targets", "usable_capacity_tb", 0.0, 1e9, t.usable_capacity_tb);
  r.optional(j, "targets", "durability_nines", 0.0, 30.0, t.durability_nines);
  r.optional(j, "targets", "power_kw", 0.0, 1e6, t.power_kw);
  r.optional(j, "targets", "rack_units", 1, 1000000, t.rack_units);
  return t;
}

std::map<std::string, double> parse_prices(const Reader& r, const json& j) {
  if (!j.is_object()) r.expected("prices_usd", "an object", &j);
  std::map<std::string, double> out;
  for (const auto& [key, value] : j.items()) {
    const std::string at = join("prices_usd", key);
    const size_t colon = key.find(':');
    const std::string kind = colon == std::string::npos ? "" : key.substr(0, colon);
    if (kind != "drive" && kind != "nic" && kind != "server" && kind != "switch") {
      r.fail(at,
             "expected a key \"drive:NAME\", \"nic:NAME\", \"server:NAME\" or "
             "\"switch:NAME\"");
    }
    check_profile(r, at, kind, key.substr(colon + 1));
    out[key] = r.number(value, at, 0, 1e9);
  }
  return out;
}

SearchOptions parse_search(const Reader& r, const json& j) {
  r.keys(j, "search", {"max_points", "front_points", "max_fill", "screen_slack"});
  SearchOptions o;
  r.optional(j, "search", "max_points", 1, 100000, o.max_points);
  r.optional(j, "search", "front_points", 0, 1000, o.front_points);
  r.optional(j, "search", "max_fill", 0.01, 1.0, o.max_fill);
  r.optional(j, "search", "screen_slack", 0.0, 1.0, o.screen_slack);
  return o;
}

// Every case describes the same storage hardware: the planner sizes one storage system.
void check_cases_share_storage(const Reader& r, const std::vector<PlanCase>& cases) {
  const json first = json::parse(cases[0].scenario_text)["cluster"]["storage"];
  for (size_t i = 1; i < cases.size(); ++i) {
    if (json::parse(cases[i].scenario_text)["cluster"]["storage"] != first) {
      r.fail("cases[" + std::to_string(i) + "].scenario",
             "its cluster.storage differs from cases[0]'s: every case must describe the same "
             "storage servers (the planner varies them together)");
    }
  }
}

Plan parse(const Reader& r, const json& j) {
  r.keys(
      j, "",
      {"granary_plan", "name", "description", "cases", "targets", "space", "prices_usd", "search"});
  Plan p;
  if (!j.contains("granary_plan") || j["granary_plan"] != kPlanFormatVersion) {
    r.expected("granary_plan", "1 (the plan format this build reads)",
               j.contains("granary_plan") ? &j["granary_plan"] : nullptr);
  }
  if (!j.contains("name")) r.expected("name", "a non-empty string", nullptr);
  p.name = r.text(j["name"], "name");
  if (j.contains("description")) {
    if (!j["description"].is_string()) r.expected("description", "a string", &j["description"]);
    p.description = j["description"].get<std::string>();
  }
  if (!j.contains("cases") || !j["cases"].is_array() || j["cases"].empty() ||
      j["cases"].size() > 16) {
    r.expected("cases", "an array of 1..16 cases", j.contains("cases") ? &j["cases"] : nullptr);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < j["cases"].size(); ++i) {
    const std::string at = "cases[" + std::to_string(i) + "]";
    p.cases.push_back(parse_case(r, j["cases"][i], at));
    if (!names.insert(p.cases.back().name).second) {
      r.fail(join(at, "name"), "repeats the case name '" + p.cases.back().name + "'");
    }
  }
  check_cases_share_storage(r, p.cases);
  if (j.contains("targets")) p.targets = parse_targets(r, j["targets"]);
  if (!j.contains("space")) r.expected("space", "an object of design axes", nullptr);
  p.space = parse_space(r, j["space"]);
  if (j.contains("prices_usd")) p.prices_usd = parse_prices(r, j["prices_usd"]);
  if (j.contains("search")) p.search = parse_search(r, j["search"]);
  if (p.targets.durability_nines > 0 && !p.space.designs.empty() &&
      std::any_of(p.space.designs.begin(), p.space.designs.end(),
                  [](auto d) { return d != models::StorageDesign::kRados; })) {
    r.fail("targets.durability_nines",
           "durability is modelled for design rados only, and space.design lists others");
  }
  if (p.targets.durability_nines > 0 &&
      std::none_of(p.cases.begin(), p.cases.end(),
                   [](const PlanCase& c) { return models::has_failures(c.scenario); })) {
    r.fail("targets.durability_nines",
           "durability is measured from a failure: add a case whose scenario fails a drive (its "
           "recovery time gives recovery.durability.nines)");
  }
  return p;
}

}  // namespace

std::string Redundancy::name() const {
  if (k > 0) return "ec" + std::to_string(k) + "+" + std::to_string(m);
  return std::to_string(replicas) + "x";
}

Result<Plan> parse_plan(std::string_view json_text, std::string_view source_path,
                        const models::Catalog& catalog) {
  const std::string source(source_path);
  if (auto bad = models::json_diag::utf8_problem(json_text)) {
    return Status::invalid_argument(source + ": " + *bad);
  }
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    const auto at = models::json_diag::text_position(json_text, e.byte > 0 ? e.byte - 1 : 0);
    return Status::invalid_argument(source + ":" + std::to_string(at.line) + ":" +
                                    std::to_string(at.column) + ": invalid JSON");
  }
  fs::path dir = fs::path(source).parent_path();
  if (dir.empty()) dir = ".";
  try {
    Plan p = parse(Reader(source, dir, catalog), j);
    p.source_path = source;
    p.source_sha256 = models::sha256_hex(json_text);
    return p;
  } catch (const PlanError& e) {
    return Status::invalid_argument(e.message);
  }
}

Result<Plan> load_plan(const std::string& path, const models::Catalog& catalog) {
  Status error;
  const std::string text = read_file(path, &error);
  if (!error.ok()) return error;
  return parse_plan(text, path, catalog);
}

}  // namespace granary::planner

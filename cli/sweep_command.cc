// granary plan sweep: a read storm at several sizes — client nodes, or accelerators per node —
// each point simulated in its own child process, with aggregate throughput, AU and what binds
// or saturates at each point, and where storage stops keeping up (docs/report-format.md,
// "Sweeps").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/child_run.h"
#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/progress.h"
#include "models/scenario_json.h"
#include "sim/cost_estimate.h"

namespace granary::cli {
namespace {

// A point's throughput that grew less than this while the swept parameter grew at least
// kPlateauGrowth times counts as a plateau: storage stopped keeping up.
constexpr double kPlateauGain = 0.10;
constexpr double kPlateauGrowth = 1.25;
constexpr size_t kMaxPoints = 32;

struct SweepArgs {
  std::string path;
  std::vector<int> clients, per_node;
  std::string out;
  std::string progress = "none";  // --progress: none or json (checked by CLI11)
  std::string catalog_db;         // --catalog-db
};

// The figures of one point, from its report.
nlohmann::json point_json(int value, const nlohmann::json& r) {
  const auto& s = r["summary"];
  const auto& b = r["bounds"];
  const auto& u = r["utilization"];
  nlohmann::json first = nlohmann::json::array();
  for (const auto& f : u["saturated"]["first"]) {
    if (first.size() == 3) break;
    first.push_back({{"name", f["name"]}, {"kind", f["kind"]}, {"at_s", f["at_s"]}});
  }
  std::string busiest_kind;
  double busiest = -1;
  for (const auto& [kind, k] : u["kinds"].items()) {
    if (k["mean"].get<double>() > busiest) {
      busiest = k["mean"].get<double>();
      busiest_kind = kind;
    }
  }
  // The rate to compare points by: MLPerf's (the epoch's samples over its time), or the steady
  // rate when the epoch did not end within the simulated time.
  const bool epoch = !s["read_gibps_epoch"].is_null();
  return {{"value", value},
          {"read_gibps", epoch ? s["read_gibps_epoch"] : s["read_gibps_steady"]},
          {"read_gibps_of", epoch ? "epoch" : "steady"},
          {"client_nodes", r["fidelity"]["simulated_client_nodes"].get<int>() *
                               r["fidelity"]["slice_factor"].get<int>()},
          {"accelerators", s["accelerators"]},
          {"read_gibps_steady", s["read_gibps_steady"]},
          {"read_gibps_epoch", s["read_gibps_epoch"]},
          {"epoch_seconds", s["epoch_seconds"]},
          {"accelerator_utilization", s["accelerator_utilization"]["mean"]},
          {"meets_threshold", s["accelerator_utilization"]["meets_threshold"]},
          {"demand_gibps", b["demand_gibps"]},
          {"read_bound_gibps", b["read_bound_gibps"]},
          {"binding", b["binding"]},
          {"saturated_count", u["saturated"]["count"]},
          {"saturated_first", first},
          {"busiest_kind", busiest_kind},
          {"busiest_kind_mean", busiest},
          {"fidelity", r["fidelity"]["mode"]},
          {"sha256", r["scenario"]["sha256"]}};
}

// What limits a point's read, in words: the analytic bound when the read reaches 90% of it, a
// kind of resource busy 90% of the time on average, or neither (latency or the requests in
// flight: no resource is saturated on average).
std::string limited_by(const nlohmann::json& p) {
  const double rate = p["read_gibps"].get<double>();
  const double bound = p["read_bound_gibps"].get<double>();
  const double busiest = p["busiest_kind_mean"].get<double>();
  const std::string kind = p["busiest_kind"].get<std::string>();
  if (bound > 0 && rate >= 0.9 * bound) {
    return "the bound: " + p["binding"].get<std::string>() + " (" + fmt(rate, 1) + " of " +
           fmt(bound, 1) + " GiB/s)";
  }
  if (busiest >= 0.9) {
    return "saturated " + kind + " (" + fmt(100 * busiest, 0) + "% busy on average)";
  }
  return "no resource saturated on average (busiest: " + kind + " at " + fmt(100 * busiest, 0) +
         "%; the bound, " + p["binding"].get<std::string>() + ", is " + fmt(bound, 1) +
         " GiB/s): latency and the requests in flight limit the read";
}

// Where the accelerators stop being fed: the first point below the AU threshold, and the first
// whose throughput stopped growing with the parameter; what binds and saturates there.
nlohmann::json saturation_json(const nlohmann::json& points) {
  nlohmann::json below = nullptr, plateau = nullptr;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (below.is_null() && !p["meets_threshold"].get<bool>()) below = p["value"];
    if (i == 0 || !plateau.is_null()) continue;
    const auto& q = points[i - 1];
    const double grew = p["value"].get<double>() / q["value"].get<double>();
    const double was = q["read_gibps"].get<double>();
    const double is = p["read_gibps"].get<double>();
    if (grew >= kPlateauGrowth && was > 0 && is < was * (1 + kPlateauGain)) plateau = p["value"];
  }
  const nlohmann::json at = below.is_null() ? plateau : below;
  nlohmann::json out = {
      {"au_below_threshold_at", below},
      {"throughput_plateau_at", plateau},
      {"plateau_rule", "throughput grew less than " + fmt(100 * kPlateauGain, 0) +
                           "% while the parameter grew at least " + fmt(kPlateauGrowth, 2) + "x"},
      {"at", at},
      {"limited_by", nullptr}};
  for (const auto& p : points) {
    if (at.is_null() || p["value"] != at) continue;
    for (const char* k : {"binding", "read_bound_gibps", "read_gibps", "busiest_kind",
                          "busiest_kind_mean", "saturated_first"}) {
      out[k] = p[k];
    }
    out["limited_by"] = limited_by(p);
  }
  return out;
}

// The scenario text with the swept key set to `value`, parsed and validated as a scenario.
Result<models::Scenario> point_scenario(const SweepArgs& a, const models::Catalog& catalog,
                                        const nlohmann::json& base, const char* key, int value) {
  nlohmann::json j = base;
  j["cluster"]["clients"][key] = value;
  j.erase("expect");  // the base's expectations are about the base's size
  return models::parse_scenario(
      j.dump(2), a.path + " (cluster.clients." + key + " = " + std::to_string(value) + ")",
      catalog);
}

// With --progress json, point `i` of `n` as a span of the sweep's progress, with the point's
// number (from 1) and value; null otherwise.
std::shared_ptr<JsonProgress> point_progress(const SweepArgs& a, const models::Scenario& s,
                                             size_t i, size_t n, int value) {
  if (a.progress != "json") return nullptr;
  return std::make_shared<JsonProgress>(JsonProgress::Options{
      .expected_simulated_s = sim::estimate_cost(s).simulated_s,
      .span_begin = static_cast<double>(i) / static_cast<double>(n),
      .span_end = static_cast<double>(i + 1) / static_cast<double>(n),
      .extra_fields = "\"point\": " + std::to_string(i + 1) + ", \"points\": " + std::to_string(n) +
                      ", \"value\": " + std::to_string(value)});
}

void run_sweep(SweepArgs& a, ExitCode& code) {
  const bool by_clients = !a.clients.empty();
  if (by_clients == !a.per_node.empty()) {
    return fail_input(code, "plan sweep: give one of --clients or --accelerators-per-node");
  }
  const std::vector<int>& values = by_clients ? a.clients : a.per_node;
  const char* key = by_clients ? "count" : "accelerators_per_node";
  const std::string flag = by_clients ? "--clients" : "--accelerators-per-node";
  if (values.size() > kMaxPoints) {
    return fail_input(code, flag + ": at most " + std::to_string(kMaxPoints) + " values, found " +
                                std::to_string(values.size()));
  }
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] <= values[i - 1]) {
      return fail_input(code, flag + ": expected ascending values, found " +
                                  std::to_string(values[i - 1]) + " before " +
                                  std::to_string(values[i]));
    }
  }
  auto catalog = load_catalog(a.catalog_db);
  if (!catalog.ok()) return fail_input(code, catalog.status());
  auto base_scenario = models::load_scenario(a.path, *catalog);
  if (!base_scenario.ok()) return fail_input(code, base_scenario.status());
  if (base_scenario->workloads.size() != 1 ||
      base_scenario->workloads.front().kind != models::WorkloadKind::kTrainingRead) {
    return fail_input(code, a.path +
                                ": workloads: a sweep measures a read storm: expected one "
                                "training_read workload alone");
  }
  std::ifstream in(a.path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json base = nlohmann::json::parse(text.str(), nullptr, false, true);
  std::cout << "Sweep of cluster.clients." << key << " over " << values.size()
            << " points, each simulated in full:\n";
  nlohmann::json points = nlohmann::json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    const int v = values[i];
    auto s = point_scenario(a, *catalog, base, key, v);
    if (!s.ok()) return fail_input(code, s.status());
    // The child reports the run's progress; the parent the point's end.
    const auto progress = point_progress(a, *s, i, values.size(), v);
    sim::RunOptions options;
    if (progress) options.on_progress = [progress](double t, double f) { progress->update(t, f); };
    auto r = sim::run_in_child(*s, options);
    if (!r.ok()) return fail_input(code, s->source_path + ": " + r.status().message());
    if (progress) progress->finish_at((*r)["summary"].value("simulated_seconds", 0.0));
    points.push_back(point_json(v, *r));
    const auto& p = points.back();
    std::cout << "  " << key << " " << v << ": " << p["accelerators"].get<int>()
              << " accelerators, " << fmt(p["read_gibps"].get<double>(), 1) << " GiB/s ("
              << p["read_gibps_of"].get<std::string>() << "; bound "
              << fmt(p["read_bound_gibps"].get<double>(), 1) << ", "
              << p["binding"].get<std::string>() << "), AU "
              << fmt(p["accelerator_utilization"].get<double>(), 3) << ", busiest "
              << p["busiest_kind"].get<std::string>() << " "
              << fmt(100 * p["busiest_kind_mean"].get<double>(), 0) << "%\n";
    std::cout.flush();
  }
  const nlohmann::json sat = saturation_json(points);
  const double threshold = base_scenario->workloads.front().training.au_threshold;
  if (!sat["au_below_threshold_at"].is_null()) {
    std::cout << "AU falls below " << fmt(threshold, 2) << " at " << key << " "
              << sat["au_below_threshold_at"].get<int>()
              << "; lowest analytic ceiling there: " << sat["binding"].get<std::string>() << "\n";
  } else {
    std::cout << "AU stays at or above " << fmt(threshold, 2) << " at every point\n";
  }
  if (!sat["throughput_plateau_at"].is_null()) {
    std::cout << "throughput stops growing at " << key << " "
              << sat["throughput_plateau_at"].get<int>() << "\n";
  }
  if (!sat["limited_by"].is_null()) {
    std::cout << "limited there by " << sat["limited_by"].get<std::string>() << "\n";
  }
  if (!a.out.empty()) {
    const nlohmann::json out = {{"granary_sweep", 1},
                                {"scenario",
                                 {{"name", base_scenario->name},
                                  {"source", a.path},
                                  {"sha256", base_scenario->source_sha256},
                                  {"seed", base_scenario->seed}}},
                                {"parameter", std::string("cluster.clients.") + key},
                                {"au_threshold", threshold},
                                {"points", points},
                                {"saturation", sat}};
    std::ofstream f(a.out, std::ios::binary);
    f << out.dump(2) << "\n";
    if (!f) return fail_input(code, "--out: cannot write '" + a.out + "'");
  }
}

}  // namespace

void add_sweep_subcommand(CLI::App& plan, ExitCode& code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sweep = plan.add_subcommand(
      "sweep",
      "A read storm at several sizes (client nodes or accelerators per node): throughput, AU "
      "and what saturates at each");
  sweep->add_option("scenario", args->path, "scenario file with one training_read workload")
      ->required()
      ->check(CLI::ExistingFile);
  sweep->add_option("--clients", args->clients, "client node counts, ascending (e.g. 8,16,32)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 20));
  sweep
      ->add_option("--accelerators-per-node", args->per_node,
                   "accelerators per client node, ascending (e.g. 1,2,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  sweep->add_option("--out", args->out, "write the sweep (JSON) to this file");
  sweep
      ->add_option("--progress", args->progress,
                   "progress on stderr: none (default) or json (one {\"progress\": 0..1, "
                   "\"simulated_s\": x, \"point\": i, \"points\": n, \"value\": v} object "
                   "per line)")
      ->check(CLI::IsMember({"none", "json"}));
  add_catalog_db_option(*sweep, args->catalog_db);
  sweep->callback([args, &code] { run_sweep(*args, code); });
}

}  // namespace granary::cli

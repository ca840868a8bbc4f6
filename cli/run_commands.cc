// granary run and granary plan: simulate a scenario (checking its expectations: exit 1 when one
// fails), search for the accelerators it can feed.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "cli/progress.h"
#include "cli/resources.h"
#include "models/catalog.h"
#include "models/expectations.h"
#include "models/scenario_json.h"
#include "sim/child_run.h"
#include "sim/cluster_plan.h"
#include "sim/cost_estimate.h"
#include "sim/runner.h"

namespace granary::cli {
namespace {

// A volume's size as a person reads it: GiB from 1 GiB up, MiB below (a 32 MiB test volume is
// not "0 GiB").
std::string volume_size(const nlohmann::json& gib) {
  const double g = gib.get<double>();
  return g >= 1 ? fmt(g, g == std::floor(g) ? 0 : 1) + " GiB" : fmt(g * 1024, 0) + " MiB";
}

// A one-line progress bar on stderr, redrawn in place at most 5 times a second, from 2 s of
// wall time on (a short run draws nothing), only when stderr is a terminal: the simulated time
// against the run's estimated span (sim/cost_estimate.h; a run that stops at steady state ends
// long before its epoch), the share done, and the wall time left at the rate so far.
class ProgressBar {
 public:
  ProgressBar(bool enabled, double expected_simulated_s)
      : enabled_(enabled), expected_s_(expected_simulated_s), start_(Clock::now()) {}
  void update(double sim_s, double run_fraction) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 2.0 || now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double fraction = progress_fraction(sim_s, run_fraction, expected_s_);
    const int width = 30;
    const int filled = static_cast<int>(fraction * width);
    const std::string eta =
        fraction > 0.005 ? sim::format_duration(elapsed * (1 - fraction) / fraction) : "?";
    std::fprintf(stderr, "\r[%s%s] %3d%%  simulated %.1f of ~%.1f s, %s left   ",
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 static_cast<int>(fraction * 100), sim_s, std::max(expected_s_, sim_s),
                 eta.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\r%*s\r", 79, "");
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  double expected_s_;
  Clock::time_point start_;
  Clock::time_point last_{};
  bool drawn_ = false;
};

// summary.read_gibps_epoch with one decimal, or "-" when the epoch did not end.
std::string epoch_rate(const nlohmann::json& summary) {
  const auto& v = summary.value("read_gibps_epoch", nlohmann::json());
  return v.is_null() ? std::string("-") : fmt(v.get<double>(), 1);
}

// A training read's bounds: the binding ceiling, the data path's line rate and efficiency,
// the next ceiling and the accelerators' demand.
std::string bound_lines(const nlohmann::json& b) {
  std::ostringstream o;
  if (!b.contains("ceilings")) {  // (reports of other workloads)
    o << "bound:               " << fmt(b["max_flow_gibps"].get<double>(), 2) << " GiB/s ("
      << b["bottleneck"].get<std::string>() << ")\n";
    return o.str();
  }
  o << "bound:               " << fmt(b["read_bound_gibps"].get<double>(), 2)
    << " GiB/s; binding: " << b["binding"].get<std::string>() << " ("
    << b["bottleneck"].get<std::string>() << ")\n";
  o << "                     data path " << fmt(b["max_flow_gibps"].get<double>(), 2)
    << " GiB/s = line rate " << fmt(b["line_rate_gibps"].get<double>(), 2) << " GiB/s at "
    << fmt(b["efficiency"].get<double>(), 2) << " protocol efficiency";
  const auto& ceilings = b["ceilings"];
  if (ceilings.size() > 1) {
    o << "; next " << ceilings[1]["resource"].get<std::string>() << " "
      << fmt(ceilings[1]["gibps"].get<double>(), 2) << " GiB/s";
  }
  o << "; the accelerators consume " << fmt(b["demand_gibps"].get<double>(), 2)
    << " GiB/s at AU 1\n";
  return o.str();
}

// "mean utilisation: ..." per kind of resource, then the first resources to saturate.
std::string utilisation_line(const nlohmann::json& r) {
  std::ostringstream o;
  const auto& u = r["utilization"];
  o << "mean utilisation:   ";
  for (const auto& [kind, k] : u["kinds"].items()) {
    std::string name = kind;
    std::replace(name.begin(), name.end(), '_', ' ');
    o << " " << name << " " << fmt(100.0 * k["mean"].get<double>(), 0) << "%";
  }
  o << "\n";
  const auto& sat = u["saturated"];
  o << "saturated (>= " << fmt(100.0 * sat["threshold"].get<double>(), 0) << "% busy): ";
  if (sat["count"].get<size_t>() == 0) {
    o << "none\n";
    return o.str();
  }
  o << sat["count"].get<size_t>() << " resources; first";
  const auto& first = sat["first"];
  for (size_t i = 0; i < first.size() && i < 3; ++i) {
    o << (i ? ", " : " ") << first[i]["name"].get<std::string>() << " at "
      << fmt(first[i]["at_s"].get<double>(), 2) << " s";
  }
  o << "\n";
  return o.str();
}

// The failure run's story: each event and its marks, then recovery and losses.
std::string recovery_lines(const nlohmann::json& rec) {
  std::ostringstream o;
  auto at = [](const nlohmann::json& t) {
    return t.is_null() ? std::string("-") : fmt(t.get<double>(), 2) + " s";
  };
  for (const auto& e : rec["events"]) {
    o << "failure:             " << e["kind"].get<std::string>() << " at "
      << fmt(e["at_s"].get<double>(), 2) << " s";
    if (e.contains("link")) {
      o << " on " << e["link"][0].get<std::string>() << "-" << e["link"][1].get<std::string>();
      if (e.contains("cables")) o << " (" << e["cables"].get<int>() << " cable(s))";
    }
    if (e["factor"].get<double>() != 1)
      o << ", x" << fmt(e["factor"].get<double>(), 1) << " slower";
    o << " (" << e["osds"].size() << " OSD" << (e["osds"].size() == 1 ? "" : "s") << "): down "
      << at(e["marked_down_at_s"]) << ", out " << at(e["marked_out_at_s"]) << ", up again "
      << at(e["marked_up_at_s"]);
    if (!e.value("recovered_at_s", nlohmann::json()).is_null()) {
      o << ", recovered " << at(e["recovered_at_s"]) << " ("
        << fmt(e["time_to_recover_s"].get<double>(), 2) << " s after)";
    }
    o << "\n";
  }
  o << "recovery:            " << fmt(rec["bytes_moved"].get<double>() / 1e9, 2) << " GB moved ("
    << fmt(rec["moved_over_minimum"].get<double>(), 2) << "x the minimum), "
    << (!rec["time_to_full_redundancy_s"].is_null()
            ? "full redundancy " + fmt(rec["time_to_full_redundancy_s"].get<double>(), 2) +
                  " s after the failure"
        : rec["degraded_pgs_max"].get<int>() == 0 ? std::string("redundancy never lost")
                                                  : std::string("full redundancy not reached"))
    << "; " << rec["degraded_pgs_max"].get<int>() << " PGs degraded, "
    << rec["inactive_pgs_max"].get<int>() << " inactive at most; "
    << rec["objects_lost"].get<uint64_t>() << " objects lost; blocked I/O "
    << fmt(rec["blocked_io_seconds"].get<double>(), 1) << " s\n";
  if (rec.contains("accelerator_utilization_dip")) {
    const auto& dip = rec["accelerator_utilization_dip"];
    const auto& back = rec["time_to_accelerator_recovery_s"];
    o << "accelerators:        AU "
      << fmt(rec["accelerator_utilization_before_failure"].is_null()
                 ? 0.0
                 : rec["accelerator_utilization_before_failure"].get<double>(),
             3)
      << " before the failure, "
      << (rec["accelerator_utilization_after_failure"].is_null()
              ? std::string("-")
              : fmt(rec["accelerator_utilization_after_failure"].get<double>(), 3))
      << " after; "
      << (dip["from_s"].is_null()
              ? std::string("no dip below ") + fmt(dip["target"].get<double>(), 2)
          : back.is_null()
              ? "below " + fmt(dip["target"].get<double>(), 2) + " from " + at(dip["from_s"]) +
                    " to the end"
              : "below " + fmt(dip["target"].get<double>(), 2) + " from " + at(dip["from_s"]) +
                    ", fed again " + fmt(back.get<double>(), 2) + " s after the failure")
      << " (" << fmt(dip["window_s"].get<double>(), 2) << " s windows)\n";
  }
  if (rec.value("writes_resent", uint64_t{0}) > 0 || rec.contains("written_objects")) {
    o << "writes:              " << rec.value("writes_resent", uint64_t{0})
      << " resent after a map change (" << fmt(rec.value("write_blocked_seconds", 0.0), 1)
      << " s blocked), " << rec.value("writes_discarded", uint64_t{0})
      << " discarded by primaries on a new interval";
    if (rec.contains("written_objects")) {
      o << "; " << rec["written_objects_short_of_copies"].get<uint64_t>() << " of "
        << rec["written_objects"].get<uint64_t>() << " written objects short of copies at the end";
    }
    o << "\n";
  }
  return o.str();
}

// A mixed run's block I/O beside the main workload.
std::string beside_lines(const nlohmann::json& b) {
  std::ostringstream o;
  o << "block I/O beside:    " << b["name"].get<std::string>() << " ("
    << b["workload"].get<std::string>() << "), " << b["cluster_volumes"].get<int64_t>()
    << " volumes (" << b["volumes"].get<int>() << " simulated), "
    << fmt(b["block_size_kib"].get<double>(), 0) << " KiB at queue depth "
    << b["queue_depth"].get<int>() << "\n";
  o << "  IOPS:              " << fmt(b["cluster_iops"].get<double>(), 0) << " ("
    << fmt(b["cluster_read_iops"].get<double>(), 0) << " reads/s, "
    << fmt(b["cluster_write_iops"].get<double>(), 0) << " writes/s) over "
    << fmt(b["measured_seconds"].get<double>(), 2) << " s\n";
  for (const char* op : {"read", "write"}) {
    if (!b["latency_ms"].contains(op)) continue;
    const auto& l = b["latency_ms"][op];  // shown in us: block I/Os take microseconds
    o << (std::string(op) == "read" ? "  read latency:      " : "  write latency:     ") << "p50 "
      << fmt(l["p50"].get<double>() * 1e3, 0) << " us, p99 " << fmt(l["p99"].get<double>() * 1e3, 0)
      << " us, p99.9 " << fmt(l["p999"].get<double>() * 1e3, 0) << " us\n";
  }
  if (b.contains("boot_seconds")) {
    o << "  boot time:         max " << fmt(b["boot_seconds"]["max"].get<double>(), 2) << " s ("
      << b["nodes_booted"].get<int>() << " of " << b["volumes"].get<int>()
      << " simulated nodes booted)\n";
  }
  return o.str();
}

std::string summary_text(const models::Scenario& s, const nlohmann::json& r) {
  std::ostringstream o;
  const auto& sum = r["summary"];
  const auto& fid = r["fidelity"];
  const auto& au = sum["accelerator_utilization"];
  o << s.name << " (seed " << r["scenario"]["seed"].get<uint64_t>()
    << "): " << models::scenario_summary(s) << "\n";
  o << "fidelity:            " << fid["mode"].get<std::string>();
  if (fid["slice_factor"].get<int>() > 1) {
    o << ": " << fid["simulated_client_nodes"].get<int>() << " client nodes against "
      << fid["simulated_storage_servers"].get<int>() << " storage servers at "
      << fmt(100 * fid["storage_capacity_share"].get<double>(), 2) << "% of their capacity";
  }
  o << "\n";
  const std::string kind = sum.value("workload", "");
  if (kind == "block" || kind == "boot_storm") {
    const auto& b = r["bounds"];
    o << (kind == "block" ? "block volumes:       " : "boot storm:          ")
      << sum["volumes"].get<int>() << " RBD volumes of " << volume_size(sum["volume_gib"])
      << (sum["clone"].get<bool>() ? " (clones of one golden image)" : "") << ", "
      << fmt(sum["block_size_kib"].get<double>(), 0) << " KiB I/Os at queue depth "
      << sum["queue_depth"].get<int>();
    if (kind == "block") {
      o << ", " << fmt(100 * sum["read_fraction"].get<double>(), 0) << "% reads";
    } else {
      o << ", " << fmt(sum["boot_read_mib"].get<double>(), 0) << " MiB read + "
        << fmt(sum["boot_write_mib"].get<double>(), 0) << " MiB written per node";
    }
    o << "\n";
    if (kind == "boot_storm") {
      const auto& bt = sum["boot_seconds"];
      o << "boot time:           p50 " << fmt(bt["p50"].get<double>(), 2) << " s, p99 "
        << fmt(bt["p99"].get<double>(), 2) << " s, max " << fmt(bt["max"].get<double>(), 2)
        << " s (every node at once)\n";
    }
    o << "IOPS:                " << fmt(sum["iops"].get<double>(), 0) << " ("
      << fmt(sum["read_iops"].get<double>(), 0) << " reads/s, "
      << fmt(sum["write_iops"].get<double>(), 0) << " writes/s; "
      << fmt(sum["read_mibps"].get<double>() + sum["write_mibps"].get<double>(), 1)
      << " MiB/s) over " << fmt(sum["measured_seconds"].get<double>(), 3) << " s; bound "
      << fmt(b["iops"].get<double>(), 0) << " (" << b["iops_bottleneck"].get<std::string>()
      << ")\n";
    for (const char* op : {"read", "write"}) {
      if (!r["latency_ms"].contains(op)) continue;
      const auto& l = r["latency_ms"][op];  // shown in us: block I/Os take microseconds
      o << (std::string(op) == "read" ? "read latency:        " : "write latency:       ") << "p50 "
        << fmt(l["p50"].get<double>() * 1e3, 0) << " us, p99 "
        << fmt(l["p99"].get<double>() * 1e3, 0) << " us, p99.9 "
        << fmt(l["p999"].get<double>() * 1e3, 0) << " us, max "
        << fmt(l["max"].get<double>() * 1e3, 0) << " us\n";
    }
    if (sum["clone"].get<bool>()) {
      o << "clones:              " << sum["parent_reads"].get<uint64_t>()
        << " reads served by the parent, " << sum["copyups"].get<uint64_t>()
        << " objects copied up (" << fmt(sum["copyup_mib"].get<double>(), 1) << " MiB)\n";
    }
    o << "drive queueing:      " << fmt(sum["drive_queue_wait_us_mean"].get<double>(), 1)
      << " us per drive operation on average\n";
    o << utilisation_line(r);
    return o.str();
  }
  if (kind == "checkpoint") {
    const auto& b = r["bounds"];
    o << "checkpoint:          " << sum["model"].get<std::string>() << ", "
      << fmt(sum["checkpoint_gb"].get<double>(), 1) << " GB over " << sum["ranks"].get<int>()
      << " ranks (" << fmt(sum["rank_bytes"].get<double>() / 1e9, 2) << " GB each), "
      << sum["checkpoints"].get<int>() << " checkpoint(s)"
      << (sum["fsync"].get<bool>() ? ", fsync" : "") << "\n";
    o << "write:               " << fmt(sum["write_seconds"].get<double>(), 2) << " s ("
      << fmt(sum["write_gibps"].get<double>(), 2) << " GiB/s); bound "
      << fmt(b["write_gibps"].get<double>(), 2) << " GiB/s ("
      << b["write_bottleneck"].get<std::string>() << ", "
      << fmt(b["write_seconds_min"].get<double>(), 2) << " s)\n";
    o << "drive writes:        " << fmt(sum["write_amplification"].get<double>(), 3)
      << "x the data\n";
    if (sum["read_seconds"].get<double>() > 0) {
      o << "read back:           " << fmt(sum["read_seconds"].get<double>(), 2) << " s ("
        << fmt(sum["read_gibps"].get<double>(), 2) << " GiB/s)\n";
    }
    const auto& lat = r["latency_ms"]["write"];
    o << "rank write time:     p50 " << fmt(lat["p50"].get<double>() / 1e3, 2) << " s, p99 "
      << fmt(lat["p99"].get<double>() / 1e3, 2) << " s, max "
      << fmt(lat["max"].get<double>() / 1e3, 2) << " s\n";
    o << utilisation_line(r);
    if (r.contains("recovery")) o << recovery_lines(r["recovery"]);
    if (r.contains("block")) o << beside_lines(r["block"]);
    return o.str();
  }
  o << "epoch:               " << fmt(sum["epoch_seconds"].get<double>(), 2) << " s"
    << (!sum.value("epoch_complete", true)
            ? " at least (not finished within simulation.max_simulated_s)"
            : "")
    << (sum["epoch_extrapolated"].get<bool>()
            ? " (extrapolated from " + fmt(sum["simulated_seconds"].get<double>(), 2) +
                  " s of steady state)"
            : "")
    << "\n";
  o << "read throughput:     "
    << (sum.value("read_gibps_epoch", nlohmann::json()).is_null()
            ? std::string("epoch -")
            : "epoch " + fmt(sum["read_gibps_epoch"].get<double>(), 2) + " GiB/s")
    << ", steady " << fmt(sum["read_gibps_steady"].get<double>(), 2) << " GiB/s, "
    << fmt(sum["read_gibps_mean"].get<double>(), 2)
    << " GiB/s over the simulated time (start-up included)\n";
  o << bound_lines(r["bounds"]);
  o << "accelerator util.:   mean " << fmt(au["mean"].get<double>(), 3) << ", min "
    << fmt(au["min"].get<double>(), 3) << " over " << sum["accelerators"].get<int>()
    << " accelerators; threshold " << fmt(au["threshold"].get<double>(), 2)
    << (au["meets_threshold"].get<bool>() ? " met" : " NOT met") << "\n";
  const auto& lat = r["latency_ms"]["read"];
  o << "sample read latency: p50 " << fmt(lat["p50"].get<double>(), 1) << " ms, p99 "
    << fmt(lat["p99"].get<double>(), 1) << " ms, p999 " << fmt(lat["p999"].get<double>(), 1)
    << " ms (" << lat["count"].get<uint64_t>() << " reads)\n";
  o << utilisation_line(r);
  if (r.contains("recovery")) o << recovery_lines(r["recovery"]);
  if (r.contains("block")) o << beside_lines(r["block"]);
  if (r.contains("checkpoint")) {
    const auto& c = r["checkpoint"];
    o << "checkpoint beside:   " << c["name"].get<std::string>() << ", " << c["ranks"].get<int>()
      << " ranks from " << fmt(c["start_s"].get<double>(), 2)
      << " s: " << c["checkpoints_complete"].get<int>() << " of " << c["checkpoints"].get<int>()
      << " written, " << fmt(c["write_seconds"].get<double>(), 2) << " s each ("
      << fmt(c["write_gibps"].get<double>(), 2) << " GiB/s) while the training read went on\n";
  }
  return o.str();
}

// "expectations:       1 of 2 passed" and a PASS/FAIL line per expectation:
// "  FAIL  summary.epoch_seconds <= 120: 131.2  (epoch fits the window)".
std::string expectation_lines(const std::vector<models::Expectation>& expectations,
                              const std::vector<models::ExpectationOutcome>& outcomes) {
  if (expectations.empty()) return "";
  size_t passed = 0;
  for (const models::ExpectationOutcome& o : outcomes) passed += o.passed ? 1 : 0;
  std::ostringstream out;
  out << "expectations:        " << passed << " of " << outcomes.size() << " passed\n";
  for (size_t i = 0; i < expectations.size(); ++i) {
    const models::Expectation& e = expectations[i];
    const models::ExpectationOutcome& o = outcomes[i];
    // The measured value, or why there is none ("not in the report (keys at ...)").
    const std::string prefix = e.metric + ": ";
    const std::string detail =
        o.message.rfind(prefix, 0) == 0 ? o.message.substr(prefix.size()) : o.measured;
    out << "  " << (o.passed ? "PASS" : "FAIL") << "  " << e.metric << " "
        << models::condition_text(e) << ": " << detail;
    if (!e.name.empty()) out << "  (" << e.name << ")";
    out << "\n";
  }
  return out.str();
}

struct RunArgs {
  std::string path;
  std::string out;
  std::optional<uint64_t> seed;
  bool quiet = false;
  std::string progress;  // --progress: none, bar or json (empty: bar on a terminal)
  ResourceArgs resources;
  std::string catalog_db;  // --catalog-db
  HistoryArgs history;     // --history [PATH]
};

void run_run(RunArgs& a, ExitCode& code) {
  auto catalog = load_catalog(a.catalog_db);
  if (!catalog.ok()) return fail_input(code, catalog.status());
  auto scenario = models::load_scenario(a.path, *catalog);
  if (!scenario.ok()) return fail_input(code, scenario.status());
  const uint64_t seed = a.seed.value_or(scenario->seed);
  // What the run would refuse as it builds its cluster plan, refused before anything is
  // printed (as validate does).
  if (Result<sim::ClusterPlan> planned = sim::build_cluster_plan(*scenario, seed); !planned.ok()) {
    return fail_input(code, planned.status());
  }
  const sim::CostEstimate cost = sim::estimate_cost(*scenario);
  const sim::RunPlan& plan = cost.plan;
  if (Status st = sim::check_cost(*scenario, cost, a.resources.limits()); !st.ok()) {
    return fail_input(code, st);
  }
  // Opened before the run, so that a database that cannot be used stops it at once.
  auto history = open_history(a.history);
  if (!history.ok()) return fail_input(code, history.status());
  std::cerr << "granary: " << a.path << ": seed " << seed << ", " << plan.reason << "\n";
  std::cerr << "granary: estimate: " << sim::cost_summary(cost) << "\n";
  start_watchdog(a.path, a.resources.limits());
  ProgressMode mode = !a.quiet && isatty(STDERR_FILENO) ? ProgressMode::kBar : ProgressMode::kNone;
  if (!a.progress.empty()) mode = *parse_progress_mode(a.progress);  // checked by CLI11
  ProgressBar bar(mode == ProgressMode::kBar, cost.simulated_s);
  JsonProgress json_progress({.expected_simulated_s = cost.simulated_s});
  sim::RunOptions o;
  o.seed = seed;
  o.on_progress = [&](double t, double f) {
    if (mode == ProgressMode::kJson) json_progress.update(t, f);
    bar.update(t, f);
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto report = sim::run_scenario(*scenario, o);
  bar.finish();
  if (mode == ProgressMode::kJson && report.ok()) json_progress.finish();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  FinishedRun finished;
  finished.scenario_path = a.path;
  finished.scenario_name = scenario->name;
  finished.scenario_sha256 = scenario->source_sha256;
  finished.seed = seed;
  finished.wall_s = wall;
  if (!report.ok()) {
    finished.error = report.status().message();
    if (*history) {
      if (Status s = record_run(**history, finished); !s.ok()) fail_input(code, s);
    }
    return fail_input(code, report.status());
  }
  const std::vector<models::Expectation>& expectations = scenario->expectations;
  std::vector<models::ExpectationOutcome> outcomes;
  if (!expectations.empty()) {
    outcomes = models::evaluate(expectations, *report);
    (*report)["expectations"] = models::outcomes_to_json(expectations, outcomes, *report);
  }
  if (!a.out.empty()) {
    std::ofstream f(a.out, std::ios::binary);
    f << report->dump(2) << "\n";
    if (!f) return fail_input(code, "--out: cannot write '" + a.out + "'");
  }
  std::cout << summary_text(*scenario, *report);
  std::cout << expectation_lines(expectations, outcomes);
  std::cerr << "granary: wall time " << fmt(wall, 2) << " s\n";
  for (const models::ExpectationOutcome& o : outcomes) {
    if (!o.passed) code.value = 1;  // an expectation failed; the report is written all the same
  }
  if (*history) {
    finished.report = &*report;
    if (Status s = record_run(**history, finished); !s.ok()) fail_input(code, s);
  }
}

struct PlanArgs {
  std::string path;
  int max_per_node = 64;
};

void run_plan_accelerators(PlanArgs& a, ExitCode& code) {
  auto scenario = models::load_scenario(a.path);
  if (!scenario.ok()) return fail_input(code, scenario.status());
  if (scenario->workloads.front().kind != models::WorkloadKind::kTrainingRead) {
    return fail_input(
        code, Status::invalid_argument(
                  a.path +
                  ": workloads[0].type: expected a training_read workload "
                  "(accelerator planning measures AU), found " +
                  std::string(models::workload_kind_name(scenario->workloads.front().kind))));
  }
  const double threshold = scenario->workloads.front().training.au_threshold;
  std::cout << "Largest accelerators per client node keeping AU >= " << fmt(threshold, 2) << " ("
            << scenario->cluster.clients.count << " client nodes, MLPerf Storage's rule)\n";
  std::map<int, double> au;
  auto probe = [&](int per_node) -> Result<double> {
    if (auto it = au.find(per_node); it != au.end()) return it->second;
    models::Scenario s = *scenario;
    s.cluster.clients.accelerators_per_node = per_node;
    auto r = sim::run_in_child(s);
    if (!r.ok()) return r.status();
    const double v = (*r)["summary"]["accelerator_utilization"]["mean"].get<double>();
    au[per_node] = v;
    std::cout << "  " << per_node << " per node (" << per_node * scenario->cluster.clients.count
              << " accelerators): AU " << fmt(v, 3) << (v >= threshold ? "  ok" : "  below")
              << ", read " << epoch_rate((*r)["summary"]) << " GiB/s over the epoch, "
              << fmt((*r)["summary"]["read_gibps_steady"].get<double>(), 1) << " steady\n";
    std::cout.flush();
    return v;
  };
  // Grow by doubling until AU drops below the threshold, then bisect (AU falls as accelerators
  // are added: they share the same storage).
  int good = 0, bad = 0;
  for (int n = 1; n <= a.max_per_node; n *= 2) {
    auto v = probe(n);
    if (!v.ok()) return fail_input(code, v.status());
    if (*v >= threshold) {
      good = n;
    } else {
      bad = n;
      break;
    }
  }
  if (bad == 0) bad = a.max_per_node + 1;
  while (bad - good > 1) {
    const int mid = (good + bad) / 2;
    auto v = probe(mid);
    if (!v.ok()) return fail_input(code, v.status());
    (*v >= threshold ? good : bad) = mid;
  }
  if (good == 0) {
    std::cout << "Result: even 1 accelerator per node falls below the threshold.\n";
  } else {
    std::cout << "Result: " << good << " accelerators per node ("
              << good * scenario->cluster.clients.count << " in all)"
              << (bad > a.max_per_node ? " (the search limit)" : "") << "\n";
  }
}

}  // namespace

void register_run_commands(CLI::App& app, ExitCode& code) {
  auto run_args = std::make_shared<RunArgs>();
  CLI::App* run =
      app.add_subcommand("run", "Simulate a scenario and report what the accelerators see");
  run->add_option("scenario", run_args->path, "scenario file (JSON, see docs/scenario-format.md)")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--out", run_args->out, "write the report (JSON) to this file");
  run->add_option("--seed", run_args->seed, "seed (default: the scenario's)");
  run->add_flag("--quiet", run_args->quiet, "no progress bar");
  run->add_option("--progress", run_args->progress,
                  "progress on stderr: none, bar (default on a terminal) or json (one "
                  "{\"progress\": 0..1, \"simulated_s\": x} object per line)")
      ->check(CLI::IsMember({"none", "bar", "json"}));
  add_resource_options(*run, run_args->resources);
  add_catalog_db_option(*run, run_args->catalog_db);
  add_history_option(*run, run_args->history);
  run->callback([run_args, &code] { run_run(*run_args, code); });

  auto plan_args = std::make_shared<PlanArgs>();
  CLI::App* plan = app.add_subcommand("plan", "Search a design space with the simulator");
  plan->require_subcommand(1);
  CLI::App* acc = plan->add_subcommand(
      "accelerators",
      "Largest accelerators per client node that keep AU at or above the workload's threshold");
  acc->add_option("scenario", plan_args->path, "scenario file")
      ->required()
      ->check(CLI::ExistingFile);
  acc->add_option("--max-per-node", plan_args->max_per_node, "search limit (default 64)")
      ->check(CLI::Range(1, 4096));
  acc->callback([plan_args, &code] { run_plan_accelerators(*plan_args, code); });
  add_sweep_subcommand(*plan, code);
  add_capacity_subcommand(*plan, code);
}

}  // namespace granary::cli

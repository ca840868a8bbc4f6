// Reports as documents (report_document.h).
#include "gui/report/report_document.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

namespace granary::report {
namespace {

using nlohmann::json;

Block heading(std::string text) {
  Block b;
  b.kind = Block::Kind::kHeading;
  b.text = std::move(text);
  return b;
}

Block paragraph(std::string text) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.text = std::move(text);
  return b;
}

Block table_block(Table t) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(t);
  return b;
}

Block chart_block(Chart c) {
  Block b;
  b.kind = Block::Kind::kChart;
  b.chart = std::move(c);
  return b;
}

std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// A number as a report prints it: integers whole, others with up to 4 significant decimals.
std::string number_text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  const double d = v.get<double>();
  char b[64];
  std::snprintf(b, sizeof b, std::fabs(d) >= 1000 ? "%.1f" : "%.4g", d);
  return b;
}

// The unit of a report figure from its name (docs/report-format.md's naming): the last part of
// a dotted name, or its parent's for a statistic of it ("accelerator_utilization.mean").
std::string unit_of(const std::string& name) {
  std::string key = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  static const char* const kStats[] = {"mean", "min", "max", "threshold", "target",
                                       "p50",  "p90", "p99", "p999"};
  if (std::find(std::begin(kStats), std::end(kStats), key) != std::end(kStats) &&
      name.find('.') != std::string::npos) {
    const std::string parent = name.substr(0, name.rfind('.'));
    return unit_of(parent);
  }
  auto ends = [&](const char* s) {
    const std::string suf(s);
    return key.size() >= suf.size() && key.compare(key.size() - suf.size(), suf.size(), suf) == 0;
  };
  auto has = [&](const char* s) { return key.find(s) != std::string::npos; };
  if (has("gibps")) return "GiB/s";
  if (has("gbps")) return "GB/s";
  if (has("bytes")) return "B";
  if (ends("_ms")) return "ms";
  if (ends("_s") || ends("seconds")) return "s";
  if (ends("_hours")) return "h";
  if (ends("_years")) return "years";
  if (ends("_gb")) return "GB";
  if (ends("_tb")) return "TB";
  if (ends("_usd")) return "USD";
  if (ends("_kw")) return "kW";
  if (ends("iops")) return "IO/s";
  if (has("utilization") || has("fraction") || has("share") || has("probability") ||
      has("efficiency") || ends("_afr")) {
    return "fraction";
  }
  if (has("nines")) return "nines";
  if (has("amplification") || has("over_minimum") || has("over_client_memory")) return "ratio";
  return "count";
}

// Rows "figure | value | unit" of the scalars of `j` (objects of scalars flattened with a dot).
void scalar_rows(const json& j, const std::string& prefix, Table& t) {
  for (const auto& [k, v] : j.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      scalar_rows(v, name, t);
    } else if (v.is_primitive()) {
      const std::string unit = v.is_string() ? "text" : v.is_boolean() ? "yes/no" : unit_of(name);
      t.rows.push_back({name, number_text(v), unit});
    }
  }
}

Table figures_table(const std::string& title, const json& j) {
  Table t;
  t.title = title;
  t.headers = {"figure", "value", "unit"};
  t.numeric = {false, true, false};
  scalar_rows(j, "", t);
  return t;
}

const json& point_at(const json& r, const json& index) {
  return r["points"][index.get<size_t>()];
}

std::string margin_text(const json& m) {
  return m.is_null() ? "-" : fixed(m.get<double>() * 100, 1) + " %";
}

Table bom_table(const json& p) {
  Table t;
  t.title = "Bill of materials (storage)";
  t.headers = {"item", "profile", "quantity (units)", "unit price (USD)", "total (USD)", "price"};
  t.numeric = {false, false, true, true, true, false};
  double total = 0;
  for (const json& l : p["bom"]) {
    t.rows.push_back({str(l, "item"), str(l, "profile"), l["quantity"].dump(),
                      usd(l["unit_usd"].get<double>()), usd(l["total_usd"].get<double>()),
                      str(l, "price_source")});
    total += l["total_usd"].get<double>();
  }
  t.rows.push_back({"total", "", "", "", usd(total), ""});
  t.note =
      "Catalog prices are examples (estimates of 2024 reseller prices), never quotes; a plan's "
      "prices_usd overrides them.";
  return t;
}

Table targets_table(const json& p) {
  Table t;
  t.title = "Targets";
  t.headers = {"target", "condition",    "threshold", "value",
               "basis",  "screen bound", "margin",    "met"};
  t.numeric = {false, false, true, true, false, true, true, false};
  for (const json& x : p["targets"]) {
    t.rows.push_back({str(x, "name"), str(x, "condition") == "at_least" ? ">=" : "<=",
                      number_text(x["threshold"]), number_text(x["value"]), str(x, "basis"),
                      x.contains("bound") ? number_text(x["bound"]) : "-", margin_text(x["margin"]),
                      x["met"].get<bool>() ? "yes" : "no"});
  }
  t.note =
      "exact: computed from the design; bound: the screen's most favourable value; "
      "measured: the simulation's report.";
  return t;
}

Table design_table(const json& p) {
  Table t;
  t.title = "Design figures";
  t.headers = {"figure", "value", "unit"};
  t.numeric = {false, true, false};
  t.rows = {{"cost", usd(p["cost_usd"].get<double>()), "USD"},
            {"raw capacity", number_text(p["raw_tb"]), "TB"},
            {"usable capacity", number_text(p["usable_tb"]), "TB"},
            {"user bytes per raw byte", number_text(p["user_bytes_per_raw_byte"]), "fraction"},
            {"power", number_text(p["power_kw"]), "kW"},
            {"rack units", number_text(p["rack_units"]), "U"}};
  return t;
}

// The points table (CSV "points"): every point with its status and figures.
Table points_table(const json& r, bool simulated_only) {
  Table t;
  t.title = simulated_only ? "Simulated designs" : "Every design point";
  t.headers = {"point",      "design",         "status",     "cost (USD)",     "usable (TB)",
               "power (kW)", "rack units (U)", "margin (%)", "binding target", "meets targets"};
  t.numeric = {true, false, false, true, true, true, true, true, false, false};
  for (const json& p : r["points"]) {
    const std::string status = str(p, "status");
    if (simulated_only && status != "simulated" && status != "failed") continue;
    const bool valid = p.contains("cost_usd");
    t.rows.push_back(
        {p["index"].dump(), str(p, "label"), status,
         valid ? fixed(p["cost_usd"].get<double>(), 2) : "-",
         valid ? number_text(p["usable_tb"]) : "-", valid ? number_text(p["power_kw"]) : "-",
         valid ? number_text(p["rack_units"]) : "-",
         p.contains("margin") && !p["margin"].is_null() ? fixed(p["margin"].get<double>() * 100, 2)
                                                        : "-",
         p.contains("binding")
             ? str(p, "binding")
             : (status == "ruled_out" ? "ruled out: " + str(p, "ruled_out_by") : str(p, "invalid")),
         p.contains("meets_targets") ? (p["meets_targets"].get<bool>() ? "yes" : "no") : "-"});
  }
  return t;
}

Chart front_chart(const json& r) {
  Chart c;
  c.title = "Cost versus margin of the simulated designs";
  c.x_label = "cost (thousand USD)";
  c.y_label = "margin: smallest target margin (%)";
  Series sim{"simulated", {}, {}, true}, front{"front", {}, {}, false},
      choice{"choice", {}, {}, true};
  for (const json& p : r["points"]) {
    if (!p.contains("margin") || p["margin"].is_null()) continue;
    sim.x.push_back(p["cost_usd"].get<double>() / 1000);
    sim.y.push_back(p["margin"].get<double>() * 100);
  }
  for (const json& id : r["front"]) {
    const json& p = point_at(r, id);
    if (p["margin"].is_null()) continue;
    front.x.push_back(p["cost_usd"].get<double>() / 1000);
    front.y.push_back(p["margin"].get<double>() * 100);
  }
  if (!r["choice"].is_null()) {
    const json& p = point_at(r, r["choice"]["point"]);
    if (!p["margin"].is_null()) {
      choice.x.push_back(p["cost_usd"].get<double>() / 1000);
      choice.y.push_back(p["margin"].get<double>() * 100);
    }
  }
  c.series = {sim, front, choice};
  c.y_reference = 0;
  c.reference_label = "every target just met";
  return c;
}

// The screen over the space: cost against the first bounded target's value.
std::optional<Chart> screen_chart(const json& r) {
  std::string target, metric;
  double threshold = 0;
  for (const json& p : r["points"]) {
    if (!p.contains("targets")) continue;
    for (const json& t : p["targets"]) {
      if (t.contains("bound") && !t["bound"].is_null()) {
        target = str(t, "name");
        metric = str(t, "metric");
        threshold = t["threshold"].get<double>();
        break;
      }
    }
    if (!target.empty()) break;
  }
  if (target.empty()) return std::nullopt;
  Chart c;
  c.title = "The screen: " + target + ", bound per design";
  c.x_label = "cost (thousand USD)";
  const size_t colon = target.find(": ");
  c.y_label = (colon == std::string::npos ? target : target.substr(colon + 2)) + " bound (" +
              unit_of(metric) + ")";
  Series cand{"candidates", {}, {}, true}, out{"ruled out", {}, {}, true};
  for (const json& p : r["points"]) {
    if (!p.contains("targets")) continue;
    for (const json& t : p["targets"]) {
      if (str(t, "name") != target || !t.contains("bound") || t["bound"].is_null()) continue;
      Series& s = str(p, "status") == "ruled_out" ? out : cand;
      s.x.push_back(p["cost_usd"].get<double>() / 1000);
      s.y.push_back(t["bound"].get<double>());
    }
  }
  c.series = {cand, out};
  c.y_reference = threshold;
  c.reference_label = "target";
  return c;
}

// Throughput and AU over time from a report's `series` (t_s and arrays of the same length),
// titled with `prefix`.
void add_series_charts(const json& s, const std::string& prefix, Document& d) {
  if (!s.is_object() || !s.contains("t_s")) return;
  Chart rate, au;
  rate.title = prefix + "Throughput over time";
  rate.x_label = "simulated time (s)";
  au.title = prefix + "Accelerator utilisation over time";
  au.x_label = rate.x_label;
  au.y_label = "AU (fraction)";
  for (const auto& [k, v] : s.items()) {
    if (k == "t_s" || !v.is_array() || v.size() != s["t_s"].size() || v.empty() ||
        !v[0].is_number()) {
      continue;
    }
    std::string name = k;
    std::replace(name.begin(), name.end(), '_', ' ');
    Series line{name, s["t_s"].get<std::vector<double>>(), v.get<std::vector<double>>(), false};
    if (k.find("utilization") != std::string::npos) {
      au.series.push_back(std::move(line));
    } else {
      rate.y_label = k + " (" + unit_of(k) + ")";
      rate.series.push_back(std::move(line));
    }
  }
  if (!rate.series.empty()) d.blocks.push_back(chart_block(rate));
  if (!au.series.empty()) d.blocks.push_back(chart_block(au));
}

// The bytes left to re-protect over time from a report's `recovery.series`.
void add_recovery_chart(const json& rs, const std::string& prefix, Document& d) {
  if (!rs.is_object() || !rs.contains("t_s") || !rs.contains("bytes_remaining")) return;
  Chart c;
  c.title = prefix + "Bytes left to re-protect";
  c.x_label = "simulated time (s)";
  c.y_label = "bytes remaining (GB)";
  Series s{"bytes remaining", rs["t_s"].get<std::vector<double>>(), {}, false};
  for (const json& v : rs["bytes_remaining"]) s.y.push_back(v.get<double>() / 1e9);
  c.series = {s};
  d.blocks.push_back(chart_block(c));
}

void add_cases(const json& r, const json& chosen, Document& d) {
  d.blocks.push_back(heading("Cases"));
  for (size_t i = 0; i < r["cases"].size(); ++i) {
    const json& c = r["cases"][i];
    d.blocks.push_back(paragraph("Case " + str(c, "name") + ": scenario " + str(c, "scenario") +
                                 " (SHA-256 " + str(c, "sha256") + ")."));
    if (chosen.is_null() || !chosen.contains("cases") || i >= chosen["cases"].size()) continue;
    const json& cs = chosen["cases"][i];
    d.blocks.push_back(table_block(figures_table(
        "Case " + str(c, "name") + ": the recommended design, simulated", cs["summary"])));
    if (cs.contains("recovery") && !cs["recovery"].empty()) {
      d.blocks.push_back(table_block(figures_table(
          "Case " + str(c, "name") + ": failure, recovery and durability", cs["recovery"])));
    }
    const json& choice = r["choice"];
    if (choice.contains("series") && i < choice["series"].size()) {
      const json& s = choice["series"][i];
      const std::string prefix = "Case " + str(c, "name") + ": ";
      add_series_charts(s.value("run", json()), prefix, d);
      add_recovery_chart(s.value("recovery", json()), prefix, d);
    }
  }
}

void add_assumptions(const json& r, const json& chosen, Document& d) {
  d.blocks.push_back(heading("Assumptions and model sources"));
  const json& s = r["search"];
  d.blocks.push_back(paragraph(
      "Usable capacity is the raw capacity times the user bytes per raw byte of the redundancy "
      "(1/r for r replicas, k/(k+m) for erasure coding) times the fill ratio " +
      number_text(s["max_fill"]) +
      " (Ceph's mon_osd_nearfull_ratio). Power and rack units are the catalog's typical figures "
      "for the storage servers and storage leaf switches."));
  d.blocks.push_back(paragraph(
      "The screen bounds each target in closed form (docs/plan-format.md): accelerator "
      "utilisation by min(1, binding read ceiling / demand) over the read ceilings of "
      "models/read_bounds.h (max-flow over the topology, drives, servers, CPUs, metadata); "
      "checkpoint time by the analytic write bound; durability by the Markov model of "
      "docs/models.md with hardware-speed recovery. It rules a point out only when a bound "
      "misses its target (a simulation bound by more than " +
      fixed(s.value("screen_slack", 0.05) * 100, 0) +
      " %). Simulations run Granary's engine on SimGrid 3.32 (CM02 max-min flow model); "
      "docs/models.md gives every model, its equations, sources and calibration, and "
      "docs/validation.md compares the simulator with published figures."));
  Table src;
  src.title = "Where the hardware figures and example prices come from";
  src.headers = {"item", "profile", "source"};
  src.numeric = {false, false, false};
  if (!chosen.is_null()) {
    for (const json& l : chosen["bom"]) {
      src.rows.push_back({str(l, "item"), str(l, "profile"), str(l, "source")});
    }
    d.blocks.push_back(table_block(src));
  }
}

void add_evidence(const json& r, Document& d) {
  d.blocks.push_back(heading("Evidence"));
  const json& n = r["counts"];
  Table t;
  t.title = "The search";
  t.headers = {"design points", "count (points)"};
  t.numeric = {false, true};
  t.rows = {
      {"in the space (the axes' product)", number_text(n["space"])},
      {"distinct", number_text(n["points"])},
      {"invalid (the scenario reader or the simulator refuses them)", number_text(n["invalid"])},
      {"ruled out by the bounds", number_text(n["ruled_out"])},
      {"candidates", number_text(n["candidates"])},
      {"simulated", number_text(n["simulated"])},
      {"failed to simulate", number_text(n["failed"])}};
  t.note =
      "The candidates are simulated in order of cost; the first that meets every target is "
      "the cheapest of the space, since the screen only rules out designs that cannot meet "
      "them (checked against a brute-force simulation in Granary's tests).";
  d.blocks.push_back(table_block(t));
  d.blocks.push_back(table_block(points_table(r, true)));
}

}  // namespace

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string usd(double v) {
  std::string digits = std::to_string(static_cast<int64_t>(std::llround(std::fabs(v))));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return (v < 0 ? "-$" : "$") + digits;
}

Result<Document> plan_document(const json& r) {
  try {
    Document d;
    d.title = "Capacity plan: " + str(r["plan"], "name");
    d.subtitle = str(r["plan"], "description");
    d.footer = "Granary " + str(r["granary"], "version") + " (" + str(r["granary"], "build") +
               ") - plan " + str(r["plan"], "source") + ", SHA-256 " + str(r["plan"], "sha256");
    d.blocks.push_back(heading("Recommendation"));
    const json chosen = r["choice"].is_null() ? json() : point_at(r, r["choice"]["point"]);
    if (chosen.is_null()) {
      d.blocks.push_back(
          paragraph("No design of the space meets every target: " + str(r, "no_choice") + "."));
    } else {
      const json& c = r["choice"];
      d.blocks.push_back(
          paragraph("The cheapest of the " + number_text(r["counts"]["points"]) +
                    " designs considered that meets every target is point " + c["point"].dump() +
                    ": " + str(c, "label") + ". It costs " + usd(c["cost_usd"].get<double>()) +
                    " at example prices. The binding target is " + str(c, "binding") + " (margin " +
                    margin_text(c["margin"]) + ")."));
      d.blocks.push_back(table_block(bom_table(chosen)));
      d.blocks.push_back(table_block(targets_table(chosen)));
      d.blocks.push_back(table_block(design_table(chosen)));
    }
    d.blocks.push_back(heading("The front and the space"));
    d.blocks.push_back(chart_block(front_chart(r)));
    if (auto sc = screen_chart(r)) d.blocks.push_back(chart_block(*sc));
    add_cases(r, chosen, d);
    add_assumptions(r, chosen, d);
    add_evidence(r, d);
    d.csv.emplace_back("points", points_table(r, false));
    if (!chosen.is_null()) d.csv.emplace_back("bom", bom_table(chosen));
    return d;
  } catch (const json::exception& e) {
    return Status::invalid_argument(std::string("the plan result is incomplete: ") + e.what());
  }
}

Result<Document> run_document(const json& r) {
  try {
    Document d;
    const json& sc = r["scenario"];
    d.title = "Simulation report: " + str(sc, "name");
    d.subtitle = "Scenario " + str(sc, "source") + ", seed " + sc["seed"].dump() + ", fidelity " +
                 str(r["fidelity"], "mode") + ".";
    const json& g = r["run"]["granary"];
    d.footer = "Granary " + str(g, "version") + " (" + str(g, "build") + ") - scenario SHA-256 " +
               str(sc, "sha256") + ", seed " + sc["seed"].dump();
    d.blocks.push_back(heading("Summary"));
    d.blocks.push_back(table_block(figures_table("What the accelerators see", r["summary"])));
    if (r.contains("bounds")) {
      json b = r["bounds"];
      b.erase("ceilings");
      b.erase("cut");
      d.blocks.push_back(table_block(figures_table("Analytic bounds", b)));
    }
    add_series_charts(r.value("series", json()), "", d);
    if (r.contains("recovery")) {
      d.blocks.push_back(heading("Failures and recovery"));
      json rec = r["recovery"];
      for (const char* k : {"events", "plans", "per_osd", "series"}) rec.erase(k);
      d.blocks.push_back(table_block(figures_table("Recovery", rec)));
      add_recovery_chart(r["recovery"].value("series", json::object()), "", d);
    }
    if (r.contains("latency_ms")) {
      Table t;
      t.title = "Latencies";
      t.headers = {"operation", "count (ops)", "p50 (ms)", "p99 (ms)", "max (ms)", "what"};
      t.numeric = {false, true, true, true, true, false};
      for (const auto& [op, l] : r["latency_ms"].items()) {
        t.rows.push_back({op, number_text(l.value("count", json())),
                          number_text(l.value("p50", json())), number_text(l.value("p99", json())),
                          number_text(l.value("max", json())), str(l, "what")});
      }
      d.blocks.push_back(table_block(t));
    }
    if (r.contains("expectations") && !r["expectations"].empty()) {
      Table t;
      t.title = "Expectations";
      t.headers = {"expectation", "condition", "measured", "passed"};
      t.numeric = {false, false, true, false};
      for (const json& e : r["expectations"]) {
        t.rows.push_back({str(e, "name").empty() ? str(e, "metric") : str(e, "name"),
                          str(e, "condition"), number_text(e["measured"]),
                          e["passed"].get<bool>() ? "yes" : "no"});
      }
      d.blocks.push_back(table_block(t));
    }
    Table metrics = figures_table("Every figure", json{{"summary", r["summary"]}});
    d.csv.emplace_back("metrics", metrics);
    return d;
  } catch (const json::exception& e) {
    return Status::invalid_argument(std::string("the run report is incomplete: ") + e.what());
  }
}

Status add_validation(Document& d, const json& v, const std::string& path) {
  if (!v.is_object() || !v.contains("mlperf") || !v.contains("recovery") ||
      !v["mlperf"].is_array() || !v["recovery"].is_array()) {
    return Status::invalid_argument(
        path +
        ": expected the figures of scripts/validation_table.py --results (keys mlperf "
        "and recovery), found something else");
  }
  try {
    Table t;
    t.title = "Comparisons with published figures";
    t.headers = {"system",  "workload", "figure",    "published",
                 "Granary", "error",    "tolerance", "verdict"};
    t.numeric = {false, false, false, true, true, true, false, false};
    auto verdict = [](bool ok, const json& reason) {
      if (ok) return std::string("within");
      return reason.is_string() && !reason.get<std::string>().empty()
                 ? "outside: " + reason.get<std::string>()
                 : std::string("outside");
    };
    for (const json& r : v["mlperf"]) {
      const int hosts = r["hosts"].get<int>();
      const int p = r["published_per_host"].get<int>(), g = r["granary_per_host"].get<int>();
      const std::string q = str(r, "granary_qualifier");
      t.rows.push_back({str(r, "system"), str(r, "workload"), "supported accelerators (count)",
                        std::to_string(p * hosts), q + std::to_string(g * hosts),
                        fixed(100.0 * (g - p) / p, 0) + " %", str(r, "supported_tolerance"),
                        verdict(r["supported_ok"].get<bool>(), r["reason"])});
      const double pm = r["published_mib_per_s"].get<double>();
      const double gm = r["granary_mib_per_s"].get<double>();
      t.rows.push_back({"", "", "throughput (MiB/s)", fixed(pm, 0), fixed(gm, 0),
                        fixed(100 * (gm / pm - 1), 1) + " %", "reported", "-"});
    }
    for (const json& r : v["recovery"]) {
      t.rows.push_back({str(r, "system"), str(r, "workload"), "recovery rate (MiB/s)",
                        fixed(r["published_mib_per_s"].get<double>(), 0),
                        fixed(r["granary_mib_per_s"].get<double>(), 0),
                        "x" + fixed(r["ratio"].get<double>(), 2), str(r, "tolerance"),
                        verdict(r["ok"].get<bool>(), r["reason"])});
    }
    t.note =
        "Granary's simulations of published MLPerf Storage v1.0 submissions and Ceph "
        "recovery measurements (docs/validation.md), from " +
        std::filesystem::path(path).filename().string() + ".";
    d.blocks.push_back(heading("Validation against published figures"));
    d.blocks.push_back(table_block(std::move(t)));
    return Status::ok_status();
  } catch (const json::exception& e) {
    return Status::invalid_argument(path + ": a validation row is incomplete: " + e.what());
  }
}

Result<Document> document_for(const json& j, const std::string& path) {
  if (j.is_object() && j.contains("granary_plan_result")) {
    auto d = plan_document(j);
    if (!d.ok()) return Status::invalid_argument(path + ": " + d.status().message());
    return d;
  }
  if (j.is_object() && j.contains("granary_report")) {
    auto d = run_document(j);
    if (!d.ok()) return Status::invalid_argument(path + ": " + d.status().message());
    return d;
  }
  return Status::invalid_argument(
      path +
      ": expected a run report (granary run --out) or a plan result (granary plan "
      "capacity --out), found neither key granary_report nor granary_plan_result");
}

}  // namespace granary::report

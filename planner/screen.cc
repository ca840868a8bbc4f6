// The analytic screen of a design point (screen.h).
#include "planner/screen.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/durability.h"
#include "sim/cluster_plan.h"
#include "sim/report_writer.h"

namespace granary::planner {
namespace {

constexpr double kGib = 1024.0 * 1024 * 1024;

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string condition(models::Comparator c, double threshold) {
  return std::string(c == models::Comparator::kAtLeast ? ">= " : "<= ") + number(threshold);
}

// The price of `profile` of `kind` ("drive", ...): the plan's override, else the catalog's.
Result<BomLine> priced(const Plan& plan, const std::string& kind, const std::string& label,
                       const std::string& profile, double catalog_usd, int64_t quantity,
                       const std::string& source) {
  BomLine line;
  line.source = source;
  line.kind = label;
  line.profile = profile;
  line.quantity = quantity;
  if (auto it = plan.prices_usd.find(kind + ":" + profile); it != plan.prices_usd.end()) {
    line.unit_usd = it->second;
    line.price_source = "plan override";
  } else if (catalog_usd > 0) {
    line.unit_usd = catalog_usd;
    line.price_source = "catalog example";
  } else {
    return Status::invalid_argument(plan.source_path + ": the " + kind + " profile '" + profile +
                                    "' has no price: give one in prices_usd[\"" + kind + ":" +
                                    profile + "\"]");
  }
  line.total_usd = line.unit_usd * static_cast<double>(quantity);
  return line;
}

// Storage leaf switches: the leaves that hold only storage servers, when the fabric puts them on
// their own and names its switch (else the storage shares the clients' leaves, not costed here).
int64_t storage_leaves(const models::Scenario& s) {
  const auto& f = s.cluster.fabric;
  if (!f.storage_on_own_leaves || f.edge_switch.name.empty() || f.hosts_per_leaf < 1) return 0;
  return (s.cluster.storage.count + f.hosts_per_leaf - 1) / f.hosts_per_leaf;
}

Status bill_of_materials(const Plan& plan, const models::Scenario& s, Screen& out) {
  const auto& st = s.cluster.storage;
  const int64_t servers = st.count;
  std::vector<Result<BomLine>> lines;
  if (!st.server.name.empty()) {
    lines.push_back(priced(plan, "server", "storage server", st.server.name, st.server.price_usd,
                           servers, st.server.source));
  }
  lines.push_back(priced(plan, "drive", "drive", st.drive.name, st.drive.price_usd,
                         servers * st.drives_per_node, st.drive.source));
  lines.push_back(priced(plan, "nic", "NIC", st.nic.profile.name, st.nic.profile.price_usd,
                         servers * st.nic.count, st.nic.profile.source));
  const int64_t leaves = storage_leaves(s);
  if (leaves > 0) {
    const auto& sw = s.cluster.fabric.edge_switch;
    lines.push_back(
        priced(plan, "switch", "storage leaf switch", sw.name, sw.price_usd, leaves, sw.source));
  }
  for (auto& l : lines) {
    if (!l.ok()) return l.status();
    out.cost_usd += l->total_usd;
    out.bom.push_back(std::move(l).value());
  }
  if (!st.server.name.empty() && st.server.power_watts > 0 && st.server.rack_units > 0 &&
      (leaves == 0 || (s.cluster.fabric.edge_switch.power_watts > 0 &&
                       s.cluster.fabric.edge_switch.rack_units > 0))) {
    const auto& sw = s.cluster.fabric.edge_switch;
    out.power_kw = (st.server.power_watts * servers + sw.power_watts * leaves) / 1000;
    out.rack_units = static_cast<int>(st.server.rack_units * servers + sw.rack_units * leaves);
  }
  return Status::ok_status();
}

double redundancy_efficiency(const models::Scenario& s) {
  if (s.storage.design != models::StorageDesign::kRados) return 1;
  const auto& r = s.storage.rados;
  return r.ec_k > 0 ? static_cast<double>(r.ec_k) / (r.ec_k + r.ec_m) : 1.0 / r.replicas;
}

// The durability the hardware allows at best (screen.h).
std::optional<double> durability_bound(const Plan& plan, const models::Scenario& s,
                                       std::string* note) {
  if (s.storage.design != models::StorageDesign::kRados) {
    *note = "durability is modelled for design rados only";
    return std::nullopt;
  }
  const auto& st = s.cluster.storage;
  const auto& r = s.storage.rados;
  const int drives = st.count * st.drives_per_node;
  const double per_osd =
      r.recovery.recovery_bytes_per_s_per_osd > 0
          ? std::min(r.recovery.recovery_bytes_per_s_per_osd, st.drive.write_gbytes_per_s * 1e9)
          : st.drive.write_gbytes_per_s * 1e9;
  models::DurabilityInput in;
  in.drives = drives;
  in.data_chunks = r.ec_k > 0 ? r.ec_k : 1;
  in.coding_chunks = r.ec_k > 0 ? r.ec_m : r.replicas - 1;
  in.placement_groups = r.pg_num;
  in.drive_afr = r.recovery.drive_afr;
  in.detect_hours = r.recovery.down_out_interval_s / 3600;
  const double drive_bytes = st.drive.capacity_tb * 1e12 * plan.search.max_fill;
  in.recovery_hours = drive_bytes / (std::max(1, drives - 1) * per_osd) / 3600;
  in.pool_bytes = drive_bytes * drives * redundancy_efficiency(s);
  if (in.coding_chunks < 1) {
    *note = "one copy: any drive failure loses data";
    return 0.0;
  }
  auto d = models::durability(in);
  if (!d.ok()) {
    *note = d.status().message();
    return std::nullopt;
  }
  std::ostringstream n;
  n << "at most: a failed drive's " << drive_bytes / 1e12 << " TB re-protected by " << drives - 1
    << " drives at " << per_osd / 1e9 << " GB/s each (" << in.recovery_hours * 3600
    << " s) after the " << r.recovery.down_out_interval_s << " s down-out interval";
  *note = n.str();
  return d->nines;
}

// The most favourable value of a case's metric, from the case's run plan (screen.h).
std::optional<double> case_bound(const sim::ClusterPlan& cp, const std::string& metric,
                                 std::string* note) {
  const models::ReadBounds& b = cp.bounds;
  const bool training = cp.kind == models::WorkloadKind::kTrainingRead;
  if (training && metric == "summary.accelerator_utilization.mean") {
    *note = "at most min(1, " + b.binding().resource + " ceiling / the accelerators' demand)";
    return b.demand_bytes_per_s > 0 ? std::min(1.0, b.binding().bytes_per_s / b.demand_bytes_per_s)
                                    : 1.0;
  }
  if (training && (metric == "summary.read_gibps_steady" || metric == "summary.read_gibps_epoch")) {
    *note = "at most the " + b.binding().resource + " ceiling";
    return b.binding().bytes_per_s / kGib;
  }
  if (cp.checkpoint && metric == "summary.write_seconds") {
    const models::Scenario& full = cp.scenario;
    const sim::WriteBound wb =
        sim::write_bound(full, cp.checkpoint_ranks.cluster_nodes, full.storage.protocol.efficiency);
    *note = "at least the checkpoint over the write bound (" + wb.bottleneck + ")";
    return cp.run.workloads[0].checkpoint.total_gb() * 1e9 / wb.bytes_per_s;
  }
  *note = "no analytic bound for this metric";
  return std::nullopt;
}

TargetValue storage_target(std::string name, std::string metric, models::Comparator c,
                           double threshold, std::optional<double> value, Basis basis,
                           std::string note) {
  TargetValue t;
  t.name = std::move(name);
  t.metric = std::move(metric);
  t.comparator = c;
  t.threshold = threshold;
  t.value = value;
  t.basis = value ? basis : Basis::kNone;
  t.note = std::move(note);
  return t;
}

}  // namespace

const char* basis_name(Basis b) {
  switch (b) {
    case Basis::kExact:
      return "exact";
    case Basis::kBound:
      return "bound";
    case Basis::kMeasured:
      return "measured";
    case Basis::kNone:
      break;
  }
  return "none";
}

void judge(TargetValue& t) {
  if (!t.value) {
    t.margin.reset();
    t.met = t.basis == Basis::kNone;  // the screen cannot rule; a missing measurement misses
    return;
  }
  const double v = *t.value;
  const bool at_least = t.comparator == models::Comparator::kAtLeast;
  t.met = at_least ? v >= t.threshold : v <= t.threshold;
  const double slack = at_least ? v - t.threshold : t.threshold - v;
  t.margin = t.threshold != 0 ? slack / std::fabs(t.threshold) : slack;
}

int durability_case(const Plan& plan) {
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    if (models::has_failures(plan.cases[i].scenario)) return static_cast<int>(i);
  }
  return -1;
}

Result<Screen> screen_point(const Plan& plan, const DesignPoint& point) {
  Screen out;
  const models::Scenario& s = point.scenarios.front();
  if (Status st = bill_of_materials(plan, s, out); !st.ok()) return st;
  out.raw_tb = s.cluster.storage.count * s.cluster.storage.drives_per_node *
               s.cluster.storage.drive.capacity_tb;
  out.redundancy_efficiency = redundancy_efficiency(s);
  out.usable_tb = out.raw_tb * out.redundancy_efficiency * plan.search.max_fill;
  const StorageTargets& st = plan.targets;
  using models::Comparator;
  if (st.usable_capacity_tb > 0) {
    out.targets.push_back(storage_target(
        "usable capacity " + condition(Comparator::kAtLeast, st.usable_capacity_tb) + " TB",
        "usable_capacity_tb", Comparator::kAtLeast, st.usable_capacity_tb, out.usable_tb,
        Basis::kExact, "raw x user bytes per raw byte x fill ratio"));
  }
  if (st.durability_nines > 0) {
    std::string note;
    const std::optional<double> nines = durability_bound(plan, s, &note);
    TargetValue t = storage_target(
        "durability " + condition(Comparator::kAtLeast, st.durability_nines) + " nines",
        "recovery.durability.nines", Comparator::kAtLeast, st.durability_nines, nines,
        Basis::kBound, note);
    t.case_index = durability_case(plan);
    out.targets.push_back(std::move(t));
  }
  if (st.power_kw > 0) {
    out.targets.push_back(
        storage_target("power " + condition(Comparator::kAtMost, st.power_kw) + " kW", "power_kw",
                       Comparator::kAtMost, st.power_kw, out.power_kw, Basis::kExact,
                       out.power_kw ? "storage servers and storage leaf switches"
                                    : "a part of the design has no power figure"));
  }
  if (st.rack_units > 0) {
    out.targets.push_back(storage_target(
        "rack units " + condition(Comparator::kAtMost, st.rack_units) + " U", "rack_units",
        Comparator::kAtMost, st.rack_units,
        out.rack_units ? std::optional<double>(*out.rack_units) : std::nullopt, Basis::kExact,
        out.rack_units ? "storage servers and storage leaf switches"
                       : "a part of the design has no rack-unit figure"));
  }
  for (size_t i = 0; i < plan.cases.size(); ++i) {
    const PlanCase& c = plan.cases[i];
    auto cp = sim::build_cluster_plan(point.scenarios[i], point.scenarios[i].seed);
    if (!cp.ok()) return cp.status();
    for (const models::Expectation& e : c.targets) {
      TargetValue t;
      t.name = c.name + ": " + models::display_name(e);
      t.metric = e.metric;
      t.case_index = static_cast<int>(i);
      t.comparator = e.comparator;
      t.threshold = std::get<double>(e.values.front());
      t.value = case_bound(*cp, e.metric, &t.note);
      t.basis = t.value ? Basis::kBound : Basis::kNone;
      out.targets.push_back(std::move(t));
    }
  }
  for (TargetValue& t : out.targets) {
    judge(t);
    if (t.basis == Basis::kBound && t.case_index >= 0 && t.metric != "recovery.durability.nines" &&
        !t.met) {
      // A simulation bound rules the point out only beyond the slack (screen.h).
      const double f = 1 + plan.search.screen_slack;
      t.met = t.comparator == models::Comparator::kAtLeast ? *t.value * f >= t.threshold
                                                           : *t.value / f <= t.threshold;
    }
    // An exact figure that is missing (a part without power) rules the point out; a missing
    // bound does not.
    if (!t.value && (t.metric == "power_kw" || t.metric == "rack_units")) t.met = false;
    if (!t.met && out.may_meet) {
      out.may_meet = false;
      out.ruled_out_by = t.name;
    }
  }
  return out;
}

}  // namespace granary::planner

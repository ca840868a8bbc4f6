// The analytic screen of a design point: what it costs (the bill of materials from the
// catalog's example prices or the plan's), its power and rack units, its usable capacity, and
// for every target the most favourable value the design can reach, from closed forms and
// without simulation (docs/plan-format.md, "The screen"):
//   - usable capacity, power, rack units: exact (sums over the bill of materials);
//   - accelerator utilisation (summary.accelerator_utilization.mean of a training read): at
//     most min(1, binding read ceiling / the accelerators' demand), models/read_bounds.h, over
//     the whole cluster without placement (the simulation never runs above it);
//   - read throughput (summary.read_gibps_steady, summary.read_gibps_epoch): at most the
//     binding read ceiling;
//   - checkpoint time (summary.write_seconds of a checkpoint): at least the checkpoint's bytes
//     over the analytic write bound (sim/report_writer.h, write_bound);
//   - durability (recovery.durability.nines of the failure case): at most the Markov model's
//     nines (models/durability.h) with the failed drive re-protected at the hardware's speed:
//     its data at the fill ratio, written by every other drive at its rated write rate (or the
//     recovery throttle per OSD when the scenario sets one), after Ceph's down-out interval;
//   - any other metric: no bound (the screen lets the point through).
// The screen rules a point out only when one of these bounds misses its target, a simulation's
// bound (AU, read rate, checkpoint time) by more than search.screen_slack (5%): MLPerf's AU
// leaves each epoch's first step out and the loaders prefetch, so a short epoch's mean AU can
// exceed the steady-state bound (by up to 3.4% on the planner tests' space, where every point
// was simulated). A point it rules out cannot meet its targets in simulation either, so the
// cheapest design the simulations find among the rest is the cheapest of the space
// (tests/planner: checked against a brute-force simulation of every point).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "planner/design_space.h"
#include "planner/plan.h"

namespace granary::planner {

struct BomLine {
  std::string kind;     // "storage server", "drive", "NIC", "switch"
  std::string profile;  // the catalog profile
  int64_t quantity = 0;
  double unit_usd = 0;
  double total_usd = 0;
  std::string price_source;  // "catalog example" or "plan override"
  std::string source;        // where the profile's figures and example price come from
};

// How a target's value was obtained.
enum class Basis {
  kExact,     // computed from the design (capacity, power, rack units)
  kBound,     // the screen's most favourable value
  kMeasured,  // the simulation's report
  kNone,      // no value: neither a bound nor (yet) a measurement
};
const char* basis_name(Basis b);

struct TargetValue {
  std::string name;     // display name ("storm: AU >= 0.9", "usable capacity >= 500 TB")
  std::string metric;   // the report metric, or "usable_capacity_tb", "power_kw", "rack_units"
  int case_index = -1;  // the case whose report holds the metric (-1: a storage target)
  models::Comparator comparator = models::Comparator::kAtLeast;
  double threshold = 0;
  std::optional<double> value;
  Basis basis = Basis::kNone;
  // Met: the value meets the threshold (a target without a value counts as met by the screen,
  // which cannot rule on it, and as missed after simulation). margin: the relative slack,
  // (value - threshold) / |threshold| for at_least, the opposite for at_most (0 when the
  // threshold is 0: then value - threshold or its opposite); absent without a value.
  bool met = true;
  std::optional<double> margin;
  std::string note;  // why there is no value, or how the bound follows
};

struct Screen {
  std::vector<BomLine> bom;
  double cost_usd = 0;
  std::optional<double> power_kw;    // absent when a part has no power figure
  std::optional<int> rack_units;     // likewise
  double raw_tb = 0;                 // every drive's capacity, decimal TB
  double usable_tb = 0;              // after redundancy and the fill ratio
  double redundancy_efficiency = 1;  // user bytes per raw byte
  // Storage targets first (capacity, durability, power, rack units), then each case's targets.
  std::vector<TargetValue> targets;
  bool may_meet = true;
  std::string ruled_out_by;  // the first target the bounds miss
};

// Evaluates `value` against the target (met, margin).
void judge(TargetValue& t);

// The screen of a valid point (point.invalid empty). Errors: the run would refuse one of the
// point's scenarios (sim::build_cluster_plan's message), a part without a price (neither in
// the catalog nor in the plan's prices_usd).
Result<Screen> screen_point(const Plan& plan, const DesignPoint& point);

// The case (its index) whose scenario has a failure timeline and so measures durability, or -1.
int durability_case(const Plan& plan);

}  // namespace granary::planner

// Capacity plans: the question an architect brings ("the cheapest storage that keeps these GPUs
// fed, checkpoints in a minute and holds AU 0.8 while a host rebuilds"), as a file. Format 1
// ("granary_plan": 1), documented key by key in docs/plan-format.md:
//   - cases: one or more scenario files (a read storm, a checkpoint, the storm during a failure)
//     that share the storage cluster, each with targets on its run report (expectations limited
//     to at_least / at_most, models/expectations.h);
//   - targets: what the storage itself must offer (usable capacity, durability in nines, power,
//     rack units);
//   - space: the design axes (storage servers, drives and NICs per server and their models,
//     the server model, redundancy, design, protocol, GPUDirect Storage); an axis left out keeps
//     the base scenario's value;
//   - prices_usd: overrides of the catalog's example prices;
//   - search: how many simulations the planner may run, the fill ratio that counts as usable.
//
// Parsing resolves the cases' scenario files (relative to the plan's directory), every profile
// name of the space (against the catalog) and checks every value, with the scenario reader's
// one-line messages: "p.json: space.drive[1]: unknown drive profile 'x' (known: ...)".
//
// Plain values and pure functions apart from reading files; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "models/catalog.h"
#include "models/expectations.h"
#include "models/scenario.h"

namespace granary::planner {

inline constexpr int kPlanFormatVersion = 1;

// One scenario the design must pass, with its targets on the run report.
struct PlanCase {
  std::string name;
  std::string scenario_path;  // resolved against the plan's directory
  std::string scenario_text;  // the file's text, which each design point edits
  models::Scenario scenario;  // the file as written (the base design)
  std::vector<models::Expectation> targets;
};

// A redundancy choice for design rados: `replicas` copies, or erasure coding k + m.
struct Redundancy {
  int replicas = 0;  // > 0: replicated
  int k = 0, m = 0;  // k > 0: erasure-coded
  // "3x", "ec4+2" (how points are named).
  std::string name() const;
};

// The design axes. An empty axis keeps the base scenario's value.
struct DesignSpace {
  std::vector<int> storage_servers;
  std::vector<int> drives_per_server;
  std::vector<std::string> drives;  // drive profile names
  std::vector<std::string> nics;    // storage NIC profile names
  std::vector<int> nics_per_server;
  std::vector<std::string> servers;  // storage server profile names
  std::vector<Redundancy> redundancy;
  std::vector<models::StorageDesign> designs;
  std::vector<std::string> protocols;
  std::vector<bool> gds;
};

// Targets on the storage itself (0 or absent: none).
struct StorageTargets {
  double usable_capacity_tb = 0;  // decimal TB of user data, after redundancy and fill ratio
  double durability_nines = 0;    // -log10(annual probability of losing data)
  double power_kw = 0;            // at most: storage servers and storage leaf switches
  int rack_units = 0;             // at most
};

struct SearchOptions {
  int max_points = 40;     // design points simulated at most in the search for the cheapest
  int front_points = 4;    // points simulated beyond the choice, along the front
  double max_fill = 0.85;  // the share of the raw capacity that counts as usable
                           // (Ceph's mon_osd_nearfull_ratio)
  // The screen rules a point out on a simulation bound (AU, read rate, checkpoint time) only
  // when the bound misses its target by more than this share (screen.h: MLPerf's AU of a finite
  // epoch can exceed the steady-state bound).
  double screen_slack = 0.05;
};

struct Plan {
  int version = kPlanFormatVersion;
  std::string name;
  std::string description;
  std::string source_path;
  std::string source_sha256;  // of the plan file's text
  std::vector<PlanCase> cases;
  StorageTargets targets;
  DesignSpace space;
  // Price overrides by "kind:profile" ("drive:samsung-pm9a3-7.68tb", "nic:...", "server:...",
  // "switch:..."), US dollars.
  std::map<std::string, double> prices_usd;
  SearchOptions search;
};

// Reads and validates a plan file; the cases' scenarios resolve profiles against `catalog`.
Result<Plan> load_plan(const std::string& path, const models::Catalog& catalog);
// Validates plan text; `source_path` names it in messages and anchors the cases' paths.
Result<Plan> parse_plan(std::string_view json_text, std::string_view source_path,
                        const models::Catalog& catalog);

}  // namespace granary::planner

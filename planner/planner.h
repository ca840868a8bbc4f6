// The capacity planner: the cheapest design of a plan's space that meets every target, the
// cost-versus-margin front, and which target binds (docs/plan-format.md, "The search").
//
// The search, deterministic for a plan whatever the parallelism:
//  1. Every point of the space is built (design_space.h) and screened (screen.h): cost, power,
//     capacity, and for each target the most favourable value the design can reach.
//  2. The points the screen lets through (candidates) are considered in order of cost (then
//     index): each is simulated, case after case (a case's simulation runs its scenario with
//     the point's design; the point stops at the first case that misses a target), until one
//     meets every target. Since the screen only rules out points that cannot meet their targets,
//     that point is the cheapest design of the space that does.
//  3. Then the next search.front_points candidates in order of cost are simulated, to show
//     what more money buys. The front is the simulated points that no other simulated point
//     dominates (as cheap or cheaper with as large a margin or larger, one of them strictly),
//     where a point's margin is its smallest target margin (negative when it misses one).
//  4. The search simulates at most search.max_points points: the result then says no design
//     was found within the budget and names the next candidate.
// A simulation is handed to `Simulate` in batches of up to `batch` scenarios (the parallelism:
// forked children, MPI ranks); the result lists exactly the simulations the sequential search
// above makes, so any batch size gives the same result. Simulations made beyond them (a batch
// that ran past the choice) are kept in the cache only.
//
// The result (a JSON document, docs/plan-format.md "Results") lists every point with its bill
// of materials, its figures and targets (bound, measured, margin), the choice, the front and the
// counts.
//
// Not thread-safe: one run_plan at a time per cache; Simulate is called from the calling thread.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "models/catalog.h"
#include "planner/plan.h"

namespace granary::planner {

// The format version of plan results ("granary_plan_result").
inline constexpr int kPlanResultFormat = 1;

// One simulation: a scenario and the text it was parsed from (which a process that runs it
// elsewhere parses again, against scenario->source_path).
struct SimulationRun {
  const models::Scenario* scenario = nullptr;
  const std::string* text = nullptr;
};
// The scenarios of `runs`, in order.
std::vector<const models::Scenario*> scenarios_of(const std::vector<SimulationRun>& runs);

// Runs the simulations of a batch and returns one report (or the run's error) per run, in
// order.
using Simulate =
    std::function<std::vector<Result<nlohmann::json>>(const std::vector<SimulationRun>& batch)>;

// What a simulation of a case gave, kept between runs of a plan (a cancelled plan resumes
// where it stopped): looked up by the key of the case's edited scenario (the SHA-256 of its
// text and Granary's version). An entry is {"metrics": {metric: value or null}, "summary":
// the report's summary}.
class ResultCache {
 public:
  virtual ~ResultCache() = default;
  virtual std::optional<nlohmann::json> find(const std::string& key) = 0;
  virtual Status store(const std::string& key, const nlohmann::json& entry) = 0;
};

struct PlannerOptions {
  int batch = 1;  // scenarios handed to Simulate at once (>= 1)
  // Screen every point and simulate none: the result lists the candidates and their bounds
  // (no choice: simulation decides).
  bool screen_only = false;
  ResultCache* cache = nullptr;
  // One line per step ("screened 96 points: 40 may meet the targets", "simulating ...").
  std::function<void(const std::string& line)> progress = {};
  // Called after each simulated point with the result so far (the GUI's front filling in).
  std::function<void(const nlohmann::json& partial)> on_point = {};
};

// Plans. Errors: Simulate returning the wrong number of reports, a cache that cannot store.
// A simulation that fails (its error) marks its point as failed in the result, and the search
// goes on.
Result<nlohmann::json> run_plan(const Plan& plan, const models::Catalog& catalog,
                                const Simulate& simulate, const PlannerOptions& options);

// The cache key of a scenario text: SHA-256 of Granary's version and the text.
std::string cache_key(const std::string& scenario_text);

}  // namespace granary::planner

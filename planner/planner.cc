// The capacity planner's search (planner.h).
#include "planner/planner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "granary/version.h"
#include "models/expectations.h"
#include "models/scenario_json.h"
#include "planner/design_space.h"
#include "planner/screen.h"

namespace granary::planner {
namespace {

using nlohmann::json;

enum class State { kInvalid, kRuledOut, kCandidate, kSimulated, kFailed };

const char* state_name(State s) {
  switch (s) {
    case State::kInvalid:
      return "invalid";
    case State::kRuledOut:
      return "ruled_out";
    case State::kCandidate:
      return "not_simulated";
    case State::kSimulated:
      return "simulated";
    case State::kFailed:
      return "failed";
  }
  return "?";
}

// A point through the search.
struct Work {
  DesignPoint point;
  std::optional<Screen> screen;
  std::string invalid;  // why the point cannot be built or screened
  State state = State::kInvalid;
  // The search's progress on it: the cases simulated so far (each case's entry), done once every
  // case ran or one missed a target, or a simulation failed.
  std::vector<json> entries;
  bool done = false;
  std::string failure;  // a simulation's error
  // The outcome once recorded: the targets with measured values, and the verdict.
  std::vector<TargetValue> targets;
  bool meets = false;
  std::optional<double> margin;
  std::string binding;
};

double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

std::string key_of(const Work& w, size_t c) {
  return cache_key(w.point.scenario_texts[c]);
}

// The metrics the plan's targets read in case `c`'s report.
std::vector<std::string> case_metrics(const Plan& plan, size_t c) {
  std::vector<std::string> m;
  for (const auto& e : plan.cases[c].targets) m.push_back(e.metric);
  if (plan.targets.durability_nines > 0 && static_cast<int>(c) == durability_case(plan)) {
    m.push_back("recovery.durability.nines");
  }
  return m;
}

// The scalars of object `j`, and its objects of scalars (the figures of a report section
// without its series and per-resource arrays).
json scalars(const json& j) {
  json out = json::object();
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_primitive()) {
      out[k] = v;
    } else if (v.is_object() &&
               std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_primitive(); })) {
      out[k] = v;
    }
  }
  return out;
}

json entry_of(const std::vector<std::string>& metrics, const json& report) {
  json e = {{"metrics", json::object()},
            {"summary", report.value("summary", json::object())},
            {"bounds", scalars(report.value("bounds", json::object()))}};
  if (report.contains("recovery")) e["recovery"] = scalars(report["recovery"]);
  // The time series a report draws (throughput, AU, recovery progress): the choice's go into
  // the result for the report's charts.
  json series = json::object();
  if (report.contains("series")) series["run"] = report["series"];
  if (report.contains("recovery") && report["recovery"].contains("series")) {
    series["recovery"] = report["recovery"]["series"];
  }
  e["series"] = std::move(series);
  for (const std::string& m : metrics) {
    const json* v = models::find_metric(report, m);
    e["metrics"][m] = v != nullptr && v->is_number() ? *v : json();
  }
  return e;
}

// Whether a cached entry holds every metric the plan needs of the case.
bool entry_has(const json& e, const std::vector<std::string>& metrics) {
  if (!e.contains("metrics") || !e["metrics"].is_object()) return false;
  return std::all_of(metrics.begin(), metrics.end(),
                     [&](const std::string& m) { return e["metrics"].contains(m); });
}

// The point's targets with what its simulated cases measured; the verdict.
void record(const Plan& plan, Work& w) {
  w.targets = w.screen->targets;
  for (TargetValue& t : w.targets) {
    if (t.case_index < 0) continue;  // exact: capacity, power, rack units
    const auto c = static_cast<size_t>(t.case_index);
    if (c >= w.entries.size()) {
      t.note = "not simulated: an earlier case missed a target";
      t.basis = Basis::kNone;
      t.value.reset();
      t.margin.reset();
      t.met = false;
      continue;
    }
    const json& v = w.entries[c]["metrics"][t.metric];
    t.basis = Basis::kMeasured;
    t.value = v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
    t.note = v.is_number() ? "case " + plan.cases[c].name + "'s report"
                           : "case " + plan.cases[c].name + "'s report has no " + t.metric;
    judge(t);
  }
  w.meets = w.state == State::kSimulated && std::all_of(w.targets.begin(), w.targets.end(),
                                                        [](const TargetValue& t) { return t.met; });
  w.margin.reset();
  w.binding.clear();
  for (const TargetValue& t : w.targets) {
    if (t.margin && (!w.margin || *t.margin < *w.margin)) {
      w.margin = t.margin;
      w.binding = t.name;
    }
  }
}

json point_json(const Work& w);

// Simulates the points `order` lists (indices into `works`) with the sequential semantics of
// planner.h: each point's cases in turn, stopping at the first that misses; `stop(i)` after
// point order[i] is done ends the walk (it sees the points in order). Up to `batch` scenarios
// at once, from consecutive points. Returns how many points of `order` the walk consumed.
Result<size_t> simulate_in_order(const Plan& plan, std::vector<Work>& works,
                                 const std::vector<int>& order, const Simulate& simulate,
                                 const PlannerOptions& options, size_t limit,
                                 const std::function<bool(const Work&)>& stop) {
  size_t next = 0;      // the next point of `order` to start
  size_t resolved = 0;  // points of `order` the walk has passed (all done, in order)
  std::deque<size_t> window;
  while (resolved < std::min(limit, order.size())) {
    while (window.size() < static_cast<size_t>(options.batch) &&
           next < std::min(limit, order.size())) {
      window.push_back(next++);
    }
    // The next case of each point of the window, from the cache or to simulate.
    std::vector<SimulationRun> batch;
    std::vector<std::pair<size_t, size_t>> batch_of;  // (window point, case)
    for (size_t o : window) {
      Work& w = works[static_cast<size_t>(order[o])];
      if (w.done) continue;
      const size_t c = w.entries.size();
      const std::vector<std::string> metrics = case_metrics(plan, c);
      if (options.cache != nullptr) {
        if (auto hit = options.cache->find(key_of(w, c)); hit && entry_has(*hit, metrics)) {
          w.entries.push_back(*hit);
          continue;
        }
      }
      batch.push_back({&w.point.scenarios[c], &w.point.scenario_texts[c]});
      batch_of.emplace_back(o, c);
    }
    if (!batch.empty()) {
      if (options.progress) {
        const Work& first = works[static_cast<size_t>(order[batch_of.front().first])];
        options.progress("simulating " + std::to_string(batch.size()) + " run(s): point " +
                         std::to_string(first.point.index) + " (" + first.point.label + "), case " +
                         plan.cases[batch_of.front().second].name +
                         (batch.size() > 1 ? ", ..." : ""));
      }
      std::vector<Result<json>> reports = simulate(batch);
      if (reports.size() != batch.size()) {
        return Status::io_error("plan: the simulator returned " + std::to_string(reports.size()) +
                                " reports for " + std::to_string(batch.size()) + " runs");
      }
      for (size_t i = 0; i < batch.size(); ++i) {
        Work& w = works[static_cast<size_t>(order[batch_of[i].first])];
        const size_t c = batch_of[i].second;
        if (!reports[i].ok()) {
          w.failure = "case " + plan.cases[c].name + ": " + reports[i].status().message();
          w.done = true;
          continue;
        }
        json e = entry_of(case_metrics(plan, c), *reports[i]);
        if (options.cache != nullptr) {
          if (Status s = options.cache->store(key_of(w, c), e); !s.ok()) return s;
        }
        w.entries.push_back(std::move(e));
      }
    }
    // Points whose last case missed a target, or that ran every case, are done.
    for (size_t o : window) {
      Work& w = works[static_cast<size_t>(order[o])];
      if (w.done || w.entries.empty()) continue;
      const size_t c = w.entries.size() - 1;
      bool missed = false;
      for (const auto& e : plan.cases[c].targets) {
        const json& v = w.entries[c]["metrics"][e.metric];
        const double t = std::get<double>(e.values.front());
        missed |=
            !v.is_number() || (e.comparator == models::Comparator::kAtLeast ? v.get<double>() < t
                                                                            : v.get<double>() > t);
      }
      w.done = missed || w.entries.size() == plan.cases.size();
    }
    while (!window.empty() && works[static_cast<size_t>(order[window.front()])].done) {
      Work& w = works[static_cast<size_t>(order[window.front()])];
      w.state = w.failure.empty() ? State::kSimulated : State::kFailed;
      record(plan, w);
      window.pop_front();
      ++resolved;
      if (options.on_point) options.on_point(point_json(w));
      if (stop(w)) {
        // Points started past this one ran speculatively: back to candidates (their runs stay
        // in the cache).
        for (size_t o : window) {
          Work& s = works[static_cast<size_t>(order[o])];
          s.entries.clear();
          s.done = false;
          s.failure.clear();
        }
        return resolved;
      }
    }
  }
  return resolved;
}

json target_json(const TargetValue& t, const std::optional<TargetValue>& screened) {
  json j = {{"name", t.name},
            {"metric", t.metric},
            {"condition", models::comparator_key(t.comparator)},
            {"threshold", t.threshold},
            {"value", t.value ? json(round_to(*t.value, 6)) : json()},
            {"basis", basis_name(t.basis)},
            {"met", t.met},
            {"margin", t.margin ? json(round_to(*t.margin, 6)) : json()},
            {"note", t.note}};
  if (t.case_index >= 0) j["case"] = t.case_index;
  if (screened && screened->basis == Basis::kBound) {
    j["bound"] = screened->value ? json(round_to(*screened->value, 6)) : json();
  }
  return j;
}

json choice_json(const DesignChoice& c) {
  json j = json::object();
  if (c.storage_servers) j["storage_servers"] = *c.storage_servers;
  if (c.drives_per_server) j["drives_per_server"] = *c.drives_per_server;
  if (c.drive) j["drive"] = *c.drive;
  if (c.nic) j["nic"] = *c.nic;
  if (c.nics_per_server) j["nics_per_server"] = *c.nics_per_server;
  if (c.server) j["server"] = *c.server;
  if (c.redundancy) j["redundancy"] = c.redundancy->name();
  if (c.design) j["design"] = std::string(models::storage_design_name(*c.design));
  if (c.protocol) j["protocol"] = *c.protocol;
  if (c.gds) j["gds"] = *c.gds;
  return j;
}

json point_json(const Work& w) {
  json j = {{"index", w.point.index},
            {"label", w.point.label},
            {"axes", choice_json(w.point.choice)},
            {"status", state_name(w.state)}};
  if (!w.invalid.empty()) {
    j["invalid"] = w.invalid;
    return j;
  }
  const Screen& s = *w.screen;
  json bom = json::array();
  for (const BomLine& l : s.bom) {
    bom.push_back({{"item", l.kind},
                   {"profile", l.profile},
                   {"quantity", l.quantity},
                   {"unit_usd", round_to(l.unit_usd, 2)},
                   {"total_usd", round_to(l.total_usd, 2)},
                   {"price_source", l.price_source},
                   {"source", l.source}});
  }
  j["cost_usd"] = round_to(s.cost_usd, 2);
  j["bom"] = bom;
  j["power_kw"] = s.power_kw ? json(round_to(*s.power_kw, 3)) : json();
  j["rack_units"] = s.rack_units ? json(*s.rack_units) : json();
  j["raw_tb"] = round_to(s.raw_tb, 3);
  j["usable_tb"] = round_to(s.usable_tb, 3);
  j["user_bytes_per_raw_byte"] = round_to(s.redundancy_efficiency, 6);
  const bool simulated = w.state == State::kSimulated || w.state == State::kFailed;
  const std::vector<TargetValue>& ts = simulated ? w.targets : s.targets;
  j["targets"] = json::array();
  for (size_t i = 0; i < ts.size(); ++i) j["targets"].push_back(target_json(ts[i], s.targets[i]));
  if (w.state == State::kRuledOut) j["ruled_out_by"] = s.ruled_out_by;
  if (simulated) {
    j["meets_targets"] = w.meets;
    j["margin"] = w.margin ? json(round_to(*w.margin, 6)) : json();
    j["binding"] = w.binding;
    json cases = json::array();
    for (const json& e : w.entries) {
      json c = {{"summary", e["summary"]}, {"bounds", e.value("bounds", json::object())}};
      if (e.contains("recovery")) c["recovery"] = e["recovery"];
      cases.push_back(std::move(c));
    }
    j["cases"] = cases;
  }
  if (!w.failure.empty()) j["failure"] = w.failure;
  return j;
}

// The indices of `ids` that no other dominates: cheaper (or as cheap) with a larger (or equal)
// margin, one of them strictly. `ids` in order of cost then index.
std::vector<int> pareto(const std::vector<Work>& works, const std::vector<int>& ids,
                        const std::function<double(const Work&)>& margin) {
  std::vector<int> front;
  double best = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < ids.size(); ++i) {
    const Work& w = works[static_cast<size_t>(ids[i])];
    const double m = margin(w);
    if (m > best) {
      // A point as cheap as the last one on the front, with a larger margin, dominates it.
      if (!front.empty() &&
          works[static_cast<size_t>(front.back())].screen->cost_usd == w.screen->cost_usd) {
        front.pop_back();
      }
      front.push_back(ids[i]);
      best = m;
    }
  }
  return front;
}

// Every point of the plan, built and screened (planner.h, step 1).
std::vector<Work> screen_all(const Plan& plan, const models::Catalog& catalog) {
  std::vector<Work> works;
  for (DesignPoint& p : enumerate_points(plan, catalog)) {
    Work w;
    w.point = std::move(p);
    w.invalid = w.point.invalid;
    if (w.invalid.empty()) {
      auto s = screen_point(plan, w.point);
      if (s.ok()) {
        w.screen = std::move(s).value();
        w.state = w.screen->may_meet ? State::kCandidate : State::kRuledOut;
      } else {
        w.invalid = s.status().message();
      }
    }
    works.push_back(std::move(w));
  }
  return works;
}

// The result's provenance: the plan, Granary, the cases' files, the search options.
json result_header(const Plan& plan) {
  json result;
  result["granary_plan_result"] = kPlanResultFormat;
  result["plan"] = {{"name", plan.name},
                    {"description", plan.description},
                    {"source", plan.source_path},
                    {"sha256", plan.source_sha256}};
  result["granary"] = {{"version", GRANARY_VERSION}, {"build", GRANARY_BUILD}};
  json cases = json::array();
  for (const PlanCase& c : plan.cases) {
    cases.push_back({{"name", c.name},
                     {"scenario", c.scenario_path},
                     {"sha256", models::sha256_hex(c.scenario_text)}});
  }
  result["cases"] = cases;
  result["search"] = {{"max_points", plan.search.max_points},
                      {"front_points", plan.search.front_points},
                      {"max_fill", plan.search.max_fill},
                      {"screen_slack", plan.search.screen_slack}};
  return result;
}

}  // namespace

std::vector<const models::Scenario*> scenarios_of(const std::vector<SimulationRun>& runs) {
  std::vector<const models::Scenario*> out;
  for (const SimulationRun& r : runs) out.push_back(r.scenario);
  return out;
}

std::string cache_key(const std::string& scenario_text) {
  return models::sha256_hex(std::string(GRANARY_VERSION) + " " + GRANARY_BUILD + "\n" +
                            scenario_text);
}

Result<json> run_plan(const Plan& plan, const models::Catalog& catalog, const Simulate& simulate,
                      const PlannerOptions& options) {
  if (options.batch < 1) return Status::invalid_argument("plan: batch must be >= 1");
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  std::vector<Work> works = screen_all(plan, catalog);
  std::vector<int> candidates;
  for (const Work& w : works) {
    if (w.state == State::kCandidate) candidates.push_back(w.point.index);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return works[static_cast<size_t>(a)].screen->cost_usd <
           works[static_cast<size_t>(b)].screen->cost_usd;
  });
  const auto count = [&](State s) {
    return std::count_if(works.begin(), works.end(), [&](const Work& w) { return w.state == s; });
  };
  say("screened " + std::to_string(works.size()) +
      " points: " + std::to_string(count(State::kInvalid)) + " invalid, " +
      std::to_string(count(State::kRuledOut)) + " ruled out by the bounds, " +
      std::to_string(candidates.size()) + " candidates");

  // The search for the cheapest (planner.h, step 2).
  int choice = -1;
  auto walked = simulate_in_order(
      plan, works, candidates, simulate, options,
      options.screen_only ? 0 : static_cast<size_t>(plan.search.max_points), [&](const Work& w) {
        if (!w.meets) return false;
        choice = w.point.index;
        return true;
      });
  if (!walked.ok()) return walked.status();
  // What more money buys (step 3): the next candidates in order of cost.
  if (choice >= 0 && plan.search.front_points > 0) {
    const auto from = std::min(candidates.size(), *walked);
    std::vector<int> more(candidates.begin() + static_cast<std::ptrdiff_t>(from), candidates.end());
    if (more.size() > static_cast<size_t>(plan.search.front_points)) {
      more.resize(static_cast<size_t>(plan.search.front_points));
    }
    say("simulating " + std::to_string(more.size()) + " more candidate(s) beyond the choice");
    auto walked_more = simulate_in_order(plan, works, more, simulate, options, more.size(),
                                         [](const Work&) { return false; });
    if (!walked_more.ok()) return walked_more.status();
  }

  json result = result_header(plan);
  std::vector<int> simulated;
  for (int id : candidates) {
    const State s = works[static_cast<size_t>(id)].state;
    if (s == State::kSimulated || s == State::kFailed) simulated.push_back(id);
  }
  result["counts"] = {{"points", works.size()},
                      {"space", space_size(plan.space)},
                      {"invalid", count(State::kInvalid)},
                      {"ruled_out", count(State::kRuledOut)},
                      {"candidates", candidates.size()},
                      {"simulated", simulated.size()},
                      {"failed", count(State::kFailed)}};
  if (choice >= 0) {
    const Work& w = works[static_cast<size_t>(choice)];
    result["choice"] = {{"point", choice},
                        {"label", w.point.label},
                        {"cost_usd", round_to(w.screen->cost_usd, 2)},
                        {"binding", w.binding},
                        {"margin", w.margin ? json(round_to(*w.margin, 6)) : json()},
                        {"scenarios", w.point.scenario_texts}};
    json series = json::array();
    for (const json& e : w.entries) series.push_back(e.value("series", json::object()));
    result["choice"]["series"] = series;
    say("the cheapest design that meets every target: point " + std::to_string(choice) + " (" +
        w.point.label + "), binding: " + w.binding);
  } else {
    std::string why = candidates.empty() ? "no point of the space can meet the targets (the "
                                           "screen ruled every one out)"
                      : options.screen_only
                          ? "screened only: simulation decides among the candidates"
                          : "no simulated point meets every target";
    if (*walked < candidates.size() && !options.screen_only) {
      const Work& next = works[static_cast<size_t>(candidates[*walked])];
      why +=
          "; the search stopped at search.max_points = " + std::to_string(plan.search.max_points) +
          ", the next candidate is point " + std::to_string(next.point.index) + " (" +
          next.point.label + ")";
    }
    result["choice"] = nullptr;
    result["no_choice"] = why;
    say(why);
  }
  result["front"] = pareto(works, simulated, [](const Work& w) {
    return w.margin.value_or(-std::numeric_limits<double>::infinity());
  });
  json points = json::array();
  for (const Work& w : works) points.push_back(point_json(w));
  result["points"] = points;
  return result;
}

}  // namespace granary::planner

// The capacity planner (planner/): plan files, design points, the screen, and the search
// against a brute-force simulation of every point.
#include "planner/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "models/catalog.h"
#include "planner/design_space.h"
#include "planner/plan.h"
#include "planner/screen.h"
#include "sim/child_run.h"

namespace granary::planner {
namespace {

using nlohmann::json;

const std::string kData = std::string(GRANARY_SOURCE_DIR) + "/tests/planner/data/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Plan load(const std::string& name) {
  auto p = load_plan(kData + name, models::Catalog::built_in());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

// The plan `name` with `edit` applied to its JSON, parsed as if it lay beside the test data.
Status parse_edited(const std::string& name, const std::function<void(json&)>& edit) {
  json j = json::parse(read(kData + name));
  edit(j);
  return parse_plan(j.dump(), kData + "edited.json", models::Catalog::built_in()).status();
}

TEST(PlanFile, RefusesBadInputNamingThePathWhatWasExpectedAndWhatWasFound) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& j) { j["granary_plan"] = 2; },
       "edited.json: granary_plan: expected 1 (the plan format this build reads), found 2"},
      {[](json& j) { j["spaec"] = json::object(); },
       "edited.json: spaec: unknown key (did you mean 'space'?)"},
      {[](json& j) { j["space"]["drive"] = {"nvme-gen9"}; },
       "edited.json: space.drive[0]: unknown drive profile 'nvme-gen9'"},
      {[](json& j) {
         j["space"]["storage_servers"] = {4, 4};
       },
       "edited.json: space.storage_servers[1]: repeats 4"},
      {[](json& j) { j["space"]["storage_servers"] = json::array(); },
       "edited.json: space.storage_servers: expected an array of 1..64 values, found an empty "
       "array"},
      {[](json& j) {
         j["space"]["redundancy"] = {"3x", "raid6"};
       },
       "edited.json: space.redundancy[1]: expected \"<r>x\" (replicas, 1..10) or \"ec<k>+<m>\""},
      {[](json& j) { j["space"]["design"] = {"local"}; },
       "edited.json: space.design[0]: design \"local\" keeps the drives in the client nodes"},
      {[](json& j) { j["cases"][0]["scenario"] = "missing.json"; },
       "edited.json: cases[0].scenario: " + kData + "missing.json: cannot open the file"},
      {[](json& j) {
         j["cases"][0]["targets"][0] = {{"metric", "summary.x"}, {"equals", 1}};
       },
       "edited.json: cases[0].targets[0]: a target is at_least or at_most a number"},
      {[](json& j) { j["targets"]["durability_nines"] = 9; },
       "edited.json: targets.durability_nines: durability is measured from a failure: add a case"},
      {[](json& j) {
         j["prices_usd"] = {{"gpu:a100", 1}};
       },
       "edited.json: prices_usd[\"gpu:a100\"]: expected a key \"drive:NAME\""},
      {[](json& j) { j["search"]["max_fill"] = 1.5; },
       "edited.json: search.max_fill: expected a number in [0.01, 1], found 1.5"},
      {[](json& j) {
         for (const char* axis : {"storage_servers", "drives_per_server", "nics_per_server"}) {
           j["space"][axis] = json::array();
           for (int i = 1; i <= 64; ++i) j["space"][axis].push_back(i);
         }
       },
       "edited.json: space: the axes make 1048576 design points (at most 100000): split the "
       "plan"},
  };
  for (const auto& [edit, message] : cases) {
    const Status s = parse_edited("small-plan.json", edit);
    EXPECT_FALSE(s.ok()) << message;
    EXPECT_NE(s.message().find(message), std::string::npos)
        << "expected: " << message << "\n     got: " << s.message();
  }
  const Status syntax =
      parse_plan("{\n  \"granary_plan\": 1,\n  oops\n}", "p.json", models::Catalog::built_in())
          .status();
  EXPECT_EQ(syntax.message(), "p.json:3:3: invalid JSON");
}

TEST(DesignSpace, EveryCombinationIsAPointWhoseScenariosCarryTheAxes) {
  const Plan plan = load("brute-plan.json");
  const std::vector<DesignPoint> points = enumerate_points(plan, models::Catalog::built_in());
  ASSERT_EQ(points.size(), 24u);  // 3 x 2 x 1 x 2 x 2
  EXPECT_EQ(space_size(plan.space), 24);
  int invalid = 0;
  for (const DesignPoint& p : points) {
    if (!p.invalid.empty()) {
      // Erasure coding 4+2 puts its 6 shards on 6 hosts: fewer servers cannot hold it.
      ++invalid;
      EXPECT_EQ(p.choice.redundancy->name(), "ec4+2");
      EXPECT_LT(*p.choice.storage_servers, 6);
      EXPECT_NE(p.invalid.find("storage.rados.erasure"), std::string::npos) << p.invalid;
      continue;
    }
    const models::Scenario& s = p.scenarios.front();
    EXPECT_EQ(s.cluster.storage.count, *p.choice.storage_servers);
    EXPECT_EQ(s.cluster.storage.drives_per_node, *p.choice.drives_per_server);
    EXPECT_EQ(s.cluster.storage.nic.profile.name, "connectx4lx-25g");
    EXPECT_EQ(s.cluster.storage.nic.count, *p.choice.nics_per_server);
    if (p.choice.redundancy->k > 0) {
      EXPECT_EQ(s.storage.rados.ec_k, 4);
      EXPECT_EQ(s.storage.rados.ec_m, 2);
    } else {
      EXPECT_EQ(s.storage.rados.replicas, 3);
      EXPECT_EQ(s.storage.rados.ec_k, 0);
    }
    // Everything no axis names is the base's.
    EXPECT_EQ(s.cluster.clients.count, 2);
    EXPECT_EQ(s.workloads.front().training.files, 600);
  }
  EXPECT_EQ(invalid, 8);
}

TEST(DesignSpace, ARedundancyChoiceOnADesignWithoutPoolsIsOneDesign) {
  Plan plan = load("small-plan.json");
  plan.space = {};
  plan.space.designs = {models::StorageDesign::kRados, models::StorageDesign::kNfs};
  plan.space.redundancy = {{3, 0, 0}, {2, 0, 0}};
  const auto points = enumerate_points(plan, models::Catalog::built_in());
  // rados 3x, nfs, rados 2x (the second redundancy choice on nfs is the same scenario as the
  // first: dropped).
  ASSERT_EQ(points.size(), 3u);
  for (const auto& p : points) ASSERT_TRUE(p.invalid.empty()) << p.invalid;
  EXPECT_EQ(points[1].scenarios.front().storage.design, models::StorageDesign::kNfs);
  EXPECT_EQ(points[2].scenarios.front().storage.rados.replicas, 2);
  // The base protocol (rdma) does not carry nfs: the design's default does.
  EXPECT_EQ(points[1].scenarios.front().storage.protocol.name, "nfs-rdma");
}

TEST(Screen, CostsTheBillOfMaterialsAndComputesCapacityPowerAndRackUnits) {
  Plan plan = load("small-plan.json");
  plan.prices_usd["drive:samsung-pm9a3-7.68tb"] = 1000;
  const auto points = enumerate_points(plan, models::Catalog::built_in());
  const auto it = std::find_if(points.begin(), points.end(), [](const DesignPoint& p) {
    return p.invalid.empty() && *p.choice.storage_servers == 6 &&
           *p.choice.drives_per_server == 4 && p.choice.redundancy->k == 4 &&
           *p.choice.nic == "connectx6-100g";
  });
  ASSERT_NE(it, points.end());
  auto s = screen_point(plan, *it);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const auto server = models::server_profile("nvme-1u-12bay");
  const auto nic = models::nic_profile("connectx6-100g");
  ASSERT_TRUE(server.ok() && nic.ok());
  ASSERT_EQ(s->bom.size(), 3u);
  EXPECT_EQ(s->bom[1].price_source, "plan override");
  EXPECT_EQ(s->bom[1].quantity, 24);
  EXPECT_DOUBLE_EQ(s->cost_usd, 6 * server->price_usd + 24 * 1000.0 + 6 * nic->price_usd);
  EXPECT_DOUBLE_EQ(s->raw_tb, 24 * 7.68);
  EXPECT_DOUBLE_EQ(s->usable_tb, 24 * 7.68 * 4.0 / 6 * 0.85);
  EXPECT_DOUBLE_EQ(*s->power_kw, 6 * server->power_watts / 1000);
  EXPECT_EQ(*s->rack_units, 6 * server->rack_units);
  EXPECT_TRUE(s->may_meet);
}

// Every valid point simulated, in children two at a time: the reports by point index.
std::map<int, json> simulate_everything(const Plan& plan, const std::vector<DesignPoint>& points) {
  std::vector<const models::Scenario*> runs;
  std::vector<int> ids;
  for (const DesignPoint& p : points) {
    if (!p.invalid.empty()) continue;
    runs.push_back(&p.scenarios.front());
    ids.push_back(p.index);
  }
  EXPECT_EQ(plan.cases.size(), 1u);
  auto reports = sim::run_in_children(runs, 2);
  std::map<int, json> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(reports[i].ok()) << reports[i].status().message();
    if (reports[i].ok()) out[ids[i]] = *reports[i];
  }
  return out;
}

TEST(Planner,
     TheChoiceIsTheCheapestPointThatBruteForceSimulationFindsAndTheScreenNeverDiscardsOne) {
  const Plan plan = load("brute-plan.json");
  const auto points = enumerate_points(plan, models::Catalog::built_in());
  const std::map<int, json> reports = simulate_everything(plan, points);
  // Brute force: every valid point's targets from its screen (exact ones) and its report.
  int cheapest = -1;
  double cheapest_cost = 0;
  int meeting = 0, ruled_out = 0;
  for (const DesignPoint& p : points) {
    if (!p.invalid.empty()) continue;
    auto s = screen_point(plan, p);
    ASSERT_TRUE(s.ok()) << s.status().message();
    const double au = reports.at(p.index)["summary"]["accelerator_utilization"]["mean"];
    const bool meets = au >= 0.9 && s->usable_tb >= plan.targets.usable_capacity_tb;
    meeting += meets;
    if (!s->may_meet) {
      ++ruled_out;
      EXPECT_FALSE(meets) << "the screen ruled out point " << p.index << " (" << p.label
                          << "), which meets every target in simulation (AU " << au << ")";
    }
    // The AU bound, relaxed by the screen's slack, is never below what the simulation
    // measures.
    const TargetValue& bound = s->targets.back();
    ASSERT_EQ(bound.metric, "summary.accelerator_utilization.mean");
    EXPECT_GE(*bound.value * (1 + plan.search.screen_slack), au) << p.label;
    if (meets && (cheapest < 0 || s->cost_usd < cheapest_cost)) {
      cheapest = p.index;
      cheapest_cost = s->cost_usd;
    }
  }
  // The space is not trivial: the screen rules points out, simulation fails some it lets
  // through, and some meet.
  EXPECT_GT(ruled_out, 0);
  EXPECT_GT(meeting, 0);
  ASSERT_GE(cheapest, 0);

  int simulated = 0;
  auto result = run_plan(
      plan, models::Catalog::built_in(),
      [&](const std::vector<SimulationRun>& batch) {
        simulated += static_cast<int>(batch.size());
        return sim::run_in_children(scenarios_of(batch), 2);
      },
      PlannerOptions{.batch = 2});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ((*result)["choice"]["point"], cheapest);
  EXPECT_DOUBLE_EQ((*result)["choice"]["cost_usd"].get<double>(), cheapest_cost);
  EXPECT_EQ((*result)["choice"]["binding"], "storm: AU");
  // The search simulated fewer points than brute force did.
  EXPECT_LT(simulated, static_cast<int>(reports.size()));
  // The front rises: each point costs more than the one before and has a larger margin.
  const json& front = (*result)["front"];
  ASSERT_FALSE(front.empty());
  for (size_t i = 1; i < front.size(); ++i) {
    const json& a = (*result)["points"][front[i - 1].get<size_t>()];
    const json& b = (*result)["points"][front[i].get<size_t>()];
    EXPECT_LT(a["cost_usd"].get<double>(), b["cost_usd"].get<double>());
    EXPECT_LT(a["margin"].get<double>(), b["margin"].get<double>());
  }
  // Every simulated point's measured AU is the brute-force run's (same scenario, same seed).
  for (const json& p : (*result)["points"]) {
    if (p["status"] != "simulated") continue;
    const json& au = p["targets"][1]["value"];
    EXPECT_NEAR(au.get<double>(),
                reports.at(p["index"].get<int>())["summary"]["accelerator_utilization"]["mean"]
                    .get<double>(),
                1e-6);
  }
}

class CountingCache final : public ResultCache {
 public:
  std::optional<json> find(const std::string& key) override {
    auto it = entries.find(key);
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
  Status store(const std::string& key, const json& entry) override {
    entries[key] = entry;
    return Status::ok_status();
  }
  std::map<std::string, json> entries;
};

TEST(Planner, TheResultIsTheSameForAnyBatchSizeAndAResumedRunSimulatesNothingAgain) {
  const Plan plan = load("small-plan.json");
  CountingCache cache;
  int runs = 0;
  auto simulate = [&](const std::vector<SimulationRun>& batch) {
    runs += static_cast<int>(batch.size());
    return sim::run_in_children(scenarios_of(batch), 2);
  };
  auto one = run_plan(plan, models::Catalog::built_in(), simulate, PlannerOptions{.batch = 1});
  auto three = run_plan(plan, models::Catalog::built_in(), simulate,
                        PlannerOptions{.batch = 3, .cache = &cache});
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(one->dump(), three->dump());
  EXPECT_FALSE((*one)["choice"].is_null());
  // A batch of 3 may simulate past the choice: those runs are cached, not reported.
  EXPECT_GE(cache.entries.size(), static_cast<size_t>((*one)["counts"]["simulated"].get<int>()));
  const int before = runs;
  auto resumed = run_plan(plan, models::Catalog::built_in(), simulate,
                          PlannerOptions{.batch = 2, .cache = &cache});
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(runs, before);
  EXPECT_EQ(resumed->dump(), one->dump());
}

TEST(Planner, ABudgetTooSmallSaysSoAndNamesTheNextCandidate) {
  Plan plan = load("brute-plan.json");
  plan.search.max_points = 1;
  plan.targets.usable_capacity_tb = 0;
  // AU 0.995: the cheapest candidate (6 servers, 2 x 25 GbE) measures 0.99 and misses.
  plan.cases[0].targets[0].values = {0.995};
  auto result = run_plan(
      plan, models::Catalog::built_in(),
      [](const std::vector<SimulationRun>& batch) {
        return sim::run_in_children(scenarios_of(batch), 2);
      },
      PlannerOptions{});
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE((*result)["choice"].is_null());
  const std::string why = (*result)["no_choice"];
  EXPECT_NE(why.find("search.max_points = 1, the next candidate is point"), std::string::npos)
      << why;
  EXPECT_EQ((*result)["counts"]["simulated"], 1);
}

// Every plan shipped in plans/ loads, plans and finds a design (the plans carry their answer in
// their description: the cheapest design is what they ask for).
TEST(ShippedPlans, EachPlansAndFindsADesign) {
  int plans = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GRANARY_SOURCE_DIR) + "/plans")) {
    const std::string path = entry.path().string();
    auto j = json::parse(read(path), nullptr, false);
    if (!j.is_object() || !j.contains("granary_plan")) continue;  // a case's scenario
    ++plans;
    auto plan = load_plan(path, models::Catalog::built_in());
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    auto result = run_plan(
        *plan, models::Catalog::built_in(),
        [](const std::vector<SimulationRun>& batch) {
          return sim::run_in_children(scenarios_of(batch), 2);
        },
        PlannerOptions{.batch = 2});
    ASSERT_TRUE(result.ok()) << path << ": " << result.status().message();
    EXPECT_FALSE((*result)["choice"].is_null()) << path << ": " << (*result)["no_choice"];
  }
  EXPECT_GE(plans, 1);
}

}  // namespace
}  // namespace granary::planner

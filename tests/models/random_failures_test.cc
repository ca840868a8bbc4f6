// Random drive failures from annual failure rates (models/random_failures.h): the draws have
// the exponential distribution's statistics, depend only on the seed (and the entry), merge
// with the explicit timeline, and the scenario format validates the entry's keys.
#include "models/random_failures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "models/scenario_json.h"

namespace granary::models {
namespace {

using json = nlohmann::json;

// 4 hosts x 2 drives, 3 replicas.
json scenario_with(const json& failures) {
  json j = json::parse(R"({
    "granary": 1, "seed": 7,
    "cluster": {
      "clients": {"count": 1, "accelerator": "a100", "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 4, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 2},
                  "nic": {"profile": "connectx6-200g"}}
    },
    "storage": {"design": "rados"},
    "workloads": [{"mlperf": "unet3d"}]
  })");
  j["failures"] = failures;
  return j;
}

std::string error_of(const json& j) {
  auto r = parse_scenario(j.dump(), "s.json");
  return r.ok() ? std::string("(no error)") : r.status().message();
}

TEST(RandomFailures, RateIsTheDurabilityModelsTimesTheScale) {
  // -ln(1 - 0.02) per year of 31,557,600 s, x 1e6.
  EXPECT_NEAR(random_failure_rate_per_s(0.02, 1e6), 0.020202707317519466 / 31557600 * 1e6, 1e-15);
  EXPECT_DOUBLE_EQ(kSecondsPerYear, 31557600);
}

TEST(RandomFailures, CountAndTimesFollowTheExponential) {
  RandomDriveFailures spec;
  spec.afr = 0.02;
  spec.time_scale = 1e6;
  spec.from_s = 100;
  spec.to_s = 700;
  const int drives = 20000;
  const auto events = draw_random_drive_failures(spec, drives, 42);
  const double lambda = random_failure_rate_per_s(spec.afr, spec.time_scale);
  const double T = spec.to_s - spec.from_s;
  const double p = 1 - std::exp(-lambda * T);  // 0.319
  const double mean = drives * p, sigma = std::sqrt(drives * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(events.size()), mean, 4 * sigma);
  // In the first half of the window: P(t < T/2 | t < T).
  const double q = (1 - std::exp(-lambda * T / 2)) / p;
  int early = 0;
  std::set<int32_t> osds;
  double last = 0;
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, FailureKind::kDriveFailure);
    EXPECT_GE(e.at_s, spec.from_s);
    EXPECT_LT(e.at_s, spec.to_s);
    EXPECT_GE(e.at_s, last);  // in time order
    last = e.at_s;
    EXPECT_TRUE(e.random);
    EXPECT_EQ(e.seed, 42u);
    EXPECT_TRUE(osds.insert(e.target).second) << "osd " << e.target << " failed twice";
    early += e.at_s < spec.from_s + T / 2;
  }
  const double n = static_cast<double>(events.size());
  EXPECT_NEAR(early, n * q, 4 * std::sqrt(n * q * (1 - q)));
}

TEST(RandomFailures, SameSeedSameEventsOtherSeedOrEntryOthers) {
  RandomDriveFailures spec;
  spec.afr = 0.05;
  spec.time_scale = 1e6;
  spec.to_s = 300;
  const auto a = draw_random_drive_failures(spec, 1000, 1);
  const auto b = draw_random_drive_failures(spec, 1000, 1);
  const auto c = draw_random_drive_failures(spec, 1000, 2);
  spec.entry = 1;
  const auto d = draw_random_drive_failures(spec, 1000, 1);
  ASSERT_GT(a.size(), 100u);
  auto same = [](const std::vector<FailureEvent>& x, const std::vector<FailureEvent>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].at_s != y[i].at_s || x[i].target != y[i].target) return false;
    }
    return true;
  };
  EXPECT_TRUE(same(a, b));
  EXPECT_FALSE(same(a, c));
  EXPECT_FALSE(same(a, d));
}

TEST(RandomFailures, ReplacementsFollowEachFailure) {
  RandomDriveFailures spec;
  spec.afr = 0.05;
  spec.time_scale = 1e7;
  spec.to_s = 60;
  spec.replace_after_s = 30;
  const auto events = draw_random_drive_failures(spec, 50, 3);
  std::map<int32_t, double> failed;
  int replaced = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(events[i].at_s, events[i - 1].at_s);
    }
    const auto& e = events[i];
    if (e.kind == FailureKind::kDriveFailure) {
      failed[e.target] = e.at_s;
    } else {
      ASSERT_EQ(e.kind, FailureKind::kDriveReplace);
      ASSERT_TRUE(failed.count(e.target));
      EXPECT_DOUBLE_EQ(e.at_s, failed[e.target] + 30);
      ++replaced;
    }
  }
  EXPECT_GT(replaced, 0);
  EXPECT_EQ(replaced, static_cast<int>(failed.size()));
}

TEST(RandomFailures, ParsedEntryExpandsIntoTheTimeline) {
  // The rate is so high that every drive fails in the window (p = 1 - 1e-17).
  const auto r = parse_scenario(scenario_with(json::parse(R"([
      {"at_s": 0.5, "kind": "osd_crash", "osd": 0},
      {"kind": "random_drive_failures", "afr": 0.5, "from_s": 1, "to_s": 2,
       "time_scale": 2e9, "replace_after_s": 30},
      {"at_s": 1.5, "kind": "drive_failure", "osd": 5}])"))
                                    .dump(),
                                "s.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->failures.size(), 2u);  // the explicit ones
  EXPECT_EQ(r->failures[0].entry, 0);
  EXPECT_EQ(r->failures[1].entry, 2);
  ASSERT_EQ(r->random_drive_failures.size(), 1u);
  const auto& spec = r->random_drive_failures[0];
  EXPECT_EQ(spec.entry, 1);
  EXPECT_DOUBLE_EQ(spec.afr, 0.5);
  EXPECT_DOUBLE_EQ(spec.from_s, 1);
  EXPECT_DOUBLE_EQ(spec.to_s, 2);
  EXPECT_DOUBLE_EQ(spec.time_scale, 2e9);
  EXPECT_DOUBLE_EQ(spec.replace_after_s, 30);
  EXPECT_TRUE(has_failures(*r));

  const auto all = expand_failures(*r, 7);
  // 8 drives: osd 5 already fails (explicitly, never replaced), so 7 draws and their 7
  // replacements join the 2 explicit events.
  ASSERT_EQ(all.size(), 2u + 7 + 7);
  EXPECT_EQ(all[0].kind, FailureKind::kOsdCrash);
  for (size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i].at_s, all[i - 1].at_s);
  for (const auto& e : all) {
    if (!e.random) continue;
    EXPECT_NE(e.target, 5);
    EXPECT_EQ(e.entry, 1);
    EXPECT_EQ(e.seed, 7u);
  }
  EXPECT_EQ(expand_failures(*r, 7).size(), all.size());
  // Without random entries the timeline is the explicit one.
  Scenario plain = *r;
  plain.random_drive_failures.clear();
  EXPECT_EQ(expand_failures(plain, 7).size(), 2u);
}

TEST(RandomFailures, AnEmptyDrawLeavesAFailureRun) {
  // 1e-9 per year, unscaled: nothing fails in 60 s, yet the run is a failure run.
  const auto r = parse_scenario(scenario_with(json::parse(R"([
      {"kind": "random_drive_failures", "afr": 1e-9, "to_s": 60}])"))
                                    .dump(),
                                "s.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->failures.empty());
  EXPECT_TRUE(has_failures(*r));
  EXPECT_TRUE(expand_failures(*r, 1).empty());
}

TEST(RandomFailures, BadEntriesGiveOneLineMessages) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"kind": "random_drive_failures", "afr": 0, "to_s": 60})",
       "s.json: failures[0].afr: expected a number > 0 and < 1, found 0"},
      {R"({"kind": "random_drive_failures", "afr": 1.5, "to_s": 60})",
       "s.json: failures[0].afr: expected a number > 0 and < 1, found 1.5"},
      {R"({"kind": "random_drive_failures", "to_s": 60})",
       "s.json: failures[0].afr: expected a number > 0 and < 1, found nothing"},
      {R"({"kind": "random_drive_failures", "afr": "2%", "to_s": 60})",
       "s.json: failures[0].afr: expected a number > 0 and < 1, found \"2%\""},
      {R"({"kind": "random_drive_failures", "afr": 0.02})",
       "s.json: failures[0].to_s: expected a number > 0 and <= 1000000000, found nothing"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "from_s": 60, "to_s": 60})",
       "s.json: failures[0].to_s: expected a time after from_s (60), found 60"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "from_s": -1, "to_s": 60})",
       "s.json: failures[0].from_s: expected a number >= 0 and <= 1000000000, found -1"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "to_s": 60, "time_scale": 0.5})",
       "s.json: failures[0].time_scale: expected a number >= 1 and <= 1000000000000, found 0.5"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "to_s": 60, "replace_after_s": 0})",
       "s.json: failures[0].replace_after_s: expected a number > 0 and <= 1000000000, found 0"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "to_s": 60, "at_s": 5})",
       "s.json: failures[0].at_s: unknown key (did you mean 'to_s'?)"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "to_s": 60, "factor": 5})",
       "s.json: failures[0].factor: unknown key (expected one of: kind, afr, from_s, to_s, "
       "time_scale, replace_after_s)"},
      {R"({"kind": "random_drive_failures", "afr": 0.02, "to_s": 60, "osd": 1})",
       "s.json: failures[0].osd: unknown key"},
  };
  for (const auto& [entry, message] : cases) {
    const std::string got = error_of(scenario_with(json::array({json::parse(entry)})));
    EXPECT_EQ(got.rfind(message, 0), 0u) << entry << "\n  got: " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
  // The kinds a misspelt one is told of include it.
  const std::string got = error_of(
      scenario_with(json::parse(R"([{"at_s": 1, "kind": "random_drive_failure", "osd": 1}])")));
  EXPECT_NE(got.find("'random_drive_failures'"), std::string::npos) << got;
  // Other designs refuse it, as every failure.
  json pfs = scenario_with(json::parse(R"([{"kind": "random_drive_failures", "afr": 0.02,
                                            "to_s": 60}])"));
  pfs["storage"]["design"] = "pfs";
  EXPECT_EQ(
      error_of(pfs).rfind("s.json: failures: failure injection is simulated for design 'rados'", 0),
      0u)
      << error_of(pfs);
}

}  // namespace
}  // namespace granary::models

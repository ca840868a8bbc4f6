// Expectations: parsing (each kind of bad input, with the file, the JSON path, what was
// expected and what was found), the `expect` key of a scenario, and evaluation against
// reports: every comparison, missing metrics, wrong types, array indexes.
#include "models/expectations.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/scenario_json.h"

namespace granary::models {
namespace {

using json = nlohmann::json;

Result<std::vector<Expectation>> parse(const std::string& text) {
  return parse_expectations(json::parse(text), "s.json", "expect");
}

std::string error_of(const Result<std::vector<Expectation>>& r) {
  return r.ok() ? std::string("(no error)") : r.status().message();
}

TEST(Expectations, ParsesEveryComparison) {
  auto r = parse(R"([
    {"metric": "summary.accelerator_utilization.mean", "at_least": 0.9},
    {"metric": "summary.epoch_seconds", "at_most": 120, "name": "epoch fits the window"},
    {"metric": "recovery.objects_lost", "equals": 0},
    {"metric": "summary.read_gibps_mean", "equals": 40, "tolerance": 0.5},
    {"metric": "series.read_gibps.3", "between": [1, 2.5]},
    {"metric": "summary.epoch_extrapolated", "is": false},
    {"metric": "fidelity.mode", "equals": "slice"},
    {"metric": "bounds.bottleneck", "contains": "storage NIC"}
  ])");
  ASSERT_TRUE(r.ok()) << error_of(r);
  const std::vector<Expectation>& e = *r;
  ASSERT_EQ(e.size(), 8u);
  EXPECT_EQ(e[0].metric, "summary.accelerator_utilization.mean");
  EXPECT_EQ(e[0].comparator, Comparator::kAtLeast);
  EXPECT_EQ(std::get<double>(e[0].values.at(0)), 0.9);
  EXPECT_EQ(e[0].name, "");
  EXPECT_EQ(display_name(e[0]), "summary.accelerator_utilization.mean >= 0.9");
  EXPECT_EQ(e[1].name, "epoch fits the window");
  EXPECT_EQ(display_name(e[1]), "epoch fits the window");
  EXPECT_EQ(condition_text(e[1]), "<= 120");
  EXPECT_EQ(condition_text(e[2]), "== 0");
  EXPECT_EQ(condition_text(e[3]), "== 40 +- 0.5");
  EXPECT_EQ(e[3].tolerance, 0.5);
  EXPECT_EQ(e[4].comparator, Comparator::kBetween);
  EXPECT_EQ(condition_text(e[4]), "in [1, 2.5]");
  EXPECT_EQ(condition_text(e[5]), "is false");
  EXPECT_EQ(condition_text(e[6]), "== \"slice\"");
  EXPECT_EQ(condition_text(e[7]), "contains \"storage NIC\"");
  EXPECT_STREQ(comparator_key(e[7].comparator), "contains");
}

TEST(Expectations, EmptyListIsAllowed) {
  auto r = parse("[]");
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_TRUE(r->empty());
}

// Each bad input gets one line: file, JSON path, what was expected, what was found.
TEST(Expectations, ParseErrorsNameFilePathExpectedAndFound) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"metric": "a", "at_least": 1})",
       "s.json: expect: expected an array of expectations, found an object"},
      {R"([3])", "s.json: expect[0]: expected an expectation object, found 3"},
      {R"([{"metric": "a", "at_least": 1}, {"metric": "b", "at_least": "high"}])",
       "s.json: expect[1].at_least: expected a number, found \"high\""},
      {R"([{"metric": "a", "at_most": true}])",
       "s.json: expect[0].at_most: expected a number, found true"},
      {R"([{"at_least": 1}])",
       "s.json: expect[0].metric: expected a dotted path into the report (such as "
       "\"summary.epoch_seconds\"), found nothing"},
      {R"([{"metric": "summary..mean", "at_least": 1}])",
       "s.json: expect[0].metric: expected a dotted path into the report (such as "
       "\"summary.epoch_seconds\"), found \"summary..mean\""},
      {R"([{"metric": 7, "at_least": 1}])",
       "s.json: expect[0].metric: expected a dotted path into the report (such as "
       "\"summary.epoch_seconds\"), found 7"},
      {R"([{"metric": "a"}])",
       "s.json: expect[0]: expected one comparison (at_least, at_most, equals, between, is or "
       "contains), found none"},
      {R"([{"metric": "a", "at_least": 1, "at_most": 2}])",
       "s.json: expect[0]: expected one comparison (at_least, at_most, equals, between, is or "
       "contains), found 'at_least' and 'at_most'"},
      {R"([{"metric": "a", "at_least": 1, "at_most": 2, "is": true}])",
       "s.json: expect[0]: expected one comparison (at_least, at_most, equals, between, is or "
       "contains), found 'at_least', 'at_most' and 'is'"},
      {R"([{"metric": "a", "at_lest": 1}])",
       "s.json: expect[0].at_lest: unknown key (did you mean 'at_least'?)"},
      {R"([{"metric": "a", "at_least": 1, "because": "x"}])",
       "s.json: expect[0].because: unknown key (expected one of: name, metric, at_least, "
       "at_most, equals, between, is, contains, tolerance)"},
      {R"([{"metric": "a", "between": [3, 1]}])",
       "s.json: expect[0].between: expected [low, high] with low <= high, found [3,1]"},
      {R"([{"metric": "a", "between": [1]}])",
       "s.json: expect[0].between: expected [low, high], two numbers, found an array"},
      {R"([{"metric": "a", "between": 1}])",
       "s.json: expect[0].between: expected [low, high], two numbers, found 1"},
      {R"([{"metric": "a", "equals": true}])",
       "s.json: expect[0].equals: expected a number or a string ('is' compares true and false), "
       "found true"},
      {R"([{"metric": "a", "equals": [1]}])",
       "s.json: expect[0].equals: expected a number or a string, found an array"},
      {R"([{"metric": "a", "is": 1}])", "s.json: expect[0].is: expected true or false, found 1"},
      {R"([{"metric": "a", "contains": ""}])",
       "s.json: expect[0].contains: expected a non-empty string, found \"\""},
      {R"([{"metric": "a", "at_least": 1, "tolerance": 0.1}])",
       "s.json: expect[0].tolerance: applies only to 'equals' with a number"},
      {R"([{"metric": "a", "equals": "x", "tolerance": 0.1}])",
       "s.json: expect[0].tolerance: applies only to 'equals' with a number"},
      {R"([{"metric": "a", "equals": 1, "tolerance": -0.1}])",
       "s.json: expect[0].tolerance: expected a number >= 0, found -0.1"},
      {R"([{"metric": "a", "at_least": 1, "name": ""}])",
       "s.json: expect[0].name: expected a non-empty string, found \"\""},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(error_of(parse(text)), message) << text;
  }
}

// The scenario reader hands `expect` to parse_expectations and keeps what it returns.
json minimal_scenario() {
  return json::parse(R"({
    "granary": 1,
    "cluster": {
      "clients": {"count": 4, "accelerator": "a100", "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 4, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                  "nic": {"profile": "connectx7-400g"}}
    },
    "storage": {"design": "rados"},
    "workloads": [{"mlperf": "unet3d", "files": 224}]
  })");
}

TEST(Expectations, ScenarioCarriesItsExpectations) {
  json j = minimal_scenario();
  auto none = parse_scenario(j.dump(), "s.json");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->expectations.empty());
  j["expect"] = json::parse(R"([{"metric": "summary.epoch_seconds", "at_most": 120}])");
  auto some = parse_scenario(j.dump(), "dir/s.json");
  ASSERT_TRUE(some.ok()) << some.status().message();
  ASSERT_EQ(some->expectations.size(), 1u);
  EXPECT_EQ(some->expectations[0].metric, "summary.epoch_seconds");
  j["expect"][0]["at_most"] = "soon";
  auto bad = parse_scenario(j.dump(), "dir/s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "dir/s.json: expect[0].at_most: expected a number, found \"soon\"");
  j.erase("expect");
  j["expects"] = json::array();
  bad = parse_scenario(j.dump(), "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "s.json: expects: unknown key (did you mean 'expect'?)");
}

json report() {
  return json::parse(R"({
    "summary": {"epoch_seconds": 98.25, "accelerators": 32, "epoch_extrapolated": true,
                "accelerator_utilization": {"mean": 0.8123456, "min": 0.7}},
    "bounds": {"bottleneck": "8 storage NICs x 21.2 GB/s = 170 GB/s"},
    "fidelity": {"mode": "request"},
    "series": {"read_gibps": [1.5, 2.5, 3.5]},
    "weird": null
  })");
}

std::vector<ExpectationOutcome> eval(const std::string& expect) {
  auto e = parse(expect);
  EXPECT_TRUE(e.ok()) << error_of(e);
  return e.ok() ? evaluate(*e, report()) : std::vector<ExpectationOutcome>{};
}

TEST(Expectations, NumbersPassAndFail) {
  auto o = eval(R"([
    {"metric": "summary.accelerator_utilization.mean", "at_least": 0.9},
    {"metric": "summary.accelerator_utilization.mean", "at_least": 0.8},
    {"metric": "summary.epoch_seconds", "at_most": 98.25},
    {"metric": "summary.epoch_seconds", "at_most": 98},
    {"metric": "summary.accelerators", "equals": 32},
    {"metric": "summary.accelerators", "equals": 31},
    {"metric": "summary.epoch_seconds", "between": [90, 100]},
    {"metric": "summary.epoch_seconds", "between": [99, 100]}
  ])");
  ASSERT_EQ(o.size(), 8u);
  EXPECT_FALSE(o[0].passed);
  EXPECT_EQ(o[0].measured, "0.812346");
  EXPECT_EQ(o[0].message, "summary.accelerator_utilization.mean = 0.812346, expected >= 0.9");
  EXPECT_TRUE(o[1].passed);
  EXPECT_TRUE(o[2].passed);  // bounds are inclusive
  EXPECT_FALSE(o[3].passed);
  EXPECT_EQ(o[3].message, "summary.epoch_seconds = 98.25, expected <= 98");
  EXPECT_TRUE(o[4].passed);
  EXPECT_EQ(o[4].measured, "32");  // an integer stays one
  EXPECT_FALSE(o[5].passed);
  EXPECT_EQ(o[5].message, "summary.accelerators = 32, expected == 31");
  EXPECT_TRUE(o[6].passed);
  EXPECT_FALSE(o[7].passed);
  EXPECT_EQ(o[7].message, "summary.epoch_seconds = 98.25, expected in [99, 100]");
}

TEST(Expectations, EqualsWithinTolerance) {
  auto o = eval(R"([
    {"metric": "summary.epoch_seconds", "equals": 98.25},
    {"metric": "summary.epoch_seconds", "equals": 98},
    {"metric": "summary.epoch_seconds", "equals": 98, "tolerance": 0.25},
    {"metric": "summary.epoch_seconds", "equals": 98, "tolerance": 0.2}
  ])");
  ASSERT_EQ(o.size(), 4u);
  EXPECT_TRUE(o[0].passed);
  EXPECT_FALSE(o[1].passed);
  EXPECT_TRUE(o[2].passed);
  EXPECT_FALSE(o[3].passed);
  EXPECT_EQ(o[3].message, "summary.epoch_seconds = 98.25, expected == 98 +- 0.2");
}

// A measured value shown with 6 digits would read as passing; more digits tell the truth.
TEST(Expectations, MeasuredTextNeverContradictsTheVerdict) {
  json r = report();
  r["summary"]["accelerator_utilization"]["mean"] = 0.89999999;
  auto e = parse(R"([{"metric": "summary.accelerator_utilization.mean", "at_least": 0.9}])");
  ASSERT_TRUE(e.ok());
  auto o = evaluate(*e, r);
  EXPECT_FALSE(o[0].passed);
  EXPECT_EQ(o[0].measured, "0.89999999");
}

TEST(Expectations, BooleansAndStrings) {
  auto o = eval(R"([
    {"metric": "summary.epoch_extrapolated", "is": true},
    {"metric": "summary.epoch_extrapolated", "is": false},
    {"metric": "fidelity.mode", "equals": "request"},
    {"metric": "fidelity.mode", "equals": "slice"},
    {"metric": "bounds.bottleneck", "contains": "storage NICs"},
    {"metric": "bounds.bottleneck", "contains": "drives"}
  ])");
  ASSERT_EQ(o.size(), 6u);
  EXPECT_TRUE(o[0].passed);
  EXPECT_EQ(o[0].measured, "true");
  EXPECT_FALSE(o[1].passed);
  EXPECT_EQ(o[1].message, "summary.epoch_extrapolated = true, expected is false");
  EXPECT_TRUE(o[2].passed);
  EXPECT_FALSE(o[3].passed);
  EXPECT_EQ(o[3].message, "fidelity.mode = \"request\", expected == \"slice\"");
  EXPECT_TRUE(o[4].passed);
  EXPECT_FALSE(o[5].passed);
}

TEST(Expectations, ArrayIndexesCountFromEitherEnd) {
  auto o = eval(R"([
    {"metric": "series.read_gibps.0", "equals": 1.5},
    {"metric": "series.read_gibps.2", "equals": 3.5},
    {"metric": "series.read_gibps.-1", "equals": 3.5},
    {"metric": "series.read_gibps.-3", "equals": 1.5},
    {"metric": "series.read_gibps.3", "equals": 0},
    {"metric": "series.read_gibps.last", "equals": 0}
  ])");
  ASSERT_EQ(o.size(), 6u);
  EXPECT_TRUE(o[0].passed);
  EXPECT_TRUE(o[1].passed);
  EXPECT_TRUE(o[2].passed);
  EXPECT_TRUE(o[3].passed);
  EXPECT_FALSE(o[4].passed);
  EXPECT_EQ(o[4].message,
            "series.read_gibps.3: not in the report (series.read_gibps is an array of 3, indexed "
            "0..2 or -3..-1)");
  EXPECT_FALSE(o[5].passed);
}

// A metric the report does not have fails with the keys that are there, never crashes.
TEST(Expectations, MissingMetricFailsWithTheKeysThatAreThere) {
  auto o = eval(R"([
    {"metric": "recovery.objects_lost", "equals": 0},
    {"metric": "summary.epoch_second", "at_most": 100},
    {"metric": "summary.epoch_seconds.p99", "at_most": 100},
    {"metric": "summary.accelerator_utilization.max", "at_least": 0.9}
  ])");
  ASSERT_EQ(o.size(), 4u);
  for (const ExpectationOutcome& x : o) {
    EXPECT_FALSE(x.passed);
    EXPECT_EQ(x.measured, "");
  }
  EXPECT_EQ(o[0].message,
            "recovery.objects_lost: not in the report (keys at the top level: bounds, fidelity, "
            "series, summary, weird)");
  EXPECT_EQ(o[1].message,
            "summary.epoch_second: not in the report (keys at summary: accelerator_utilization, "
            "accelerators, epoch_extrapolated, epoch_seconds; did you mean "
            "'summary.epoch_seconds'?)");
  EXPECT_EQ(o[2].message,
            "summary.epoch_seconds.p99: not in the report (summary.epoch_seconds is 98.25, not an "
            "object or array)");
  EXPECT_EQ(o[3].message,
            "summary.accelerator_utilization.max: not in the report (keys at "
            "summary.accelerator_utilization: mean, min; did you mean "
            "'summary.accelerator_utilization.mean'?)");
}

TEST(Expectations, WrongTypeFailsWithWhatWasFound) {
  auto o = eval(R"([
    {"metric": "summary.epoch_extrapolated", "at_least": 1},
    {"metric": "summary.accelerator_utilization", "at_least": 0.9},
    {"metric": "summary.epoch_seconds", "is": true},
    {"metric": "summary.epoch_seconds", "contains": "9"},
    {"metric": "weird", "at_least": 0}
  ])");
  ASSERT_EQ(o.size(), 5u);
  for (const ExpectationOutcome& x : o) EXPECT_FALSE(x.passed);
  EXPECT_EQ(o[0].message,
            "summary.epoch_extrapolated: expected a number to compare >= 1, found true");
  EXPECT_EQ(o[1].message,
            "summary.accelerator_utilization: expected a number to compare >= 0.9, found an "
            "object (keys: mean, min)");
  EXPECT_EQ(o[2].message,
            "summary.epoch_seconds: expected true or false to compare is true, found 98.25");
  EXPECT_EQ(o[3].message,
            "summary.epoch_seconds: expected a string to compare contains \"9\", found 98.25");
  EXPECT_EQ(o[4].message, "weird: expected a number to compare >= 0, found null");
}

TEST(Expectations, OutcomesAsReportJson) {
  auto e = parse(R"([
    {"metric": "summary.epoch_seconds", "at_most": 120, "name": "epoch fits the window"},
    {"metric": "recovery.objects_lost", "equals": 0}
  ])");
  ASSERT_TRUE(e.ok());
  const json r = report();
  const json j = outcomes_to_json(*e, evaluate(*e, r), r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "epoch fits the window");
  EXPECT_EQ(j[0]["metric"], "summary.epoch_seconds");
  EXPECT_EQ(j[0]["condition"], "<= 120");
  EXPECT_EQ(j[0]["measured"], 98.25);
  EXPECT_EQ(j[0]["passed"], true);
  EXPECT_EQ(j[1]["name"], "recovery.objects_lost == 0");
  EXPECT_TRUE(j[1]["measured"].is_null());
  EXPECT_EQ(j[1]["passed"], false);
  EXPECT_NE(j[1]["message"].get<std::string>().find("not in the report"), std::string::npos);
}

}  // namespace
}  // namespace granary::models

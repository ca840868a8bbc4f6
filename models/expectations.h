// Expectations: the assertions a scenario carries on its run report (the `expect` key of
// docs/scenario-format.md), so that a scenario is a test: `granary run` exits 1 when one fails
// and `granary test` runs a directory of scenarios as a suite.
//
// An expectation names a metric by a dotted path into the report JSON ("summary.epoch_seconds",
// "series.read_gibps.3", "series.read_gibps.-1" for the last element) and one comparison.
// Parsing checks the expectation itself (types, one comparison, known keys) with the scenario
// reader's one-line messages (file, JSON path, expected, found). Whether the metric exists can
// only be known from a report (reports gain keys as features land), so a metric missing at
// evaluation is a failed expectation with a message naming the keys that are there.
//
// Plain values and pure functions; safe to share and to call from several threads at once.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <variant>
#include <vector>

#include "engine/status.h"

namespace granary::models {

enum class Comparator {
  kAtLeast,   // number >= values[0]
  kAtMost,    // number <= values[0]
  kEquals,    // number within `tolerance` of values[0], or the string values[0] exactly
  kBetween,   // values[0] <= number <= values[1]
  kIs,        // the boolean values[0]
  kContains,  // a string that contains the string values[0]
};

// The JSON key of a comparator ("at_least", ...).
const char* comparator_key(Comparator c);

using ExpectedValue = std::variant<double, bool, std::string>;

struct Expectation {
  std::string name;    // as given; empty when the file gives none (see display_name)
  std::string metric;  // dotted path into the report
  Comparator comparator = Comparator::kAtLeast;
  std::vector<ExpectedValue> values;  // one, or two for kBetween
  double tolerance = 0;               // kEquals on a number: |measured - value| <= tolerance
};

// The condition as text: ">= 0.9", "<= 120", "== 0", "== 1 +- 0.01", "in [1, 2]", "is true",
// "== \"slice\"", "contains \"storage NIC\"".
std::string condition_text(const Expectation& e);

// The name, or "<metric> <condition>" when it has none.
std::string display_name(const Expectation& e);

// Reads the value of `expect` (an array of expectation objects). `file` and `json_path` (the
// path of the array, "expect") prefix the messages: "s.json: expect[2].at_least: expected a
// number, found \"high\"".
Result<std::vector<Expectation>> parse_expectations(const nlohmann::json& expect,
                                                    const std::string& file,
                                                    const std::string& json_path);

struct ExpectationOutcome {
  bool passed = false;
  std::string measured;  // the metric's value as text ("0.912346", "true", "\"slice\""); empty
                         // when the report has no such metric
  std::string message;   // one line: "summary.epoch_seconds = 98.2, expected <= 120", or why
                         // the metric could not be compared
};

// Checks each expectation against a run report; one outcome per expectation, in order.
std::vector<ExpectationOutcome> evaluate(const std::vector<Expectation>& expectations,
                                         const nlohmann::json& report);

// The report's `expectations` array (docs/report-format.md): per expectation {name, metric,
// condition, measured (the report's value, null when missing), passed, message}.
nlohmann::json outcomes_to_json(const std::vector<Expectation>& expectations,
                                const std::vector<ExpectationOutcome>& outcomes,
                                const nlohmann::json& report);

// The value at a dotted metric path, or null when there is none.
const nlohmann::json* find_metric(const nlohmann::json& report, const std::string& metric);

}  // namespace granary::models

// Expectations on run reports: parsing (with the scenario reader's messages) and evaluation.
#include "models/expectations.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "models/json_diagnostics.h"

namespace granary::models {

namespace {

using json = nlohmann::json;

// The numbers a user wrote, as they wrote them (0.9 stays "0.9").
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<std::string> split_metric(const std::string& metric) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = metric.find('.', start);
    parts.push_back(
        metric.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// An array index segment: "3", or "-1" for the last element.
std::optional<long long> as_index(const std::string& seg) {
  if (seg.empty() || seg.size() > 18) return std::nullopt;
  size_t i = seg[0] == '-' ? 1 : 0;
  if (i == seg.size()) return std::nullopt;
  for (; i < seg.size(); ++i) {
    if (seg[i] < '0' || seg[i] > '9') return std::nullopt;
  }
  return std::stoll(seg);
}

const std::vector<std::string_view> kKeys = {"name",    "metric", "at_least", "at_most",  "equals",
                                             "between", "is",     "contains", "tolerance"};
const std::vector<std::pair<std::string_view, Comparator>> kComparators = {
    {"at_least", Comparator::kAtLeast},
    {"at_most", Comparator::kAtMost},
    {"equals", Comparator::kEquals},
    {"between", Comparator::kBetween},
    {"is", Comparator::kIs},
    {"contains", Comparator::kContains}};

struct ParseError {
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ParseError{file_ + ": " + (path.empty() ? "" : path + ": ") + what};
  }
  [[noreturn]] void expected(const std::string& path, const std::string& what,
                             const json* found) const {
    fail(path, "expected " + what + ", found " + (found ? json_diag::describe(*found) : "nothing"));
  }

  // Metric paths, names and compared strings are echoed in PASS/FAIL lines, reports and
  // JUnit: one line of text, of a bounded length.
  void check_text(const std::string& path, const std::string& text) const {
    constexpr size_t kMaxBytes = 256;
    if (text.size() > kMaxBytes) {
      fail(path, "expected at most " + std::to_string(kMaxBytes) + " bytes, found " +
                     json_diag::quote(text));
    }
    if (std::any_of(text.begin(), text.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; })) {
      fail(path, "expected text without control characters (newlines, tabs, NUL), found " +
                     json_diag::quote(text));
    }
  }

  Expectation one(const json& j, const std::string& path) const {
    if (!j.is_object()) expected(path, "an expectation object", &j);
    for (const auto& [key, value] : j.items()) {
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
        fail(json_diag::join(path, key), json_diag::unknown_key(key, kKeys));
      }
    }
    auto at = [&](std::string_view key) { return json_diag::join(path, key); };
    auto find = [&](std::string_view key) -> const json* {
      auto it = j.find(key);
      return it == j.end() ? nullptr : &*it;
    };
    Expectation e;
    const json* metric = find("metric");
    const char* metric_what = "a dotted path into the report (such as \"summary.epoch_seconds\")";
    if (!metric || !metric->is_string()) expected(at("metric"), metric_what, metric);
    e.metric = metric->get<std::string>();
    check_text(at("metric"), e.metric);
    for (const std::string& seg : split_metric(e.metric)) {
      if (seg.empty()) expected(at("metric"), metric_what, metric);
    }

    std::vector<std::string_view> given;
    for (const auto& [key, c] : kComparators) {
      if (j.contains(key)) given.push_back(key);
    }
    const std::string names = "at_least, at_most, equals, between, is or contains";
    if (given.empty()) fail(path, "expected one comparison (" + names + "), found none");
    if (given.size() > 1) {
      std::string found;
      for (size_t i = 0; i < given.size(); ++i) {
        found += std::string(i == 0                  ? ""
                             : i + 1 == given.size() ? " and "
                                                     : ", ") +
                 "'" + std::string(given[i]) + "'";
      }
      fail(path, "expected one comparison (" + names + "), found " + found);
    }
    const std::string key(given.front());
    for (const auto& [k, c] : kComparators) {
      if (k == key) e.comparator = c;
    }
    const json& v = j.at(key);
    auto finite = [](const json& x) { return x.is_number() && std::isfinite(x.get<double>()); };
    switch (e.comparator) {
      case Comparator::kAtLeast:
      case Comparator::kAtMost:
        if (!finite(v)) expected(at(key), "a number", &v);
        e.values.push_back(v.get<double>());
        break;
      case Comparator::kBetween:
        if (!v.is_array() || v.size() != 2 || !finite(v[0]) || !finite(v[1])) {
          expected(at(key), "[low, high], two numbers", &v);
        }
        if (v[0].get<double>() > v[1].get<double>()) {
          fail(at(key), "expected [low, high] with low <= high, found " + v.dump());
        }
        e.values.push_back(v[0].get<double>());
        e.values.push_back(v[1].get<double>());
        break;
      case Comparator::kEquals:
        if (v.is_boolean()) {
          expected(at(key), "a number or a string ('is' compares true and false)", &v);
        }
        if (finite(v)) {
          e.values.push_back(v.get<double>());
        } else if (v.is_string()) {
          check_text(at(key), v.get<std::string>());
          e.values.push_back(v.get<std::string>());
        } else {
          expected(at(key), "a number or a string", &v);
        }
        break;
      case Comparator::kIs:
        if (!v.is_boolean()) expected(at(key), "true or false", &v);
        e.values.push_back(v.get<bool>());
        break;
      case Comparator::kContains:
        if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
          expected(at(key), "a non-empty string", &v);
        }
        check_text(at(key), v.get<std::string>());
        e.values.push_back(v.get<std::string>());
        break;
    }
    if (const json* tol = find("tolerance")) {
      if (e.comparator != Comparator::kEquals || !std::holds_alternative<double>(e.values[0])) {
        fail(at("tolerance"), "applies only to 'equals' with a number");
      }
      if (!finite(*tol) || tol->get<double>() < 0) expected(at("tolerance"), "a number >= 0", tol);
      e.tolerance = tol->get<double>();
    }
    if (const json* name = find("name")) {
      if (!name->is_string() || name->get_ref<const std::string&>().empty()) {
        expected(at("name"), "a non-empty string", name);
      }
      e.name = name->get<std::string>();
      check_text(at("name"), e.name);
    }
    return e;
  }

 private:
  std::string file_;
};

// Where a metric path leaves the report: "(keys at summary: a, b)" and the like.
std::string why_missing(const json& report, const std::string& metric) {
  const std::vector<std::string> parts = split_metric(metric);
  const json* node = &report;
  std::string prefix;
  for (const std::string& seg : parts) {
    const std::string where = prefix.empty() ? "the top level" : prefix;
    if (node->is_object()) {
      auto it = node->find(seg);
      if (it == node->end()) {
        std::vector<std::string> keys;
        std::vector<std::string_view> views;
        for (const auto& [k, v] : node->items()) keys.push_back(k);
        for (const std::string& k : keys) views.push_back(k);
        std::string out = "keys at " + where + ": " + json_diag::list(keys);
        if (keys.empty()) out = where + " is an empty object";
        if (auto best = json_diag::closest(seg, views)) {
          out += "; did you mean '" + (prefix.empty() ? *best : prefix + "." + *best) + "'?";
        }
        return out;
      }
      node = &*it;
    } else if (node->is_array()) {
      const long long n = static_cast<long long>(node->size());
      const auto i = as_index(seg);
      if (!i || *i >= n || *i < -n) {
        if (n == 0) return where + " is an empty array";
        return where + " is an array of " + std::to_string(n) + ", indexed 0.." +
               std::to_string(n - 1) + " or -" + std::to_string(n) + "..-1";
      }
      node = &(*node)[static_cast<size_t>(*i < 0 ? n + *i : *i)];
    } else {
      return where + " is " + json_diag::describe(*node) + ", not an object or array";
    }
    prefix = prefix.empty() ? seg : prefix + "." + seg;
  }
  return "";
}

// A measured number as short text that still tells the verdict: the fewest significant digits
// (at least 6) whose value compares like the measured one.
std::string measured_number(double v, const std::function<bool(double)>& pass) {
  char buf[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (pass(std::strtod(buf, nullptr)) == pass(v)) break;
  }
  return buf;
}

std::string describe_found(const json& v) {
  if (v.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [k, x] : v.items()) keys.push_back(k);
    return keys.empty() ? "an empty object" : "an object (keys: " + json_diag::list(keys) + ")";
  }
  return json_diag::describe(v);
}

}  // namespace

const char* comparator_key(Comparator c) {
  for (const auto& [k, cmp] : kComparators) {
    if (cmp == c) return k.data();
  }
  return "?";
}

std::string condition_text(const Expectation& e) {
  auto text = [](const ExpectedValue& v) -> std::string {
    if (const double* d = std::get_if<double>(&v)) return num(*d);
    if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    return quoted(std::get<std::string>(v));
  };
  switch (e.comparator) {
    case Comparator::kAtLeast:
      return ">= " + text(e.values.at(0));
    case Comparator::kAtMost:
      return "<= " + text(e.values.at(0));
    case Comparator::kEquals:
      return "== " + text(e.values.at(0)) + (e.tolerance > 0 ? " +- " + num(e.tolerance) : "");
    case Comparator::kBetween:
      return "in [" + text(e.values.at(0)) + ", " + text(e.values.at(1)) + "]";
    case Comparator::kIs:
      return "is " + text(e.values.at(0));
    case Comparator::kContains:
      return "contains " + text(e.values.at(0));
  }
  return "?";
}

std::string display_name(const Expectation& e) {
  return e.name.empty() ? e.metric + " " + condition_text(e) : e.name;
}

Result<std::vector<Expectation>> parse_expectations(const json& expect, const std::string& file,
                                                    const std::string& json_path) {
  const Parser p(file);
  try {
    if (!expect.is_array()) p.expected(json_path, "an array of expectations", &expect);
    std::vector<Expectation> out;
    for (size_t i = 0; i < expect.size(); ++i) {
      out.push_back(p.one(expect[i], json_path + "[" + std::to_string(i) + "]"));
    }
    return out;
  } catch (const ParseError& e) {
    return Status::invalid_argument(e.message);
  }
}

const json* find_metric(const json& report, const std::string& metric) {
  const json* node = &report;
  for (const std::string& seg : split_metric(metric)) {
    if (node->is_object()) {
      auto it = node->find(seg);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      const long long n = static_cast<long long>(node->size());
      const auto i = as_index(seg);
      if (!i || *i >= n || *i < -n) return nullptr;
      node = &(*node)[static_cast<size_t>(*i < 0 ? n + *i : *i)];
    } else {
      return nullptr;
    }
  }
  return node;
}

std::vector<ExpectationOutcome> evaluate(const std::vector<Expectation>& expectations,
                                         const json& report) {
  std::vector<ExpectationOutcome> out;
  for (const Expectation& e : expectations) {
    ExpectationOutcome o;
    const std::string cond = condition_text(e);
    const json* v = find_metric(report, e.metric);
    if (!v) {
      o.message = e.metric + ": not in the report (" + why_missing(report, e.metric) + ")";
      out.push_back(std::move(o));
      continue;
    }
    auto wrong_type = [&](const char* what) {
      o.measured = v->is_object() ? "" : v->dump(-1, ' ', false, json::error_handler_t::replace);
      o.message =
          e.metric + ": expected " + what + " to compare " + cond + ", found " + describe_found(*v);
    };
    const ExpectedValue& x = e.values.at(0);
    if (std::holds_alternative<double>(x)) {  // at_least, at_most, between, equals a number
      if (!v->is_number()) {
        wrong_type("a number");
      } else {
        std::function<bool(double)> pass;
        const double a = std::get<double>(x);
        switch (e.comparator) {
          case Comparator::kAtLeast:
            pass = [a](double m) { return m >= a; };
            break;
          case Comparator::kAtMost:
            pass = [a](double m) { return m <= a; };
            break;
          case Comparator::kBetween: {
            const double b = std::get<double>(e.values.at(1));
            pass = [a, b](double m) { return m >= a && m <= b; };
            break;
          }
          default: {
            const double tol = e.tolerance;
            pass = [a, tol](double m) { return std::fabs(m - a) <= tol; };
            break;
          }
        }
        const double m = v->get<double>();
        o.passed = pass(m);
        o.measured = v->is_number_float() ? measured_number(m, pass) : v->dump();
        o.message = e.metric + " = " + o.measured + ", expected " + cond;
      }
    } else if (std::holds_alternative<bool>(x)) {  // is
      if (!v->is_boolean()) {
        wrong_type("true or false");
      } else {
        o.passed = v->get<bool>() == std::get<bool>(x);
        o.measured = v->dump();
        o.message = e.metric + " = " + o.measured + ", expected " + cond;
      }
    } else {  // equals or contains a string
      if (!v->is_string()) {
        wrong_type("a string");
      } else {
        const std::string& s = v->get_ref<const std::string&>();
        const std::string& want = std::get<std::string>(x);
        o.passed =
            e.comparator == Comparator::kContains ? s.find(want) != std::string::npos : s == want;
        o.measured = quoted(s);
        o.message = e.metric + " = " + o.measured + ", expected " + cond;
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

json outcomes_to_json(const std::vector<Expectation>& expectations,
                      const std::vector<ExpectationOutcome>& outcomes, const json& report) {
  json out = json::array();
  for (size_t i = 0; i < expectations.size() && i < outcomes.size(); ++i) {
    const Expectation& e = expectations[i];
    const json* v = find_metric(report, e.metric);
    out.push_back({{"name", display_name(e)},
                   {"metric", e.metric},
                   {"condition", condition_text(e)},
                   {"measured", v && v->is_primitive() ? *v : json(nullptr)},
                   {"passed", outcomes[i].passed},
                   {"message", outcomes[i].message}});
  }
  return out;
}

}  // namespace granary::models

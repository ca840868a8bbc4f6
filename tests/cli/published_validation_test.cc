// Validation of Granary against published MLPerf Storage v1.0 results (docs/validation.md,
// "Published MLPerf Storage v1.0 submissions"; label `validation`). Each
// tests/data/validation/mlperf-v1.0-*.json holds one published result and names the scenario
// that models the system.
//
// MLPerf ranks a system by the accelerators it supports: the largest count keeping AU at the
// workload's threshold; Granary's is the count `granary plan accelerators` finds. Within
// tolerance t of the published P per host means Granary supports ceil((1 - t) P) per host and
// not floor((1 + t) P) + 1 (AU falls as accelerators are added), which two runs decide; a lower
// bound (client-bound submissions: the clients, not storage, set the published count) means
// Granary supports P. A comparison outside tolerance fails unless the data file gives an
// outside_tolerance_reason, and one that carries a reason fails when it is within (the reason
// would be stale). The full search and the table of docs/validation.md come from
// scripts/validation_table.py (`make validation-table`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kSource = GRANARY_SOURCE_DIR;

std::vector<std::string> published_results() {
  std::vector<std::string> out;
  for (const std::string& f :
       testing::json_files(testing::testdata("validation"), "", "mlperf-v1.0-")) {
    out.push_back(f.substr(0, f.size() - 5));
  }
  return out;
}

// AU of the scenario run with `per_host` accelerators per client host (the scenario's file
// rewritten with that count).
double au_at(const nlohmann::json& scenario, int per_host, const std::string& dir) {
  nlohmann::json s = scenario;
  s["cluster"]["clients"]["accelerators_per_node"] = per_host;
  const std::string path = dir + "/scenario-" + std::to_string(per_host) + ".json";
  const std::string out = dir + "/report-" + std::to_string(per_host) + ".json";
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return -1;
  const std::string text = s.dump(2);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  const auto run = testing::run_command(kGranary + " run " + path + " --quiet --out " + out);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (run.exit_code != 0) return -1;
  const nlohmann::json r = nlohmann::json::parse(testing::read_file(out), nullptr, false);
  EXPECT_FALSE(r.is_discarded());
  if (r.is_discarded()) return -1;
  return r["summary"]["accelerator_utilization"]["mean"].get<double>();
}

class PublishedMlperfValidation : public ::testing::TestWithParam<std::string> {};

TEST_P(PublishedMlperfValidation, SupportedAccelerators) {
  const std::string name = GetParam();
  const nlohmann::json data = nlohmann::json::parse(
      testing::read_file(testing::testdata("validation/" + name + ".json")), nullptr, false);
  ASSERT_FALSE(data.is_discarded()) << name;
  const nlohmann::json& v = data["validation"]["supported_accelerators"];
  ASSERT_TRUE(v.is_object()) << name << ": no validation.supported_accelerators";
  const nlohmann::json scenario = nlohmann::json::parse(
      testing::read_file(kSource + "/" + data["scenario"].get<std::string>()), nullptr, false);
  ASSERT_FALSE(scenario.is_discarded());
  const double threshold = data["au_threshold"].get<double>();
  const int published = data["published"]["accelerators_per_host"].get<int>();
  const std::string dir = testing::make_temp_dir();
  const std::string kind = v["kind"].get<std::string>();
  if (kind == "lower_bound") {
    // Granary must support at least the published count.
    const double au = au_at(scenario, published, dir);
    std::printf("%s: lower bound, %d per host: AU %.3f (threshold %.2f)\n", name.c_str(), published,
                au, threshold);
    EXPECT_GE(au, threshold) << name << ": Granary supports fewer than the published " << published
                             << " accelerators per host";
    EXPECT_FALSE(v.contains("outside_tolerance_reason")) << "a lower bound has no tolerance";
    return;
  }
  ASSERT_EQ(kind, "within_tolerance") << name;
  const double t = v["tolerance"].get<double>();
  ASSERT_GT(t, 0);
  ASSERT_LE(t, 0.15) << name << ": the stated tolerance for supported accelerators is 15%";
  const int lo = std::max(1, static_cast<int>(std::ceil((1 - t) * published - 1e-9)));
  const int hi = static_cast<int>(std::floor((1 + t) * published + 1e-9));
  const double au_lo = au_at(scenario, lo, dir);
  // Below the threshold at the window's low end: outside, whatever the high end gives.
  const double au_above = au_lo >= threshold ? au_at(scenario, hi + 1, dir) : -1;
  const bool within = au_lo >= threshold && au_above < threshold;
  std::printf("%s: published %d per host, tolerance %.0f%%: AU %.3f at %d, %s at %d -> %s\n",
              name.c_str(), published, 100 * t, au_lo, lo,
              au_above < 0 ? "(not run)" : std::to_string(au_above).c_str(), hi + 1,
              within ? "within" : "outside");
  if (v.contains("outside_tolerance_reason")) {
    EXPECT_FALSE(within) << name << ": within tolerance now; remove outside_tolerance_reason";
    EXPECT_FALSE(v["outside_tolerance_reason"].get<std::string>().empty());
  } else {
    EXPECT_GE(au_lo, threshold) << name << ": Granary supports fewer than " << lo
                                << " per host (published " << published << ")";
    if (au_lo >= threshold) {
      EXPECT_LT(au_above, threshold) << name << ": Granary supports " << hi + 1
                                     << " per host or more (published " << published << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, PublishedMlperfValidation, ::testing::ValuesIn(published_results()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::param_name(info.param, "mlperf-v1.0-");
                         });

}  // namespace
}  // namespace granary

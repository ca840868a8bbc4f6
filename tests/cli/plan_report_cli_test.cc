// granary plan capacity and granary report as a user runs them: the plan's summary, exit
// statuses, the resumable run cache, the chosen design's scenarios; reports as PDF (its text
// through pdftotext, its fonts through pdffonts), self-contained HTML and CSV.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_util.h"

namespace granary {
namespace {

namespace fs = std::filesystem;
const std::string kGranary = GRANARY_BINARY;
const std::string kPlan = std::string(GRANARY_SOURCE_DIR) + "/tests/planner/data/small-plan.json";

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

class CapacityCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("granary-plan-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(CapacityCli, FindsTheCheapestDesignResumesFromItsCacheAndWritesTheChosenScenarios) {
  auto r = granary("plan capacity " + kPlan + " --out " + at("r.json") + " --jobs 2 --choice-dir " +
                   at("chosen"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cheapest design that meets every target: point 27, 6 x nvme-1u-12bay, "
                       "2 x samsung-pm9a3-7.68tb, 1 x connectx6-100g, rados ec4+2 over rdma"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("binding target: storm: AU"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("granary: screened 32 points: 16 invalid"), std::string::npos) << r.err;
  const auto result = nlohmann::json::parse(testing::read_file(at("r.json")));
  EXPECT_EQ(result["granary_plan_result"], 1);
  // The chosen design's scenario runs as it is.
  ASSERT_TRUE(fs::exists(at("chosen/storm.json")));
  auto run = granary("validate " + at("chosen/storm.json"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("6 storage nodes (nvme-1u-12bay) x 2 samsung-pm9a3-7.68tb, rados EC 4+2"),
            std::string::npos)
      << run.out;

  // Again: every simulation comes from the cache, the result is the same bytes.
  auto again = granary("plan capacity " + kPlan + " --out " + at("r2.json") + " --cache " +
                       at("r.json.runs.jsonl"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("simulations from an earlier run (resuming)"), std::string::npos);
  EXPECT_EQ(again.err.find("simulating 1 run(s)"), std::string::npos) << again.err;
  EXPECT_EQ(testing::read_file(at("r.json")), testing::read_file(at("r2.json")));
}

TEST_F(CapacityCli, ExitStatusesAndErrors) {
  // A target no design meets: exit 1, saying so.
  const std::string plan = testing::read_file(kPlan);
  auto j = nlohmann::json::parse(plan);
  j["targets"]["usable_capacity_tb"] = 100000;
  for (auto& c : j["cases"]) {
    c["scenario"] = std::string(GRANARY_SOURCE_DIR) + "/tests/planner/data/storm.json";
  }
  std::FILE* f = std::fopen(at("big.json").c_str(), "w");
  std::fputs(j.dump().c_str(), f);
  std::fclose(f);
  auto none = granary("plan capacity " + at("big.json") + " --quiet");
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.out.find("no design: no point of the space can meet the targets"),
            std::string::npos)
      << none.out;
  // Bad input: exit 2, one line naming the file and the path.
  j["space"]["drive"] = {"nvme-gen9"};
  f = std::fopen(at("bad.json").c_str(), "w");
  std::fputs(j.dump().c_str(), f);
  std::fclose(f);
  auto bad = granary("plan capacity " + at("bad.json"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(
      bad.err.rfind(
          "granary: " + at("bad.json") + ": space.drive[0]: unknown drive profile 'nvme-gen9'", 0),
      0u)
      << bad.err;
}

TEST_F(CapacityCli, ReportsAPlanAsPdfHtmlAndCsvWithEveryFigureFromTheResult) {
  ASSERT_EQ(granary("plan capacity " + kPlan + " --out " + at("r.json") + " --quiet").exit_code, 0);
  const auto result = nlohmann::json::parse(testing::read_file(at("r.json")));
  auto r = granary("report " + at("r.json") + " --pdf " + at("plan.pdf") + " --html " +
                   at("plan.html") + " --csv " + at("plan.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + at("plan-bom.csv")), std::string::npos) << r.out;

  // The PDF's text, as pdftotext reads it (layout kept, so that table rows stay on one line).
  auto text = testing::run_command("pdftotext -layout " + at("plan.pdf") + " -");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::string cost = "$100,200";
  for (const std::string& s :
       {std::string("Capacity plan: plan-test-small"), std::string("Recommendation"),
        std::string("Bill of materials"), cost, std::string("catalog example"),
        std::string("never quotes"), std::string("Targets"), std::string("storm: AU"),
        std::string("Cost versus margin"), std::string("Assumptions and model sources"),
        std::string("Evidence"), "Granary " + result["granary"]["version"].get<std::string>(),
        result["plan"]["sha256"].get<std::string>().substr(0, 40)}) {
    EXPECT_NE(text.out.find(s), std::string::npos) << s;
  }
  // Every font embedded.
  auto fonts = testing::run_command("pdffonts " + at("plan.pdf"));
  ASSERT_EQ(fonts.exit_code, 0);
  EXPECT_NE(fonts.out.find("DejaVuSans"), std::string::npos) << fonts.out;
  std::istringstream lines(fonts.out);
  std::string line;
  int listed = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("DejaVu", 0) != 0) continue;
    ++listed;
    EXPECT_NE(line.find(" yes "), std::string::npos) << "not embedded: " << line;
  }
  EXPECT_GE(listed, 1);

  // HTML: one file, charts inline, nothing fetched from elsewhere.
  const std::string html = testing::read_file(at("plan.html"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find(cost), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);

  // CSV: a row per point; the bill of materials totals the plan's cost.
  const auto points = testing::read_lines(at("plan.csv"));
  EXPECT_EQ(points.size(), result["points"].size() + 1);
  EXPECT_EQ(points[0].rfind("point,design,status,cost (USD)", 0), 0u) << points[0];
  const std::string bom = testing::read_file(at("plan-bom.csv"));
  EXPECT_NE(bom.find("total,,,,\"$100,200\","), std::string::npos) << bom;
}

TEST_F(CapacityCli, ReportsARunAndRefusesAFileThatIsNeither) {
  const std::string scenario = std::string(GRANARY_SOURCE_DIR) + "/scenarios/ci/slow-drive.json";
  ASSERT_EQ(granary("run " + scenario + " --out " + at("run.json")).exit_code, 0);
  auto r =
      granary("report " + at("run.json") + " --pdf " + at("run.pdf") + " --csv " + at("run.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto text = testing::run_command("pdftotext -layout " + at("run.pdf") + " -");
  for (const char* s : {"Simulation report: ", "What the accelerators see", "Throughput over time",
                        "Failures and recovery", "Expectations"}) {
    EXPECT_NE(text.out.find(s), std::string::npos) << s;
  }
  EXPECT_NE(testing::read_file(at("run.csv")).find("summary.accelerator_utilization.mean,"),
            std::string::npos);
  auto wrong = granary("report " + scenario + " --pdf " + at("x.pdf"));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("expected a run report (granary run --out) or a plan result"),
            std::string::npos)
      << wrong.err;
  auto nothing = granary("report " + at("run.json"));
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_NE(nothing.err.find("give at least one of --pdf, --html, --csv"), std::string::npos);
}

// The flagship's example report in docs/examples is what the code makes of the shipped result:
// HTML and CSV byte for byte; the PDF (QPdfWriter stamps its date) by its text.
TEST_F(CapacityCli, TheShippedFlagshipReportIsWhatTheCodeMakesOfTheShippedResult) {
  const std::string ex = std::string(GRANARY_SOURCE_DIR) + "/docs/examples/";
  auto r = granary("report " + ex + "flagship-plan.result.json --validation " + ex +
                   "validation-results.json --html " + at("f.html") + " --csv " + at("f.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::read_file(at("f.html")), testing::read_file(ex + "flagship-plan.html"))
      << "regenerate docs/examples/flagship-plan.* (docs/report-export.md)";
  EXPECT_EQ(testing::read_file(at("f.csv")), testing::read_file(ex + "flagship-plan.csv"));
  EXPECT_EQ(testing::read_file(at("f-bom.csv")), testing::read_file(ex + "flagship-plan-bom.csv"));
  const auto result = nlohmann::json::parse(testing::read_file(ex + "flagship-plan.result.json"));
  auto text = testing::run_command("pdftotext -layout " + ex + "flagship-plan.pdf -");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find(result["choice"]["label"].get<std::string>().substr(0, 18)),
            std::string::npos);
  EXPECT_NE(text.out.find("$1,010,000"), std::string::npos);
}

// --validation adds the comparisons with published figures from validation_table.py's results
// (the shipped flagship example's); a file that is not one is refused.
TEST_F(CapacityCli, ValidationFiguresComeFromTheValidationResults) {
  const std::string ex = std::string(GRANARY_SOURCE_DIR) + "/docs/examples/";
  auto r = granary("report " + ex + "flagship-plan.result.json --validation " + ex +
                   "validation-results.json --html " + at("v.html"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = testing::read_file(at("v.html"));
  const auto v = nlohmann::json::parse(testing::read_file(ex + "validation-results.json"));
  EXPECT_NE(html.find("Validation against published figures"), std::string::npos);
  for (const auto& row : v["mlperf"]) {
    EXPECT_NE(html.find(row["system"].get<std::string>()), std::string::npos) << row["system"];
  }
  EXPECT_NE(html.find("recovery rate (MiB/s)"), std::string::npos);
  auto bad = granary("report " + ex + "flagship-plan.result.json --validation " + ex +
                     "flagship-plan.json --html " + at("x.html"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("expected the figures of scripts/validation_table.py --results"),
            std::string::npos)
      << bad.err;
}

// Soak (ctest -L soak, a few minutes): the flagship plan run afresh chooses what the shipped
// result says (a regression pin on Granary's own output, not a validation).
TEST_F(CapacityCli, FlagshipPlanChoosesWhatTheShippedResultSays) {
  if (std::getenv("GRANARY_PLAN_SOAK") == nullptr) GTEST_SKIP() << "soak: GRANARY_PLAN_SOAK=1";
  const std::string ex = std::string(GRANARY_SOURCE_DIR) + "/docs/examples/";
  auto r = granary("plan capacity " + ex + "flagship-plan.json --out " + at("f.json") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto fresh = nlohmann::json::parse(testing::read_file(at("f.json")));
  const auto shipped = nlohmann::json::parse(testing::read_file(ex + "flagship-plan.result.json"));
  EXPECT_EQ(fresh["choice"]["point"], shipped["choice"]["point"]);
  EXPECT_EQ(fresh["choice"]["cost_usd"], shipped["choice"]["cost_usd"]);
  EXPECT_EQ(fresh["choice"]["binding"], shipped["choice"]["binding"]);
  EXPECT_EQ(fresh["counts"], shipped["counts"]);
}

}  // namespace
}  // namespace granary

// granary run --progress: the JSON lines that granary-gui reads from its child process, the
// silent mode, and the refusal of an unknown mode.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/progress.h"
#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
// A run of a few seconds (design nfs, request level).
const std::string kScenario =
    std::string(GRANARY_SOURCE_DIR) + "/scenarios/mlperf-cosmoflow-a100-nfs.json";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ProgressCli, JsonModeWritesRisingFractionsEndingAtOne) {
  const std::string out = testing::make_temp_dir() + "/report.json";
  auto r = testing::run_command(kGranary + " run " + kScenario + " --progress json --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> progress;
  for (const std::string& line : lines_of(r.err)) {
    if (line.rfind("{", 0) != 0) continue;  // granary's other stderr lines (seed, estimate)
    const auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    ASSERT_TRUE(j.contains("progress") && j.contains("simulated_s")) << line;
    progress.push_back(j);
  }
  ASSERT_GE(progress.size(), 2u) << r.err;
  double last_fraction = 0, last_simulated_s = 0;
  for (const nlohmann::json& p : progress) {
    const double f = p["progress"].get<double>();
    const double t = p["simulated_s"].get<double>();
    EXPECT_GE(f, last_fraction);
    EXPECT_LE(f, 1.0);
    EXPECT_GE(t, last_simulated_s);
    last_fraction = f;
    last_simulated_s = t;
  }
  EXPECT_EQ(progress.back()["progress"].get<double>(), 1.0);
  EXPECT_LT(progress[progress.size() - 2]["progress"].get<double>(), 1.0);  // 1 only at the end
  EXPECT_GT(last_simulated_s, 0.0);
  // The report is written as without the flag.
  EXPECT_FALSE(nlohmann::json::parse(testing::read_file(out), nullptr, false).is_discarded());
}

TEST(ProgressCli, NoneModeAndAPipeWriteNoProgress) {
  for (const std::string mode : {" --progress none", ""}) {
    auto r = testing::run_command(kGranary + " run " + kScenario + mode);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("{\"progress\""), std::string::npos) << mode;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << mode;  // no bar: stderr is not a terminal
  }
}

TEST(ProgressCli, AnUnknownModeIsAUsageError) {
  auto r = testing::run_command(kGranary + " run " + kScenario + " --progress fancy");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--progress"), std::string::npos) << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
}

// At most one line per interval of wall time, the first at once, and finish() always writes.
TEST(ProgressCli, JsonLinesAreThrottled) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&text, &size);
  ASSERT_NE(f, nullptr);
  {
    cli::JsonProgress p(
        {.out = f, .min_interval = std::chrono::hours(1), .expected_simulated_s = 10});
    for (int i = 0; i < 1000; ++i) p.update(i * 0.01, 0);
    p.finish();
  }
  std::fclose(f);
  const std::vector<std::string> lines = lines_of(std::string(text, size));
  std::free(text);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["progress"].get<double>(), 0.0);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["progress"].get<double>(), 1.0);
  EXPECT_NEAR(nlohmann::json::parse(lines[1])["simulated_s"].get<double>(), 9.99, 1e-9);
}

}  // namespace
}  // namespace granary

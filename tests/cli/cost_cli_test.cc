// The cost guard as a user meets it: `granary validate` prints the estimate, `granary run`
// refuses a run past the limits with one line (exit 2), the limit flags are range-checked, and
// the watchdog stops a run that outgrows its estimate (cli/resources.h).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cli/resources.h"
#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string write_variant(const std::string& shipped,
                          const std::function<void(nlohmann::json&)>& edit,
                          const std::string& name) {
  nlohmann::json j = nlohmann::json::parse(testing::read_file(kScenarios + "/" + shipped));
  edit(j);
  const std::string path = testing::make_temp_dir() + "/" + name;
  std::ofstream(path) << j.dump(2);
  return path;
}

TEST(CostCli, ValidatePrintsTheEstimate) {
  const std::string f = kScenarios + "/ci/osd-failure-read-storm.json";
  auto r = granary("validate " + f);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind(f + ": ok (", 0), 0u);
  EXPECT_EQ(lines[1].rfind("  estimate: about ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(" tasks, "), std::string::npos);
  EXPECT_NE(lines[1].find(" simulated; 16 concurrent readers: request level"), std::string::npos)
      << lines[1];
  auto j = granary("validate --json " + f);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["file"], f);
  for (const char* k : {"wall_s", "memory_bytes", "tasks", "requests", "requests_in_flight",
                        "events", "simulated_s", "driver"}) {
    EXPECT_TRUE(doc["estimate"].contains(k)) << k;
  }
}

// Issue 9: a block workload at queue depth 1024 with 128 volumes aborted (exit 134) in SimGrid
// creating contexts. Now: one line, exit 2, before anything is simulated.
TEST(CostCli, RunRefusesMoreTasksThanTheMachineAllows) {
  const std::string f = write_variant(
      "block-4k-random-rados.json",
      [](nlohmann::json& j) { j["workloads"][0]["queue_depth"] = 1024; }, "qd1024.json");
  for (const char* cmd : {"run --quiet ", "validate "}) {
    auto r = granary(cmd + f);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("granary: " + f + ": workloads[0].queue_depth: the run needs 14", 0), 0u)
        << r.err;
    EXPECT_NE(r.err.find("raise vm.max_map_count"), std::string::npos) << r.err;
  }
}

TEST(CostCli, RunRefusesPastMaxWallAndSaysWhatToChange) {
  const std::string f = kScenarios + "/read-storm-128-dgx-a100.json";
  auto r = granary("run --quiet --max-wall-s 0.5 " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(
      r.err.rfind("granary: " + f + ": simulation.representative_nodes: the run would take about ",
                  0),
      0u)
      << r.err;
  EXPECT_NE(r.err.find("of wall time (limit 0.50 s; "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("or raise --max-wall-s"), std::string::npos) << r.err;
}

TEST(CostCli, LimitFlagsAreRangeChecked) {
  const std::string f = kScenarios + "/ci/osd-failure-read-storm.json";
  auto r = granary("validate --max-memory-gib 1000000 " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-memory-gib: expected a number of GiB > 0 and <= "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("found '1000000'"), std::string::npos) << r.err;
  r = granary("run --max-wall-s -1 " + f);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-wall-s: expected a number of seconds > 0 and <= 604800 (a week), "
                       "found '-1'"),
            std::string::npos)
      << r.err;
}

// Runs `body` in a child process with stderr captured; returns (exit status, stderr).
std::pair<int, std::string> in_child(const std::function<void()>& body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(fds[1]);
  std::string err;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

TEST(Watchdog, StopsARunPastItsWallTime) {
  const auto t0 = std::chrono::steady_clock::now();
  auto [code, err] = in_child([] {
    sim::CostLimits l;
    l.max_wall_s = 0.3;
    cli::start_watchdog("x.json", l);
    std::this_thread::sleep_for(std::chrono::seconds(20));
  });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(code, 2);
  EXPECT_LT(took, 10);
  // (Stopped at the first check past the limit: 0.30 s or a little more under load.)
  EXPECT_NE(err.find("granary: x.json: stopped after "), std::string::npos) << err;
  EXPECT_NE(err.find(" s of wall time (limit 0.30 s, --max-wall-s)"), std::string::npos) << err;
}

TEST(Watchdog, StopsARunPastItsMemory) {
  auto [code, err] = in_child([] {
    sim::CostLimits l;
    l.max_memory_bytes = 256.0 * (1 << 20);
    cli::start_watchdog("x.json", l);
    std::vector<std::vector<char>> hog;
    for (int i = 0; i < 200; ++i) {  // up to 1.6 GiB, touched
      hog.emplace_back(8 << 20, 'x');
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("granary: x.json: stopped at "), std::string::npos) << err;
  EXPECT_NE(err.find(" of memory (limit 256 MiB, --max-memory-gib)"), std::string::npos) << err;
}

}  // namespace
}  // namespace granary

// Writes and erasure coding in the simulator, through `granary run`: checkpoints for the three
// designs against the analytic write bound, erasure-coded reads, and every CI scenario under
// scenarios/ci/ with its expectations.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

// Runs `scenario` (JSON text) and returns its report; `exit_code` gets granary's status.
nlohmann::json run_json(const nlohmann::json& scenario, int* exit_code = nullptr) {
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << scenario.dump(2);
  auto r =
      testing::run_command(kGranary + " run " + dir + "/s.json --quiet --out " + dir + "/r.json");
  if (exit_code != nullptr) *exit_code = r.exit_code;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(testing::read_file(dir + "/r.json"), nullptr, false);
}

// A small cluster: 2 client nodes x 8 GPUs, 6 storage servers of 4 drives, 100 Gb/s NICs.
nlohmann::json small_cluster(const std::string& design) {
  nlohmann::json s = {
      {"granary", 1},
      {"name", "small-" + design},
      {"cluster",
       {{"clients",
         {{"count", 2}, {"accelerator", "a100"}, {"nic", {{"profile", "connectx6-200g"}}}}},
        {"storage",
         {{"count", 6},
          {"drive", {{"profile", "samsung-pm9a3-7.68tb"}, {"count", 4}}},
          {"nic", {{"profile", "connectx6-200g"}}}}}}},
      {"storage", {{"design", design}}},
      {"workloads",
       {{{"type", "checkpoint"},
         {"name", "ckpt"},
         {"model_gb", 16},
         {"optimizer_gb", 0},
         {"data_parallel", 16}}}}};
  return s;
}

TEST(WriteSim, CheckpointsStayUnderTheWriteBoundForEveryDesign) {
  for (const std::string design : {"rados", "pfs", "nfs"}) {
    const nlohmann::json r = run_json(small_cluster(design));
    ASSERT_FALSE(r.is_discarded()) << design;
    const auto& s = r["summary"];
    const double write_s = s["write_seconds"].get<double>();
    const double min_s = r["bounds"]["write_seconds_min"].get<double>();
    EXPECT_GT(write_s, 0) << design;
    // Never faster than the bound; within a factor 2 of it on this uncontended cluster.
    EXPECT_GE(write_s, min_s * 0.99) << design;
    EXPECT_LE(write_s, min_s * 2.0) << design;
    EXPECT_GT(s["read_seconds"].get<double>(), 0) << design;
    // Replication writes every byte three times; Lustre OSTs and NFS heads once.
    EXPECT_NEAR(s["write_amplification"].get<double>(), design == "rados" ? 3.0 : 1.0, 1e-6)
        << design;
  }
}

TEST(WriteSim, ErasureCodingWritesKPlusMOverK) {
  nlohmann::json sc = small_cluster("rados");
  sc["storage"]["rados"] = {{"erasure", {{"k", 4}, {"m", 2}}}, {"pg_num", 256}};
  const nlohmann::json r = run_json(sc);
  ASSERT_FALSE(r.is_discarded());
  // (The last stripe of each rank's file is padded.)
  EXPECT_NEAR(r["summary"]["write_amplification"].get<double>(), 1.5, 1e-4);
  // EC sends less over the storage NICs than 3 replicas: a higher bound than replication's.
  const nlohmann::json rep = run_json(small_cluster("rados"));
  EXPECT_GT(r["bounds"]["write_gibps"].get<double>(), rep["bounds"]["write_gibps"].get<double>());
}

TEST(WriteSim, ErasureCodedReadStormRuns) {
  // A training read storm on an EC 4+2 pool: reads are gathered by the primaries.
  nlohmann::json sc = small_cluster("rados");
  sc["storage"]["rados"] = {{"erasure", {{"k", 4}, {"m", 2}}}, {"pg_num", 256}};
  sc["workloads"] = {{{"mlperf", "unet3d"}, {"files", 224}}};
  const nlohmann::json r = run_json(sc);
  ASSERT_FALSE(r.is_discarded());
  EXPECT_GT(r["summary"]["read_gibps_mean"].get<double>(), 0);
  EXPECT_LE(r["summary"]["read_gibps_steady"].get<double>(),
            r["bounds"]["max_flow_gibps"].get<double>() * 1.01);
}

TEST(WriteSim, CheckpointNeedsEnoughAccelerators) {
  nlohmann::json sc = small_cluster("rados");
  sc["workloads"][0]["data_parallel"] = 64;  // 16 accelerators only
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << sc.dump(2);
  auto r = testing::run_command(kGranary + " run " + dir + "/s.json --quiet");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workloads[0].data_parallel: expected tensor_parallel x pipeline_parallel "
                       "x data_parallel <= 16"),
            std::string::npos)
      << r.err;
}

TEST(FailureSim, SameSeedGivesAByteIdenticalFailureReport) {
  const std::string scenario = kScenarios + "/ci/rack-partition.json";
  const std::string dir = testing::make_temp_dir();
  for (const char* name : {"a", "b"}) {
    auto r = testing::run_command(kGranary + " run " + scenario + " --quiet --out " + dir + "/" +
                                  name + ".json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The summary tells the failure's story.
    EXPECT_NE(r.out.find("failure:             partition at 5.00 s (6 OSDs)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("0 objects lost"), std::string::npos) << r.out;
  }
  const std::string a = testing::read_file(dir + "/a.json");
  EXPECT_EQ(a, testing::read_file(dir + "/b.json"));
  const auto report = nlohmann::json::parse(a);
  // Detection inside Ceph's window: grace (4 s) to grace + interval (5 s), plus a message.
  for (const auto& e : report["recovery"]["events"]) {
    if (e["kind"] != "partition") continue;
    EXPECT_GE(e["time_to_detect_s"].get<double>(), 4.0);
    EXPECT_LE(e["time_to_detect_s"].get<double>(), 5.01);
  }
  // Recovery moved what the planner said, and every PG is whole again.
  const auto& rec = report["recovery"];
  EXPECT_GE(rec["bytes_moved"].get<double>(), rec["bytes_minimum"].get<double>());
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
  EXPECT_GT(rec["requests_resent"].get<int>(), 0);  // clients followed the map
}

class CiScenario : public ::testing::TestWithParam<std::string> {};

// Every CI scenario runs and meets its own expectations (granary run exits 0).
TEST_P(CiScenario, MeetsItsExpectations) {
  const std::string dir = testing::make_temp_dir();
  auto r = testing::run_command(kGranary + " run " + kScenarios + "/ci/" + GetParam() +
                                " --quiet --out " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(testing::read_file(dir + "/r.json"), nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  const testing::CommandResult check = testing::check_report(dir + "/r.json");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  ASSERT_TRUE(report.contains("expectations")) << GetParam() << " has no expectations";
  for (const auto& e : report["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
}

INSTANTIATE_TEST_SUITE_P(All, CiScenario,
                         ::testing::ValuesIn(testing::json_files(kScenarios + "/ci")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::param_name(info.param);
                         });

}  // namespace
}  // namespace granary

// The cost estimate (sim/cost_estimate.h): how it scales with the work, and the refusals the
// issue's examples now get. Against measured runs it is checked by
// tests/bench/cost_estimate_bench.sh (docs/models.md, "Cost of a run"); these tests pin its
// structure, not its calibration.
#include "sim/cost_estimate.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/scenario_json.h"

namespace granary::sim {
namespace {

using nlohmann::json;

json shipped(const std::string& rel) {
  std::ifstream f(std::string(GRANARY_SOURCE_DIR) + "/scenarios/" + rel);
  return json::parse(f);
}

models::Scenario parse(const json& j) {
  auto s = models::parse_scenario(j.dump(), "test.json");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : models::Scenario{};
}

// The CI read storm of an OSD failure without its failure, nor the recovery settings that act
// only on one (the scenario format refuses them without a failure).
json read_storm_without_failures() {
  json j = shipped("ci/osd-failure-read-storm.json");
  j.erase("failures");
  j.erase("expect");
  j["storage"]["rados"].erase("recovery");
  return j;
}

CostLimits defaults() {
  CostLimits l;
  l.max_memory_bytes = 16.0 * (1ull << 30);
  l.max_actors = 30000;
  return l;
}

TEST(CostEstimate, WholeEpochWorkGrowsWithTheDataset) {
  json j = read_storm_without_failures();
  j["simulation"] = {{"stop_at_steady_state", false}};
  j["workloads"][0]["epochs"] = 1;
  const CostEstimate a = estimate_cost(parse(j));
  j["workloads"][0]["files"] = 4000;
  const CostEstimate b = estimate_cost(parse(j));
  EXPECT_NEAR(b.transfers / a.transfers, 10.0, 0.5);
  EXPECT_NEAR(b.simulated_s / a.simulated_s, 10.0, 0.5);
  EXPECT_GT(b.wall_s, 5 * a.wall_s);
  EXPECT_EQ(b.actors, a.actors);  // the same tasks, working longer
  EXPECT_EQ(b.driver, "workloads[0].files");
}

TEST(CostEstimate, SteadyStateStopBoundsTheWork) {
  json j = read_storm_without_failures();
  const CostEstimate a = estimate_cost(parse(j));
  j["workloads"][0]["files"] = 4000000;
  const CostEstimate b = estimate_cost(parse(j));
  EXPECT_TRUE(b.plan.allow_early_stop);
  EXPECT_NEAR(b.transfers, a.transfers, 0.01 * a.transfers);
  // The dataset's files are still held in memory.
  EXPECT_GT(b.memory_bytes, a.memory_bytes + 100e6);
}

TEST(CostEstimate, BlockTasksAreVolumesTimesQueueDepth) {
  json j = shipped("block-4k-random-rados.json");
  const CostEstimate e = estimate_cost(parse(j));
  const int volumes = j["cluster"]["clients"]["count"].get<int>();
  const int qd = j["workloads"][0]["queue_depth"].get<int>();
  // Besides the volumes' I/O tasks: per drive its OSD's 16 client-op and 16 sub-op workers and
  // its courier.
  const int drives = j["cluster"]["storage"]["count"].get<int>() *
                     j["cluster"]["storage"]["drive"]["count"].get<int>();
  EXPECT_GE(e.actors, int64_t{volumes} * qd);
  EXPECT_LT(e.actors, int64_t{volumes} * qd + int64_t{drives} * 33 + 1000);
  EXPECT_TRUE(check_cost(parse(j), e, defaults()).ok());
}

// Issue 9: a block workload at queue depth 1024 with 128 volumes aborted in SimGrid creating
// contexts; it is refused before the run, naming the key and the machine's limit.
TEST(CostEstimate, RefusesMoreTasksThanTheMachineAllows) {
  json j = shipped("block-4k-random-rados.json");
  j["workloads"][0]["queue_depth"] = 1024;
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: workloads[0].queue_depth: the run needs 14", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("more than the 30,000 this machine allows (vm.max_map_count"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("use a lower queue depth or fewer volumes (workloads[0].nodes)"),
            std::string::npos);
}

// Issue 9: 1,000 checkpoints ran for hours with no way to know.
TEST(CostEstimate, RefusesAThousandCheckpointsOnWallTime) {
  json j = shipped("ci/checkpoint-llama3-70b.json");
  j.erase("expect");
  j["workloads"][0]["checkpoints"] = 1000;
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  EXPECT_GT(e.wall_s, 3600);
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: workloads[0].checkpoints: the run would take about ", 0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find("of wall time (limit 60.0 min; "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("write fewer checkpoints, or raise --max-wall-s"), std::string::npos);
  // Raised deliberately, it is allowed.
  CostLimits generous = defaults();
  generous.max_wall_s = e.wall_s * 1.01;
  generous.max_memory_bytes = e.memory_bytes * 1.01;
  EXPECT_TRUE(check_cost(s, e, generous).ok());
}

// Issue 9: a failure far in the simulated future keeps every OSD's heartbeat ticking until then.
TEST(CostEstimate, FailureLateInTheRunCostsItsHeartbeats) {
  json j = shipped("ci/osd-failure-read-storm.json");
  j.erase("expect");
  j["simulation"] = {{"max_simulated_s", 1e9}};
  j["failures"][0]["at_s"] = 1e8;
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  EXPECT_GE(e.simulated_s, 1e8);
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: failures: the run would take about ", 0), 0u)
      << st.message();
}

TEST(CostEstimate, RefusesMemoryPastTheLimit) {
  json j = read_storm_without_failures();
  j["workloads"][0]["files"] = 100000000;  // 10^8 files held in memory
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  EXPECT_GT(e.memory_bytes, 16.0 * (1ull << 30));
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: workloads[0].files: the run would need about ", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("of memory (limit 16.0 GiB)"), std::string::npos) << st.message();
}

// Issue 9: 10^12 files with 10^6 epochs (documented as valid) aborted in SimGrid; with small
// samples it is in range, and the estimate refuses it on the dataset it would hold.
TEST(CostEstimate, RefusesATrillionFilesOnMemory) {
  json j = read_storm_without_failures();
  j["workloads"][0] = {{"name", "tiny"},
                       {"mlperf", "unet3d"},
                       {"files", 1000000000000},
                       {"epochs", 1000000},
                       {"sample_size_mib", {{"mean", 0.001}}}};
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: workloads[0].files: the run would need about ", 0), 0u)
      << st.message();
}

// Issue 9: many samples per file ran for hours: the steady state shows only after the loaders'
// first files, samples_per_file / batch_size steps each, and drawing the sizes costs too.
TEST(CostEstimate, CountsTheFirstFilesAndDrawingTheDataset) {
  json j = read_storm_without_failures();
  j["workloads"][0]["files"] = 40;
  j["workloads"][0]["samples_per_file"] = 10000;
  j["workloads"][0]["sample_size_mib"] = {{"mean", 0.0001}};
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  const double steps_per_file = 10000.0 / s.workloads[0].training.batch_size;
  EXPECT_GT(e.simulated_s, steps_per_file * s.workloads[0].training.compute_s_per_step);
  j["workloads"][0]["files"] = 4000000;
  j["workloads"][0]["samples_per_file"] = 100000;
  const CostEstimate big = estimate_cost(parse(j));
  EXPECT_GT(big.wall_s, 4000000 * 1e5 * 3e-8);  // the draws alone
  const Status st = check_cost(parse(j), big, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: workloads[0].samples_per_file: the run would take ", 0),
            0u)
      << st.message();
}

// Issue 9: 16 servers x 128 drives aborted in SimGrid creating contexts (a task per OSD worker):
// a checkpoint's 16 workers per OSD pass the machine's tasks, a read storm's 4 do not.
TEST(CostEstimate, ManyDrivesCountTheirWorkers) {
  json j = shipped("ci/checkpoint-llama3-70b.json");
  j.erase("expect");
  j["cluster"]["storage"]["count"] = 16;
  j["cluster"]["storage"]["drive"]["count"] = 128;
  const models::Scenario s = parse(j);
  const CostEstimate e = estimate_cost(s);
  EXPECT_GE(e.actors, 16 * 128 * 33);  // 16 client-op and 16 sub-op workers and a courier
  const Status st = check_cost(s, e, defaults());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("test.json: cluster.storage.drive.count: the run needs 6", 0), 0u)
      << st.message();
}

TEST(CostEstimate, Formats) {
  EXPECT_EQ(format_duration(0.25), "0.25 s");
  EXPECT_EQ(format_duration(42), "42 s");
  EXPECT_EQ(format_duration(600), "10.0 min");
  EXPECT_EQ(format_duration(5 * 3600), "5.0 h");
  EXPECT_EQ(format_duration(10 * 86400), "10.0 days");
  EXPECT_EQ(format_bytes(512.0 * (1 << 20)), "512 MiB");
  EXPECT_EQ(format_bytes(3.25 * (1 << 30)), "3.2 GiB");
}

TEST(CostEstimate, HostLimitsAreRead) {
  const HostLimits h = host_limits();
  EXPECT_GT(h.physical_memory_bytes, 1e8);
  EXPECT_GT(h.max_map_count, 1000);
  EXPECT_EQ(h.max_actors, (h.max_map_count - 4096) / 2);
}

}  // namespace
}  // namespace granary::sim

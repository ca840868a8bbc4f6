// The failure kinds of the scenario timeline, each against a known behaviour, through
// `granary run`: nic_down is a partition of one host, link_down of some cables cuts the link's
// capacity by their share and of the last one cuts off the storage hosts beyond it,
// link_degraded divides it, and drive_replace refills the new drive with what the old one held.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

nlohmann::json run_json(const nlohmann::json& scenario) {
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << scenario.dump(2);
  auto r =
      testing::run_command(kGranary + " run " + dir + "/s.json --quiet --out " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(testing::read_file(dir + "/r.json"), nullptr, false);
}

// The CI read storm of an OSD failure (6 hosts x 4 NVMe, 3 replicas, 256 PGs; heartbeat 1 s,
// grace 4 s, down-out 5 s) with another timeline.
nlohmann::json read_storm(const nlohmann::json& failures) {
  nlohmann::json s =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/osd-failure-read-storm.json"));
  s.erase("expect");
  s["failures"] = failures;
  return s;
}

TEST(FailureKinds, NicDownIsAPartitionOfOneHost) {
  const auto nic = run_json(read_storm(nlohmann::json::parse(R"([
      {"at_s": 5, "kind": "nic_down", "host": 2}, {"at_s": 20, "kind": "nic_up", "host": 2}])")));
  const auto partition = run_json(read_storm(nlohmann::json::parse(R"([
      {"at_s": 5, "kind": "partition", "hosts": [2]}, {"at_s": 20, "kind": "heal", "hosts": [2]}])")));
  ASSERT_FALSE(nic.is_discarded());
  ASSERT_FALSE(partition.is_discarded());
  const auto& rec = nic["recovery"];
  EXPECT_EQ(rec["events"][0]["osds"], (std::vector<int>{8, 9, 10, 11}));
  EXPECT_GE(rec["time_to_detect_s"].get<double>(), 4.0);
  EXPECT_LE(rec["time_to_detect_s"].get<double>(), 5.01);
  // Back at nic_up (its first heartbeat boots it), recovered a little later.
  EXPECT_NEAR(rec["events"][1]["marked_up_at_s"].get<double>(), 20.0, 0.01);
  EXPECT_GT(rec["events"][1]["time_to_recover_s"].get<double>(), 0);
  EXPECT_EQ(rec["objects_lost"].get<int>(), 0);
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
  // The same story as a partition of that host: the same marks, the same data moved.
  const auto& p = partition["recovery"];
  EXPECT_EQ(rec["map_changes"], p["map_changes"]);
  EXPECT_EQ(rec["bytes_moved"], p["bytes_moved"]);
  EXPECT_EQ(rec["requests_resent"], p["requests_resent"]);
  EXPECT_EQ(nic["summary"]["epoch_seconds"], partition["summary"]["epoch_seconds"]);
}

// Mean of a report series over [t0, t1).
double mean_over(const nlohmann::json& report, const char* series, double t0, double t1) {
  const double dt = report["series"]["interval_s"].get<double>();
  double sum = 0;
  int n = 0;
  const auto& xs = report["series"][series];
  for (size_t i = 0; i < xs.size(); ++i) {
    const double t = (static_cast<double>(i) + 0.5) * dt;
    if (t >= t0 && t < t1) sum += xs[i].get<double>(), ++n;
  }
  return n > 0 ? sum / n : 0;
}

TEST(FailureKinds, LinkDownAndDegradedCutTheAggregateCapacity) {
  // One client node of 8 GPUs against 6 servers on one leaf whose uplink (2 cables of 40 Gb/s,
  // 8.5 GB/s at RDMA efficiency) bounds the read storm: 7.92 GiB/s.
  nlohmann::json s = read_storm(nlohmann::json::parse(R"([
      {"at_s": 4, "kind": "link_down", "link": ["leaf1", "spine"]},
      {"at_s": 8, "kind": "link_up", "link": ["spine", "leaf1"]},
      {"at_s": 12, "kind": "link_degraded", "link": ["leaf1", "spine"], "factor": 4},
      {"at_s": 16, "kind": "link_up", "link": ["leaf1", "spine"]}])"));
  s["cluster"]["clients"]["accelerators_per_node"] = 8;
  s["cluster"]["fabric"] = {{"hosts_per_leaf", 8}, {"uplinks_per_leaf", 2}, {"link_gbps", 40}};
  s["workloads"] = {{{"mlperf", "unet3d"}, {"files", 1600}, {"epochs", 1}}};
  const auto r = run_json(s);
  ASSERT_FALSE(r.is_discarded());
  const double bound = r["bounds"]["max_flow_gibps"].get<double>();
  EXPECT_NEAR(bound, 7.92, 0.01);
  EXPECT_EQ(r["bounds"]["bottleneck"], "1 leaf uplink x 8.50 GB/s = 8.50 GB/s");
  // Windows clear of the changes: a second after each for the queues to follow, and half a
  // second before the next, as the series interval that holds a change shows the rate after it
  // (the interval is the run's length / ~100: 0.32 s here, with DLIO's unet3d sample sizes an
  // interval from 11.77 s to 12.08 s read as the degraded link's 1.98 GiB/s).
  const double healthy = mean_over(r, "read_gibps", 1, 3.5);
  const double one_cable = mean_over(r, "read_gibps", 5, 7.5);
  const double back = mean_over(r, "read_gibps", 9, 11.5);
  const double quarter = mean_over(r, "read_gibps", 13, 15.5);
  EXPECT_NEAR(healthy / bound, 1.0, 0.06);
  EXPECT_NEAR(one_cable / bound, 0.5, 0.03);  // one of two cables: half the aggregate
  EXPECT_NEAR(back / bound, 1.0, 0.06);
  EXPECT_NEAR(quarter / bound, 0.25, 0.02);  // factor 4
  // Capacity only: nothing beyond the link was cut off.
  const auto& rec = r["recovery"];
  for (const auto& e : rec["events"]) EXPECT_TRUE(e["osds"].empty()) << e.dump();
  EXPECT_EQ(rec["plans"].get<int>(), 0);
  EXPECT_EQ(rec["requests_resent"].get<int>(), 0);
  EXPECT_EQ(rec["events"][0]["cables"].get<int>(), 1);
}

TEST(FailureKinds, TheLastCableCutsOffTheStorageHostsBeyondIt) {
  // Three storage hosts per leaf: storage0-2 on leaf1, storage3-5 on leaf2 (OSDs 12..23),
  // two cables per uplink.
  nlohmann::json s = read_storm(nlohmann::json::parse(R"([
      {"at_s": 5, "kind": "link_down", "link": ["leaf2", "spine"]},
      {"at_s": 6, "kind": "link_down", "link": ["leaf2", "spine"]},
      {"at_s": 20, "kind": "link_up", "link": ["leaf2", "spine"]}])"));
  s["cluster"]["fabric"] = {{"hosts_per_leaf", 3}, {"uplinks_per_leaf", 2}};
  const auto r = run_json(s);
  ASSERT_FALSE(r.is_discarded());
  const auto& rec = r["recovery"];
  EXPECT_TRUE(rec["events"][0]["osds"].empty());  // the first of two cables: capacity only
  std::vector<int> beyond;
  for (int osd = 12; osd < 24; ++osd) beyond.push_back(osd);
  EXPECT_EQ(rec["events"][1]["osds"], beyond);
  // Unreachable like a partition: marked down after the grace, out, back at link_up.
  const double detect = rec["events"][1]["time_to_detect_s"].get<double>();
  EXPECT_GE(detect, 4.0);
  EXPECT_LE(detect, 5.01);
  EXPECT_NEAR(rec["events"][2]["marked_up_at_s"].get<double>(), 20.0, 0.01);
  EXPECT_GE(rec["events"][2]["time_to_recover_s"].get<double>(), 0);
  EXPECT_GT(rec["requests_resent"].get<int>(), 0);
  EXPECT_EQ(rec["objects_lost"].get<int>(), 0);  // unreachable, not lost
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
  EXPECT_TRUE(r["summary"]["epoch_complete"].get<bool>());
}

TEST(FailureKinds, DriveReplaceRefillsWhatTheFailedDriveHeld) {
  const auto events = nlohmann::json::parse(R"([
      {"at_s": 5, "kind": "drive_failure", "osd": 5},
      {"at_s": 30, "kind": "drive_replace", "osd": 5}])");
  // Never marked out: degraded until the new drive is backfilled.
  nlohmann::json noout = read_storm(events);
  noout["storage"]["rados"]["recovery"]["down_out_interval_s"] = 0;
  const auto r = run_json(noout);
  // Marked out: rebuilt elsewhere first, then moved back onto the new drive.
  const auto out = run_json(read_storm(events));
  ASSERT_FALSE(r.is_discarded());
  ASSERT_FALSE(out.is_discarded());
  const auto& rec = r["recovery"];
  const auto& replace = rec["events"][1];
  EXPECT_NEAR(replace["marked_up_at_s"].get<double>(), 30.0, 0.01);
  // Full redundancy only once the new drive holds osd.5's share again.
  EXPECT_NEAR(rec["redundancy_restored_at_s"].get<double>(),
              replace["recovered_at_s"].get<double>(), 1e-9);
  EXPECT_GT(replace["time_to_recover_s"].get<double>(), 0);
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
  EXPECT_EQ(rec["objects_lost"].get<int>(), 0);
  // The same id and weight: CRUSH gives the new drive exactly the PGs the old one had, so the
  // refill moves what the failure lost, the minimum.
  const auto& o = out["recovery"];
  EXPECT_EQ(rec["bytes_moved"], rec["bytes_minimum"]);
  EXPECT_EQ(rec["bytes_moved"], o["bytes_minimum"]);
  EXPECT_EQ(rec["pgs_moved"].get<int>() * 2, o["pgs_moved"].get<int>());
  // Marked out, the refill is a rebalance: twice the minimum moved, redundancy back long
  // before the replacement.
  EXPECT_EQ(o["bytes_moved"].get<uint64_t>(), 2 * o["bytes_minimum"].get<uint64_t>());
  EXPECT_LT(o["redundancy_restored_at_s"].get<double>(), 30.0);
}

TEST(FailureKinds, ADriveReplacedBeforeTheMonitorNoticedIsRefilledToo) {
  // No map change follows (the OSD never misses a heartbeat window): the replacement itself
  // plans the refill.
  nlohmann::json s = read_storm(nlohmann::json::parse(R"([
      {"at_s": 5, "kind": "drive_failure", "osd": 5},
      {"at_s": 6, "kind": "drive_replace", "osd": 5}])"));
  const auto r = run_json(s);
  ASSERT_FALSE(r.is_discarded());
  const auto& rec = r["recovery"];
  EXPECT_TRUE(rec["events"][0]["marked_down_at_s"].is_null());
  EXPECT_TRUE(rec["map_changes"].empty());
  EXPECT_GT(rec["bytes_moved"].get<uint64_t>(), 0u);
  EXPECT_EQ(rec["bytes_moved"], rec["bytes_minimum"]);
  EXPECT_FALSE(rec["events"][1]["recovered_at_s"].is_null());
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
}

// random_drive_failures: 24 drives at 2% AFR with the failure clock 3e6 times faster (2 draws
// in 20 s expected) beside an explicit crash. Seed 1 draws two drive failures, each replaced
// 20 s later; with 3 replicas a loss needs three drives down at once, so nothing is lost.
// The same seed gives the same report; --seed draws others.
// storage.rados.recovery.drive_afr feeds the durability estimate from the measured recovery
// (report recovery.durability) and nothing else: the same run at 1% and 5% detects and
// recovers alike, and with 3 replicas the chance of a loss grows about as the cube of the AFR.
TEST(FailureKinds, DriveAfrFeedsTheDurabilityEstimate) {
  nlohmann::json s =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/osd-failure-read-storm.json"));
  s.erase("expect");
  const auto base = run_json(s);
  s["storage"]["rados"]["recovery"]["drive_afr"] = 0.05;
  const auto afr5 = run_json(s);
  ASSERT_FALSE(base.is_discarded());
  ASSERT_FALSE(afr5.is_discarded());
  const auto& a = base["recovery"]["durability"];
  const auto& b = afr5["recovery"]["durability"];
  ASSERT_TRUE(a.is_object()) << base["recovery"].dump();
  ASSERT_TRUE(b.is_object()) << afr5["recovery"].dump();
  EXPECT_EQ(a["drive_afr"].get<double>(), 0.01);
  EXPECT_EQ(b["drive_afr"].get<double>(), 0.05);
  EXPECT_EQ(a["detect_hours"], b["detect_hours"]);
  EXPECT_EQ(a["recovery_hours"], b["recovery_hours"]);
  const double ratio =
      b["annual_loss_probability"].get<double>() / a["annual_loss_probability"].get<double>();
  EXPECT_GT(ratio, 50) << a.dump() << " " << b.dump();
  EXPECT_LT(ratio, 200) << a.dump() << " " << b.dump();
  EXPECT_LT(b["nines"].get<double>(), a["nines"].get<double>());
  // The rest of the report is the same run (its source file and its hash aside: each run writes
  // its own).
  nlohmann::json x = base, y = afr5;
  for (nlohmann::json* r : {&x, &y}) {
    (*r)["recovery"].erase("durability");
    (*r)["scenario"].erase("source");
    (*r)["scenario"].erase("sha256");
  }
  EXPECT_EQ(x, y);
}

TEST(FailureKinds, RandomDriveFailuresFromTheAfrAreDrawnFromTheSeed) {
  nlohmann::json s = read_storm(nlohmann::json::parse(R"([
      {"at_s": 2, "kind": "osd_crash", "osd": 0},
      {"kind": "random_drive_failures", "afr": 0.02, "from_s": 5, "to_s": 25,
       "time_scale": 3e6, "replace_after_s": 20},
      {"at_s": 8, "kind": "osd_restart", "osd": 0}])"));
  s["seed"] = 1;
  const auto a = run_json(s);
  const auto b = run_json(s);
  ASSERT_FALSE(a.is_discarded());
  ASSERT_FALSE(b.is_discarded());
  const auto& rec = a["recovery"];
  EXPECT_EQ(rec, b["recovery"]);  // deterministic for a seed
  std::map<int, double> failed;   // osd -> when its drive failed
  int replaced = 0;
  double last = 0;
  for (const auto& e : rec["events"]) {
    EXPECT_GE(e["at_s"].get<double>(), last);  // merged in time order
    last = e["at_s"].get<double>();
    const std::string kind = e["kind"];
    if (kind == "osd_crash" || kind == "osd_restart") {
      EXPECT_FALSE(e.contains("generated_by")) << e;
      continue;
    }
    EXPECT_EQ(e["generated_by"],
              nlohmann::json::parse(
                  R"({"kind": "random_drive_failures", "entry": "failures[1]", "seed": 1})"));
    const int osd = e["osds"][0];
    if (kind == "drive_failure") {
      EXPECT_GE(e["at_s"].get<double>(), 5.0);
      EXPECT_LT(e["at_s"].get<double>(), 25.0);
      EXPECT_FALSE(e["marked_down_at_s"].is_null());
      failed[osd] = e["at_s"];
    } else {
      ASSERT_EQ(kind, "drive_replace");
      ASSERT_TRUE(failed.count(osd));
      EXPECT_NEAR(e["at_s"].get<double>(), failed[osd] + 20, 1e-5);
      EXPECT_FALSE(e["recovered_at_s"].is_null());
      ++replaced;
    }
  }
  EXPECT_EQ(failed.size(), 2u);
  EXPECT_EQ(replaced, 2);
  EXPECT_EQ(rec["events"].size(), 6u);
  EXPECT_EQ(rec["random_drive_failures"][0]["drives_failed"].get<int>(), 2);
  EXPECT_EQ(rec["random_drive_failures"][0]["seed"].get<int>(), 1);
  EXPECT_EQ(rec["objects_lost"].get<int>(), 0);
  EXPECT_EQ(rec["degraded_pgs_at_end"].get<int>(), 0);
  EXPECT_FALSE(rec["redundancy_restored_at_s"].is_null());

  // --seed 5 overrides the scenario's: one drive, another time.
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << s.dump(2);
  auto r = testing::run_command(kGranary + " run " + dir + "/s.json --quiet --seed 5 --out " + dir +
                                "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto c = nlohmann::json::parse(testing::read_file(dir + "/r.json"));
  EXPECT_EQ(c["recovery"]["random_drive_failures"][0]["drives_failed"].get<int>(), 1);
  EXPECT_EQ(c["recovery"]["random_drive_failures"][0]["seed"].get<int>(), 5);
  EXPECT_NE(c["recovery"]["events"], rec["events"]);
  EXPECT_EQ(c["recovery"]["objects_lost"].get<int>(), 0);
}

// A checkpoint's report counts the drives its random failures failed (it counted the entries of
// the scenario as written, before the draws: 0).
TEST(FailureKinds, ACheckpointCountsTheDrivesItsRandomFailuresFailed) {
  nlohmann::json s =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/carry-data-checkpoint-3x.json"));
  s["failures"] = nlohmann::json::parse(R"([
      {"kind": "random_drive_failures", "afr": 0.02, "from_s": 0, "to_s": 20,
       "time_scale": 3e7, "replace_after_s": 5}])");
  s["storage"]["rados"]["recovery"] = {
      {"heartbeat_interval_s", 1}, {"heartbeat_grace_s", 4}, {"down_out_interval_s", 5}};
  s.erase("expect");
  s["seed"] = 1;
  const auto r = run_json(s);
  ASSERT_FALSE(r.is_discarded());
  int failed = 0;
  for (const auto& e : r["recovery"]["events"]) failed += e["kind"] == "drive_failure";
  EXPECT_GT(failed, 0);
  EXPECT_EQ(r["recovery"]["random_drive_failures"][0]["drives_failed"].get<int>(), failed);
}

}  // namespace
}  // namespace granary

// The calibration's fit (realmode/calibration.h) on made-up probe measurements, so that every
// figure it derives can be checked by hand: CPU per request from the queue-depth-16 probe, CPU
// per MiB from what the 1 MiB probe costs more, the drive's figures from the drive probe, and
// the two latencies closed by simulation (the simulator's p50 after the fit equals the
// measured one). `granary real calibrate` on a running cluster is tested in
// tests/cli/real_cli_test.cc.
#include "realmode/calibration.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/scenario_json.h"

namespace granary::realmode {
namespace {

using nlohmann::json;

json test_scenario() {
  return json::parse(R"({"granary": 1, "name": "calibration-fit", "seed": 3,
    "cluster": {
      "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 2,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 3, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 1},
                  "nic": {"profile": "connectx4lx-25g"}}},
    "storage": {"design": "rados", "protocol": "tcp",
                "rados": {"pg_num": 32, "replicas": 3, "object_size_mib": 1}},
    "workloads": [{"name": "w", "type": "block", "volume": {"size_gib": 0.03125},
                   "block_size_kib": 64, "queue_depth": 4}],
    "real": {"hosts": "loopback"}})");
}

json drive_probe() {
  return {{"profile",
           {{"read_gbytes_per_s", 1.5},
            {"write_gbytes_per_s", 2.5},
            {"read_kiops", 70.0},
            {"write_kiops", 80.0},
            {"read_latency_us", 60.0},
            {"write_latency_us", 110.0},
            {"queue_depth", 32}}}};
}

// A probe's run: `iops` over a 1 s window after a 0.2 s ramp (1.2 s of requests), its p50 and
// the CPU seconds of both ends.
ProbeRun run_of(const ClusterProbe& p, double iops, double p50_ms, double client_cpu_s,
                double osd_cpu_s) {
  const char* op = p.read_fraction > 0 ? "read" : "write";
  return ProbeRun{p,
                  {{"summary", {{"iops", iops}, {"measured_seconds", 1.0}, {"ramp_seconds", 0.2}}},
                   {"latency_ms", {{op, {{"p50", p50_ms}}}}}},
                  osd_cpu_s,
                  client_cpu_s};
}

std::vector<ProbeRun> made_up_runs(double read_p50_ms, double write_p50_ms) {
  const auto& p = cluster_probes();
  // 4k-qd16: 6,000 requests, 100 us of client and 150 us of OSD CPU each; 1m-qd4: 600
  // requests, 1,100 and 650 us each.
  return {run_of(p[0], 2000, read_p50_ms, 1.0, 1.0), run_of(p[1], 5000, 2.0, 0.6, 0.9),
          run_of(p[2], 500, 6.0, 0.66, 0.39), run_of(p[3], 800, write_p50_ms, 0.5, 0.5)};
}

TEST(Calibration, TheFitTakesCpuPerRequestAndPerMibAndClosesBothLatencies) {
  const json scenario = test_scenario();
  Result<json> fit =
      fit_calibration(scenario, "calibration-fit.json", drive_probe(), made_up_runs(0.6, 1.5));
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  const json& protocol = (*fit)["protocol"];
  EXPECT_EQ(protocol["profile"], "tcp");
  EXPECT_DOUBLE_EQ(protocol["client_cpu_us_per_op"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(protocol["server_cpu_us_per_op"].get<double>(), 150);
  // ((1100 - 100) + (650 - 150)) / 2 per (1 MiB - 4 KiB), to 4 digits.
  EXPECT_DOUBLE_EQ(protocol["cpu_us_per_mib"].get<double>(), 752.9);
  EXPECT_EQ(protocol["zero_copy"], false);
  EXPECT_GT(protocol["message_latency_us"].get<double>(), 0);
  const json& drive = (*fit)["drive"];
  EXPECT_EQ(drive["profile"], "samsung-pm9a3-7.68tb");
  EXPECT_EQ(drive["count"], 1);
  EXPECT_DOUBLE_EQ(drive["read_kiops"].get<double>(), 70);
  EXPECT_DOUBLE_EQ(drive["read_latency_us"].get<double>(), 60);
  EXPECT_EQ(drive["queue_depth"], 32);
  EXPECT_GT(drive["write_latency_us"].get<double>(), 110);  // the store's write costs more
  // Both latencies closed: the simulator, calibrated, gives the measured p50 (to the 4 digits
  // the figures are rounded to).
  for (const char* op : {"read", "write"}) {
    const json& f = (*fit)["latency_fit"][op];
    EXPECT_NEAR(f["sim_p50_ms"].get<double>(), f["real_p50_ms"].get<double>(),
                0.01 * f["real_p50_ms"].get<double>())
        << f.dump();
    EXPECT_LT(f["sim_p50_ms_without"].get<double>(), f["real_p50_ms"].get<double>());
  }
  // The calibrated scenario is a valid scenario carrying both override objects, its workload
  // the user's.
  const json& calibrated = (*fit)["calibrated_scenario"];
  EXPECT_EQ(calibrated["cluster"]["storage"]["drive"], drive);
  EXPECT_EQ(calibrated["storage"]["protocol"], protocol);
  EXPECT_EQ(calibrated["workloads"], scenario["workloads"]);
  Result<models::Scenario> parsed =
      models::parse_scenario(calibrated.dump(), "calibration-fit.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_DOUBLE_EQ(parsed->storage.protocol.client_cpu_us_per_op, 100);
  EXPECT_DOUBLE_EQ(parsed->cluster.storage.drive.read_kiops, 70);
  ASSERT_EQ((*fit)["probes"].size(), 4u);
  EXPECT_DOUBLE_EQ((*fit)["probes"][1]["requests"].get<double>(), 6000);
}

// Measured latencies below what the simulator's other costs already make: no negative
// latency, the drive's probed write latency kept, and the residual left in the record.
TEST(Calibration, AMeasurementFasterThanTheModelLeavesTheLatenciesAtTheirFloor) {
  Result<json> fit = fit_calibration(test_scenario(), "calibration-fit.json", drive_probe(),
                                     made_up_runs(0.01, 0.01));
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_EQ((*fit)["protocol"]["message_latency_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ((*fit)["drive"]["write_latency_us"].get<double>(), 110);
  EXPECT_GT((*fit)["latency_fit"]["read"]["sim_p50_ms"].get<double>(), 0.01);
}

TEST(Calibration, AMissingOrEmptyProbeIsRefusedByName) {
  std::vector<ProbeRun> runs = made_up_runs(0.6, 1.5);
  runs.pop_back();
  Result<json> missing = fit_calibration(test_scenario(), "s.json", drive_probe(), runs);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("4k-qd1-write"), std::string::npos);
  runs = made_up_runs(0.6, 1.5);
  runs[2].report["summary"]["iops"] = 0;
  Result<json> empty = fit_calibration(test_scenario(), "s.json", drive_probe(), runs);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("1m-qd4 completed no request"), std::string::npos)
      << empty.status().message();
}

TEST(Calibration, AProbeScenarioIsOneBlockWorkloadOnOneNodeAndNothingElse) {
  json s = test_scenario();
  s["failures"] = json::array({{{"at_s", 1}, {"kind", "osd_crash"}, {"osd", 0}}});
  s["expect"] = json::array({{{"metric", "summary.iops"}, {"at_least", 1}}});
  const json p = probe_scenario(s, cluster_probes()[2], 2.0);
  EXPECT_FALSE(p.contains("failures"));
  EXPECT_FALSE(p.contains("expect"));
  ASSERT_EQ(p["workloads"].size(), 1u);
  const json& w = p["workloads"][0];
  EXPECT_EQ(w["type"], "block");
  EXPECT_EQ(w["nodes"], 1);
  EXPECT_EQ(w["block_size_kib"], 1024);
  EXPECT_EQ(w["queue_depth"], 4);
  EXPECT_DOUBLE_EQ(w["duration_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(w["ramp_s"].get<double>(), 0.4);
  EXPECT_TRUE(models::parse_scenario(p.dump(), "p.json").ok());
}

}  // namespace
}  // namespace granary::realmode

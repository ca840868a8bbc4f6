// Validation of the simulator against known answers. Each test runs one simulation in its own
// process (gtest_discover_tests), as SimGrid requires.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "models/scenario_json.h"
#include "models/topology.h"
#include "sim/drive_model.h"
#include "sim/runner.h"

namespace granary::sim {
namespace {

// A full-epoch storm's epoch read rate over its binding ceiling, printed with the ceiling.
double epoch_over_bound(const char* label, const nlohmann::json& r) {
  const auto& b = r["bounds"];
  const double epoch = r["summary"]["read_gibps_epoch"].get<double>();
  const double bound = b["read_bound_gibps"].get<double>();
  std::printf("%s: epoch %.4f GiB/s, bound %.4f GiB/s (%s: %s), ratio %.4f\n", label, epoch, bound,
              b["binding"].get<std::string>().c_str(), b["bottleneck"].get<std::string>().c_str(),
              epoch / bound);
  return epoch / bound;
}

models::Scenario scenario_from(const std::string& json) {
  auto s = models::parse_scenario(json, "test.json");
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return *s;
}

// A network-bound storm (clients on 25 Gb/s NICs against servers on 200 Gb/s, next to no
// compute): the steady read rate equals the max-flow bound. (A bound set by the servers would
// also carry CRUSH's imbalance between them, which the bound ignores.)
TEST(SimValidation, BandwidthBoundStormIsWithinThreePercentOfMaxFlow) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "bw", "seed": 3,
    "cluster": {
      "clients": {"count": 4, "accelerator": "a100", "accelerators_per_node": 4,
                  "nic": {"profile": "connectx4lx-25g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "rados", "protocol": "rdma", "rados": {"pg_num": 256, "replicas": 2}},
    "workloads": [{"name": "bw", "type": "training_read", "sample_size_mib": {"mean": 32, "stddev": 0},
                   "samples_per_file": 1, "files": 4000, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": "request"}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double bound = (*r)["bounds"]["max_flow_gibps"].get<double>();
  const double steady = (*r)["summary"]["read_gibps_steady"].get<double>();
  std::printf(
      "bandwidth-bound storm: steady %.3f GiB/s, max-flow bound %.3f GiB/s (%s), ratio %.4f\n",
      steady, bound, (*r)["bounds"]["bottleneck"].get<std::string>().c_str(), steady / bound);
  // (The client leaf's uplink is sized to its hosts' NICs, so the cut reported may be either.)
  EXPECT_NEAR(steady / bound, 1.0, 0.03);
  EXPECT_GT((*r)["utilization"]["kinds"]["client_nic"]["mean"].get<double>(), 0.9);
}

// One reader, one object in flight, nothing else on the cluster: every file takes the sum of
// its objects' round trips, computed here from the topology's latencies and the slowest link.
TEST(SimValidation, SingleReaderMatchesItsClosedForm) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "lat", "seed": 5,
    "cluster": {
      "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 1,
                  "nic": {"profile": "connectx6-100g"}},
      "storage": {"count": 1, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 4, "uplinks_per_leaf": 0, "link_latency_us": 2}},
    "storage": {"design": "rados", "protocol": "rdma",
                "rados": {"pg_num": 64, "replicas": 1, "inflight_objects": 1}},
    "workloads": [{"name": "lat", "type": "training_read", "sample_size_mib": {"mean": 8, "stddev": 0},
                   "samples_per_file": 1, "files": 40, "batch_size": 1, "read_threads": 1,
                   "prefetch_batches": 1, "compute_s_per_step": 0.000001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false,
                   "carry_data": false}})");
  // (Size-only: the closed form is the streamed read, the drive's bytes pipelined onto the
  // network; a run carrying data, automatic for a cluster this small, reads each object into
  // memory to check its crc32c before sending it: docs/models.md, "Real data and modelled
  // cost".)
  // The closed form: per 4 MiB object, request latency (sink -> storage host) + client and
  // server CPU (per request, and per byte on each end: rdma's 200 us per MiB, not zero-copy)
  // + data latency (drive -> sink) + size over the slowest link of that path.
  auto topo = models::build_topology(s.cluster, 0);
  ASSERT_TRUE(topo.ok());
  const auto& t = *topo;
  const int sink = t.client_sinks[0], server = t.storage[0], drive = t.drives[0];
  // Path between two nodes of the tree (links in order).
  std::function<bool(int, int, int, std::vector<int>&)> path = [&](int at, int to, int from_link,
                                                                   std::vector<int>& out) {
    if (at == to) return true;
    for (size_t i = 0; i < t.links.size(); ++i) {
      if (static_cast<int>(i) == from_link) continue;
      const int next = t.links[i].a == at ? t.links[i].b : t.links[i].b == at ? t.links[i].a : -1;
      if (next < 0) continue;
      out.push_back(static_cast<int>(i));
      if (path(next, to, static_cast<int>(i), out)) return true;
      out.pop_back();
    }
    return false;
  };
  std::vector<int> req, data;
  ASSERT_TRUE(path(sink, server, -1, req));
  ASSERT_TRUE(path(drive, sink, -1, data));
  const double msg_latency_s = s.storage.protocol.message_latency_us * 1e-6;  // on the client NIC
  auto latency = [&](const std::vector<int>& links) {
    double l = 0;
    for (int i : links)
      l += t.links[i].latency_s +
           (t.links[i].role == models::LinkRole::kClientNic ? msg_latency_s : 0);
    return l;
  };
  double slowest = 1e30;
  for (int i : data) {
    const auto& l = t.links[i];
    // The data direction: a -> b is forward except on client NIC links (a = client).
    double cap =
        l.role == models::LinkRole::kClientNic ? l.reverse_bytes_per_s : l.forward_bytes_per_s;
    if (l.role != models::LinkRole::kDrive && l.role != models::LinkRole::kClientMemory) {
      cap *= s.storage.protocol.efficiency;
    }
    slowest = std::min(slowest, cap);
  }
  const double object = 4.0 * (1 << 20);
  const double per_byte_s = s.storage.protocol.cpu_us_per_mib * 1e-6 / (1 << 20);
  ASSERT_GT(per_byte_s, 0);
  const double per_object = latency(req) + s.storage.protocol.client_cpu_us_per_op * 1e-6 +
                            s.storage.protocol.server_cpu_us_per_op * 1e-6 +
                            2 * object * per_byte_s + latency(data) + object / slowest;
  const double expected_ms = 2 * per_object * 1e3;  // 8 MiB files: two objects, one at a time

  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double p50 = (*r)["latency_ms"]["read"]["p50"].get<double>();
  std::printf("single reader: file read p50 %.6f ms, closed form %.6f ms\n", p50, expected_ms);
  EXPECT_NEAR(p50 / expected_ms, 1.0, 0.005);
  EXPECT_NEAR((*r)["latency_ms"]["read"]["p99"].get<double>() / expected_ms, 1.0, 0.005);
}

// Storage CPU: one server of 2 cores behind a messenger that spends 2,000 us per MiB it moves
// (tcp's copies made costly) and 300 us per request: 32 MiB files of 8 object reads cost it
// 8 x 300 us + 32 x 2,000 us = 66.4 ms each, so 2 cores read 2 / 66.4 ms = 30.1 files per
// second, far below its drives, NIC and the clients.
TEST(SimValidation, CpuBoundStormRunsAtTheStorageServersCpu) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "cpu", "seed": 7,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 1, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                  "nic": {"profile": "connectx6-200g", "count": 1}, "cpu_cores": 2},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "rados",
                "protocol": {"profile": "tcp", "server_cpu_us_per_op": 300, "cpu_us_per_mib": 2000},
                "rados": {"pg_num": 64, "replicas": 1}},
    "workloads": [{"name": "cpu", "type": "training_read", "sample_size_mib": {"mean": 32, "stddev": 0},
                   "samples_per_file": 1, "files": 1200, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& b = (*r)["bounds"];
  const double ratio = epoch_over_bound("CPU-bound storm", *r);
  EXPECT_EQ(b["binding"], "storage CPU") << b.dump(1);
  const double per_file_s = 8 * 300e-6 + 32 * 2000e-6;
  EXPECT_NEAR(b["ceilings"][0]["files_per_s"].get<double>(), 2 / per_file_s, 0.005);  // 2 decimals
  EXPECT_NEAR(ratio, 1.0, 0.03);
}

// Many readers of tiny files on a parallel file system whose metadata server handles 2,000
// operations per second: every file costs an open and a close, so 1,000 files per second.
TEST(SimValidation, SmallFileStormRunsAtTheMetadataServersCapacity) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "md", "seed": 9,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "pfs", "protocol": "lnet-rdma",
                "pfs": {"mds": {"count": 1, "ops_per_s": 2000, "latency_us": 500}, "stripe_size_mib": 1,
                        "stripe_count": 1}},
    "workloads": [{"name": "md", "type": "training_read", "sample_size_mib": {"mean": 0.0625, "stddev": 0},
                   "samples_per_file": 1, "files": 3200, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.0001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double files = (*r)["summary"]["samples_read"].get<double>();
  const double seconds = (*r)["summary"]["epoch_seconds"].get<double>();
  std::printf(
      "small-file storm: %.0f files in %.4f s = %.1f files/s (MDS capacity 2000 ops/s = 1000 "
      "files/s)\n",
      files, seconds, files / seconds);
  EXPECT_EQ(files, 3200);
  EXPECT_NEAR(files / seconds / 1000.0, 1.0, 0.03);
  // The bounds name the metadata servers, at their closed form.
  const auto& b = (*r)["bounds"];
  EXPECT_EQ(b["binding"], "metadata servers") << b.dump(1);
  EXPECT_NEAR(b["ceilings"][0]["files_per_s"].get<double>(), 1000.0, 1e-6);
}

// The same storm with the MDS specified per operation, as mdtest reports them: 3,000 opens/s
// and 6,000 closes/s give 1 / (1/3000 + 1/6000) = 2,000 file reads per second.
TEST(SimValidation, MetadataServerWithPerOperationRatesServesItsFileRate) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "md", "seed": 9,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "pfs", "protocol": "lnet-rdma",
                "pfs": {"mds": {"count": 1, "open_ops_per_s": 3000, "close_ops_per_s": 6000,
                                "latency_us": 500},
                        "stripe_size_mib": 1, "stripe_count": 1}},
    "workloads": [{"name": "md", "type": "training_read", "sample_size_mib": {"mean": 0.0625, "stddev": 0},
                   "samples_per_file": 1, "files": 6400, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.0001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double files = (*r)["summary"]["samples_read"].get<double>();
  const double seconds = (*r)["summary"]["epoch_seconds"].get<double>();
  const auto& b = (*r)["bounds"];
  std::printf("per-operation MDS: %.1f files/s; bound %s: %s\n", files / seconds,
              b["binding"].get<std::string>().c_str(), b["bottleneck"].get<std::string>().c_str());
  EXPECT_EQ(b["binding"], "metadata servers");
  EXPECT_NEAR(b["ceilings"][0]["files_per_s"].get<double>(), 2000.0, 1e-6);
  EXPECT_NEAR(files / seconds / 2000.0, 1.0, 0.03);
}

// Drive IOPS: 64 KiB objects from drives rated at 2,000 random reads per second (flash
// firmware throttled to make the case), 8 drives: 16,000 files per second at most, every
// other ceiling far above it.
TEST(SimValidation, IopsBoundStormRunsAtTheDrivesRatedIops) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "iops", "seed": 4,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4,
                                        "read_kiops": 2, "read_latency_us": 100},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "rados", "protocol": "rdma", "rados": {"pg_num": 256, "replicas": 2}},
    "workloads": [{"name": "iops", "type": "training_read", "sample_size_mib": {"mean": 0.0625, "stddev": 0},
                   "samples_per_file": 1, "files": 16000, "batch_size": 1, "read_threads": 8,
                   "compute_s_per_step": 0.00001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& b = (*r)["bounds"];
  const double ratio = epoch_over_bound("IOPS-bound storm", *r);
  // CRUSH gives the drives unequal shares of the files: the busiest drive, at its rated IOPS,
  // sets the rate; with even shares it would be 16,000 files per second.
  EXPECT_EQ(b["binding"], "drive IOPS as placed");
  bool even_listed = false;
  for (const auto& c : b["ceilings"]) {
    if (c["resource"] == "drive IOPS") {
      even_listed = true;
      EXPECT_NEAR(c["files_per_s"].get<double>(), 16000.0, 1e-6);
    }
  }
  EXPECT_TRUE(even_listed);
  EXPECT_NEAR(ratio, 1.0, 0.03);
}

// Drive bandwidth: large files from 8 drives reading 1 GB/s each, behind 200 Gb/s NICs: the
// max-flow's cut is the drives, 8 GB/s.
TEST(SimValidation, DriveBoundStormRunsAtTheDrivesBandwidth) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "drives", "seed": 6,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4,
                                        "read_gbytes_per_s": 1.0},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "rados", "protocol": "rdma", "rados": {"pg_num": 256, "replicas": 2}},
    "workloads": [{"name": "drives", "type": "training_read", "sample_size_mib": {"mean": 32, "stddev": 0},
                   "samples_per_file": 1, "files": 4000, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& b = (*r)["bounds"];
  const double ratio = epoch_over_bound("drive-bound storm", *r);
  // The max-flow's cut is the drives (an even spread); CRUSH's placement loads the busiest
  // drive more, and it sets the rate.
  EXPECT_EQ(b["binding"], "drives as placed");
  EXPECT_EQ(b["cut"][0], "8 drives x 1.00 GB/s = 8.00 GB/s");
  EXPECT_NEAR(ratio, 1.0, 0.03);
}

// Design local: every node reads its own 2 drives of 1.5 GB/s; nothing crosses the network.
// The closed form is nodes x 2 x 1.5 GB/s; in a slice each simulated node keeps its own
// drives, so the answer per node is the same.
std::string local_storm(int nodes, const std::string& fidelity) {
  return R"({
    "granary": 1, "name": "local", "seed": 12,
    "cluster": {
      "clients": {"count": )" +
         std::to_string(nodes) + R"(, "accelerator": "a100", "accelerators_per_node": 4,
                  "nic": {"profile": "connectx6-100g"}},
      "storage": {"drive": {"profile": "samsung-pm9a3-7.68tb", "count": 2,
                            "read_gbytes_per_s": 1.5}}},
    "storage": {"design": "local", "local": {"io_kib": 1024, "inflight_ios": 4}},
    "workloads": [{"name": "local", "type": "training_read",
                   "sample_size_mib": {"mean": 32, "stddev": 0}, "samples_per_file": 1,
                   "files": 2000, "batch_size": 1, "read_threads": 2,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": ")" +
         fidelity + R"(", "representative_nodes": 2}})";
}

void check_local_storm(int nodes, const std::string& fidelity, int slice_factor) {
  const models::Scenario s = scenario_from(local_storm(nodes, fidelity));
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)["fidelity"]["slice_factor"].get<int>(), slice_factor) << (*r)["fidelity"].dump();
  const double closed_gibps = nodes * 2 * 1.5e9 / (1 << 30);
  const double steady = (*r)["summary"]["read_gibps_steady"].get<double>();
  std::printf(
      "local drive-bound storm (%d nodes, %s, slice 1/%d): steady %.4f GiB/s, closed form "
      "%d x 2 x 1.5 GB/s = %.4f GiB/s, ratio %.4f\n",
      nodes, fidelity.c_str(), slice_factor, steady, nodes, closed_gibps, steady / closed_gibps);
  EXPECT_NEAR(steady / closed_gibps, 1.0, 0.03);
  const auto& b = (*r)["bounds"];
  EXPECT_EQ(b["binding"], "data path") << b.dump(1);
  EXPECT_NEAR(b["read_bound_gibps"].get<double>() / closed_gibps, 1.0, 1e-6);
  EXPECT_EQ(b["cut"][0], std::to_string(nodes * 2) +
                             " drives x 1.50 GB/s = " + (nodes == 2 ? "6.00" : "24.0") + " GB/s");
  // No byte crosses a NIC.
  EXPECT_EQ((*r)["utilization"]["kinds"]["client_nic"]["mean"].get<double>(), 0.0)
      << (*r)["utilization"].dump();
  // 2,000 files of 32 MiB against nodes of 1,024 GiB each (the default): far from MLPerf's 5x.
  EXPECT_NEAR((*r)["summary"]["dataset_over_client_memory"].get<double>(),
              2000.0 * 32 / 1024 / (1024.0 * nodes), 1e-6);
  EXPECT_FALSE((*r)["summary"]["page_cache_rule_met"].get<bool>());
}

TEST(SimValidation, LocalDriveBoundStormRunsAtItsDrivesBandwidth) {
  check_local_storm(2, "request", 1);
}

TEST(SimValidation, LocalDriveBoundStormInASliceKeepsEachNodesDrives) {
  check_local_storm(8, "slice", 4);
}

// One NFS mount per client delivering at most 2 GB/s (one TCP connection): two clients read
// 4 GB/s, far below their 200 Gb/s NICs; the cut names the mounts.
TEST(SimValidation, MountBoundNfsStormRunsAtTheMountsRate) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "mount", "seed": 8,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "nfs", "protocol": "nfs-tcp", "nfs": {"mount_gbytes_per_s": 2}},
    "workloads": [{"name": "mount", "type": "training_read", "sample_size_mib": {"mean": 16, "stddev": 0},
                   "samples_per_file": 1, "files": 640, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& b = (*r)["bounds"];
  const double ratio = epoch_over_bound("mount-bound NFS storm", *r);
  EXPECT_EQ(b["binding"], "data path");
  EXPECT_EQ(b["bottleneck"], "2 client NFS mounts x 2.00 GB/s = 4.00 GB/s");
  EXPECT_NEAR(b["read_bound_gibps"].get<double>(), 4e9 / std::ldexp(1.0, 30), 1e-6);
  EXPECT_NEAR(ratio, 1.0, 0.03);
}

// Two appliances whose controllers move 3 GB/s each, below their 25 GB/s NICs and 4 drives:
// files striped over every OST load them evenly, and the storm runs at 6 GB/s.
TEST(SimValidation, ControllerBoundStormRunsAtTheServersInternalLimit) {
  const models::Scenario s = scenario_from(R"({
    "granary": 1, "name": "controller", "seed": 2,
    "cluster": {
      "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 2, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g", "count": 1}, "server_gbytes_per_s": 3},
      "fabric": {"hosts_per_leaf": 8, "uplinks_per_leaf": 0}},
    "storage": {"design": "pfs", "protocol": "lnet-rdma",
                "pfs": {"stripe_size_mib": 1, "stripe_count": -1}},
    "workloads": [{"name": "controller", "type": "training_read", "sample_size_mib": {"mean": 16, "stddev": 0},
                   "samples_per_file": 1, "files": 1200, "batch_size": 1, "read_threads": 4,
                   "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": "request", "stop_at_steady_state": false}})");
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const auto& b = (*r)["bounds"];
  const double ratio = epoch_over_bound("controller-bound storm", *r);
  EXPECT_EQ(b["cut"][0], "2 storage servers' internal limits x 3.00 GB/s = 6.00 GB/s");
  EXPECT_NEAR(b["read_bound_gibps"].get<double>(), 6e9 / std::ldexp(1.0, 30), 1e-6);
  EXPECT_NEAR(ratio, 1.0, 0.03);
}

// HDD-bound read storms on an NFS filer head with 8 hard disks: every reader keeps 8 reads of
// 1 MiB (rsize) in flight, and the head hands each read to the next free drive worker, so the
// requests in flight spread evenly over the disks: every disk has q = readers x 8 / 8 queued
// and the storm runs at the drives' own equation, drives x S / (t_pos(q) + S / B)
// (sim/drive_model.h), far below the network (100 Gb/s client NICs, a 200 Gb/s head).
struct HddStorm {
  int nodes = 12;
  int accelerators_per_node = 1;
  std::string drive = R"({"profile": "seagate-exos-x20-20tb", "count": 8})";
  std::string fidelity = "request";
  int representative_nodes = 4;
};

std::string hdd_storm(const HddStorm& h) {
  return R"({
    "granary": 1, "name": "hdd", "seed": 11,
    "cluster": {
      "clients": {"count": )" +
         std::to_string(h.nodes) + R"(, "accelerator": "a100", "accelerators_per_node": )" +
         std::to_string(h.accelerators_per_node) + R"(,
                  "nic": {"profile": "connectx6-100g"}},
      "storage": {"count": 1, "drive": )" +
         h.drive + R"(, "nic": {"profile": "connectx6-200g", "count": 1}},
      "fabric": {"hosts_per_leaf": 16, "uplinks_per_leaf": 0}},
    "storage": {"design": "nfs", "protocol": "nfs-rdma",
                "nfs": {"rsize_kib": 1024, "inflight_rpcs": 8}},
    "workloads": [{"name": "hdd", "type": "training_read",
                   "sample_size_mib": {"mean": 64, "stddev": 0}, "samples_per_file": 1,
                   "files": )" +
         std::to_string(h.nodes * h.accelerators_per_node * 20) + R"(, "batch_size": 1,
                   "read_threads": 1, "compute_s_per_step": 0.001}],
    "simulation": {"fidelity": ")" +
         h.fidelity + R"(", "representative_nodes": )" + std::to_string(h.representative_nodes) +
         "}}";
}

void check_hdd_storm(const HddStorm& h, int slice_factor) {
  const models::Scenario s = scenario_from(hdd_storm(h));
  const DriveTiming t = DriveTiming::from_profile(s.cluster.storage.drive);
  const double bytes = 1 << 20;
  const double q = h.nodes * h.accelerators_per_node * 8.0 / 8;
  const double closed_gibps =
      8 * bytes / (t.head.positioning_s(q, false) + bytes / t.head.read_bytes_per_s) / (1 << 30);
  auto r = run_scenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)["fidelity"]["slice_factor"].get<int>(), slice_factor) << (*r)["fidelity"].dump();
  const double steady = (*r)["summary"]["read_gibps_steady"].get<double>();
  std::printf(
      "hdd-bound storm (%s, slice 1/%d): steady %.4f GiB/s, closed form 8 x 1 MiB / (t_pos(%g) "
      "+ 1 MiB / B) = %.4f GiB/s (t_pos = %.3f ms), ratio %.4f; bottleneck %s\n",
      h.fidelity.c_str(), slice_factor, steady, q, closed_gibps,
      t.head.positioning_s(q, false) * 1e3, steady / closed_gibps,
      (*r)["bounds"]["bottleneck"].get<std::string>().c_str());
  EXPECT_NEAR(steady / closed_gibps, 1.0, 0.03);
  // The bounds name the disks, not the network, at the same closed form (the max-flow's cut is
  // the drives too, but at their media rate).
  EXPECT_EQ((*r)["bounds"]["binding"], "hard disks") << (*r)["bounds"].dump(1);
  EXPECT_NEAR((*r)["bounds"]["read_bound_gibps"].get<double>() / closed_gibps, 1.0, 1e-4);
  EXPECT_NE((*r)["bounds"]["cut"][0].get<std::string>().find("drives"), std::string::npos);
  EXPECT_LT((*r)["utilization"]["kinds"]["storage_nic"]["mean"].get<double>(), 0.2);
}

// The catalog's Exos X20 at q = 12: on the interpolated part of its positioning curve (QD1
// 12.4 ms, rated QD16).
TEST(SimValidation, HddBoundStormFollowsTheDrivesEquation) {
  check_hdd_storm({}, 1);
}

// A slice of 36 readers (9 nodes x 4) against disks rated at a deeper queue (the Exos with 250
// IOPS at QD64: t_pos 12.4 ms at QD1, 4.0 ms at QD64), so that the full cluster's q = 36 lies
// on the interpolated curve: in the slice (k = 3) each disk holds 12 requests at a third of
// its speed and must position as at 36 (at 12 the answer would be 11% lower).
HddStorm deep_queue_storm(const std::string& fidelity) {
  HddStorm h;
  h.nodes = 9;
  h.accelerators_per_node = 4;
  h.drive = R"({"profile": "seagate-exos-x20-20tb", "count": 8, "read_kiops": 0.25,
                "queue_depth": 64})";
  h.fidelity = fidelity;
  h.representative_nodes = 3;
  return h;
}

TEST(SimValidation, HddBoundStormAtDepthFollowsTheDrivesEquation) {
  check_hdd_storm(deep_queue_storm("request"), 1);
}

TEST(SimValidation, HddBoundStormInASliceFollowsTheDrivesEquation) {
  check_hdd_storm(deep_queue_storm("slice"), 3);
}

}  // namespace
}  // namespace granary::sim

// granary real up|run|verify|down end to end, as a user runs it: a cluster of three storage
// hosts (granary-osd each), a monitor host and a client host, in network namespaces on a bridge
// with tc tbf shaping when this runs as root with `ip netns`, else on loopback (the test says
// which). A small unet3d read storm on a 3x pool through a failure timeline injected for real
// (osd.1's drive fails: the daemon SIGKILLed, its drive file gone; host 2 cut off, by its link
// or, on loopback, SIGSTOP, and healed; host 0's link shaped 4x slower; osd.1 on a new drive,
// backfilled), and a checkpoint on an erasure-coded 2+1 pool with osd.1 killed (SIGKILL) while
// it writes: every read compared byte for byte, the scenario's expectations hold, `verify`
// reads everything back (the checkpoint's with osd.1 still down: decoded), `down` leaves no
// process, namespace or folder. Two OSDs per server through a slow drive, a server down and a
// random drive failure. And the refusals: a scenario real mode cannot run, `run` with no
// cluster up, `up` twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "realmode/launcher.h"
#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

// Whether this process may make what `real.hosts: "namespaces"` needs: root, a network
// namespace, a bridge, a veth pair into the namespace, tc's tbf on it.
bool namespaces_available() {
  if (geteuid() != 0) return false;
  const std::string p = "grpr" + std::to_string(getpid() % 100000);
  const bool ok =
      testing::run_command("ip netns add " + p + " && ip link add " + p + "b type bridge && " +
                           "ip link add " + p + "v type veth peer name eth0 netns " + p +
                           " && tc qdisc add dev " + p +
                           "v root tbf rate 1gbit burst 256kb latency 10ms")
          .exit_code == 0;
  testing::run_command("ip link delete " + p + "v; ip link delete " + p + "b; ip netns delete " +
                       p);
  return ok;
}

// The command lines of the running granary daemons and bench processes that name `what`
// (from /proc: no procps needed).
std::string processes_naming(const std::string& what) {
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("granary-") != std::string::npos && cmdline.find(what) != std::string::npos) {
      found += pid + ": " + cmdline + "\n";
    }
  }
  return found;
}

// A scenario of three storage hosts (one OSD each), a client host with two accelerators and a
// monitor: `pool` is the rados section's redundancy, `failures` the timeline.
std::string scenario(
    const std::string& name, const std::string& dir, const std::string& hosts,
    const std::string& workload, const std::string& expect,
    const std::string& pool = R"("replicas": 3)",
    const std::string& failures = R"({"at_s": 0.5, "kind": "osd_crash", "osd": 1})") {
  return R"({"granary": 1, "name": ")" + name + R"(", "seed": 11,
  "cluster": {
    "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 2,
                "nic": {"profile": "connectx6-200g"}},
    "storage": {"count": 3, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 1},
                "nic": {"profile": "connectx4lx-25g"}}},
  "storage": {"design": "rados", "rados": {"pg_num": 32, )" +
         pool + R"(, "object_size_mib": 1,
    "recovery": {"heartbeat_interval_s": 0.5, "heartbeat_grace_s": 1.5, "down_out_interval_s": 0}}},
  "workloads": [)" +
         workload + R"(],
  "failures": [)" +
         failures + R"(],
  "real": {"hosts": ")" +
         hosts + R"(", "drive_mib": 96, "dir": ")" + dir + R"("})" +
         (expect.empty() ? "" : R"(, "expect": [)" + expect + "]") + "}";
}

// `text` (a scenario() scenario) with its storage section a pfs of `pfs` (the storage.pfs
// object) in place of the rados pool.
std::string as_pfs(std::string text, const std::string& pfs) {
  const size_t from = text.find(R"("storage": {"design")"), to = text.find(R"("workloads")");
  text.replace(from, to - from, R"("storage": {"design": "pfs", "pfs": )" + pfs + "},\n  ");
  return text;
}

// A small unet3d read storm (24 files of about 256 KiB, 2 epochs on 2 accelerators: 48 reads),
// and the expectations that every read was compared and none differed.
const char* const kSmallStorm = R"({"name": "unet3d-small", "mlperf": "unet3d", "files": 24,
  "epochs": 2, "batch_size": 2, "sample_size_mib": {"mean": 0.25, "stddev": 0.05},
  "compute_s_per_step": 0.1})";
const char* const kEveryReadVerified = R"({"metric": "carry_data.mismatches", "equals": 0},
  {"metric": "carry_data.reads_verified", "equals": 48})";

class RealCli : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = testing::make_temp_dir();
    hosts_ = namespaces_available() ? "namespaces" : "loopback";
    std::printf(
        "granary real on %s%s\n", hosts_.c_str(),
        hosts_ == "loopback" ? " (no network namespaces here: not root, or no ip netns)" : "");
  }
  void TearDown() override {
    for (const std::string& s : made_) granary("real down " + s);
    std::filesystem::remove_all(tmp_);
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = tmp_ + "/" + name;
    std::ofstream(path) << text;
    made_.push_back(path);
    return path;
  }
  // up, run (the report), verify, down: each must succeed.
  // `after_run`, when given, looks at the cluster's folder before verify and down.
  nlohmann::json up_run_verify_down(const std::string& path, const std::string& dir, uint64_t files,
                                    const std::function<void()>& after_run = nullptr) {
    auto up = granary("real up " + path);
    EXPECT_EQ(up.exit_code, 0) << up.err;
    if (up.exit_code != 0) return {};
    EXPECT_EQ(granary("real up " + path).exit_code, 2) << "a second up is refused";
    auto run = granary("real run " + path);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << run.out << run.err;
    if (after_run) after_run();
    auto verify = granary("real verify " + path);
    EXPECT_EQ(verify.exit_code, 0) << verify.err;
    const nlohmann::json v = nlohmann::json::parse(verify.out, nullptr, false);
    EXPECT_EQ(v["carry_data"]["reads_verified"], files) << verify.out;
    EXPECT_EQ(v["carry_data"]["mismatches"], 0);
    // This cluster's namespaces (another test's may be up beside it).
    std::ifstream state_file(dir + "/state.json");
    const nlohmann::json state = nlohmann::json::parse(state_file, nullptr, false);
    EXPECT_EQ(state.value("netns", nlohmann::json::array()).size(),
              hosts_ == "namespaces" && !state.value("ssh", false) ? 5u : 0u);
    auto down = granary("real down " + path);
    EXPECT_EQ(down.exit_code, 0) << down.err;
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_EQ(processes_naming(dir), "") << "a daemon of it is left";
    std::istringstream listed(testing::run_command("ip netns list").out);
    std::set<std::string> left;  // the first word of each line: the namespace's name
    for (std::string line; std::getline(listed, line);) left.insert(line.substr(0, line.find(' ')));
    for (const auto& ns : state.value("netns", nlohmann::json::array())) {
      EXPECT_EQ(left.count(ns.get<std::string>()), 0u) << ns;
    }
    return report;
  }

  std::string tmp_, hosts_;
  std::vector<std::string> made_;
};

TEST_F(RealCli, AReadStormThroughDriveHostAndLinkFailuresLosesAndCorruptsNothing) {
  const std::string dir = tmp_ + "/storm";
  const bool ns = hosts_ == "namespaces";
  const std::string failures =
      std::string(R"({"at_s": 0.3, "kind": "drive_failure", "osd": 1},
                  {"at_s": 0.8, "kind": "partition", "hosts": [2]},
                  {"at_s": 1.3, "kind": "heal", "hosts": [2]},)") +
      (ns ? R"({"at_s": 1.6, "kind": "nic_degraded", "host": 0, "factor": 4},)" : "") +
      R"({"at_s": 2.0, "kind": "drive_replace", "osd": 1})";
  const std::string path =
      write("storm.json",
            scenario("real-storm", dir, hosts_,
                     R"({"name": "unet3d-small", "mlperf": "unet3d", "files": 24, "epochs": 2,
                   "batch_size": 2, "sample_size_mib": {"mean": 0.25, "stddev": 0.05},
                   "compute_s_per_step": 0.1})",
                     R"({"metric": "carry_data.mismatches", "equals": 0},
                  {"metric": "carry_data.reads_verified", "equals": 48},
                  {"metric": "summary.accelerator_utilization.mean", "at_least": 0.05})",
                     R"("replicas": 3)", failures));
  const nlohmann::json r = up_run_verify_down(path, dir, 24);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["mode"], "real");
  EXPECT_EQ(r["real"]["hosts"], hosts_);
  EXPECT_EQ(r["summary"]["files_read"], 48);
  ASSERT_EQ(r["failures"].size(), ns ? 5u : 4u);
  std::string kinds;
  for (const auto& f : r["failures"]) {
    EXPECT_EQ(f["injected"], true) << f.dump();
    EXPECT_EQ(f["ok"], true) << f.dump();
    kinds += " " + f["kind"].get<std::string>();
  }
  EXPECT_EQ(r["failures"][1]["hosts"], nlohmann::json::array({2}));
  // osd.1's drive failed with EIO: the daemon stopped on it, or, without I/O, was killed.
  const std::string stopped_by = r["failures"][0]["stopped_by"];
  EXPECT_TRUE(stopped_by == "drive_error" || stopped_by == "sigkill") << stopped_by;
  kinds += " (osd.1 stopped by " + stopped_by + ")";
  // The last event came while the loaders read: their run outlasted it.
  EXPECT_GT(r["summary"]["run_seconds"].get<double>(),
            r["failures"].back()["injected_at_s"].get<double>());
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf("read storm through%s: AU %.3f over %.2f s, read p50 %.1f ms, max %.1f ms\n",
              kinds.c_str(), r["summary"]["accelerator_utilization"]["mean"].get<double>(),
              r["summary"]["run_seconds"].get<double>(),
              r["latency_ms"]["read"]["p50"].get<double>(),
              r["latency_ms"]["read"]["max"].get<double>());
}

// Two OSDs per storage server (drive.count 2): a process each, the server's CRUSH bucket holding
// both, so the three copies go to three servers; a slow drive (every I/O of osd.2 20 times as
// long) and then its whole server down (both its OSDs SIGKILLed) and back, the drive still
// slow after the restart until the timeline restores it; and a random drive failure drawn from
// the seed, with its replacement. Every message between hosts 1 ms later (real.added_latency_us).
TEST_F(RealCli, TwoOsdsPerServerThroughASlowDriveAndAServerDown) {
  const std::string dir = tmp_ + "/two";
  std::string text =
      scenario("real-two", dir, hosts_, kSmallStorm, kEveryReadVerified, R"("replicas": 3)",
               R"({"at_s": 0.2, "kind": "slow_drive", "osd": 2, "factor": 20},
                  {"at_s": 0.6, "kind": "host_down", "host": 1},
                  {"at_s": 1.2, "kind": "host_restart", "host": 1},
                  {"at_s": 1.8, "kind": "slow_drive", "osd": 2, "factor": 1},
                  {"kind": "random_drive_failures", "afr": 0.9, "from_s": 0.1, "to_s": 1.5,
                   "time_scale": 2e6, "replace_after_s": 0.3})");
  const std::string one_drive = R"("count": 1},)";
  text.replace(text.find(one_drive), one_drive.size(), R"("count": 2},)");
  // Steps long enough for the whole timeline to come while the loaders read: events are
  // injected one after the other, and osd.2's restart on its slow drive replays its journal 20
  // times slower, osd.3's failed drive may take 2 s to stop it.
  const std::string step = R"("compute_s_per_step": 0.1)";
  text.replace(text.find(step), step.size(), R"("compute_s_per_step": 0.5)");
  // 1 ms added to every message between hosts, one way: a read waits 2 ms at least.
  const std::string drive_mib = R"("drive_mib": 96)";
  text.replace(text.find(drive_mib), drive_mib.size(),
               R"("drive_mib": 96, "added_latency_us": 1000)");
  const std::string path = write("two.json", text);
  const nlohmann::json r = up_run_verify_down(path, dir, 24, [&] {
    // Six OSD processes on three servers; osd.2 slowed, restarted slow, restored.
    std::ifstream config_file(dir + "/cluster.json");
    const nlohmann::json config = nlohmann::json::parse(config_file, nullptr, false);
    ASSERT_EQ(config["osds"].size(), 6u);
    EXPECT_EQ(config["hosts"][3]["server"], "storage1");
    // The daemon follows its fault file every 100 ms: the last event may have come just
    // before the loaders ended.
    std::string log;
    for (int i = 0; i < 40 && log.find("drive back to its own speed") == std::string::npos; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream log_file(dir + "/osd.2.log");
      log.assign(std::istreambuf_iterator<char>(log_file), std::istreambuf_iterator<char>());
    }
    const size_t slowed = log.find("drive slowed: every I/O takes 20x as long");
    ASSERT_NE(slowed, std::string::npos) << log;
    const size_t again = log.find("drive slowed", slowed + 1);  // the restart, on a slow drive
    ASSERT_NE(again, std::string::npos) << log;
    EXPECT_NE(log.find("drive back to its own speed", again), std::string::npos) << log;
  });
  ASSERT_TRUE(r.is_object());
  // The random entry draws, from the scenario's seed (11), osd.3's drive failing at 1.35 s and
  // its replacement 0.3 s later (as `granary run` would draw them).
  ASSERT_EQ(r["failures"].size(), 6u) << r["failures"].dump();
  for (int i : {3, 4}) {
    EXPECT_EQ(r["failures"][i]["random"], true) << r["failures"][i].dump();
    EXPECT_EQ(r["failures"][i]["target"], 3) << r["failures"][i].dump();
  }
  EXPECT_EQ(r["failures"][3]["kind"], "drive_failure");
  EXPECT_EQ(r["failures"][4]["kind"], "drive_replace");
  for (const auto& f : r["failures"]) {
    EXPECT_EQ(f["injected"], true) << f.dump();
    EXPECT_EQ(f["ok"], true) << f.dump();
  }
  EXPECT_EQ(r["failures"][0]["factor"], 20);
  // The restart did not hold the timeline up: the next event came at its own time. The
  // restart's event says when both OSDs served again, unless that was after the run (on a
  // loaded machine osd.2's journal replay on its 20x slow drive may outlast it) or osd.3's
  // drive failed first (stopped_before_serving, superseded).
  const nlohmann::json& restart = r["failures"][2];
  if (restart.contains("serving_at_s")) {
    EXPECT_GT(restart["serving_at_s"].get<double>(), restart["injected_at_s"].get<double>())
        << restart.dump();
  }
  EXPECT_LT(r["failures"][3]["injected_at_s"].get<double>(),
            r["failures"][3]["at_s"].get<double>() + 0.5)
      << r["failures"][3].dump();
  EXPECT_GE(r["latency_ms"]["read"]["p50"].get<double>(), 2.0);
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf(
      "two OSDs per server, 1 ms added, osd.2 slowed 20x, storage host 1 down and back, osd.3 "
      "failed and "
      "replaced: AU %.3f over "
      "%.2f s, read p50 %.1f ms, max %.1f ms\n",
      r["summary"]["accelerator_utilization"]["mean"].get<double>(),
      r["summary"]["run_seconds"].get<double>(), r["latency_ms"]["read"]["p50"].get<double>(),
      r["latency_ms"]["read"]["max"].get<double>());
}

TEST_F(RealCli, ACheckpointOnAnErasureCodedPoolWithAnOsdKilledWhileWritingIsReadBackWhole) {
  const std::string dir = tmp_ + "/ckpt";
  const std::string path =
      write("ckpt.json", scenario("real-ckpt", dir, hosts_,
                                  R"({"name": "ckpt", "type": "checkpoint", "model_gb": 0.004,
                   "optimizer_gb": 0.008, "tensor_parallel": 2, "checkpoints": 2,
                   "read_back": true, "fsync": true})",
                                  R"({"metric": "carry_data.files_written", "equals": 4},
                  {"metric": "carry_data.reads_verified", "equals": 4},
                  {"metric": "carry_data.mismatches", "equals": 0})",
                                  R"("erasure": {"k": 2, "m": 1})",
                                  R"({"at_s": 0.15, "kind": "osd_crash", "osd": 1})"));
  const nlohmann::json r = up_run_verify_down(path, dir, 4);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["summary"]["workload"], "checkpoint");
  ASSERT_EQ(r["failures"].size(), 1u);
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf(
      "checkpoint on EC 2+1, osd.1 killed at %.2f s: write %.2f s, read %.2f s per checkpoint\n",
      r["failures"][0]["injected_at_s"].get<double>(), r["summary"]["write_seconds"].get<double>(),
      r["summary"]["read_seconds"].get<double>());
}

// The same three storage hosts as a Lustre-style pfs: granary-mds on the fourth host, each
// storage host an OST; files of 0.25 MiB striped over 2 OSTs in 128 KiB stripes, filled, read
// by the loaders, verified. (The scenario format simulates failures for rados only, so a pfs
// scenario carries none; tests/realmode/pfs_cluster_test.cc kills the MDS.)
TEST_F(RealCli, AReadStormOnAPfsReadsEveryFileBackWhole) {
  const std::string dir = tmp_ + "/pfs";
  std::string text = scenario("real-pfs", dir, hosts_,
                              R"({"name": "unet3d-small", "mlperf": "unet3d", "files": 24,
                   "epochs": 2, "batch_size": 2, "sample_size_mib": {"mean": 0.25, "stddev": 0.05},
                   "compute_s_per_step": 0.1})",
                              R"({"metric": "carry_data.mismatches", "equals": 0},
                  {"metric": "carry_data.reads_verified", "equals": 48})",
                              R"("replicas": 3)", "");
  text = as_pfs(text, R"({"stripe_size_mib": 0.125, "stripe_count": 2, "inflight_rpcs": 4})");
  const std::string path = write("pfs.json", text);
  const nlohmann::json r = up_run_verify_down(path, dir, 24);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["summary"]["files_read"], 48);
  EXPECT_TRUE(r["failures"].empty());
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf("pfs read storm: AU %.3f over %.2f s, read p50 %.1f ms, max %.1f ms\n",
              r["summary"]["accelerator_utilization"]["mean"].get<double>(),
              r["summary"]["run_seconds"].get<double>(),
              r["latency_ms"]["read"]["p50"].get<double>(),
              r["latency_ms"]["read"]["max"].get<double>());
}

// Block I/O: the client node's 32 MiB RBD image filled, then 4 KiB random reads and writes
// (70% reads) at queue depth 8 for 4 s, every write carrying the image's content and every
// read compared with it, while osd.1 is killed at 0.5 s (the I/O to its PGs waits for the
// monitor to mark it down, then goes to the new primaries).
TEST_F(RealCli, BlockIoThroughAnOsdCrashReadsBackWhatWasWritten) {
  const std::string dir = tmp_ + "/block";
  const std::string path = write(
      "block.json", scenario("real-block", dir, hosts_,
                             R"({"name": "vm", "type": "block", "volume": {"size_gib": 0.03125},
                   "block_size_kib": 4, "queue_depth": 8, "read_fraction": 0.7,
                   "duration_s": 4, "ramp_s": 0.1})",
                             R"({"metric": "carry_data.mismatches", "equals": 0})"));
  const nlohmann::json r = up_run_verify_down(path, dir, 1);
  ASSERT_TRUE(r.is_object());
  const nlohmann::json& s = r["summary"];
  EXPECT_EQ(s["workload"], "block");
  EXPECT_GT(s["reads"].get<uint64_t>(), 0u);
  EXPECT_GT(s["writes"].get<uint64_t>(), 0u);
  EXPECT_GE(r["carry_data"]["reads_verified"].get<uint64_t>(), s["reads"].get<uint64_t>());
  ASSERT_EQ(r["failures"].size(), 1u);
  EXPECT_EQ(r["failures"][0]["injected"], true);
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf(
      "block 4 KiB, 70%% reads, QD 8, osd.1 killed at 0.5 s: %.0f IOPS over %.2f s, read "
      "p50 %.2f ms, p99 %.1f ms, max %.1f ms; %llu reads verified\n",
      s["iops"].get<double>(), s["measured_seconds"].get<double>(),
      r["latency_ms"]["read"]["p50"].get<double>(), r["latency_ms"]["read"]["p99"].get<double>(),
      r["latency_ms"]["read"]["max"].get<double>(),
      static_cast<unsigned long long>(r["carry_data"]["reads_verified"].get<uint64_t>()));
}

// Shares' reports of a training read with a checkpoint beside it: a checkpoint's time is its
// slowest rank's over both shares, and only checkpoints every rank of every share finished
// count. And with block I/O beside it.
TEST(RealMerge, WhatRunsBesideTheReadIsMergedOverTheShares) {
  auto share = [](double au, std::vector<double> slowest) {
    return nlohmann::json{{"summary",
                           {{"workload", "training_read"},
                            {"accelerators", 2},
                            {"epochs", 1},
                            {"run_seconds", 2.0},
                            {"bytes_read", 1000},
                            {"files_read", 10},
                            {"accelerator_utilization", {{"mean", au}, {"min", au}, {"max", au}}}}},
                          {"accelerators", {{"utilization", {au, au}}}},
                          {"latency_ms", {{"read", {{"p50", 1.0}, {"p99", 2.0}, {"max", 3.0}}}}},
                          {"carry_data",
                           {{"files_written", 2},
                            {"bytes_written", 200},
                            {"reads_verified", 12},
                            {"bytes_verified", 1200},
                            {"mismatches", 0}}},
                          {"checkpoint",
                           {{"name", "ckpt"},
                            {"ranks_run", 2},
                            {"checkpoint_bytes", 1073741824},
                            {"slowest_rank_write_s", slowest},
                            {"checkpoints_complete", 0},
                            {"write_seconds", 0.0},
                            {"write_gibps", 0.0}}}};
  };
  const nlohmann::json m =
      realmode::merge_share_reports({share(0.9, {1.0, 4.0, 2.0}), share(0.7, {2.0, 1.0, -1.0})});
  const nlohmann::json& ck = m["checkpoint"];
  EXPECT_EQ(ck["ranks_run"], 4);
  EXPECT_EQ(ck["slowest_rank_write_s"], nlohmann::json({2.0, 4.0, -1.0}));
  EXPECT_EQ(ck["checkpoints_complete"], 2);
  EXPECT_DOUBLE_EQ(ck["write_seconds"].get<double>(), 3.0);  // (2 + 4) / 2
  EXPECT_DOUBLE_EQ(ck["write_gibps"].get<double>(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(m["summary"]["accelerator_utilization"]["mean"].get<double>(), 0.8);
  EXPECT_EQ(m["carry_data"]["files_written"], 4);
  EXPECT_EQ(m["shares"], 2);

  // Block I/O beside the read, in two shares of three (the third had no block node): counts
  // and rates add up, the latency mean is weighted by count, quantiles are the largest.
  auto block = [](uint64_t reads, double iops, double p99, double mean) {
    return nlohmann::json{{"workload", "block"},
                          {"volumes", 1},
                          {"reads", reads},
                          {"writes", 10},
                          {"iops", iops},
                          {"read_iops", iops},
                          {"write_iops", 0.0},
                          {"read_mibps", 1.0},
                          {"write_mibps", 0.0},
                          {"measured_seconds", 2.0},
                          {"latency_ms",
                           {{"read",
                             {{"count", reads},
                              {"mean", mean},
                              {"p50", 1.0},
                              {"p90", 2.0},
                              {"p99", p99},
                              {"p999", p99},
                              {"max", p99}}}}}};
  };
  nlohmann::json a = share(0.9, {1.0}), b = share(0.9, {1.0}), c = share(0.9, {1.0});
  a["block"] = block(100, 50.0, 3.0, 1.0);
  b["block"] = block(300, 150.0, 9.0, 2.0);
  const nlohmann::json mb = realmode::merge_share_reports({a, b, c})["block"];
  EXPECT_EQ(mb["volumes"], 2);
  EXPECT_EQ(mb["reads"], 400);
  EXPECT_DOUBLE_EQ(mb["iops"].get<double>(), 200.0);
  EXPECT_EQ(mb["latency_ms"]["read"]["count"], 400);
  EXPECT_DOUBLE_EQ(mb["latency_ms"]["read"]["mean"].get<double>(), 1.75);
  EXPECT_DOUBLE_EQ(mb["latency_ms"]["read"]["p99"].get<double>(), 9.0);

  // With every share's samples (granary-bench --latency-samples) the quantiles are those of
  // all of them, nearest rank: [1, 2, 3] ms and [10, 20] ms have a p50 of 3 ms (the largest of
  // the shares' p50s would be 15), a p99 and max of 20 ms. The samples leave the report.
  nlohmann::json x = share(0.9, {1.0}), y = share(0.9, {1.0});
  x["latency_samples_s"] = {{"read", {0.001, 0.003, 0.002}}};
  y["latency_ms"]["read"]["p50"] = 15.0;
  y["latency_samples_s"] = {{"read", {0.020, 0.010}}};
  x["block"] = block(3, 50.0, 3.0, 2.0);
  y["block"] = block(2, 50.0, 20.0, 15.0);
  x["block"]["latency_samples_s"] = x["latency_samples_s"];
  y["block"]["latency_samples_s"] = y["latency_samples_s"];
  const nlohmann::json exact = realmode::merge_share_reports({x, y});
  EXPECT_DOUBLE_EQ(exact["latency_ms"]["read"]["p50"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(exact["latency_ms"]["read"]["p99"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(exact["latency_ms"]["read"]["max"].get<double>(), 20.0);
  const nlohmann::json& q = exact["block"]["latency_ms"]["read"];
  EXPECT_EQ(q["count"], 5);
  EXPECT_DOUBLE_EQ(q["p50"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(q["mean"].get<double>(), 7.2);
  EXPECT_TRUE(q.contains("cdf"));
  EXPECT_FALSE(exact.contains("latency_samples_s"));
  EXPECT_FALSE(exact["block"].contains("latency_samples_s"));
}

// Lab hosts over ssh (real.hosts "ssh"): five network namespaces on a bridge stand for a lab's
// servers, each running an sshd of its own (a host key and an authorized key the test makes,
// keys only); granary real reaches them as root@10.78.N.(i + 2) with the test's identity,
// copies the cluster key and file, starts every daemon and bench process through ssh (so each
// runs in its machine's namespace), injects an OSD crash and restart and a slow drive through
// ssh, verifies and removes everything. Needs root, ip netns and sshd (openssh-server).
class RealLab : public RealCli {
 protected:
  void SetUp() override {
    RealCli::SetUp();
    if (hosts_ != "namespaces" || access("/usr/sbin/sshd", X_OK) != 0) {
      GTEST_SKIP() << "lab hosts need root, ip netns and /usr/sbin/sshd (openssh-server)";
    }
    const std::string t = std::to_string(getpid() % 200 + 20);
    tag_ = "grl" + t;
    subnet_ = "10.78." + t;
    const std::string keys = tmp_ + "/ssh";
    std::filesystem::create_directories(keys);
    ASSERT_EQ(testing::run_command("ssh-keygen -q -t ed25519 -N '' -f " + keys + "/host && " +
                                   "ssh-keygen -q -t ed25519 -N '' -f " + keys + "/user && " +
                                   "cp " + keys + "/user.pub " + keys + "/authorized_keys && " +
                                   "chmod 600 " + keys + "/authorized_keys && mkdir -p /run/sshd")
                  .exit_code,
              0);
    identity_ = keys + "/user";
    ASSERT_EQ(sh("ip link add " + tag_ + "br type bridge && ip link set " + tag_ + "br up && " +
                 "ip addr add " + subnet_ + ".1/24 dev " + tag_ + "br"),
              0);
    for (int i = 0; i < 5; ++i) {
      const std::string ns = tag_ + "h" + std::to_string(i), veth = tag_ + "v" + std::to_string(i);
      const std::string ip = subnet_ + "." + std::to_string(i + 2);
      const std::string config = keys + "/sshd" + std::to_string(i) + ".conf";
      std::ofstream(config) << "ListenAddress " << ip << "\nHostKey " << keys << "/host\n"
                            << "AuthorizedKeysFile " << keys << "/authorized_keys\n"
                            << "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                            << "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                            << "PidFile " << keys << "/sshd" << i << ".pid\n";
      ASSERT_EQ(
          sh("ip netns add " + ns + " && ip link add " + veth + " type veth peer name eth0 netns " +
             ns + " && ip link set " + veth + " master " + tag_ + "br up && ip netns exec " + ns +
             " ip addr add " + ip + "/24 dev eth0 && ip netns exec " + ns +
             " ip link set eth0 up && ip netns exec " + ns +
             " ip link set lo up && ip netns exec " + ns + " /usr/sbin/sshd -f " + config + " -E " +
             keys + "/sshd" + std::to_string(i) + ".log"),
          0);
      namespaces_.push_back(ns);
      pid_files_.push_back(keys + "/sshd" + std::to_string(i) + ".pid");
    }
  }
  void TearDown() override {
    for (const std::string& s : made_) granary("real down " + s);  // while the hosts are up
    for (const std::string& p : pid_files_) sh("kill $(cat " + p + ") 2>/dev/null");
    for (const std::string& ns : namespaces_) sh("ip netns delete " + ns);
    if (!tag_.empty()) sh("ip link delete " + tag_ + "br");
    RealCli::TearDown();
  }
  static int sh(const std::string& cmd) { return testing::run_command(cmd).exit_code; }
  std::string lab_hosts() const {
    std::string out;
    for (int i = 0; i < 5; ++i) {
      out += std::string(i ? ", " : "") + R"({"address": ")" + subnet_ + "." +
             std::to_string(i + 2) + "\"}";
    }
    return "[" + out + "]";
  }
  std::string tag_, subnet_, identity_;
  std::vector<std::string> namespaces_, pid_files_;
};

TEST_F(RealLab, AReadStormOnLabHostsReachedOverSsh) {
  const std::string dir = tmp_ + "/lab";
  std::string text =
      scenario("real-lab", dir, "ssh", kSmallStorm, kEveryReadVerified, R"("replicas": 3)",
               R"({"at_s": 0.3, "kind": "osd_crash", "osd": 1},
                  {"at_s": 0.5, "kind": "slow_drive", "osd": 2, "factor": 5},
                  {"at_s": 1.0, "kind": "osd_restart", "osd": 1})");
  const std::string drive_mib = R"("drive_mib": 96)";
  text.replace(
      text.find(drive_mib), drive_mib.size(),
      drive_mib + R"(, "lab_hosts": )" + lab_hosts() + R"(, "ssh_identity": ")" + identity_ + "\"");
  const std::string path = write("lab.json", text);
  const nlohmann::json r = up_run_verify_down(path, dir, 24, [&] {
    // Every daemon runs in its lab host's namespace, started there by its sshd.
    std::ifstream state_file(dir + "/state.json");
    const nlohmann::json state = nlohmann::json::parse(state_file, nullptr, false);
    std::set<std::string> seen;
    for (const auto& [name, d] : state["daemons"].items()) {
      std::error_code ec;
      const auto ns = std::filesystem::read_symlink(
          "/proc/" + std::to_string(d["pid"].get<int64_t>()) + "/ns/net", ec);
      EXPECT_FALSE(ec) << name;
      EXPECT_NE(ns, std::filesystem::read_symlink("/proc/self/ns/net")) << name;
      seen.insert(ns.string());
    }
    EXPECT_EQ(seen.size(), 4u);  // three storage hosts and the monitor's
    std::ifstream log_file(dir + "/osd.2.log");
    const std::string log((std::istreambuf_iterator<char>(log_file)),
                          std::istreambuf_iterator<char>());
    EXPECT_NE(log.find("drive slowed: every I/O takes 5x as long"), std::string::npos) << log;
  });
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r["real"]["hosts"], "ssh");
  ASSERT_EQ(r["failures"].size(), 3u);
  for (const auto& f : r["failures"]) EXPECT_EQ(f["ok"], true) << f.dump();
  for (const auto& e : r["expectations"]) EXPECT_TRUE(e["passed"].get<bool>()) << e.dump();
  std::printf(
      "read storm on 5 lab hosts over ssh, osd.1 crashed and restarted, osd.2 slowed 5x: "
      "AU %.3f over %.2f s, read p50 %.1f ms\n",
      r["summary"]["accelerator_utilization"]["mean"].get<double>(),
      r["summary"]["run_seconds"].get<double>(), r["latency_ms"]["read"]["p50"].get<double>());
}

// granary real calibrate on the three-host cluster, then a validation: the simulator with the
// calibrated scenario against a real run of a workload the calibration was not fitted to
// (1 MiB random reads at queue depth 1; the fit used 4 KiB reads at depths 1 and 16, 1 MiB at
// depth 4 and 4 KiB writes). Tolerance: the calibrated simulator's IOPS within a factor 1.6 of
// the real run's, and nearer to it than the simulator with the catalog's figures (measured on
// the 2-core VM in namespaces: calibrated 0.94 to 1.22 of real over seven runs, the catalog's
// 2.3 to 3.5; on loopback 1.27 to 1.31, the catalog's 2.3 to 2.6). At queue depth 1
// one request is in flight at a time, so the real cluster's processes, which share this
// machine's cores, do not contend for them (realmode/README.md, "Calibration", has the deeper
// queues where they do).
TEST_F(RealCli, CalibrateThenTheSimulatorPredictsARealRunItWasNotFittedTo) {
  const std::string dir = tmp_ + "/calibrate";
  std::string text = scenario("real-calibrate", dir, hosts_,
                              R"({"name": "vm", "type": "block", "volume": {"size_gib": 0.03125},
                   "nodes": 1, "block_size_kib": 1024, "queue_depth": 1, "read_fraction": 1,
                   "duration_s": 1.5, "ramp_s": 0.3})",
                              "", R"("replicas": 3)", "");
  text.replace(text.find(R"("drive_mib": 96)"), 15, R"("drive_mib": 256)");
  // No failures: no recovery settings.
  const size_t recovery = text.find(R"(,
    "recovery")");
  text.erase(recovery, text.find('}', recovery) + 1 - recovery);
  text.replace(text.find(R"("design": "rados")"), 17, R"("design": "rados", "protocol": "tcp")");
  const std::string path = write("calibrate.json", text);
  const std::string calibration = tmp_ + "/calibration.json",
                    calibrated = tmp_ + "/calibrated.json";
  const std::string args = " --probe-seconds 0.6 --drive-seconds 0.2 --report " + calibration +
                           " --scenario-out " + calibrated;
  auto r = granary("real calibrate " + path + args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no cluster is up in " + dir), std::string::npos) << r.err;
  r = granary("real up " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = granary("real calibrate " + path + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(calibration);
  const nlohmann::json c = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(c["granary_calibration"], 1);
  EXPECT_EQ(c["real"]["hosts"], hosts_);
  for (const char* k : {"read_gbytes_per_s", "write_gbytes_per_s", "read_kiops", "write_kiops",
                        "read_latency_us", "write_latency_us"}) {
    EXPECT_GT(c["drive"][k].get<double>(), 0) << k;
  }
  for (const char* k : {"client_cpu_us_per_op", "server_cpu_us_per_op", "cpu_us_per_mib"}) {
    EXPECT_GT(c["protocol"][k].get<double>(), 0) << k;
  }
  EXPECT_EQ(c["probes"].size(), 4u);
  for (const char* op : {"read", "write"}) {
    const nlohmann::json& f = c["latency_fit"][op];
    EXPECT_NEAR(f["sim_p50_ms"].get<double>(), f["real_p50_ms"].get<double>(),
                0.02 * f["real_p50_ms"].get<double>())
        << f.dump();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/calibrate-drive.img")) << "the probe's file is left";
  EXPECT_EQ(granary("validate " + calibrated).exit_code, 0);
  // The validation: the real run, then the simulator calibrated and with the catalog's figures.
  r = granary("real run " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double real = nlohmann::json::parse(r.out)["summary"]["iops"].get<double>();
  auto simulated_iops = [&](const std::string& scenario_path) {
    const std::string out = tmp_ + "/sim.json";
    auto run = granary("run " + scenario_path + " --quiet --out " + out);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::ifstream report(out);
    return nlohmann::json::parse(report)["summary"]["iops"].get<double>();
  };
  const double with_calibration = simulated_iops(calibrated);
  const double with_catalog = simulated_iops(path);
  std::printf(
      "1 MiB reads at QD 1 on %s: real %.0f IOPS; simulated, calibrated %.0f (%.2f of real), "
      "with the catalog's figures %.0f (%.2f)\n",
      hosts_.c_str(), real, with_calibration, with_calibration / real, with_catalog,
      with_catalog / real);
  EXPECT_LT(std::abs(std::log(with_calibration / real)), std::log(1.6));
  EXPECT_LT(std::abs(std::log(with_calibration / real)), std::abs(std::log(with_catalog / real)));
  EXPECT_EQ(granary("real down " + path).exit_code, 0);
}

// A pfs has no RBD volumes to probe; an erasure-coded pool costs the simulator more than one
// server request per read.
TEST_F(RealCli, CalibrateRefusesAPfsAndAnErasureCodedPool) {
  std::string text = scenario("real-calibrate-pfs", tmp_ + "/cpfs", "loopback",
                              R"({"name": "u", "mlperf": "unet3d", "files": 24,
                   "sample_size_mib": {"mean": 0.25}})",
                              "", R"("replicas": 3)", "");
  text = as_pfs(text, R"({"stripe_size_mib": 0.125, "stripe_count": 2})");
  auto r = granary("real calibrate " + write("cpfs.json", text));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cpfs.json: storage.design: granary real calibrate probes RBD volumes "
                       "through the OSDs: design 'rados'"),
            std::string::npos)
      << r.err;
  r = granary("real calibrate " +
              write("cec.json", scenario("real-calibrate-ec", tmp_ + "/cec", "loopback",
                                         R"({"name": "u", "mlperf": "unet3d", "files": 24,
                   "sample_size_mib": {"mean": 0.25}})",
                                         "", R"("erasure": {"k": 2, "m": 1})")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cec.json: storage.rados: granary real calibrate measures a replicated "
                       "pool"),
            std::string::npos)
      << r.err;
}

TEST_F(RealCli, WhatItCannotRunIsRefused) {
  const std::string dir = tmp_ + "/refused";
  const std::string workload =
      R"({"name": "u", "mlperf": "unet3d", "files": 24, "sample_size_mib": {"mean": 0.25}})";
  auto r =
      granary("real up " + write("hosts.json", scenario("real-hosts", dir, "ssh", workload, "")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hosts.json: real.lab_hosts: expected an array of 5 lab hosts (the "
                       "storage servers, the monitor or MDS, the client nodes, in that order)"),
            std::string::npos)
      << r.err;
  r = granary("real up " +
              write("shaped.json",
                    scenario("real-shaped", dir, "loopback", workload, "", R"("replicas": 3)",
                             R"({"at_s": 1, "kind": "nic_degraded", "host": 0,
                                                "factor": 3})")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("shaped.json: failures: nic_degraded needs real.hosts \"namespaces\""),
            std::string::npos)
      << r.err;
  const std::string ok = write("ok.json", scenario("real-ok", dir, "loopback", workload, ""));
  r = granary("real run " + ok);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no cluster is up in " + dir), std::string::npos) << r.err;
  EXPECT_EQ(granary("real down " + ok).exit_code, 0) << "down with nothing up is fine";
}

}  // namespace
}  // namespace granary

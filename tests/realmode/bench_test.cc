// granary-bench against daemons on loopback (built into cli_tests, beside granary, which builds the
// daemons): granary-mon and three granary-osd processes (3x
// replicated pool), and granary-bench as a process of its own on a client host:
//  - a small unet3d-like training read (two accelerators, two epochs, 24 files of about 256 KiB,
//    emulated compute): `fill` writes the dataset with its content, `run` runs DLIO's loaders
//    through the daemons and reports the accelerators' utilisation with every file read
//    compared byte for byte, `verify` reads every file back; then with osd.1 killed (SIGKILL)
//    and marked down by the monitor, `verify` still reads every file (degraded reads from the
//    other copies);
//  - a checkpoint (two ranks, two checkpoints, fsync, read back): every share written, read
//    back and compared; and one beside a training read, written while the loaders read;
//  - scenarios it cannot run (design pfs, a pool other than the cluster file's, a failure
//    timeline) refused with exit status 2 and a message naming the file and the key.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "realmode/cluster_config.h"
#include "tests/realmode/daemons.h"

namespace granary::realmode {
namespace {

using test::Daemon;

constexpr int kOsds = 3;
constexpr int kMonHost = 3;
constexpr int kClientHost = 4;

// A scenario for the loopback cluster: one client node with two A100s, three storage hosts,
// the cluster file's pool (3 copies, 32 PGs), objects of 1 MiB.
std::string scenario_json(const std::string& name, int seed, const std::string& workload) {
  return R"({"granary": 1, "name": ")" + name + R"(", "seed": )" + std::to_string(seed) + R"(,
  "cluster": {
    "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 2,
                "nic": {"profile": "connectx6-200g"}},
    "storage": {"count": 3, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 1},
                "nic": {"profile": "connectx6-100g"}}},
  "storage": {"design": "rados", "rados": {"pg_num": 32, "replicas": 3, "object_size_mib": 1}},
  "workloads": [)" +
         workload + "]}";
}

const std::string kTraining = scenario_json("real-small-unet3d", 5, R"(
  {"name": "unet3d-small", "mlperf": "unet3d", "files": 24, "epochs": 2, "batch_size": 2,
   "sample_size_mib": {"mean": 0.25, "stddev": 0.05}, "compute_s_per_step": 0.02})");

const std::string kCheckpoint = scenario_json("real-small-checkpoint", 9, R"(
  {"name": "ckpt", "type": "checkpoint", "model_gb": 0.002, "optimizer_gb": 0.004,
   "tensor_parallel": 2, "checkpoints": 2, "read_back": true, "fsync": true})");

class Bench : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::loopback_cluster({"storage0", "storage1", "storage2", "mon", "client"}, kOsds,
                                  &config_);
    ASSERT_FALSE(dir_.empty());
    config_.names = {{"bench", kClientHost}};
    config_.monitor = ClusterMonitor{kMonHost, 0.5, 1.5, 0};
    std::ofstream(dir_ + "/cluster.json") << cluster_config_json(config_);
    mon_ = std::make_unique<Daemon>(
        std::vector<std::string>{GRANARY_MON_BINARY, "--config", dir_ + "/cluster.json"},
        dir_ + "/mon.log");
    for (int i = 0; i < kOsds; ++i) {
      osds_.push_back(std::make_unique<Daemon>(
          std::vector<std::string>{GRANARY_OSD_BINARY, "--config", dir_ + "/cluster.json", "--osd",
                                   std::to_string(i)},
          dir_ + "/osd." + std::to_string(i) + ".log"));
    }
    mon_->start();
    for (auto& d : osds_) d->start({"--mkfs"});
    for (auto& d : osds_) ASSERT_TRUE(d->wait_serving()) << logs();
  }
  void TearDown() override {
    osds_.clear();
    mon_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string logs() const {
    std::string out;
    for (const auto& d : osds_) out += "---- " + d->log() + "\n" + test::read_file(d->log());
    if (mon_) out += "---- " + mon_->log() + "\n" + test::read_file(mon_->log());
    return out;
  }
  std::string write_scenario(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // granary-bench COMMAND on `scenario`: its exit status; the report in *report, stderr in
  // *err.
  int bench(const std::string& command, const std::string& scenario, nlohmann::json* report,
            std::string* err) {
    const std::string out = dir_ + "/report.json", errf = dir_ + "/bench.err";
    std::remove(out.c_str());
    const std::string cmd = std::string(GRANARY_BENCH_BINARY) + " " + command + " --config " +
                            dir_ + "/cluster.json --scenario " + scenario +
                            " --name bench --report " + out + " 2>" + errf;
    const int rc = std::system(cmd.c_str());
    *err = test::read_file(errf);
    const std::string text = test::read_file(out);
    *report = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  std::string dir_;
  ClusterConfig config_;
  std::unique_ptr<Daemon> mon_;
  std::vector<std::unique_ptr<Daemon>> osds_;
};

TEST_F(Bench, ATrainingReadIsFilledRunVerifiedAndReadAgainWithAnOsdDown) {
  const std::string scenario = write_scenario("training.json", kTraining);
  nlohmann::json r;
  std::string err;
  ASSERT_EQ(bench("fill", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["mode"], "real");
  EXPECT_EQ(r["carry_data"]["files_written"], 24);
  const uint64_t dataset_bytes = r["carry_data"]["bytes_written"];
  EXPECT_GT(dataset_bytes, 24u * 150'000);

  ASSERT_EQ(bench("run", scenario, &r, &err), 0) << err << logs();
  EXPECT_NE(err.find("seed 5"), std::string::npos) << err;
  const nlohmann::json& s = r["summary"];
  EXPECT_EQ(s["workload"], "training_read");
  EXPECT_EQ(s["accelerators"], 2);
  EXPECT_EQ(s["steps_per_epoch"], 6);  // 12 files each, 1 sample per file, batches of 2
  const double au = s["accelerator_utilization"]["mean"];
  EXPECT_GT(au, 0.0);
  EXPECT_LE(au, 1.0);
  // Both epochs read each accelerator's 12 files: 48 reads, every one compared.
  EXPECT_EQ(s["files_read"], 48);
  EXPECT_EQ(r["carry_data"]["reads_verified"], 48);
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
  EXPECT_EQ(r["carry_data"]["bytes_verified"], s["bytes_read"]);
  EXPECT_GT(r["latency_ms"]["read"]["p50"].get<double>(), 0.0);
  std::printf("training read through 3 OSDs: AU %.3f, %.1f MiB/s, read p50 %.2f ms, p99 %.2f ms\n",
              au, s["read_gibps_mean"].get<double>() * 1024,
              r["latency_ms"]["read"]["p50"].get<double>(),
              r["latency_ms"]["read"]["p99"].get<double>());

  ASSERT_EQ(bench("verify", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["reads_verified"], 24);
  EXPECT_EQ(r["carry_data"]["bytes_verified"], dataset_bytes);

  // osd.1 killed: once the monitor marks it down, every file still reads back whole.
  EXPECT_EQ(osds_[1]->kill_now(SIGKILL), -SIGKILL);
  EXPECT_TRUE(mon_->wait_logged("down osd.1")) << logs();
  ASSERT_EQ(bench("verify", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["reads_verified"], 24);
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
}

TEST_F(Bench, ACheckpointIsWrittenReadBackAndCompared) {
  const std::string scenario = write_scenario("checkpoint.json", kCheckpoint);
  nlohmann::json r;
  std::string err;
  EXPECT_EQ(bench("fill", scenario, &r, &err), 1);
  EXPECT_NE(err.find("a checkpoint writes its own files"), std::string::npos) << err;
  ASSERT_EQ(bench("run", scenario, &r, &err), 0) << err << logs();
  const nlohmann::json& s = r["summary"];
  EXPECT_EQ(s["workload"], "checkpoint");
  EXPECT_EQ(s["ranks"], 2);
  EXPECT_EQ(s["checkpoints"], 2);
  EXPECT_EQ(r["carry_data"]["files_written"], 4);  // 2 ranks x 2 checkpoints
  EXPECT_EQ(r["carry_data"]["reads_verified"], 4);
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
  EXPECT_EQ(r["carry_data"]["bytes_verified"], r["carry_data"]["bytes_written"]);
  EXPECT_GT(s["write_seconds"].get<double>(), 0.0);
  EXPECT_GT(s["read_gibps"].get<double>(), 0.0);
  ASSERT_EQ(bench("verify", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["reads_verified"], 4);
}

// A checkpoint beside the training read (asynchronous checkpointing, workloads[1]): both ranks
// write both checkpoints from 0.1 s on while the loaders read, every read of either compared;
// the report has the simulator's "checkpoint" section.
TEST_F(Bench, ACheckpointBesideATrainingReadIsWrittenWhileTheLoadersRead) {
  const std::string scenario = write_scenario("beside.json", scenario_json("real-beside", 5, R"(
  {"name": "unet3d-small", "mlperf": "unet3d", "files": 24, "epochs": 2, "batch_size": 2,
   "sample_size_mib": {"mean": 0.25, "stddev": 0.05}, "compute_s_per_step": 0.15},
  {"name": "ckpt", "type": "checkpoint", "model_gb": 0.002, "optimizer_gb": 0.004,
   "tensor_parallel": 2, "checkpoints": 2, "fsync": true, "start_s": 0.1})"));
  nlohmann::json r;
  std::string err;
  ASSERT_EQ(bench("fill", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["files_written"], 24);
  ASSERT_EQ(bench("run", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["summary"]["workload"], "training_read");
  EXPECT_EQ(r["summary"]["files_read"], 48);
  const nlohmann::json& ck = r["checkpoint"];
  EXPECT_EQ(ck["name"], "ckpt");
  EXPECT_EQ(ck["ranks_run"], 2);
  EXPECT_EQ(ck["rank_bytes"], 3'000'000);  // 6 MB over 2 ranks
  EXPECT_EQ(ck["checkpoint_bytes"], 6'000'000);
  EXPECT_EQ(ck["checkpoints_complete"], 2) << ck.dump();  // 12 steps of 0.15 s outlast them
  EXPECT_GT(ck["write_seconds"].get<double>(), 0.0);
  const double gibps = 6e6 / ck["write_seconds"].get<double>() / (1024.0 * 1024 * 1024);
  EXPECT_NEAR(ck["write_gibps"].get<double>(), gibps, gibps * 1e-4);  // both rounded to 1 us
  // The dataset's 48 reads and the 4 checkpoint files read back after the run.
  EXPECT_EQ(r["carry_data"]["files_written"], 4);
  EXPECT_EQ(r["carry_data"]["reads_verified"], 52);
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
  std::printf(
      "training read with a checkpoint beside it: AU %.3f, checkpoint %.3f s (%.3f GiB/s)\n",
      r["summary"]["accelerator_utilization"]["mean"].get<double>(),
      ck["write_seconds"].get<double>(), ck["write_gibps"].get<double>());
}

// Training, a checkpoint and block I/O at once (the simulator's three-workload mix): the
// client node's volume image filled with the dataset, its 4 KiB random I/O running while the
// loaders read and stopped when they end, every block read compared with the image's content.
TEST_F(Bench, BlockIoAndACheckpointBesideATrainingRead) {
  const std::string scenario = write_scenario("mix.json", scenario_json("real-mix", 5, R"(
  {"name": "unet3d-small", "mlperf": "unet3d", "files": 24, "epochs": 2, "batch_size": 2,
   "sample_size_mib": {"mean": 0.25, "stddev": 0.05}, "compute_s_per_step": 0.1},
  {"name": "ckpt", "type": "checkpoint", "model_gb": 0.002, "optimizer_gb": 0.004,
   "tensor_parallel": 2, "checkpoints": 1, "fsync": true, "start_s": 0.2},
  {"name": "vm", "type": "block", "volume": {"size_gib": 0.015625}, "block_size_kib": 4,
   "queue_depth": 4, "read_fraction": 0.7, "duration_s": 30})"));
  nlohmann::json r;
  std::string err;
  ASSERT_EQ(bench("fill", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["files_written"], 25);  // 24 files and the node's 16 MiB image
  ASSERT_EQ(bench("run", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["summary"]["files_read"], 48);
  EXPECT_EQ(r["checkpoint"]["checkpoints_complete"], 1) << r["checkpoint"].dump();
  const nlohmann::json& b = r["block"];
  EXPECT_EQ(b["workload"], "block");
  EXPECT_EQ(b["name"], "vm");
  EXPECT_EQ(b["volumes"], 1);
  EXPECT_GT(b["reads"].get<uint64_t>(), 0u);
  EXPECT_GT(b["writes"].get<uint64_t>(), 0u);
  // The window closed when the read ended, long before the block workload's 30 s.
  EXPECT_LT(b["measured_seconds"].get<double>(), 10.0);
  EXPECT_GT(b["latency_ms"]["read"]["p50"].get<double>(), 0.0);
  // Every block read and the read's 48 files and the checkpoint's 2 files, compared.
  EXPECT_GE(r["carry_data"]["reads_verified"].get<uint64_t>(), 50u + b["reads"].get<uint64_t>());
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
  std::printf(
      "training read with a checkpoint and block I/O beside it: AU %.3f, %.0f block IOPS "
      "(read p50 %.2f ms), checkpoint %.3f s\n",
      r["summary"]["accelerator_utilization"]["mean"].get<double>(), b["iops"].get<double>(),
      b["latency_ms"]["read"]["p50"].get<double>(), r["checkpoint"]["write_seconds"].get<double>());
  ASSERT_EQ(bench("verify", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["reads_verified"], 24);
}

// Block I/O beside a checkpoint (the simulator's other mix): `fill` writes the volume image
// only, the I/O runs while the ranks write and read back and stops when they are done.
TEST_F(Bench, BlockIoBesideACheckpoint) {
  const std::string scenario = write_scenario("ckpt-block.json", scenario_json("real-ckb", 9, R"(
  {"name": "ckpt", "type": "checkpoint", "model_gb": 0.002, "optimizer_gb": 0.004,
   "tensor_parallel": 2, "checkpoints": 2, "read_back": true, "fsync": true},
  {"name": "vm", "type": "block", "volume": {"size_gib": 0.015625}, "block_size_kib": 4,
   "queue_depth": 4, "read_fraction": 0.7, "duration_s": 30})"));
  nlohmann::json r;
  std::string err;
  ASSERT_EQ(bench("fill", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["carry_data"]["files_written"], 1);  // the image
  ASSERT_EQ(bench("run", scenario, &r, &err), 0) << err << logs();
  EXPECT_EQ(r["summary"]["workload"], "checkpoint");
  EXPECT_EQ(r["block"]["workload"], "block");
  EXPECT_GT(r["block"]["reads"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["carry_data"]["mismatches"], 0);
  // The checkpoint's 4 files read back, and every block read.
  EXPECT_GE(r["carry_data"]["reads_verified"].get<uint64_t>(),
            4 + r["block"]["reads"].get<uint64_t>());
}

TEST_F(Bench, ScenariosItCannotRunAreRefusedNamingTheKey) {
  nlohmann::json r;
  std::string err;
  std::string text = kTraining;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  const std::string pfs = write_scenario(
      "pfs.json",
      with(
          R"("storage": {"design": "rados", "rados": {"pg_num": 32, "replicas": 3, "object_size_mib": 1}})",
          R"("storage": {"design": "pfs"})"));
  EXPECT_EQ(bench("run", pfs, &r, &err), 2);
  EXPECT_NE(err.find("pfs.json: storage.design"), std::string::npos) << err;
  const std::string two = write_scenario("two.json", with(R"("replicas": 3)", R"("replicas": 2)"));
  EXPECT_EQ(bench("run", two, &r, &err), 2);
  EXPECT_NE(err.find("two.json: storage.rados: replicas 2, pg_num 32: must be the cluster "
                     "file's pool (replicas 3, pg_num 32)"),
            std::string::npos)
      << err;
  const std::string coded =
      write_scenario("coded.json", with(R"("replicas": 3)", R"("erasure": {"k": 2, "m": 1})"));
  EXPECT_EQ(bench("run", coded, &r, &err), 2);
  EXPECT_NE(err.find("coded.json: storage.rados: erasure k 2 m 1, pg_num 32: must be the "
                     "cluster file's pool (replicas 3, pg_num 32)"),
            std::string::npos)
      << err;
  const std::string failing = write_scenario(
      "failing.json", with(R"("workloads")", R"("failures": [{"at_s": 1, "kind": "osd_crash",
      "osd": 0}], "workloads")"));
  EXPECT_EQ(bench("run", failing, &r, &err), 2);
  EXPECT_NE(err.find("failing.json: failures"), std::string::npos) << err;
  const std::string clone = write_scenario("clone.json", scenario_json("real-clone", 3, R"(
  {"name": "vm", "type": "block", "volume": {"size_gib": 0.03125, "clone": true}})"));
  EXPECT_EQ(bench("run", clone, &r, &err), 2);
  EXPECT_NE(err.find("clone.json: workloads[0].volume.clone: clones are not run by granary-bench"),
            std::string::npos)
      << err;
  EXPECT_EQ(bench("run", dir_ + "/absent.json", &r, &err), 2);
  EXPECT_NE(err.find("absent.json"), std::string::npos) << err;
}

}  // namespace
}  // namespace granary::realmode

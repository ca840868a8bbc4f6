// A real-mode pfs as processes on loopback: granary-mds and three granary-osd daemons serving
// as OSTs (one per storage host), and a client in this process that learns each file's layout
// from the MDS. Two writers write files of known content all the time (a create on the MDS,
// the stripes to the OSTs the layout names, a close that records the size: acknowledged once
// the close returns) while the MDS is killed with SIGKILL and restarted on its drive, twice.
// Writes whose create or close meets the dead MDS fail (the client's metadata operation times
// out) and are not acknowledged; a close that reaches the restarted MDS, which holds no handle
// for it, replays the file's open first and is acknowledged. Then every acknowledged file is
// in the restarted MDS's namespace and reads back byte for byte through the layout it serves,
// and the daemons stop cleanly on SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/services/client.h"
#include "realmode/cluster_process.h"
#include "tests/engine/e2e/file_content.h"
#include "tests/realmode/daemons.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode {
namespace {

using test::Daemon;
using test::read_file;

constexpr int kOsts = 3;
constexpr HostId kMdsHost = kOsts;
constexpr HostId kClientHost = kOsts + 1;

using granary::test::file_content;

class PfsCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::loopback_cluster({"oss0", "oss1", "oss2", "mds", "client"}, kOsts, &config_);
    ASSERT_FALSE(dir_.empty());
    config_.names = {{"c", kClientHost}};
    config_.replicas = 0;
    config_.pfs = ClusterPfs{kMdsHost, dir_ + "/mdt.img", 32ull << 20, 64 << 10, 2};
    config_.op_timeout_s = 1;
    const std::string path = dir_ + "/cluster.json";
    std::ofstream(path) << cluster_config_json(config_);
    mds_ = std::make_unique<Daemon>(std::vector<std::string>{GRANARY_MDS_BINARY, "--config", path},
                                    dir_ + "/mds.log");
    for (int i = 0; i < kOsts; ++i) {
      osts_.push_back(
          std::make_unique<Daemon>(std::vector<std::string>{GRANARY_OSD_BINARY, "--config", path,
                                                            "--osd", std::to_string(i)},
                                   dir_ + "/ost." + std::to_string(i) + ".log"));
    }
  }
  void TearDown() override {
    if (HasFailure() || getenv("GRANARY_TEST_LOGS") != nullptr) std::printf("%s", logs().c_str());
    osts_.clear();
    mds_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string logs() const {
    std::string out = "---- " + mds_->log() + "\n" + read_file(mds_->log());
    for (const auto& d : osts_) out += "---- " + d->log() + "\n" + read_file(d->log());
    return out;
  }

  std::string dir_;
  ClusterConfig config_;
  std::unique_ptr<Daemon> mds_;
  std::vector<std::unique_ptr<Daemon>> osts_;
};

TEST_F(PfsCluster, FilesAcknowledgedAcrossMdsKillsAreKeptWithTheirLayoutsAndBytes) {
  mds_->start({"--mkfs"});
  for (auto& d : osts_) d->start({"--mkfs"});
  ASSERT_TRUE(mds_->wait_serving()) << logs();
  for (auto& d : osts_) ASSERT_TRUE(d->wait_serving()) << logs();
  auto opened = ClusterProcess::open(config_, kClientHost, 5);
  if (!opened.ok() && opened.status().code() == Status::Code::kNotSupported)
    GTEST_SKIP() << opened.status().message();
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  ClusterProcess& p = **opened;
  services::PfsBackend backend = p.pfs_backend();
  backend.max_request_bytes = 128 << 10;
  backend.window_requests = 4;
  services::StorageClient writer(p.env(), kClientHost, backend,
                                 services::StorageClientOptions{.name = "c.w"});
  std::mutex mu;
  std::map<std::string, uint64_t> acked;
  size_t unacked = 0;
  std::atomic<bool> stop{false};
  for (int t = 0; t < 2; ++t) {
    p.env().spawn(kClientHost, "writer" + std::to_string(t), [&, t] {
      for (int n = 0; !stop.load(); ++n) {
        const std::string path = "ckpt/w" + std::to_string(t) + "/f" + std::to_string(n);
        const uint64_t size = 1 + (static_cast<uint64_t>(n) * 40961 + t * 7919) % (300 << 10);
        Result<services::FileWrite> w = writer.write_file(path, file_content(path, size));
        std::lock_guard lock(mu);
        if (w.ok()) {
          acked[path] = size;
        } else {
          ++unacked;
        }
      }
    });
  }
  std::thread run([&] { EXPECT_TRUE(p.env().run().ok()); });
  auto acked_count = [&] {
    std::lock_guard lock(mu);
    return acked.size();
  };
  auto wait_acked = [&](size_t n) {
    for (int i = 0; i < 600 && acked_count() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return acked_count() >= n;
  };
  std::vector<size_t> acked_at_kill;
  for (int kill = 0; kill < 2; ++kill) {
    EXPECT_TRUE(wait_acked(acked_count() + 15)) << logs();
    acked_at_kill.push_back(acked_count());
    EXPECT_EQ(mds_->kill_now(SIGKILL), -SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    mds_->start();
    ASSERT_TRUE(mds_->wait_serving()) << logs();
  }
  EXPECT_TRUE(wait_acked(acked_count() + 15)) << logs();
  stop = true;
  run.join();

  // A new client reads every acknowledged file by the layouts the restarted MDS serves.
  services::StorageClient reader(p.env(), kClientHost, backend,
                                 services::StorageClientOptions{.name = "c.r"});
  size_t verified = 0;
  std::string first_problem;
  p.env().spawn(kClientHost, "verify", [&] {
    for (const auto& [path, size] : acked) {
      Buffer data;
      Result<services::FileRead> r = reader.read_file(path, size, &data);
      const Payload want = file_content(path, size);
      if (!r.ok() || data.size() != size ||
          !std::equal(data.span().begin(), data.span().end(), want.bytes.span().begin())) {
        if (first_problem.empty()) {
          first_problem = path + ": " + (r.ok() ? "other bytes" : r.status().to_string());
        }
        continue;
      }
      if (Status closed = reader.close_file(path); !closed.ok() && first_problem.empty()) {
        first_problem = path + ": " + closed.to_string();
      }
      ++verified;
    }
  });
  EXPECT_TRUE(p.env().run().ok());
  EXPECT_EQ(verified, acked.size()) << first_problem;
  // The second restart found at least the files acknowledged before the second kill.
  const std::string log = read_file(mds_->log());
  EXPECT_EQ(test::count_of(log, "mds.0: mounted"), 3u) << log;
  std::printf(
      "pfs: the MDS killed at %zu and %zu acknowledged files, restarted; %zu acknowledged, "
      "%zu not; %zu read back whole\n",
      acked_at_kill[0], acked_at_kill[1], acked.size(), unacked, verified);
  for (auto& d : osts_) EXPECT_EQ(d->kill_now(SIGTERM), 0) << logs();
  EXPECT_EQ(mds_->kill_now(SIGTERM), 0) << logs();
}

}  // namespace
}  // namespace granary::realmode

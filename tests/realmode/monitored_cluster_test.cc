// A real-mode cluster with a monitor, as processes on loopback: granary-mon and four
// granary-osd daemons (one per storage host), and a client in this process following the
// monitor's maps. It runs twice: with a 3x replicated pool (copies on distinct hosts) and with
// an erasure-coded 2+1 pool (each object's stripes split into 2 data and 1 parity chunk, the
// three shards on distinct hosts; a read the primary gathers, rebuilding a missing shard's
// chunks from the other two; peering decodes what a shard missed). Two readers check objects
// written before, two writers write new ones, all the time:
//  1. osd.1 is killed with SIGKILL mid-I/O. The monitor marks it down once its heartbeats stop
//     (interval + grace); the PGs it served peer among the others and I/O goes on through the
//     new primaries (erasure-coded: degraded, its shard's position empty), with no read
//     failing and no read returning other bytes.
//  2. osd.1 restarts on its drive (journal replay). The monitor sees a new incarnation (or a
//     heartbeat from a down OSD) and marks it up; the PGs it is in start a new interval, their
//     primaries peer them and push what it missed while away; client I/O to a PG waits until
//     the PG is active again.
//  0. (replicated) every block of osd.0's drive becomes unreadable for a while (latent sector
//     errors, its fault file's bad_ranges): its client reads are repaired from the replicas
//     and it serves on.
//  3. osd.2's drive fails (its fault file: every I/O returns EIO) and the daemon stops itself
//     at its next I/O, mid-write or mid-read; it stays dead. The monitor marks it down, then out
//     after down_out_interval_s: CRUSH gives its PGs to the remaining OSDs, whose primaries copy
//     the objects to the new members (a backfill by pushes).
// Then every acknowledged write reads back exactly as written, a deep scrub of every PG's acting
// set finds no bad and no stale copy (erasure-coded: every shard present, its parity the
// encoding of its data), and the daemons still up stop cleanly on SIGTERM.
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

#include "engine/recovery/peering.h"
#include "engine/services/client.h"
#include "realmode/cluster_process.h"
#include "tests/realmode/daemons.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode {
namespace {

using test::Daemon;
using test::read_file;

constexpr int kOsds = 4;
constexpr HostId kMonHost = kOsds;
constexpr HostId kClientHost = kOsds + 1;

// What the client saw.
struct Tally {
  std::mutex mu;
  std::map<std::string, Payload> acked;  // by name
  std::vector<std::string> unacked;
  uint64_t reads = 0, read_errors = 0, read_mismatches = 0;
  std::string first_read_error;
  size_t acked_count() {
    std::lock_guard lock(mu);
    return acked.size();
  }
  uint64_t reads_now() {
    std::lock_guard lock(mu);
    return reads;
  }
};

struct Workload;

// The pool a run places with.
struct Pool {
  const char* name;
  int replicas;      // 0: erasure-coded
  ErasureCoding ec;  // k = 0: replicated
};

class MonitoredCluster : public ::testing::TestWithParam<Pool> {
 protected:
  void SetUp() override {
    dir_ = test::loopback_cluster({"storage0", "storage1", "storage2", "storage3", "mon", "client"},
                                  kOsds, &config_);
    ASSERT_FALSE(dir_.empty());
    config_.names = {{"c3", kClientHost}, {"scrub", kClientHost}};
    // The writers write for the whole run (some 20-45 MB of objects in its 20 s), which
    // the three OSDs left after osd.2 goes out hold 3x replicated with room to spare (a full
    // drive fails the pushes that would recover onto it, and the PGs then stay inactive).
    for (ClusterOsd& o : config_.osds) o.drive_bytes = 192ull << 20;
    config_.replicas = GetParam().replicas;
    config_.ec = GetParam().ec;
    config_.monitor = ClusterMonitor{kMonHost, 0.5, 1.5, 3};
    const std::string path = dir_ + "/cluster.json";
    std::ofstream(path) << cluster_config_json(config_);
    mon_ = std::make_unique<Daemon>(std::vector<std::string>{GRANARY_MON_BINARY, "--config", path},
                                    dir_ + "/mon.log");
    for (int i = 0; i < kOsds; ++i) {
      osds_.push_back(std::make_unique<Daemon>(
          std::vector<std::string>{GRANARY_OSD_BINARY, "--config", path, "--osd", std::to_string(i),
                                   "--fault-file", fault_file(i)},
          dir_ + "/osd." + std::to_string(i) + ".log"));
    }
  }
  void TearDown() override {
    // (GRANARY_TEST_LOGS=1 prints the daemons' logs of a passing run too.)
    if (HasFailure() || getenv("GRANARY_TEST_LOGS") != nullptr) std::printf("%s", logs().c_str());
    osds_.clear();
    mon_.reset();
    std::filesystem::remove_all(dir_);
  }
  // OSD i's fault file (granary-osd --fault-file), absent until a step writes it.
  std::string fault_file(int i) const { return dir_ + "/osd." + std::to_string(i) + ".faults"; }
  std::string logs() const {
    std::string out = "---- " + mon_->log() + "\n" + read_file(mon_->log());
    for (const auto& d : osds_) out += "---- " + d->log() + "\n" + read_file(d->log());
    return out;
  }
  // The copies the OSDs' peering pushed, as their logs say, summed.
  uint64_t pushes_logged() const {
    uint64_t n = 0;
    for (const auto& d : osds_) {
      const std::string log = read_file(d->log());
      for (size_t at = log.find(" stale copies, "); at != std::string::npos;
           at = log.find(" stale copies, ", at + 1)) {
        n += std::strtoull(log.c_str() + at + 15, nullptr, 10);
      }
    }
    return n;
  }

  size_t kill_restart_and_mark_out(ClusterProcess& p, Tally& tally);
  void verify(ClusterProcess& p, Workload& w, Tally& tally, recovery::PeeringReport* scrubbed);

  std::string dir_;
  ClusterConfig config_;
  std::unique_ptr<Daemon> mon_;
  std::vector<std::unique_ptr<Daemon>> osds_;
};

// The client process's tasks: readers and writers until `stop`, then the verification.
struct Workload {
  Workload(ClusterProcess& p, Tally& t)
      : process(p), env(p.env()), tally(t), storage(env, kClientHost, backend(), opts()) {}
  services::RadosBackend backend() { return process.rados_backend(); }
  static services::StorageClientOptions opts() { return {.name = "c3"}; }

  void writer(int w) {
    Random rng(w + 1);
    for (int i = 0; !stop.load(); ++i) {
      const size_t n = 1 + rng.uniform(i % 5 == 0 ? 100'000 : 10'000);
      MutableBuffer b = env.allocate(n);
      for (auto& x : b) x = static_cast<std::byte>(rng.next_u64());
      const std::string name = "w/" + std::to_string(w) + "." + std::to_string(i);
      const Payload data = Payload::of(std::move(b).freeze());
      const bool ok = storage.write_file(name, data).ok();
      std::lock_guard lock(tally.mu);
      if (ok) {
        tally.acked[name] = data;
      } else {
        tally.unacked.push_back(name);
      }
    }
  }
  void reader(int r) {
    Random rng(100 + r);
    Buffer got;
    while (!stop.load()) {
      std::string name;
      Payload want;
      {
        std::lock_guard lock(tally.mu);
        if (tally.acked.empty()) {
          name.clear();
        } else {
          auto it = tally.acked.begin();
          std::advance(it, static_cast<long>(rng.uniform(tally.acked.size())));
          name = it->first;
          want = it->second;
        }
      }
      if (name.empty()) {
        env.sleep_s(0.01);
        continue;
      }
      Result<services::FileRead> rd = storage.read_file(name, want.size_bytes, &got);
      std::lock_guard lock(tally.mu);
      ++tally.reads;
      if (!rd.ok()) {
        if (tally.read_errors++ == 0)
          tally.first_read_error = name + ": " + rd.status().to_string();
      } else if (got != want.bytes) {
        ++tally.read_mismatches;
      }
    }
  }

  ClusterProcess& process;
  RealEnv& env;
  Tally& tally;
  services::StorageClient storage;
  std::atomic<bool> stop{false};
};

// Waits up to `seconds` until `more_acked` more writes are acknowledged and `more_reads` more
// reads done.
bool progress(Tally& tally, size_t more_acked, uint64_t more_reads, double seconds) {
  const size_t a = tally.acked_count() + more_acked;
  const uint64_t r = tally.reads_now() + more_reads;
  for (double waited = 0; waited < seconds; waited += 0.05) {
    if (tally.acked_count() >= a && tally.reads_now() >= r) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The three failures, with the workload running; the acknowledged writes when osd.1 died.
size_t MonitoredCluster::kill_restart_and_mark_out(ClusterProcess& p, Tally& tally) {
  bool ok = progress(tally, 60, 100, 30);
  EXPECT_TRUE(ok) << "I/O before the first kill";

  // 0. (replicated) Latent sector errors: every block of osd.0's drive becomes unreadable (its
  // fault file's bad_ranges); a client read of a copy it holds as primary is repaired from a
  // replica (the object rewritten onto other blocks, which a write makes good), no read fails
  // and the daemon serves on. Then the drive reads again.
  if (GetParam().ec.k == 0) {
    std::ofstream(fault_file(0)) << R"({"bad_ranges": [[0, )" << (192ull << 20) << "]]}";
    ok = ok && osds_[0]->wait_logged("osd.0: 49152 unreadable blocks on the drive", 5);
    ok = ok && progress(tally, 20, 100, 30);
    EXPECT_TRUE(ok) << "I/O with osd.0's blocks unreadable";
    std::ofstream(fault_file(0)) << "{}";
    ok = ok && osds_[0]->wait_logged("osd.0: 0 unreadable blocks on the drive", 5);
    EXPECT_TRUE(ok) << "osd.0's drive reads again";
    EXPECT_EQ(osds_[0]->wait_exit(0.01), Daemon::kStillRunning) << "osd.0 served on";
  }

  // 1. osd.1 dies mid-I/O; marked down; I/O goes on.
  EXPECT_EQ(osds_[1]->kill_now(SIGKILL), -SIGKILL);
  const size_t acked_at_kill = tally.acked_count();
  ok = ok && mon_->wait_logged("down osd.1", 15);
  EXPECT_TRUE(ok) << "the monitor marked osd.1 down";
  ok = ok && progress(tally, 30, 50, 30);
  EXPECT_TRUE(ok) << "I/O went on with osd.1 down";

  // 2. osd.1 comes back: marked up; its PGs peer; what it missed is pushed to it.
  osds_[1]->start();
  ok = ok && osds_[1]->wait_serving() && mon_->wait_logged("up osd.1", 15);
  EXPECT_TRUE(ok) << "osd.1 restarted and was marked up";
  ok = ok && progress(tally, 30, 50, 30);
  EXPECT_TRUE(ok) << "I/O after osd.1 came back (the client at epoch " << p.map_client()->epoch()
                  << ")";

  // 3. osd.2's drive fails: every I/O returns EIO and the daemon stops itself at its next one,
  // mid-I/O (exit status 3, as ceph-osd aborts on an EIO); it stays dead: down, then out; its
  // PGs are copied to other OSDs.
  std::ofstream(fault_file(2)) << R"({"failed": true})";
  EXPECT_EQ(osds_[2]->wait_exit(10), kDriveErrorExitStatus) << logs();
  ok = ok && mon_->wait_logged("out osd.2", 20);
  EXPECT_TRUE(ok) << "the monitor marked osd.2 out";
  ok = ok && progress(tally, 30, 50, 30);
  EXPECT_TRUE(ok) << "I/O after osd.2 went out";
  return acked_at_kill;
}

// Every acknowledged write, exactly; then a deep scrub of every PG's acting set.
void MonitoredCluster::verify(ClusterProcess& p, Workload& w, Tally& tally,
                              recovery::PeeringReport* scrubbed) {
  int lost = 0, corrupted = 0;
  bool scrub_ok = false;
  p.env().spawn(kClientHost, "verify", [&] {
    Buffer got;
    for (const auto& [name, data] : tally.acked) {
      if (lost + corrupted >= 3) break;
      auto rd = w.storage.read_file(name, data.size_bytes, &got);
      if (!rd.ok()) {
        ++lost;
        ADD_FAILURE() << "acknowledged " << name << ": " << rd.status().to_string();
      } else if (got != data.bytes) {
        ++corrupted;
        size_t at = 0;
        const size_t n = std::min(got.size(), data.bytes.size());
        while (at < n && got.data()[at] == data.bytes.data()[at]) ++at;
        size_t last = n;
        while (last > at && got.data()[last - 1] != data.bytes.data()[last - 1]) --last;
        ADD_FAILURE() << "acknowledged " << name << " (pg "
                      << p.placement().group_of(name + ".0000000000000000")
                      << ") reads other bytes: " << got.size() << " read, " << data.size_bytes
                      << " written, first difference at " << at << ", same again from " << last;
      }
    }
    recovery::PeeringOptions o;
    o.reply_endpoint = "scrub.r";
    o.deep = true;
    o.timeout_s = 10;
    o.ec = config_.ec;
    placement::Placement* placement = &p.placement();
    o.pg_of = [placement](const std::string& n) { return placement->group_of(n); };
    auto s = recovery::peer(p.env(), kClientHost, recovery::pg_members(*placement), o);
    scrub_ok = s.ok();
    if (s.ok()) *scrubbed = *s;
    EXPECT_TRUE(s.ok()) << s.status().to_string();
  });
  EXPECT_TRUE(p.env().run().ok());
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(corrupted, 0);
  EXPECT_TRUE(scrub_ok);
  EXPECT_EQ(scrubbed->scrub_errors, 0u);
  EXPECT_EQ(scrubbed->stale_copies, 0u);
}

TEST_P(MonitoredCluster, OsdsKilledDuringReadsAndWritesAreMarkedDownOutAndRecovered) {
  mon_->start();
  ASSERT_TRUE(mon_->wait_serving()) << logs();
  for (auto& d : osds_) d->start({"--mkfs"});
  for (auto& d : osds_) ASSERT_TRUE(d->wait_serving()) << logs();
  auto opened = ClusterProcess::open(config_, kClientHost, 99);
  if (!opened.ok() && opened.status().code() == Status::Code::kNotSupported)
    GTEST_SKIP() << opened.status().message();
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  ClusterProcess& p = **opened;
  ASSERT_TRUE(p.follow_maps("c3.map").ok());
  Tally tally;
  Workload w(p, tally);
  for (int i = 0; i < 2; ++i) {
    p.env().spawn(kClientHost, "writer" + std::to_string(i), [&w, i] { w.writer(i); });
    p.env().spawn(kClientHost, "reader" + std::to_string(i), [&w, i] { w.reader(i); });
  }
  std::thread run([&] { EXPECT_TRUE(p.env().run().ok()); });
  const size_t acked_at_kill = kill_restart_and_mark_out(p, tally);
  w.stop = true;
  run.join();
  EXPECT_EQ(tally.read_errors, 0u) << tally.first_read_error;
  EXPECT_EQ(tally.read_mismatches, 0u);

  recovery::PeeringReport scrubbed;
  verify(p, w, tally, &scrubbed);
  const uint64_t pushed = pushes_logged();
  EXPECT_GT(pushed, 0u) << "peering pushed the copies osd.1 missed and the PGs osd.2 left";
  std::printf(
      "%s: osd.1 killed at %zu acknowledged writes, back, osd.2 stopped by its drive's EIO and "
      "out; %zu acknowledged, "
      "%zu not; %llu reads, %llu failed; peering pushed %llu copies; epoch %u; scrub read "
      "%llu copies\n",
      GetParam().name, acked_at_kill, tally.acked.size(), tally.unacked.size(),
      static_cast<unsigned long long>(tally.reads),
      static_cast<unsigned long long>(tally.read_errors), static_cast<unsigned long long>(pushed),
      p.map_client()->epoch(), static_cast<unsigned long long>(scrubbed.scrubbed_copies));
  for (int i : {0, 1, 3}) EXPECT_EQ(osds_[static_cast<size_t>(i)]->kill_now(SIGTERM), 0) << logs();
  EXPECT_EQ(mon_->kill_now(SIGTERM), 0) << logs();
  if (GetParam().ec.k == 0) {
    // osd.0's unreadable copies, read as a primary, were rewritten from their replicas.
    const std::string log = read_file(osds_[0]->log());
    const size_t at = log.find("copies rewritten by read repair");
    ASSERT_NE(at, std::string::npos) << log;
    const size_t from = log.rfind('(', at);
    std::printf("osd.0 rewrote %s copies from their replicas (read repair)\n",
                log.substr(from + 1, at - from - 2).c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Pools, MonitoredCluster,
                         ::testing::Values(Pool{"Replicated3", 3, {}},
                                           Pool{"Erasure2Plus1", 0, {2, 1, 4096}}),
                         [](const ::testing::TestParamInfo<Pool>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace granary::realmode

// granary-osd as real processes: three OSD daemons on loopback, each a process of its own on a
// drive file through io_uring, and a client in this process (ClusterProcess + StorageClient)
// writing objects of random content to a 3x replicated pool with four writer tasks. One OSD
// kills itself (SIGKILL) halfway through its 40th journal write (granary-osd
// --kill-at-journal-write: the write's first 512-byte sectors synced, the rest never written:
// a torn journal write, the one place a crash can tear the store's metadata);
// writes stall (every PG has a copy on it and no monitor marks it down: primaries time out on
// it, sub_op_s, and fail those writes unacknowledged); it restarts on its drive (journal replay),
// the peers re-authenticate with the new process, writes are acknowledged again, the client
// peers every PG (recovery pushes what the dead OSD missed), and every acknowledged object
// reads back exactly as written; a deep scrub then finds every copy consistent. Then, with all
// daemons stopped, one byte of an object's copy on a drive is flipped: after a restart the deep
// scrub finds exactly that copy bad and rewrites it from the others, and the next finds none.
// Before all this, a peer of the table without the cluster key is refused by a daemon and
// garbage from an authenticated one (random bytes, cut and corrupted frames) is refused and
// logged while the daemon serves on (oversized datagrams are in transport_test.cc: see
// realmode/README.md on closing an endpoint after one). Every daemon stops cleanly (exit 0) on
// SIGTERM.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "engine/recovery/peering.h"
#include "engine/services/client.h"
#include "engine/services/file_mapping.h"
#include "engine/store/disk_store.h"
#include "realmode/cluster_process.h"
#include "realmode/codec.h"
#include "realmode/uring_device.h"
#include "tests/realmode/daemons.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode {
namespace {

constexpr int kOsds = 3;
constexpr HostId kClientHost = kOsds;
constexpr HostId kRogueHost = kOsds + 1;  // in the table, without the cluster key

using test::Daemon;
using test::read_file;

struct Client;
struct Writes;

class OsdDaemons : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::loopback_cluster({"storage0", "storage1", "storage2", "client", "rogue"}, kOsds,
                                  &config_);
    ASSERT_FALSE(dir_.empty());
    config_.names = {{"c3", kClientHost}, {"peer", kClientHost}, {"scrub", kClientHost}};
    config_.replicas = 3;
    config_path_ = dir_ + "/cluster.json";
    std::ofstream(config_path_) << cluster_config_json(config_);
    auto reread = load_cluster_config(config_path_);
    ASSERT_TRUE(reread.ok()) << reread.status().to_string();
    for (int i = 0; i < kOsds; ++i) {
      daemons_.push_back(std::make_unique<Daemon>(
          std::vector<std::string>{GRANARY_OSD_BINARY, "--config", config_path_, "--osd",
                                   std::to_string(i)},
          dir_ + "/osd." + std::to_string(i) + ".log"));
    }
  }
  void TearDown() override {
    if (HasFailure()) std::printf("%s", logs().c_str());
    daemons_.clear();
    std::filesystem::remove_all(dir_);
  }
  // The daemon logs, for a failure's message.
  std::string logs() const {
    std::string out;
    for (const auto& d : daemons_) out += "---- " + d->log() + "\n" + read_file(d->log());
    return out;
  }

  void refuse_rogue_and_garbage(ClusterProcess& p);
  void write_through_a_kill(Client& c, Writes& writes, size_t* acked_at_kill,
                            size_t* acked_at_restart);
  void verify_after_recovery(Client& c, Writes& writes, recovery::PeeringReport* peered,
                             recovery::PeeringReport* scrubbed);

  std::string dir_, config_path_;
  ClusterConfig config_;
  std::vector<std::unique_ptr<Daemon>> daemons_;
};

recovery::PeeringOptions peering(placement::Placement& placement, bool deep) {
  recovery::PeeringOptions o;
  o.reply_endpoint = deep ? "scrub.r" : "peer.r";
  o.deep = deep;
  o.timeout_s = 10;
  o.pg_of = [&placement](const std::string& n) { return placement.group_of(n); };
  return o;
}

// What the writers wrote: acknowledged or not, by name.
struct Writes {
  std::mutex mu;
  std::map<std::string, Payload> acked, unacked;
  size_t acked_count() {
    std::lock_guard lock(mu);
    return acked.size();
  }
  // Waits up to `seconds` until `n` writes are acknowledged.
  void wait_acked(size_t n, double seconds) {
    for (double waited = 0; waited < seconds && acked_count() < n; waited += 0.05) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
};

// The client's side of the test: its process, the ring, a StorageClient on the pool.
struct Client {
  explicit Client(ClusterProcess& process)
      : p(process),
        env(process.env()),
        placement(process.placement()),
        backend(make_backend()),
        storage(env, kClientHost, backend, services::StorageClientOptions{.name = "c3"}) {}
  services::RadosBackend make_backend() { return p.rados_backend(); }
  Result<recovery::PeeringReport> peer_all(bool deep) {
    return recovery::peer(env, kClientHost, recovery::pg_members(placement),
                          peering(placement, deep));
  }
  ClusterProcess& p;
  RealEnv& env;
  placement::Placement& placement;
  services::RadosBackend backend;
  services::StorageClient storage;
};

// A peer of the table without the cluster key is refused by osd.0 (PermissionDenied, logged),
// and garbage from an authenticated peer (random bytes, a frame cut short, one with a flipped
// byte) is refused and logged.
void OsdDaemons::refuse_rogue_and_garbage(ClusterProcess& p) {
  const ScanRequest scan{.request_id = 1, .pg = 0, .all_pgs = false, .reply_to = "c3.ignored"};
  {
    TransportOptions t;
    t.host = kRogueHost;
    t.hosts = config_.addresses();
    auto other = ClusterKey::generate();
    ASSERT_TRUE(other.ok());
    t.key = *other;
    t.handshake_timeout_s = 2;
    auto rogue = Transport::open(
        t, [](HostId, std::string, Message) {}, [](const std::string&) {});
    ASSERT_TRUE(rogue.ok()) << rogue.status().to_string();
    const Status refused = (*rogue)->send(0, "osd.0", Message{scan, {}});
    EXPECT_EQ(refused.code(), Status::Code::kPermissionDenied) << refused.to_string();
  }
  EXPECT_TRUE(p.transport().send(0, "osd.0", Message{scan, {}}).ok());  // authenticates
  Random junk(5);
  for (size_t n : {1ul, 39ul, 40ul, 41ul, 1000ul, 60000ul}) {
    std::vector<std::byte> bytes(n);
    for (auto& b : bytes) b = static_cast<std::byte>(junk.next_u64());
    EXPECT_TRUE(p.transport().send_raw(0, bytes).ok());
  }
  auto frame =
      encode_message(Message{scan, Payload::of(Buffer::copy_of(std::vector<std::byte>(500)))}, 7);
  ASSERT_TRUE(frame.ok());
  EXPECT_TRUE(p.transport().send_raw(0, {frame->begin(), frame->begin() + 100}).ok());
  std::vector<std::byte> flipped = *frame;
  flipped[300] ^= std::byte{1};
  EXPECT_TRUE(p.transport().send_raw(0, flipped).ok());
  EXPECT_TRUE(daemons_[0]->wait_logged("authentication failed")) << logs();
  EXPECT_TRUE(daemons_[0]->wait_logged("frame 7 data crc32c")) << logs();  // the last refusal
}

// A name whose object's primary is not osd.1: written while osd.1 is dead, its primary and
// the other replica apply it and the write fails (osd.1 silent past sub_op_s), so osd.1 has
// certainly missed one write when it comes back.
std::string a_name_osd1_is_not_primary_of(placement::Placement& placement) {
  std::vector<int32_t> acting;
  for (int i = 0;; ++i) {
    const std::string name = "missed/" + std::to_string(i);
    placement.devices_of(placement.group_of(services::rados_object_name(name, 0)), acting);
    if (!acting.empty() && acting[0] != 1) return name;
  }
}

// Four writers write objects of random content until told to stop; osd.1 kills itself halfway
// through its 40th journal write (started so by the test) and is restarted 1.5 s later. Every PG
// has a copy on osd.1 (three OSDs, three copies) and no monitor marks it down, so writes stall
// while it is away; once it is back they are acknowledged again (40 more, waited for up to 15 s).
// While it is away a fifth task writes one object whose primary is another OSD (recorded unacked
// when it fails, as it must): the restart waits for that write to end.
void OsdDaemons::write_through_a_kill(Client& c, Writes& writes, size_t* acked_at_kill,
                                      size_t* acked_at_restart) {
  std::atomic<bool> writing{true};
  std::atomic<int> missed{0};  // 1: osd.1 is dead, write; 2: written
  const std::string missed_name = a_name_osd1_is_not_primary_of(c.placement);
  c.env.spawn(kClientHost, "missed", [&] {
    while (missed.load() == 0 && writing.load()) c.env.sleep_s(0.01);
    if (!writing.load()) return;
    MutableBuffer b = c.env.allocate(4096);
    for (auto& x : b) x = std::byte{0x6d};
    const Payload data = Payload::of(std::move(b).freeze());
    const bool ok = c.storage.write_file(missed_name, data).ok();
    EXPECT_FALSE(ok) << missed_name << " acknowledged with osd.1 dead";
    {
      std::lock_guard lock(writes.mu);
      (ok ? writes.acked : writes.unacked)[missed_name] = data;
    }
    missed = 2;
  });
  for (int w = 0; w < 4; ++w) {
    c.env.spawn(kClientHost, "writer" + std::to_string(w), [&, w] {
      Random rng(w + 1);
      for (int i = 0; writing.load(); ++i) {
        const size_t n = 1 + rng.uniform(i % 5 == 0 ? 300'000 : 20'000);
        MutableBuffer b = c.env.allocate(n);
        for (auto& x : b) x = static_cast<std::byte>(rng.next_u64());
        const std::string name = "r/" + std::to_string(w) + "." + std::to_string(i);
        const Payload data = Payload::of(std::move(b).freeze());
        const bool ok = c.storage.write_file(name, data).ok();
        std::lock_guard lock(writes.mu);
        (ok ? writes.acked : writes.unacked)[name] = data;
      }
    });
  }
  std::thread run([&] { EXPECT_TRUE(c.env.run().ok()); });
  // 1-2 s here; longer under the sanitizers.
  EXPECT_EQ(daemons_[1]->wait_exit(60), -SIGKILL) << "osd.1 did not kill itself";
  EXPECT_TRUE(daemons_[1]->wait_logged("killing itself in journal write 40")) << logs();
  *acked_at_kill = writes.acked_count();
  missed = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (int waited = 0; waited < 200 && missed.load() != 2; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(missed.load(), 2) << "the write osd.1 misses did not end within 11.5 s";
  daemons_[1]->start();
  const bool serving = daemons_[1]->wait_serving();
  *acked_at_restart = writes.acked_count();
  if (serving) writes.wait_acked(*acked_at_restart + 40, 15);
  writing = false;
  run.join();
  ASSERT_TRUE(serving) << logs();
}

// Peers every PG (recovery pushes what osd.1 missed), reads every acknowledged object back
// (each must be exactly as written; an unacknowledged one may be absent, or exactly as
// written), then deep-scrubs.
void OsdDaemons::verify_after_recovery(Client& c, Writes& writes, recovery::PeeringReport* peered,
                                       recovery::PeeringReport* scrubbed) {
  int lost = 0, corrupted = 0;
  c.env.spawn(kClientHost, "verify", [&] {
    auto r = c.peer_all(/*deep=*/false);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    *peered = *r;
    Buffer got;
    for (const auto& [name, data] : writes.acked) {
      if (lost + corrupted >= 3) break;  // the logs will say why; no need to wait out the rest
      auto rd = c.storage.read_file(name, data.size_bytes, &got);
      if (!rd.ok()) {
        ++lost;
        ADD_FAILURE() << "acknowledged " << name << " (pg " << c.placement.group_of(name)
                      << "): " << rd.status().to_string();
      } else if (got != data.bytes) {
        ++corrupted;
        ADD_FAILURE() << "acknowledged " << name << " reads other bytes";
      }
    }
    for (const auto& [name, data] : writes.unacked) {
      auto rd = c.storage.read_file(name, data.size_bytes, &got);
      if (rd.ok() && got != data.bytes) {
        ++corrupted;
        ADD_FAILURE() << "unacknowledged " << name << " reads other bytes";
      }
    }
    auto s = c.peer_all(/*deep=*/true);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    *scrubbed = *s;
  });
  ASSERT_TRUE(c.env.run().ok());
  EXPECT_EQ(lost, 0) << logs();
  EXPECT_EQ(corrupted, 0);
}

// With the OSD stopped: flips one byte of `object`'s copy on its drive, where the store keeps
// it (as a failing drive or a stray dd would); *at is the byte's offset on the drive.
void flip_a_byte_of(const ClusterOsd& osd, const std::string& object, uint64_t* at) {
  {
    UringDeviceOptions d;
    d.path = osd.drive;
    d.capacity_bytes = osd.drive_bytes;
    auto device = UringDevice::open(d);
    ASSERT_TRUE(device.ok()) << device.status().to_string();
    auto store = store::DiskStore::mount(**device);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    auto extents = (*store)->extents(object);
    ASSERT_TRUE(extents.ok() && !extents->empty()) << object;
    *at = (*extents)[0].device_offset + (*extents)[0].length / 2;
  }
  const int fd = ::open(osd.drive.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char byte = 0;
  ASSERT_EQ(pread(fd, &byte, 1, static_cast<off_t>(*at)), 1);
  byte = static_cast<char>(byte ^ 0x5a);
  ASSERT_EQ(pwrite(fd, &byte, 1, static_cast<off_t>(*at)), 1);
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

TEST_F(OsdDaemons, AnOsdKilledDuringWritesLosesNoAcknowledgedWrite) {
  for (int i = 0; i < kOsds; ++i) {
    if (i == 1) {
      daemons_[1]->start({"--mkfs", "--kill-at-journal-write", "40"});
    } else {
      daemons_[static_cast<size_t>(i)]->start({"--mkfs"});
    }
  }
  for (auto& d : daemons_) ASSERT_TRUE(d->wait_serving()) << logs();
  auto opened = ClusterProcess::open(config_, kClientHost, 99);
  if (!opened.ok() && opened.status().code() == Status::Code::kNotSupported)
    GTEST_SKIP() << opened.status().message();
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  // Before any write, so that everything below runs against the daemon that refused.
  refuse_rogue_and_garbage(**opened);
  Client c(**opened);

  Writes writes;
  size_t acked_at_kill = 0, acked_at_restart = 0;
  write_through_a_kill(c, writes, &acked_at_kill, &acked_at_restart);
  EXPECT_GT(acked_at_kill, 0u);
  EXPECT_GE(writes.acked.size(), acked_at_restart + 40)
      << "writes were acknowledged again after the restart";

  recovery::PeeringReport peered, scrubbed;
  verify_after_recovery(c, writes, &peered, &scrubbed);
  EXPECT_GT(peered.pushes, 0u) << "osd.1 missed at least the write made while it was dead";
  EXPECT_EQ(scrubbed.scrub_errors, 0u);
  EXPECT_EQ(scrubbed.stale_copies, 0u);
  std::printf(
      "osd.1 killed at %zu acknowledged writes; %zu acknowledged, %zu not in all; "
      "peering pushed %llu copies (%llu bytes); scrub read %llu copies\n",
      acked_at_kill, writes.acked.size(), writes.unacked.size(),
      static_cast<unsigned long long>(peered.pushes),
      static_cast<unsigned long long>(peered.bytes_pushed),
      static_cast<unsigned long long>(scrubbed.scrubbed_copies));
  for (auto& d : daemons_) EXPECT_EQ(d->kill_now(SIGTERM), 0) << logs();

  // A corrupted block on a stopped OSD: the deep scrub finds exactly that copy bad and
  // rewrites it from the others; the next scrub finds none.
  ASSERT_FALSE(writes.acked.empty());
  const std::string victim = writes.acked.begin()->first;
  uint64_t at = 0;
  flip_a_byte_of(config_.osds[2], services::rados_object_name(victim, 0), &at);
  if (HasFatalFailure()) return;
  for (auto& d : daemons_) d->start();
  for (auto& d : daemons_) ASSERT_TRUE(d->wait_serving()) << logs();
  recovery::PeeringReport found, clean;
  c.env.spawn(kClientHost, "scrub", [&] {
    auto s = c.peer_all(/*deep=*/true);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    found = *s;
    Buffer got;
    auto rd = c.storage.read_file(victim, writes.acked[victim].size_bytes, &got);
    ASSERT_TRUE(rd.ok()) << rd.status().to_string();
    EXPECT_TRUE(got == writes.acked[victim].bytes);
    s = c.peer_all(/*deep=*/true);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    clean = *s;
  });
  ASSERT_TRUE(c.env.run().ok());
  EXPECT_EQ(found.scrub_errors, 1u) << "the flipped byte";
  EXPECT_EQ(found.pushes, 1u) << "the bad copy rewritten from the good ones";
  EXPECT_EQ(clean.scrub_errors, 0u);
  std::printf(
      "a byte flipped at %llu on osd.2's drive: the deep scrub found %llu bad copy and "
      "rewrote %llu; the next scrub found %llu\n",
      static_cast<unsigned long long>(at), static_cast<unsigned long long>(found.scrub_errors),
      static_cast<unsigned long long>(found.pushes),
      static_cast<unsigned long long>(clean.scrub_errors));
  for (auto& d : daemons_) EXPECT_EQ(d->kill_now(SIGTERM), 0) << logs();
}

}  // namespace
}  // namespace granary::realmode

// End to end with real bytes (issue: the engine becomes the storage system): clients write
// objects of random content to a 3x replicated pool and an erasure-coded 4+2 pool of OSDs that
// keep them in DiskStores, while drives lose power at seeded points (in the middle of journal
// and data writes: MemoryEnv::cut_power_after, then crash_device keeps, drops or tears every
// unflushed write by seed); the crashed OSDs remount (journal replay), peer and recover; at the
// end every object is read back through the clients and compared with what was acknowledged.
// Nothing acknowledged may be lost or corrupted; an object whose write was not acknowledged
// may be absent, but if it reads, it reads exactly as written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "tests/engine/e2e/bytes_cluster.h"
#include "tests/engine/placement/forwarding_placement.h"

namespace granary::e2e {
namespace {

struct E2eTotals {
  uint64_t acked = 0, unacked = 0, lost = 0, corrupted = 0, stale_copies = 0, pushes = 0,
           rolled_back = 0, unrecoverable = 0, crashes = 0;
};

// One seed: `objects` objects (even: replicated, odd: coded) written in `rounds` rounds by 8
// writer tasks; before each round one or two drives get a seeded power cut.
void run_seed(uint64_t seed, int objects, int rounds, E2eTotals& t) {
  BytesCluster c(seed);
  c.format();
  Random rng(seed * 7919 + 1);
  std::map<std::string, Payload> acked, unacked;
  int next = 0;
  for (int round = 0; round < rounds; ++round) {
    // Seeded crash points: after this many more writes and flushes of the drive.
    std::vector<int> victims;
    const int n_victims = 1 + static_cast<int>(rng.uniform(2));
    while (static_cast<int>(victims.size()) < n_victims) {
      const int v = static_cast<int>(rng.uniform(kOsds));
      if (std::find(victims.begin(), victims.end(), v) == victims.end()) victims.push_back(v);
    }
    for (int v : victims) c.env.cut_power_after(v, 20 + rng.uniform(400));
    const int end = objects * (round + 1) / rounds;
    std::vector<std::pair<std::string, Payload>> batch;
    for (; next < end; ++next) {
      const std::string name = (next % 2 == 0 ? "r/" : "e/") + std::to_string(next);
      batch.emplace_back(name, random_payload(rng, 1 + rng.uniform(24 * 1024)));
    }
    c.env.spawn(c.hosts[0], "start", [&] { c.start_services(); });
    for (int w = 0; w < 8; ++w) {
      c.env.spawn(c.client_host, "writer" + std::to_string(w), [&, w] {
        for (size_t i = w; i < batch.size(); i += 8) {
          const auto& [name, data] = batch[i];
          Result<services::FileWrite> r = c.client_for(name).write_file(name, data);
          (r.ok() ? acked : unacked)[name] = data;
        }
      });
    }
    ASSERT_TRUE(c.env.run().ok()) << "seed " << seed;
    // The cut drives' hosts crash; one more drive, healthy, loses power too (nothing unflushed
    // is acknowledged, so it must lose nothing).
    for (int v : victims) c.crash(v, seed * 31 + round);
    const int bystander = static_cast<int>(rng.uniform(kOsds));
    if (c.osds[bystander]) c.crash(bystander, seed * 37 + round);
    t.crashes += victims.size() + 1;
    // Restart, peer, recover.
    c.env.spawn(c.client_host, "peer", [&] {
      c.start_services();
      auto [r, e] = c.peer_all(false);
      t.stale_copies += r.stale_copies + e.stale_copies;
      t.pushes += r.pushes + e.pushes;
      t.rolled_back += e.rolled_back;
      t.unrecoverable += r.unrecoverable.size() + e.unrecoverable.size();
    });
    ASSERT_TRUE(c.env.run().ok()) << "seed " << seed;
  }
  // Everything reads back; a deep scrub then finds every copy consistent.
  c.env.spawn(c.client_host, "verify", [&] {
    c.start_services();
    Buffer got;
    for (const auto& [name, data] : acked) {
      Result<services::FileRead> r = c.client_for(name).read_file(name, data.size_bytes, &got);
      if (!r.ok()) {
        ++t.lost;
        ADD_FAILURE() << "seed " << seed << ": acknowledged " << name << " "
                      << r.status().to_string();
      } else if (got != data.bytes) {
        ++t.corrupted;
        ADD_FAILURE() << "seed " << seed << ": acknowledged " << name << " reads other bytes";
      }
    }
    for (const auto& [name, data] : unacked) {
      Result<services::FileRead> r = c.client_for(name).read_file(name, data.size_bytes, &got);
      if (r.ok() && got != data.bytes) {
        ++t.corrupted;
        ADD_FAILURE() << "seed " << seed << ": unacknowledged " << name << " reads other bytes";
      }
    }
    auto [r, e] = c.peer_all(true);
    EXPECT_EQ(r.scrub_errors + e.scrub_errors, 0u) << "seed " << seed;
    EXPECT_EQ(r.stale_copies + e.stale_copies, 0u) << "seed " << seed;
  });
  ASSERT_TRUE(c.env.run().ok()) << "seed " << seed;
  t.acked += acked.size();
  t.unacked += unacked.size();
}

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

void report(const char* what, uint64_t seeds, int objects, const E2eTotals& t) {
  std::printf(
      "%s: %llu seeds x %d objects: %llu acknowledged, %llu not; %llu crashes; %llu lost, "
      "%llu corrupted; peering found %llu stale copies, pushed %llu, rolled back %llu, "
      "unrecoverable %llu\n",
      what, static_cast<unsigned long long>(seeds), objects,
      static_cast<unsigned long long>(t.acked), static_cast<unsigned long long>(t.unacked),
      static_cast<unsigned long long>(t.crashes), static_cast<unsigned long long>(t.lost),
      static_cast<unsigned long long>(t.corrupted), static_cast<unsigned long long>(t.stale_copies),
      static_cast<unsigned long long>(t.pushes), static_cast<unsigned long long>(t.rolled_back),
      static_cast<unsigned long long>(t.unrecoverable));
}

// 200 seeds in four blocks of 50 (ctest runs the blocks in parallel), each seed writing
// GRANARY_E2E_OBJECTS objects (default 300) in 4 rounds. The soak label
// (soak.BytesEndToEnd) runs the 200 seeds with 10,000 objects each.
class BytesEndToEnd : public ::testing::TestWithParam<int> {};

TEST_P(BytesEndToEnd, AcknowledgedWritesSurviveSeededCrashesOfOsdsAndHosts) {
  const uint64_t first = 1 + 50 * static_cast<uint64_t>(GetParam());
  const uint64_t seeds = env_or("GRANARY_E2E_SEEDS", 50);
  const int objects = static_cast<int>(env_or("GRANARY_E2E_OBJECTS", 300));
  E2eTotals t;
  for (uint64_t s = first; s < first + seeds; ++s) {
    run_seed(s, objects, 4, t);
    if (::testing::Test::HasFatalFailure()) return;
  }
  report("bytes e2e", seeds, objects, t);
  EXPECT_EQ(t.lost, 0u);
  EXPECT_EQ(t.corrupted, 0u);
  EXPECT_GT(t.acked, 0u);
  // The run reaches what it is for: crashes hit writes and peering had work. Over a block of
  // 50 seeds it does; the sanitizer run's 3 seeds per block (GRANARY_E2E_SEEDS) may not (seeds
  // 51-53: 29 crashes, none while a write was in flight, so nothing went stale).
  if (seeds >= 10) {
    EXPECT_GT(t.unacked, 0u);
    EXPECT_GT(t.pushes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(SeedBlocks, BytesEndToEnd, ::testing::Range(0, 4));

// Flips a bit of the device byte at `offset` (a task of the device's host).
void flip(Device& d, uint64_t offset) {
  Result<Payload> b = d.read(offset, 1);
  ASSERT_TRUE(b.ok() && b->bytes);
  MutableBuffer v(1);
  v[0] = b->bytes[0] ^ std::byte{0x10};
  ASSERT_TRUE(d.write(offset, Payload::of(std::move(v).freeze())).ok());
  ASSERT_TRUE(d.flush().ok());
}

// Scrub: a flipped bit in a replica's data, in an erasure-coded parity shard and in a drive's
// journal (metadata) is found, and the copies are repaired from the good ones.
TEST(Scrub, FlippedBitsInDataParityAndMetadataAreFoundAndRepaired) {
  BytesCluster c(5);
  c.format();
  Random rng(5);
  std::map<std::string, Payload> objects;
  for (int i = 0; i < 40; ++i) {
    const std::string name = (i % 2 == 0 ? "r/" : "e/") + std::to_string(i);
    objects[name] = random_payload(rng, 5000 + rng.uniform(30000));
  }
  c.env.spawn(c.client_host, "write", [&] {
    c.start_services();
    for (const auto& [name, data] : objects) {
      ASSERT_TRUE(c.client_for(name).write_file(name, data).ok()) << name;
    }
  });
  ASSERT_TRUE(c.env.run().ok());
  // Where the victims live.
  const std::string r_obj = services::rados_object_name("r/0", 0);
  const std::string e_obj = services::rados_object_name("e/1", 0);
  std::vector<int32_t> r_group, e_group;
  c.ring3.devices_of(c.ring3.group_of(r_obj), r_group);
  c.ring6.devices_of(c.ring6.group_of(e_obj), e_group);
  const int r_osd = r_group[1];  // a replica
  const int e_osd = e_group[5];  // the second parity shard
  auto first_block = [&](int osd, const std::string& obj) {
    Result<std::vector<store::ObjectExtent>> x = c.stores[osd]->extents(obj);
    EXPECT_TRUE(x.ok() && !x->empty());
    return x->front().device_offset + 100;
  };
  const uint64_t r_at = first_block(r_osd, r_obj), e_at = first_block(e_osd, e_obj);
  // Metadata: a drive whose journal holds records after its checkpoint; a flipped bit in the
  // first record ends its replay there, so the objects written after are missing on it.
  const int m_osd = (r_osd + 1) % kOsds == e_osd ? (r_osd + 2) % kOsds : (r_osd + 1) % kOsds;
  c.env.spawn(c.hosts[r_osd], "flip.r", [&] { flip(c.env.device(r_osd), r_at); });
  c.env.spawn(c.hosts[e_osd], "flip.e", [&] { flip(c.env.device(e_osd), e_at); });
  ASSERT_TRUE(c.env.run().ok());
  const size_t m_objects = c.stores[m_osd]->list().size();
  ASSERT_GT(m_objects, 0u);
  c.crash(m_osd, 1);  // nothing unflushed: the crash itself loses nothing
  c.env.spawn(c.hosts[m_osd], "flip.m", [&] {
    // The journal starts after the superblock and the two checkpoint slots (FormatOptions in
    // BytesCluster::format): block 1 + 2 x 2 MiB.
    flip(c.env.device(m_osd), 4096 + 2 * (2 << 20) + 40);
  });
  ASSERT_TRUE(c.env.run().ok());

  recovery::PeeringReport r{}, e{}, r2{}, e2{};
  size_t m_after_mount = 0;
  c.env.spawn(c.client_host, "scrub", [&] {
    c.start_services();
    m_after_mount = c.stores[m_osd]->list().size();
    std::tie(r, e) = c.peer_all(true);
    std::tie(r2, e2) = c.peer_all(true);
    Buffer got;
    for (const auto& [name, data] : objects) {
      Result<services::FileRead> rd = c.client_for(name).read_file(name, data.size_bytes, &got);
      ASSERT_TRUE(rd.ok()) << name << ": " << rd.status().to_string();
      EXPECT_TRUE(got == data.bytes) << name;
    }
  });
  ASSERT_TRUE(c.env.run().ok());
  EXPECT_LT(m_after_mount, m_objects);             // the bad journal record cut the replay
  EXPECT_GE(r.scrub_errors, 1u);                   // the flipped replica block
  EXPECT_GE(e.scrub_errors, 1u);                   // the flipped parity block
  EXPECT_GT(r.stale_copies + e.stale_copies, 0u);  // what the metadata flip lost
  EXPECT_GE(r.pushes + e.pushes, 2 + (m_objects - m_after_mount));
  // A second scrub finds everything repaired.
  EXPECT_EQ(r2.scrub_errors + e2.scrub_errors, 0u);
  EXPECT_EQ(r2.stale_copies + e2.stale_copies, 0u);
  EXPECT_EQ(r2.pushes + e2.pushes, 0u);
}

// Read repair: a flipped byte in the primary's copy of a replicated object (its crc32c no
// longer matches) does not fail the client's read: the primary reads the object from a replica
// of the same version, rewrites its own copy and answers; a deep scrub then finds nothing to
// repair. With every copy flipped no peer can repair it, and the read fails, naming them.
TEST(ReadRepair, APrimaryCopyThatCannotBeReadIsRewrittenFromAReplica) {
  BytesCluster c(9);
  c.format();
  Random rng(9);
  const Payload a = random_payload(rng, 20000), b = random_payload(rng, 9000);
  c.env.spawn(c.client_host, "write", [&] {
    c.start_services();
    ASSERT_TRUE(c.replicated->write_file("r/a", a).ok());
    ASSERT_TRUE(c.replicated->write_file("r/b", b).ok());
  });
  ASSERT_TRUE(c.env.run().ok());
  auto group_of = [&](const std::string& file) {
    std::vector<int32_t> g;
    const std::string obj = services::rados_object_name(file, 0);
    c.ring3.devices_of(c.ring3.group_of(obj), g);
    return g;
  };
  auto first_block = [&](int osd, const std::string& file) {
    Result<std::vector<store::ObjectExtent>> x =
        c.stores[osd]->extents(services::rados_object_name(file, 0));
    EXPECT_TRUE(x.ok() && !x->empty());
    return x->front().device_offset + 7;
  };
  const std::vector<int32_t> ga = group_of("r/a"), gb = group_of("r/b");
  const int primary = ga[0];
  c.env.spawn(c.hosts[primary], "flip", [&] {
    flip(c.env.device(primary), first_block(primary, "r/a"));
    for (int32_t osd : gb) flip(c.env.device(osd), first_block(osd, "r/b"));  // every copy
  });
  ASSERT_TRUE(c.env.run().ok());
  Status b_read;
  recovery::PeeringReport r{}, e{};
  c.env.spawn(c.client_host, "read", [&] {
    c.start_services();
    Buffer got;
    Result<services::FileRead> rd = c.replicated->read_file("r/a", a.size_bytes, &got);
    ASSERT_TRUE(rd.ok()) << rd.status().to_string();
    EXPECT_TRUE(got == a.bytes);
    b_read = c.replicated->read_file("r/b", b.size_bytes, &got).status();
    std::tie(r, e) = c.peer_all(true);
    Result<Payload> own =
        c.stores[primary]->read(services::rados_object_name("r/a", 0), 0, a.size_bytes);
    ASSERT_TRUE(own.ok()) << own.status().to_string();  // its copy is whole again
    EXPECT_TRUE(own->bytes == a.bytes);
  });
  ASSERT_TRUE(c.env.run().ok());
  EXPECT_EQ(c.osds[primary]->stats().read_repairs, 1u);
  EXPECT_TRUE(c.osds[primary]->available());
  ASSERT_FALSE(b_read.ok());
  EXPECT_NE(b_read.message().find("no peer could repair its copy"), std::string::npos)
      << b_read.message();
  // The deep scrub finds r/b's three bad copies (nothing to repair them from), not r/a's.
  EXPECT_EQ(r.scrub_errors, 3u);
}

// The erasure-coded pool's positions as they were, each OSD moved one position on (as an OSD
// marked out can reshuffle the positions of an indep rule): every OSD now holds another shard
// than its position's.
class Rotated final : public placement::test::ForwardingPlacement {
 public:
  explicit Rotated(placement::Placement& inner) : ForwardingPlacement(inner) {}
  std::string describe() const override { return "rotated " + inner().describe(); }
  void devices_of(uint32_t group, std::vector<int32_t>& out) override {
    std::vector<int32_t> was;
    inner().devices_of(group, was);
    out.assign(was.size(), placement::kNoDevice);
    for (size_t i = 0; i < was.size(); ++i) out[(i + 1) % was.size()] = was[i];
  }
};

// Shards whose OSDs CRUSH moved to other positions: each keeps the shard it was written as
// (ObjectInfo::shard), so no read takes it for its new position's (a read that finds fewer
// than k shards where they belong fails instead of returning other bytes), and peering pushes
// every position its own shard, rebuilt from where the shards are; then every object reads
// back exactly and a deep scrub finds nothing to repair.
TEST(ErasureCoded, ShardsMovedToOtherPositionsAreNeverReadAsTheirNewPositionsAndArePeeredBack) {
  BytesCluster c(7);
  c.format();
  Random rng(7);
  std::map<std::string, Payload> objects;
  for (int i = 0; i < 12; ++i) {
    objects["e/" + std::to_string(i)] = random_payload(rng, 1 + rng.uniform(60000));
  }
  Rotated rotated(c.ring6);
  services::RadosBackend r;
  r.placement = &rotated;
  r.ec = kEc;
  r.op_timeout_s = 3;
  services::StorageClient moved(c.env, c.client_host, r,
                                services::StorageClientOptions{.name = "moved"});
  int read_before = 0, wrong_before = 0;
  recovery::PeeringReport peered{}, scrubbed{};
  c.env.spawn(c.client_host, "run", [&] {
    c.start_services();
    for (const auto& [name, data] : objects) {
      ASSERT_TRUE(c.coded->write_file(name, data).ok()) << name;
    }
    Buffer got;
    for (const auto& [name, data] : objects) {
      if (!moved.read_file(name, data.size_bytes, &got).ok()) continue;
      ++read_before;
      if (got != data.bytes) ++wrong_before;
    }
    recovery::PeeringOptions o;
    o.reply_endpoint = "peer.moved";
    o.timeout_s = 10;
    o.ec = kEc;
    o.pg_of = [&](const std::string& n) { return rotated.group_of(n); };
    auto p = recovery::peer(c.env, c.client_host, recovery::pg_members(rotated), o);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    peered = *p;
    for (const auto& [name, data] : objects) {
      Result<services::FileRead> rd = moved.read_file(name, data.size_bytes, &got);
      ASSERT_TRUE(rd.ok()) << name << ": " << rd.status().to_string();
      EXPECT_TRUE(got == data.bytes) << name;
    }
    o.deep = true;
    auto s = recovery::peer(c.env, c.client_host, recovery::pg_members(rotated), o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    scrubbed = *s;
  });
  ASSERT_TRUE(c.env.run().ok());
  EXPECT_EQ(wrong_before, 0) << "a moved shard was read as its new position's";
  EXPECT_EQ(read_before, 0) << "no position holds its own shard before peering";
  EXPECT_EQ(peered.stale_copies, 6 * objects.size());
  EXPECT_EQ(peered.pushes, 6 * objects.size());
  EXPECT_EQ(scrubbed.scrub_errors + scrubbed.stale_copies + scrubbed.pushes, 0u);
  EXPECT_EQ(scrubbed.scrubbed_copies, 6 * objects.size());
}

// The distinct shards positions hold after each prefix of `order` (each position given its own).
std::vector<size_t> distinct_after_each(std::vector<int> held, const std::vector<int>& order) {
  std::vector<size_t> out;
  for (int t : order) {
    held[static_cast<size_t>(t)] = t;
    std::set<int> d;
    for (int s : held) {
      if (s >= 0) d.insert(s);
    }
    out.push_back(d.size());
  }
  return out;
}

// A 2+1 PG whose OSDs moved positions (an OSD marked out): position 0's OSD holds shard 2,
// position 1's shard 0, position 2's OSD is new. Written in position order, the first push puts
// shard 0 over the only shard 2, and a peering stopped there (the next epoch came) leaves one
// distinct shard: the object is lost (seen in real mode under TSan's slowdown). The order
// order_shard_pushes gives keeps two, k, after every push.
TEST(ErasureCoded, PeeringPushesNeverLeaveFewerDistinctShardsThanBefore) {
  const std::vector<int> held = {2, 0, -1};
  EXPECT_EQ(distinct_after_each(held, {0, 1, 2}), (std::vector<size_t>{1, 2, 3}));
  const std::vector<int> order = recovery::order_shard_pushes(held, {0, 1, 2});
  ASSERT_EQ(order.size(), 3u);
  for (size_t d : distinct_after_each(held, order)) EXPECT_GE(d, 2u);
  // A full rotation of a 4+2 PG: every position holds another shard; no prefix drops below k.
  const std::vector<int> rotated = {5, 0, 1, 2, 3, 4};
  const std::vector<int> all = {0, 1, 2, 3, 4, 5};
  for (size_t d : distinct_after_each(rotated, recovery::order_shard_pushes(rotated, all))) {
    EXPECT_GE(d, 5u);
  }
  // Nothing to lose: the order asked.
  EXPECT_EQ(recovery::order_shard_pushes({0, -1, -1}, {1, 2}), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace granary::e2e

#include "engine/cluster/osd_map.h"

#include <gtest/gtest.h>

#include "engine/placement/placement.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::cluster {
namespace {

using test::contains;
using test::kErasurePool;
using test::kReplicatedPool;

// Ceph's defaults from OSDMonitor::prepare_pool_size: replicated size - size/2, erasure
// k + min(1, m - 1).
TEST(Redundancy, CephDefaultMinSize) {
  EXPECT_EQ(Redundancy::replicated(1).default_min_size(), 1);
  EXPECT_EQ(Redundancy::replicated(2).default_min_size(), 1);
  EXPECT_EQ(Redundancy::replicated(3).default_min_size(), 2);
  EXPECT_EQ(Redundancy::replicated(4).default_min_size(), 2);
  EXPECT_EQ(Redundancy::replicated(5).default_min_size(), 3);
  EXPECT_EQ(Redundancy::erasure_coded(4, 2).default_min_size(), 5);
  EXPECT_EQ(Redundancy::erasure_coded(8, 3).default_min_size(), 9);
  EXPECT_EQ(Redundancy::erasure_coded(2, 1).default_min_size(), 2);  // m = 1: k
  EXPECT_EQ(Redundancy::erasure_coded(4, 2).shard_bytes(10), 3u);    // ceil(10 / 4)
  EXPECT_EQ(Redundancy::replicated(3).shard_bytes(10), 10u);
  EXPECT_FALSE((Redundancy{true, 4, 4}.validate().ok()));
  EXPECT_FALSE((Redundancy{false, 3, 2}.validate().ok()));
}

TEST(OsdMap, CreateStartsAtEpochOneEveryOsdUpAndIn) {
  const OsdMap map = test::make_map();
  EXPECT_EQ(map.epoch(), 1u);
  EXPECT_EQ(map.max_osd(), 32);
  EXPECT_EQ(map.num_up(), 32);
  EXPECT_EQ(map.num_in(), 32);
  ASSERT_NE(map.pool(kReplicatedPool), nullptr);
  EXPECT_EQ(map.pool(kReplicatedPool)->min_size, 2);
  EXPECT_EQ(map.pool(kErasurePool)->min_size, 5);
  EXPECT_EQ(map.pool(3), nullptr);
  const auto rep = test::up_sets(map, kReplicatedPool);
  ASSERT_EQ(rep.size(), 256u);
  for (const auto& set : rep) EXPECT_EQ(set.size(), 3u);
  for (const auto& set : test::up_sets(map, kErasurePool)) {
    ASSERT_EQ(set.size(), 6u);
    for (int32_t osd : set) EXPECT_NE(osd, placement::kNoDevice);
  }
}

TEST(OsdMap, RejectsInconsistentPools) {
  auto crush = test::make_crush(4, 2);
  auto pools = test::make_pools();
  pools[1].redundancy = Redundancy::erasure_coded(3, 2);  // 5 chunks, spec says 6
  EXPECT_FALSE(OsdMap::create(crush, 8, pools).ok());
  pools = test::make_pools();
  pools[0].min_size = 4;
  Result<OsdMap> m = OsdMap::create(crush, 8, pools);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("min_size must be 1..3, got 4"), std::string::npos)
      << m.status().to_string();
  pools = test::make_pools();
  pools[1].min_size = 3;  // below k
  EXPECT_FALSE(OsdMap::create(crush, 8, pools).ok());
  pools = test::make_pools();
  pools[0].spec.crush_rule = 7;
  EXPECT_FALSE(OsdMap::create(crush, 8, pools).ok());
  pools = test::make_pools();
  pools[1].spec.id = kReplicatedPool;
  EXPECT_FALSE(OsdMap::create(crush, 8, pools).ok());
}

TEST(OsdMap, ApplyBumpsTheEpochAndChangesStates) {
  OsdMap map = test::make_map();
  Incremental down;
  down.mark_down = {5};
  ASSERT_TRUE(map.apply(down).ok());
  EXPECT_EQ(map.epoch(), 2u);
  EXPECT_FALSE(map.is_up(5));
  EXPECT_TRUE(map.is_in(5));  // down but still in: no data moves yet
  Incremental out;
  out.mark_out = {5};
  ASSERT_TRUE(map.apply(out).ok());
  EXPECT_EQ(map.epoch(), 3u);
  EXPECT_FALSE(map.is_in(5));
  EXPECT_EQ(map.reweight(5), 0u);
  Incremental back;
  back.mark_up = {5};
  back.mark_in = {5};
  ASSERT_TRUE(map.apply(back).ok());
  EXPECT_EQ(map.epoch(), 4u);
  EXPECT_TRUE(map.is_up(5) && map.is_in(5));
  EXPECT_EQ(back.describe(), "up osd.5; in osd.5");

  // Errors leave the map as it was.
  Incremental bad;
  bad.mark_down = {1};
  bad.mark_out = {99};
  Status s = map.apply(bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("osd.99: no such OSD"), std::string::npos) << s.to_string();
  EXPECT_EQ(map.epoch(), 4u);
  EXPECT_TRUE(map.is_up(1));
  Incremental remove_up;
  remove_up.remove = {2};
  s = map.apply(remove_up);
  EXPECT_NE(s.message().find("still up"), std::string::npos) << s.to_string();
  Incremental remove;
  remove.mark_down = {2};
  ASSERT_TRUE(map.apply(remove).ok());
  remove.mark_down.clear();
  remove.remove = {2};
  ASSERT_TRUE(map.apply(remove).ok());
  EXPECT_FALSE(map.exists(2));
  EXPECT_EQ(map.num_in(), 31);
}

// Down OSDs leave the up sets (replicated: the set shrinks; erasure: the position becomes a
// hole); out OSDs are replaced by CRUSH, and only the PGs that held them change.
TEST(OsdMap, UpSetsFollowDownAndOut) {
  const OsdMap clean = test::make_map();
  const OsdMap down = test::without(clean, {5}, /*out=*/false);
  const OsdMap out = test::without(clean, {5}, /*out=*/true);
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const auto before = test::up_sets(clean, pool);
    const auto when_down = test::up_sets(down, pool);
    const auto when_out = test::up_sets(out, pool);
    int held = 0;
    for (size_t pg = 0; pg < before.size(); ++pg) {
      const bool had = contains(before[pg], 5);
      held += had ? 1 : 0;
      EXPECT_FALSE(contains(when_down[pg], 5));
      EXPECT_FALSE(contains(when_out[pg], 5));
      if (!had) {
        EXPECT_EQ(when_down[pg], before[pg]) << "pool " << pool << " pg " << pg;
        EXPECT_EQ(when_out[pg], before[pg]) << "pool " << pool << " pg " << pg;
        continue;
      }
      if (pool == kReplicatedPool) {
        EXPECT_EQ(when_down[pg].size(), 2u);
        EXPECT_EQ(when_out[pg].size(), 3u);
      } else {
        for (size_t i = 0; i < 6; ++i) {
          if (before[pg][i] == 5) {
            EXPECT_EQ(when_down[pg][i], placement::kNoDevice);
            EXPECT_NE(when_out[pg][i], placement::kNoDevice);
          } else {
            EXPECT_EQ(when_down[pg][i], before[pg][i]);
            EXPECT_EQ(when_out[pg][i], before[pg][i]);  // indep: other positions stay
          }
        }
      }
    }
    EXPECT_GT(held, 0);
  }
}

// A new host through a CRUSH map edit: the new OSDs exist down and out until marked up and in,
// then CRUSH gives them PGs.
TEST(OsdMap, AddingAHostGivesItsOsdsData) {
  OsdMap map = test::make_map(8, 4);
  crush::CrushMap edited = map.crush();
  ASSERT_TRUE(crush::add_bucket_like(edited, "storage0", "storage8").ok());
  edited.finalize();
  Incremental add;
  add.new_crush = std::make_shared<const crush::CrushMap>(std::move(edited));
  add.new_max_osd = 36;
  ASSERT_TRUE(map.apply(add).ok());
  EXPECT_EQ(map.max_osd(), 36);
  EXPECT_TRUE(map.exists(33));
  EXPECT_FALSE(map.is_up(33));
  EXPECT_FALSE(map.is_in(33));
  Incremental boot;
  boot.mark_up = {32, 33, 34, 35};
  boot.mark_in = {32, 33, 34, 35};
  ASSERT_TRUE(map.apply(boot).ok());
  EXPECT_EQ(map.epoch(), 3u);
  int on_new = 0;
  for (const auto& set : test::up_sets(map, kReplicatedPool)) {
    for (int32_t osd : set) on_new += osd >= 32 ? 1 : 0;
  }
  // About 1/9 of 768 copies.
  EXPECT_GT(on_new, 40);
  EXPECT_LT(on_new, 140);
  Incremental shrink;
  shrink.new_max_osd = 10;
  EXPECT_FALSE(map.apply(shrink).ok());
}

// pg_temp: the acting set is its OSDs that are up (erasure: positions kept, kNoDevice for the
// others), the up set when none is up, empty when set to no OSD; bad entries are refused and
// leave the map unchanged.
TEST(OsdMap, PgTempGivesTheActingSet) {
  OsdMap map = test::make_map();
  const std::vector<int32_t> up = map.up_sets(kReplicatedPool).value()[5];
  Incremental set;
  set.pg_temp.push_back(PgTempEntry{kReplicatedPool, 5, false, {up[1], up[2]}});
  set.pg_temp.push_back(PgTempEntry{kReplicatedPool, 6, false, {}});
  ASSERT_TRUE(map.apply(set).ok());
  EXPECT_EQ(set.describe(), "pg_temp 2 set");
  EXPECT_EQ(map.acting_sets(kReplicatedPool).value()[5], (std::vector<int32_t>{up[1], up[2]}));
  EXPECT_TRUE(map.acting_sets(kReplicatedPool).value()[6].empty());
  Incremental down;
  down.mark_down = {up[1]};
  ASSERT_TRUE(map.apply(down).ok());
  EXPECT_EQ(map.acting_sets(kReplicatedPool).value()[5], (std::vector<int32_t>{up[2]}));
  Incremental down2;
  down2.mark_down = {up[2]};
  ASSERT_TRUE(map.apply(down2).ok());
  EXPECT_EQ(map.acting_sets(kReplicatedPool).value()[5],
            map.up_sets(kReplicatedPool).value()[5]);  // none of it up: the up set
  Incremental clear;
  clear.pg_temp.push_back(PgTempEntry{kReplicatedPool, 6, true, {}});
  ASSERT_TRUE(map.apply(clear).ok());
  EXPECT_EQ(map.pg_temp(kReplicatedPool, 6), nullptr);
  const uint32_t epoch = map.epoch();
  for (const PgTempEntry& bad :
       {PgTempEntry{9, 0, false, {1}}, PgTempEntry{kReplicatedPool, 256, false, {1}},
        PgTempEntry{kReplicatedPool, 1, false, {99}},
        PgTempEntry{kErasurePool, 1, false, {1, 2}}}) {
    Incremental inc;
    inc.pg_temp.push_back(bad);
    EXPECT_FALSE(map.apply(inc).ok());
  }
  EXPECT_EQ(map.epoch(), epoch);
}

// Priming keeps a PG whose up set moves on the OSDs that served it: when an OSD goes out, and
// when it comes back.
TEST(OsdMap, PrimingKeepsTheServingOsds) {
  OsdMap before = test::make_map();
  Incremental down;
  down.mark_down = {3};
  ASSERT_TRUE(before.apply(down).ok());
  OsdMap after = before;
  Incremental out;
  out.mark_out = {3};
  ASSERT_TRUE(after.apply(out).ok());
  const std::vector<PgTempEntry> primed = prime_pg_temp(before, after);
  ASSERT_FALSE(primed.empty());
  const auto acting_before = before.acting_sets(kReplicatedPool).value();
  for (const PgTempEntry& e : primed) {
    EXPECT_FALSE(e.clear);
    if (e.pool == kReplicatedPool) {
      EXPECT_EQ(e.osds, acting_before[e.pg]);
    }
  }
  Incremental primed_out = out;
  primed_out.pg_temp = primed;
  OsdMap next = before;
  ASSERT_TRUE(next.apply(primed_out).ok());
  EXPECT_EQ(next.acting_sets(kReplicatedPool).value(), acting_before);
  EXPECT_EQ(next.acting_sets(kErasurePool).value(), before.acting_sets(kErasurePool).value());
  // Back in and up: the up sets are the old ones, the pg_temps go.
  OsdMap back = next;
  Incremental in;
  in.mark_in = {3};
  in.mark_up = {3};
  ASSERT_TRUE(back.apply(in).ok());
  Incremental primed_in;
  primed_in.pg_temp = prime_pg_temp(next, back);
  ASSERT_TRUE(back.apply(primed_in).ok());
  // (Until its peering says the returning OSD is current: the recovery manager clears them.)
  EXPECT_EQ(back.acting_sets(kReplicatedPool).value(), acting_before);
}

}  // namespace
}  // namespace granary::cluster

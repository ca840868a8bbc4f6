#include "engine/cluster/pg_states.h"

#include <gtest/gtest.h>

#include "engine/recovery/planner.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::cluster {
namespace {

using test::contains;
using test::kErasurePool;
using test::kReplicatedPool;

constexpr uint64_t kObjects = 256 * 100;           // 100 objects per PG
constexpr uint64_t kBytes = kObjects * (4 << 20);  // of 4 MiB

PgStatesReport states(const PgStatesInput& in) {
  Result<PgStatesReport> r = pg_states(in);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return std::move(r).value();
}

// PGs of `pool` whose set in `map` holds every OSD of `osds`.
uint32_t pgs_with_all(const OsdMap& map, int64_t pool, const std::vector<int32_t>& osds) {
  uint32_t n = 0;
  for (const auto& set : test::up_sets(map, pool)) {
    bool all = true;
    for (int32_t osd : osds) all = all && contains(set, osd);
    n += all ? 1 : 0;
  }
  return n;
}

TEST(PgStates, NamesFollowCephsOrder) {
  EXPECT_EQ(pg_state_name(kPgActive | kPgClean), "active+clean");
  EXPECT_EQ(pg_state_name(kPgBackfilling | kPgRemapped | kPgDegraded | kPgUndersized | kPgActive),
            "active+undersized+degraded+remapped+backfilling");
  EXPECT_EQ(pg_state_name(kPgPeered | kPgDegraded | kPgUndersized), "undersized+degraded+peered");
  EXPECT_EQ(pg_state_name(kPgActive | kPgRecoveryWait | kPgDegraded),
            "active+recovery_wait+degraded");
  EXPECT_EQ(pg_state_name(0), "inactive");
}

TEST(PgStates, ACleanMapIsActiveClean) {
  const OsdMap map = test::make_map();
  const PgSizes sizes = PgSizes::spread(256, kObjects, kBytes);
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const PgStatesReport r = states({.map = &map, .pool_id = pool, .sizes = &sizes});
    EXPECT_EQ(r.by_name.size(), 1u);
    EXPECT_EQ(r.by_name.at("active+clean"), 256u);
    EXPECT_EQ(r.objects, kObjects);
    EXPECT_EQ(r.bytes, kBytes);
    EXPECT_EQ(r.degraded_objects, 0u);
    EXPECT_EQ(r.degraded_object_copies, 0u);
    EXPECT_EQ(r.inactive(), 0u);
  }
}

// An OSD is down but still in: its PGs keep serving with one copy fewer
// (active+undersized+degraded), nothing is remapped, nothing can be backfilled; peering first.
TEST(PgStates, OsdDownIsUndersizedAndDegraded) {
  const OsdMap clean = test::make_map();
  const OsdMap down = test::without(clean, {5}, /*out=*/false);
  const PgSizes sizes = PgSizes::spread(256, kObjects, kBytes);
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const uint32_t held = pgs_with_all(clean, pool, {5});
    ASSERT_GT(held, 0u);
    PgStatesInput in{.map = &down, .pool_id = pool, .previous = &clean, .sizes = &sizes};
    PgStatesReport r = states(in);
    EXPECT_EQ(r.by_name.at("active+undersized+degraded"), held) << pool;
    EXPECT_EQ(r.by_name.at("active+clean"), 256 - held) << pool;
    EXPECT_EQ(r.count(kPgRemapped), 0u);
    EXPECT_EQ(r.degraded_objects, held * 100u);
    EXPECT_EQ(r.degraded_bytes, uint64_t{held} * 100 * (4 << 20));
    EXPECT_EQ(r.degraded_object_copies, held * 100u);  // one copy (chunk) of each
    EXPECT_EQ(r.object_copies, kObjects * (pool == kReplicatedPool ? 3 : 6));
    EXPECT_EQ(r.unavailable_objects, 0u);

    in.since_change_s = 0.25;  // within peering_s of the change
    r = states(in);
    EXPECT_EQ(r.by_name.at("undersized+degraded+peering"), held);
    EXPECT_EQ(r.inactive(), held);
    EXPECT_EQ(r.unavailable_objects, held * 100u);
  }
}

// Marked out too: CRUSH picks a replacement, which must be backfilled (Ceph's
// active+undersized+degraded+remapped+backfilling); only the PGs that held the OSD move.
TEST(PgStates, OsdOutBackfillsItsPgs) {
  const OsdMap clean = test::make_map();
  const OsdMap out = test::without(clean, {5}, /*out=*/true);
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const uint32_t held = pgs_with_all(clean, pool, {5});
    PgStatesReport r = states({.map = &out, .pool_id = pool, .previous = &clean});
    EXPECT_EQ(r.by_name.at("active+undersized+degraded+remapped+backfilling"), held);
    EXPECT_EQ(r.by_name.at("active+clean"), 256 - held);
    std::vector<bool> moving(256, false);
    r = states({.map = &out, .pool_id = pool, .previous = &clean, .moving = &moving});
    EXPECT_EQ(r.by_name.at("active+undersized+degraded+remapped+backfill_wait"), held);

    // Once the planner's ops are done, every PG is clean again.
    Result<PgData> data = PgData::of_map(clean, pool);
    ASSERT_TRUE(data.ok());
    const PgSizes sizes = PgSizes::spread(256, kObjects, kBytes);
    Result<recovery::RecoveryPlan> plan = recovery::plan_recovery(*data, out, pool, sizes);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    for (const recovery::RecoveryOp& op : plan->ops) {
      recovery::apply_completed(op, out.pool(pool)->redundancy, *data);
    }
    r = states({.map = &out, .pool_id = pool, .previous = &clean, .data = &*data});
    EXPECT_EQ(r.by_name.at("active+clean"), 256u) << pool;
  }
}

// Out but still up (a drain): the data is misplaced, not degraded.
TEST(PgStates, DrainingAnOsdIsRemappedNotDegraded) {
  const OsdMap clean = test::make_map();
  OsdMap drain = clean;
  Incremental inc;
  inc.mark_out = {5};
  ASSERT_TRUE(drain.apply(inc).ok());
  const PgSizes sizes = PgSizes::spread(256, kObjects, kBytes);
  const uint32_t held = pgs_with_all(clean, kReplicatedPool, {5});
  const PgStatesReport r =
      states({.map = &drain, .pool_id = kReplicatedPool, .previous = &clean, .sizes = &sizes});
  EXPECT_EQ(r.by_name.at("active+remapped+backfilling"), held);
  EXPECT_EQ(r.degraded_objects, 0u);
  EXPECT_EQ(r.misplaced_object_copies, held * 100u);
}

// min_size decides between serving I/O and blocking it: erasure 4+2 has min_size 5, so one lost
// host is active, two lost hosts leave the PGs that span both peered (data readable, no I/O),
// three leave the PGs spanning all of them down (fewer than k chunks).
TEST(PgStates, MinSizeSeparatesActivePeeredAndDown) {
  const OsdMap clean = test::make_map();
  auto host = [](int h) { return std::vector<int32_t>{4 * h, 4 * h + 1, 4 * h + 2, 4 * h + 3}; };
  auto hosts = [&](std::initializer_list<int> hs) {
    std::vector<int32_t> osds;
    for (int h : hs) {
      for (int32_t o : host(h)) osds.push_back(o);
    }
    return osds;
  };
  auto spanning = [&](std::initializer_list<int> hs) {
    uint32_t n = 0;
    for (const auto& set : test::up_sets(clean, kErasurePool)) {
      bool all = true;
      for (int h : hs) {
        bool any = false;
        for (int32_t o : host(h)) any = any || contains(set, o);
        all = all && any;
      }
      n += all ? 1 : 0;
    }
    return n;
  };
  const OsdMap one = test::without(clean, hosts({2}), false);
  PgStatesReport r = states({.map = &one, .pool_id = kErasurePool, .previous = &clean});
  EXPECT_EQ(r.inactive(), 0u);
  EXPECT_EQ(r.count(kPgUndersized | kPgDegraded | kPgActive), spanning({2}));

  const OsdMap two = test::without(clean, hosts({2, 5}), false);
  r = states({.map = &two, .pool_id = kErasurePool, .previous = &clean});
  ASSERT_GT(spanning({2, 5}), 0u);
  EXPECT_EQ(r.by_name.at("undersized+degraded+peered"), spanning({2, 5}));
  EXPECT_EQ(r.inactive(), spanning({2, 5}));
  EXPECT_EQ(r.count(kPgDown), 0u);

  const OsdMap three = test::without(clean, hosts({2, 5, 6}), false);
  r = states({.map = &three, .pool_id = kErasurePool, .previous = &clean});
  ASSERT_GT(spanning({2, 5, 6}), 0u);
  EXPECT_EQ(r.count(kPgDown), spanning({2, 5, 6}));

  // Replicated size 3, min_size 2: two down OSDs sharing a PG leave it peered; three, down.
  const auto rep = test::up_sets(clean, kReplicatedPool);
  const std::vector<int32_t> victims = rep[0];
  const OsdMap rep_two = test::without(clean, {victims[0], victims[1]}, false);
  r = states({.map = &rep_two, .pool_id = kReplicatedPool, .previous = &clean});
  EXPECT_EQ(pg_state_name(r.pgs[0].state), "undersized+degraded+peered");
  EXPECT_EQ(r.count(kPgPeered), pgs_with_all(clean, kReplicatedPool, {victims[0], victims[1]}));
  const OsdMap rep_three = test::without(clean, victims, false);
  r = states({.map = &rep_three, .pool_id = kReplicatedPool, .previous = &clean});
  EXPECT_EQ(r.pgs[0].state & kPgDown, kPgDown);
  EXPECT_EQ(r.pgs[0].acting_size, 0);
}

// An OSD that comes back before being marked out rejoins its PGs with copies that missed the
// writes made meanwhile: active+recovering+degraded until log recovery, then clean.
TEST(PgStates, ReturningOsdRecoversTheWritesItMissed) {
  const OsdMap clean = test::make_map();
  const OsdMap down = test::without(clean, {5}, false);
  OsdMap back = down;
  Incremental up;
  up.mark_up = {5};
  ASSERT_TRUE(back.apply(up).ok());
  Result<PgData> data = PgData::of_map(clean, kReplicatedPool);
  ASSERT_TRUE(data.ok());
  const PgSizes written = PgSizes::spread(256, 256 * 3, uint64_t{256} * 3 * (4 << 20));  // 3 per PG
  data->add_stale(5, written);
  const uint32_t held = pgs_with_all(clean, kReplicatedPool, {5});
  ASSERT_EQ(data->stale.size(), held);
  const PgSizes sizes = PgSizes::spread(256, kObjects, kBytes);
  PgStatesReport r = states({.map = &back,
                             .pool_id = kReplicatedPool,
                             .previous = &down,
                             .data = &*data,
                             .sizes = &sizes});
  EXPECT_EQ(r.by_name.at("active+recovering+degraded"), held);
  EXPECT_EQ(r.degraded_objects, held * 3u);
  EXPECT_EQ(r.degraded_object_copies, held * 3u);
  EXPECT_EQ(r.count(kPgUndersized), 0u);
  std::vector<bool> moving(256, false);
  r = states({.map = &back, .pool_id = kReplicatedPool, .data = &*data, .moving = &moving});
  EXPECT_EQ(r.by_name.at("active+recovery_wait+degraded"), held);
  const auto sets = test::up_sets(back, kReplicatedPool);
  for (uint32_t pg = 0; pg < 256; ++pg) data->settle(pg, sets[pg]);
  r = states({.map = &back, .pool_id = kReplicatedPool, .data = &*data});
  EXPECT_EQ(r.by_name.at("active+clean"), 256u);
}

TEST(PgStates, RejectsMismatchedInputs) {
  const OsdMap map = test::make_map();
  EXPECT_FALSE(pg_states({}).ok());
  EXPECT_EQ(pg_states({.map = &map, .pool_id = 9}).status().code(), Status::Code::kNotFound);
  PgData data;
  data.holders.resize(3);
  EXPECT_FALSE(pg_states({.map = &map, .pool_id = kReplicatedPool, .data = &data}).ok());
  const PgSizes sizes = PgSizes::spread(10, 10, 10);
  EXPECT_FALSE(pg_states({.map = &map, .pool_id = kReplicatedPool, .sizes = &sizes}).ok());
}

TEST(PgStates, SpreadKeepsTheTotals) {
  const PgSizes s = PgSizes::spread(7, 100, 1001);
  uint64_t objects = 0, bytes = 0;
  for (size_t i = 0; i < 7; ++i) {
    objects += s.objects[i];
    bytes += s.bytes[i];
  }
  EXPECT_EQ(objects, 100u);
  EXPECT_EQ(bytes, 1001u);
  EXPECT_EQ(s.objects[0], 15u);
  EXPECT_EQ(s.objects[6], 14u);
}

}  // namespace
}  // namespace granary::cluster

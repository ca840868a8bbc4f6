#include "engine/recovery/planner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/placement/placement.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::recovery {
namespace {

using cluster::OsdMap;
using cluster::test::contains;
using cluster::test::kErasurePool;
using cluster::test::kReplicatedPool;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kPgBytes = kGiB;  // logical bytes per PG

std::vector<bool> readable_except(int32_t max_osd, const std::vector<int32_t>& gone) {
  std::vector<bool> r(static_cast<size_t>(max_osd), true);
  for (int32_t o : gone) r[static_cast<size_t>(o)] = false;
  return r;
}

RecoveryPlan plan(const std::vector<std::vector<int32_t>>& old_acting,
                  const std::vector<std::vector<int32_t>>& new_up, const cluster::Redundancy& red,
                  const PlanOptions& options) {
  Result<RecoveryPlan> p = plan_recovery(
      old_acting, new_up, std::vector<uint64_t>(new_up.size(), kPgBytes), red, options);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return std::move(p).value();
}

// What the failed OSDs held: copies (or chunks) of their PGs.
uint64_t held_bytes(const std::vector<std::vector<int32_t>>& sets, const std::vector<int32_t>& osds,
                    const cluster::Redundancy& red) {
  uint64_t n = 0;
  for (const auto& set : sets) {
    for (int32_t o : set) n += contains(osds, o) ? red.shard_bytes(kPgBytes) : 0;
  }
  return n;
}

// Replicated 3x, one OSD fails and is marked out: only its PGs move, one backfill each from the
// surviving primary, and the bytes moved are exactly its data (the minimum).
TEST(Planner, ReplicatedOsdOutMovesOnlyItsData) {
  const OsdMap clean = cluster::test::make_map();
  const OsdMap out = cluster::test::without(clean, {5}, true);
  const auto old_sets = cluster::test::up_sets(clean, kReplicatedPool);
  const auto new_sets = cluster::test::up_sets(out, kReplicatedPool);
  const cluster::Redundancy red = cluster::Redundancy::replicated(3);
  const RecoveryPlan p = plan(old_sets, new_sets, red, {.readable = readable_except(32, {5})});
  uint32_t held = 0;
  for (const auto& set : old_sets) held += contains(set, 5) ? 1 : 0;
  EXPECT_EQ(p.pgs_to_move, held);
  ASSERT_EQ(p.ops.size(), held);
  EXPECT_EQ(p.minimum_bytes, held_bytes(old_sets, {5}, red));
  EXPECT_EQ(p.bytes_to_write, p.minimum_bytes);  // moved == minimum
  EXPECT_EQ(p.bytes_to_read, p.bytes_to_write);
  EXPECT_EQ(p.pgs_unrecoverable, 0u);
  for (const RecoveryOp& op : p.ops) {
    const auto& old = old_sets[op.pg];
    EXPECT_TRUE(contains(old, 5));
    EXPECT_EQ(op.kind, RecoveryKind::kBackfill);
    EXPECT_TRUE(op.restores_redundancy);
    EXPECT_EQ(op.bytes_to_write, kPgBytes);
    ASSERT_EQ(op.sources.size(), 1u);
    EXPECT_EQ(op.sources[0], old[0] == 5 ? old[1] : old[0]);  // the primary when it survives
    EXPECT_FALSE(contains(old, op.target));
    EXPECT_TRUE(contains(new_sets[op.pg], op.target));
  }
  std::printf("replicated osd.5 out: %u PGs, moved %.1f GiB, minimum %.1f GiB\n", held,
              double(p.bytes_to_write) / kGiB, double(p.minimum_bytes) / kGiB);
}

// A whole host (4 OSDs) out: each PG lost at most one copy (host failure domain); nothing is
// read from or written to the host.
TEST(Planner, ReplicatedHostOut) {
  const OsdMap clean = cluster::test::make_map();
  const std::vector<int32_t> host = {12, 13, 14, 15};
  const OsdMap out = cluster::test::without(clean, host, true);
  const auto old_sets = cluster::test::up_sets(clean, kReplicatedPool);
  const auto new_sets = cluster::test::up_sets(out, kReplicatedPool);
  const cluster::Redundancy red = cluster::Redundancy::replicated(3);
  const RecoveryPlan p = plan(old_sets, new_sets, red, {.readable = readable_except(32, host)});
  EXPECT_EQ(p.minimum_bytes, held_bytes(old_sets, host, red));
  EXPECT_GE(p.bytes_to_write, p.minimum_bytes);
  std::map<uint32_t, int> ops_per_pg;
  for (const RecoveryOp& op : p.ops) {
    ++ops_per_pg[op.pg];
    EXPECT_FALSE(contains(host, op.target));
    EXPECT_FALSE(contains(host, op.sources[0]));
  }
  uint32_t touched = 0;
  for (const auto& set : old_sets) {
    int on_host = 0;
    for (int32_t o : set) on_host += contains(host, o) ? 1 : 0;
    EXPECT_LE(on_host, 1);
    touched += on_host;
  }
  EXPECT_EQ(p.pgs_to_move, touched);
  std::printf("replicated host out: %u PGs, moved %.1f GiB, minimum %.1f GiB\n", p.pgs_to_move,
              double(p.bytes_to_write) / kGiB, double(p.minimum_bytes) / kGiB);
}

// Erasure 4+2, indep rule: one OSD out. Each of its PGs rebuilds the one lost chunk at the same
// position from 4 surviving chunks: 4 bytes read per byte written; no other position moves.
TEST(Planner, ErasureOsdOutRebuildsWithKTimesTheReads) {
  const OsdMap clean = cluster::test::make_map();
  const OsdMap out = cluster::test::without(clean, {5}, true);
  const auto old_sets = cluster::test::up_sets(clean, kErasurePool);
  const auto new_sets = cluster::test::up_sets(out, kErasurePool);
  const cluster::Redundancy red = cluster::Redundancy::erasure_coded(4, 2);
  const RecoveryPlan p = plan(old_sets, new_sets, red, {.readable = readable_except(32, {5})});
  uint32_t held = 0;
  for (const auto& set : old_sets) held += contains(set, 5) ? 1 : 0;
  ASSERT_EQ(p.ops.size(), held);
  EXPECT_EQ(p.minimum_bytes, held * red.shard_bytes(kPgBytes));
  EXPECT_EQ(p.bytes_to_write, p.minimum_bytes);
  EXPECT_EQ(p.bytes_to_read, 4 * p.bytes_to_write);
  for (const RecoveryOp& op : p.ops) {
    const auto& old = old_sets[op.pg];
    ASSERT_GE(op.shard, 0);
    EXPECT_EQ(old[static_cast<size_t>(op.shard)], 5);
    EXPECT_EQ(new_sets[op.pg][static_cast<size_t>(op.shard)], op.target);
    EXPECT_EQ(op.bytes_to_write, kPgBytes / 4);
    ASSERT_EQ(op.sources.size(), 4u);
    // The first four surviving chunks by position.
    std::vector<int32_t> expected;
    for (int32_t o : old) {
      if (o != 5 && expected.size() < 4) expected.push_back(o);
    }
    EXPECT_EQ(op.sources, expected);
    EXPECT_TRUE(op.restores_redundancy);
  }
  std::printf("erasure 4+2 osd.5 out: %u PGs, wrote %.2f GiB, read %.2f GiB\n", held,
              double(p.bytes_to_write) / kGiB, double(p.bytes_to_read) / kGiB);
}

TEST(Planner, ErasureHostOut) {
  const OsdMap clean = cluster::test::make_map();
  const std::vector<int32_t> host = {8, 9, 10, 11};
  const OsdMap out = cluster::test::without(clean, host, true);
  const auto old_sets = cluster::test::up_sets(clean, kErasurePool);
  const auto new_sets = cluster::test::up_sets(out, kErasurePool);
  const cluster::Redundancy red = cluster::Redundancy::erasure_coded(4, 2);
  const RecoveryPlan p = plan(old_sets, new_sets, red, {.readable = readable_except(32, host)});
  EXPECT_EQ(p.minimum_bytes, held_bytes(old_sets, host, red));
  EXPECT_GE(p.bytes_to_write, p.minimum_bytes);
  uint64_t rebuilt = 0;
  for (const RecoveryOp& op : p.ops) {
    EXPECT_FALSE(contains(host, op.target));
    for (int32_t s : op.sources) EXPECT_FALSE(contains(host, s));
    if (op.restores_redundancy) {
      EXPECT_EQ(op.sources.size(), 4u);
      rebuilt += op.bytes_to_write;
    } else {
      EXPECT_EQ(op.sources.size(), 1u);  // a shuffled position: copied, not decoded
    }
  }
  EXPECT_EQ(rebuilt, p.minimum_bytes);
  std::printf("erasure 4+2 host out: %u PGs, moved %.2f GiB, minimum %.2f GiB, read %.2f GiB\n",
              p.pgs_to_move, double(p.bytes_to_write) / kGiB, double(p.minimum_bytes) / kGiB,
              double(p.bytes_to_read) / kGiB);
}

// The OSD comes back in after its PGs were backfilled elsewhere: CRUSH (straw2) gives it back
// exactly its old PGs; every op targets it, copies existing data (no rebuild) and restores
// nothing (the minimum is 0: this is rebalancing).
TEST(Planner, OsdBackInTakesBackItsPgs) {
  const OsdMap clean = cluster::test::make_map();
  const OsdMap out = cluster::test::without(clean, {5}, true);
  OsdMap back = out;
  cluster::Incremental inc;
  inc.mark_up = {5};
  inc.mark_in = {5};
  ASSERT_TRUE(back.apply(inc).ok());
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const cluster::Redundancy red = clean.pool(pool)->redundancy;
    const auto during = cluster::test::up_sets(out, pool);
    const auto after = cluster::test::up_sets(back, pool);
    EXPECT_EQ(after, cluster::test::up_sets(clean, pool));
    const RecoveryPlan p = plan(during, after, red, {});
    uint32_t held = 0;
    for (const auto& set : after) held += contains(set, 5) ? 1 : 0;
    EXPECT_EQ(p.ops.size(), held);
    EXPECT_EQ(p.minimum_bytes, 0u);
    EXPECT_EQ(p.bytes_to_write, held * red.shard_bytes(kPgBytes));
    EXPECT_EQ(p.bytes_to_read, p.bytes_to_write);
    for (const RecoveryOp& op : p.ops) {
      EXPECT_EQ(op.target, 5);
      EXPECT_FALSE(op.restores_redundancy);
      EXPECT_EQ(op.sources.size(), 1u);
    }
  }
}

// The OSD returned before being marked out, with copies missing 3 objects per PG: recovery of
// those bytes only (replicated: from the primary; erasure: decoded from k chunks).
TEST(Planner, ReturningOsdRecoversOnlyWhatItMissed) {
  const OsdMap clean = cluster::test::make_map();
  for (int64_t pool : {kReplicatedPool, kErasurePool}) {
    const cluster::Redundancy red = clean.pool(pool)->redundancy;
    Result<cluster::PgData> data = cluster::PgData::of_map(clean, pool);
    ASSERT_TRUE(data.ok());
    const uint64_t missed = 3 * (4 << 20);
    data->add_stale(5, cluster::PgSizes::spread(256, 256 * 3, 256 * missed));
    Result<RecoveryPlan> p =
        plan_recovery(*data, clean, pool, cluster::PgSizes::spread(256, 0, 256 * kPgBytes));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    ASSERT_EQ(p->ops.size(), data->stale.size());
    for (const RecoveryOp& op : p->ops) {
      EXPECT_EQ(op.kind, RecoveryKind::kRecovery);
      EXPECT_EQ(op.target, 5);
      EXPECT_EQ(op.bytes_to_write, red.shard_bytes(missed));
      EXPECT_EQ(op.sources.size(), static_cast<size_t>(red.needed_to_read()));
      EXPECT_FALSE(contains(op.sources, 5));
      EXPECT_TRUE(op.restores_redundancy);
    }
    EXPECT_EQ(p->bytes_to_read, p->bytes_to_write * static_cast<uint64_t>(red.needed_to_read()));
    EXPECT_EQ(p->minimum_bytes, p->bytes_to_write);
  }
}

// Hand-made sets where CRUSH shuffles more than was lost: moved > minimum.
TEST(Planner, ShuffledPositionsCountAsMovedNotMinimum) {
  const cluster::Redundancy rep = cluster::Redundancy::replicated(3);
  RecoveryPlan p = plan({{1, 2, 3}}, {{1, 4, 5}}, rep, {.readable = readable_except(8, {3})});
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.bytes_to_write, 2 * kPgBytes);
  EXPECT_EQ(p.minimum_bytes, kPgBytes);
  EXPECT_TRUE(p.ops[0].restores_redundancy);
  EXPECT_FALSE(p.ops[1].restores_redundancy);
  EXPECT_EQ(p.ops[0].sources, std::vector<int32_t>{1});

  const cluster::Redundancy ec = cluster::Redundancy::erasure_coded(4, 2);
  p = plan({{0, 1, 2, 3, 4, 5}}, {{0, 1, 2, 3, 6, 7}}, ec, {.readable = readable_except(8, {5})});
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].shard, 4);  // chunk 4 still exists on osd.4: copied
  EXPECT_EQ(p.ops[0].sources, std::vector<int32_t>{4});
  EXPECT_FALSE(p.ops[0].restores_redundancy);
  EXPECT_EQ(p.ops[1].shard, 5);  // chunk 5 is lost: decoded from chunks 0..3
  EXPECT_EQ(p.ops[1].sources, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.minimum_bytes, kPgBytes / 4);
  EXPECT_EQ(p.bytes_to_write, kPgBytes / 2);
  EXPECT_EQ(p.bytes_to_read, 5 * kPgBytes / 4);
}

TEST(Planner, TooFewCopiesLeftIsUnrecoverable) {
  const cluster::Redundancy rep = cluster::Redundancy::replicated(3);
  RecoveryPlan p = plan({{1, 2, 3}}, {{4, 5, 6}}, rep, {.readable = readable_except(8, {1, 2, 3})});
  EXPECT_TRUE(p.ops.empty());
  EXPECT_EQ(p.pgs_unrecoverable, 1u);
  const cluster::Redundancy ec = cluster::Redundancy::erasure_coded(4, 2);
  const int32_t none = placement::kNoDevice;
  p = plan({{0, 1, 2, 3, 4, 5}}, {{none, none, none, 3, 4, 5}}, ec,
           {.readable = readable_except(8, {0, 1, 2})});
  EXPECT_TRUE(p.ops.empty());
  EXPECT_EQ(p.unplaced, 3u);
  p = plan({{0, 1, 2, 3, 4, 5}}, {{6, 7, 8, 3, 4, 5}}, ec,
           {.readable = readable_except(9, {0, 1, 2})});
  EXPECT_TRUE(p.ops.empty());
  EXPECT_EQ(p.pgs_unrecoverable, 1u);
}

TEST(Planner, RejectsMismatchedInputs) {
  const cluster::Redundancy rep = cluster::Redundancy::replicated(3);
  EXPECT_FALSE(plan_recovery({{1, 2, 3}}, {}, {kPgBytes}, rep).ok());
  EXPECT_FALSE(plan_recovery({{1}}, {{1}}, {}, rep).ok());
  EXPECT_FALSE(
      plan_recovery({{0, 1, 2, 3, 4, 5, 6}}, {{0}}, {1}, cluster::Redundancy::erasure_coded(4, 2))
          .ok());
  EXPECT_FALSE(
      plan_recovery({{1}}, {{1}}, {1}, rep, {.stale = {cluster::StaleCopy{.pg = 4}}}).ok());
}

}  // namespace
}  // namespace granary::recovery

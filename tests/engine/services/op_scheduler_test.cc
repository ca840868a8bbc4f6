#include "engine/services/op_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/services/op_queue.h"
#include "engine/testing/memory_env.h"

namespace granary::services {
namespace {

OpItem item(uint64_t id, OpClass c, unsigned prio, uint64_t cost, uint64_t owner = 0) {
  OpItem i;
  i.id = id;
  i.op_class = c;
  i.priority = prio;
  i.cost = cost;
  i.owner = owner;
  return i;
}

TEST(WpqScheduler, StrictQueueFirstHighestPriorityFirst) {
  WpqScheduler q({}, 1);
  q.enqueue(item(1, OpClass::kClient, 63, 4096));
  q.enqueue(item(2, OpClass::kImmediate, 200, 0));
  q.enqueue(item(3, OpClass::kImmediate, 255, 0));
  EXPECT_EQ(q.dequeue(0, nullptr)->id, 3u);
  EXPECT_EQ(q.dequeue(0, nullptr)->id, 2u);
  EXPECT_EQ(q.dequeue(0, nullptr)->id, 1u);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.dequeue(0, nullptr).has_value());
}

TEST(WpqScheduler, OwnersOfOnePriorityTakeTurns) {
  WpqScheduler q({}, 1);
  for (uint64_t i = 0; i < 3; ++i) q.enqueue(item(10 + i, OpClass::kClient, 63, 4096, 1));
  for (uint64_t i = 0; i < 3; ++i) q.enqueue(item(20 + i, OpClass::kClient, 63, 4096, 2));
  std::vector<uint64_t> order;
  while (!q.empty()) order.push_back(q.dequeue(0, nullptr)->id);
  EXPECT_EQ(order, (std::vector<uint64_t>{10, 20, 11, 21, 12, 22}));
}

// Ceph's draw: priority p with probability p / sum, then the head passes with probability
// (max_cost - 0.9 cost) / max_cost. A PGRecovery item (priority 5, osd_recovery_cost 20 MiB)
// against 4 KiB client writes (63): 5 x 0.1 / (5 x 0.1 + 63 x 0.99982) = 0.788% of dequeues.
TEST(WpqScheduler, RecoveryShareFollowsPriorityAndCost) {
  WpqScheduler q({}, 7);
  uint64_t id = 0;
  q.enqueue(item(++id, OpClass::kBackgroundRecovery, kRecoveryPriority, kOsdRecoveryCostBytes));
  q.enqueue(item(++id, OpClass::kClient, kClientOpPriority, 4096));
  int recovery = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    auto it = q.dequeue(0, nullptr);
    ASSERT_TRUE(it.has_value());
    if (it->op_class == OpClass::kBackgroundRecovery) {
      ++recovery;
      q.enqueue(item(++id, OpClass::kBackgroundRecovery, kRecoveryPriority, kOsdRecoveryCostBytes));
    } else {
      q.enqueue(item(++id, OpClass::kClient, kClientOpPriority, 4096));
    }
  }
  const double expected = 0.5 / (0.5 + 63 * (1 - 0.9 * 4096 / 20971520.0)) * n;
  EXPECT_NEAR(recovery, expected, 0.1 * expected) << recovery;
}

TEST(MclockOptions, CostsAndCapacitiesOfBothModels) {
  auto ssd = MclockOptions::for_device(false, MclockCostModel::kLegacyIops);
  EXPECT_EQ(ssd.shards, 8);
  EXPECT_DOUBLE_EQ(ssd.capacity_per_shard(), 21500.0 / 8);
  EXPECT_DOUBLE_EQ(ssd.scaled_cost(kOsdRecoveryCostBytes), 231);  // 0.05 + 1.1e-5 x 20 MiB
  EXPECT_DOUBLE_EQ(ssd.scaled_cost(4096), 1);
  auto hdd = MclockOptions::for_device(true, MclockCostModel::kLegacyIops);
  EXPECT_EQ(hdd.shards, 5);
  EXPECT_DOUBLE_EQ(hdd.scaled_cost(kOsdRecoveryCostBytes), 109);  // 0.025 + 5.2e-6 x 20 MiB
  auto reef = MclockOptions::for_device(false, MclockCostModel::kBandwidth);
  EXPECT_DOUBLE_EQ(reef.capacity_per_shard(), 1200.0 * (1 << 20) / 8);
  EXPECT_DOUBLE_EQ(reef.scaled_cost(4096), 58525);  // 1200 MiB / 21500 IOPS per I/O
  EXPECT_DOUBLE_EQ(reef.scaled_cost(4 << 20), 4 << 20);
}

TEST(MclockAllocations, BothVersionsNamed) {
  auto q = mclock_allocations(MclockAllocationSet::kQuincyDev, MclockProfile::kHighClientOps);
  EXPECT_DOUBLE_EQ(q.background_recovery.reservation, 0.25);
  EXPECT_DOUBLE_EQ(q.background_recovery.limit, 1.0);
  auto b = mclock_allocations(MclockAllocationSet::kQuincyDev, MclockProfile::kBalanced);
  EXPECT_DOUBLE_EQ(b.background_recovery.limit, 1.5);
  auto h = mclock_allocations(MclockAllocationSet::kQuincyDev, MclockProfile::kHighRecoveryOps);
  EXPECT_DOUBLE_EQ(h.background_recovery.limit, 2.0);
  EXPECT_DOUBLE_EQ(h.client.limit, 0.8);
  auto r = mclock_allocations(MclockAllocationSet::kReef, MclockProfile::kBalanced);
  EXPECT_DOUBLE_EQ(r.background_recovery.reservation, 0.5);
  EXPECT_DOUBLE_EQ(r.background_recovery.limit, 0);  // no limit
  EXPECT_DOUBLE_EQ(r.background_best_effort.limit, 0.9);
  EXPECT_EQ(parse_mclock_allocation_set("quincy-17.0.0-dev"), MclockAllocationSet::kQuincyDev);
  EXPECT_EQ(parse_mclock_allocation_set("reef"), MclockAllocationSet::kReef);
  EXPECT_FALSE(parse_mclock_allocation_set("squid").has_value());
  EXPECT_EQ(parse_mclock_profile("balanced"), MclockProfile::kBalanced);
}

// Served as fast as it is eligible, a backlogged class runs at its limit: cost / limit apart.
TEST(MclockScheduler, LimitSpacesAClassOps) {
  auto o = MclockOptions::for_device(false, MclockCostModel::kLegacyIops);
  o.allocations =
      mclock_allocations(MclockAllocationSet::kQuincyDev, MclockProfile::kHighClientOps);
  MclockScheduler q(o);
  for (uint64_t i = 0; i < 50; ++i) {
    q.enqueue(item(i, OpClass::kBackgroundRecovery, kRecoveryPriority, kOsdRecoveryCostBytes));
  }
  double now = 0;
  int served = 0;
  while (!q.empty()) {
    double ready = 0;
    auto it = q.dequeue(now, &ready);
    if (!it) {
      ASSERT_GT(ready, now);
      now = ready;
      continue;
    }
    ++served;
  }
  EXPECT_EQ(served, 50);
  // Reservation (25%) and limit (100%) together: the class's ops are due at 231 / 2687.5 s by
  // its limit; the reservation tags only spread further. 50 ops: 50 x 0.08595 s.
  EXPECT_NEAR(now, 50 * 231 / 2687.5, 0.02 * 50 * 231 / 2687.5);
}

// Both classes backlogged, no limits (Reef balanced): equal weights, equal costs alternate; a
// class with twice the weight gets twice the service.
TEST(MclockScheduler, WeightsShareWhatReservationsLeave) {
  auto o = MclockOptions::for_device(false, MclockCostModel::kBandwidth);
  o.allocations = {{0, 2, 0}, {0, 1, 0}, {0, 1, 0}};
  MclockScheduler q(o);
  for (uint64_t i = 0; i < 300; ++i) {
    q.enqueue(item(i, OpClass::kClient, kClientOpPriority, 65536));
    q.enqueue(item(1000 + i, OpClass::kBackgroundRecovery, kRecoveryPriority, 65536));
  }
  int client = 0;
  for (int i = 0; i < 300; ++i) {
    auto it = q.dequeue(1.0, nullptr);
    ASSERT_TRUE(it.has_value());
    if (it->op_class == OpClass::kClient) ++client;
  }
  EXPECT_NEAR(client, 200, 2);
}

TEST(OsdOpQueue, ThreadsPerShardBoundOpsInService) {
  testing::MemoryEnv env(1);
  const HostId host = env.add_host("osd", 16, 25e9, 0);
  OpQueueOptions o;
  o.shards = 2;
  o.threads_per_shard = 2;
  OsdOpQueue q(env, host, o, 1);
  std::vector<double> done(6, -1);
  for (int i = 0; i < 6; ++i) {
    // Five ops on shard 0, one on shard 1.
    env.spawn(host, "op" + std::to_string(i), [&, i] {
      q.run(i == 5 ? 1 : 0, item(0, OpClass::kClient, 63, 4096), [&] { env.sleep_s(1.0); });
      done[i] = env.now_s();
    });
  }
  ASSERT_TRUE(env.run().ok());
  std::vector<double> shard0(done.begin(), done.begin() + 5);
  std::sort(shard0.begin(), shard0.end());
  EXPECT_EQ(shard0, (std::vector<double>{1, 1, 2, 2, 3}));
  EXPECT_DOUBLE_EQ(done[5], 1);
  EXPECT_EQ(q.stats().ops[static_cast<size_t>(OpClass::kClient)], 6u);
}

// mClock's limit through the queue: a timer wakes the shard when the next op is due.
TEST(OsdOpQueue, MclockLimitPacesRecoveryItems) {
  testing::MemoryEnv env(1);
  const HostId host = env.add_host("osd", 16, 25e9, 0);
  OpQueueOptions o;
  o.shards = 8;
  o.threads_per_shard = 2;
  o.scheduler.kind = SchedulerKind::kMclock;
  o.scheduler.mclock = MclockOptions::for_device(false, MclockCostModel::kLegacyIops);
  o.scheduler.mclock.allocations =
      mclock_allocations(MclockAllocationSet::kQuincyDev, MclockProfile::kBalanced);
  OsdOpQueue q(env, host, o, 1);
  double last = 0;
  for (int i = 0; i < 20; ++i) {
    env.spawn(host, "rec" + std::to_string(i), [&] {
      q.run(3, item(0, OpClass::kBackgroundRecovery, kRecoveryPriority, kOsdRecoveryCostBytes), {});
      last = std::max(last, env.now_s());
    });
  }
  ASSERT_TRUE(env.run().ok());
  // Limit 150% of 2687.5 IOPS per shard, 231 per item: 20 items, the last at 20 x 0.0573 s.
  EXPECT_NEAR(last, 20 * 231 / (1.5 * 2687.5), 0.02 * 20 * 231 / (1.5 * 2687.5));
}

}  // namespace
}  // namespace granary::services

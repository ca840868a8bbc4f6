#include "engine/recovery/reserver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/testing/memory_env.h"

namespace granary::recovery {
namespace {

// One slot: the holder keeps it while three requests of different priorities wait; each
// release grants the highest waiting priority (equal ones in arrival order), as Ceph's
// AsyncReserver does. Everything goes through messages between hosts.
TEST(Reserver, GrantsBySlotsThenPriorityThenArrival) {
  testing::MemoryEnv env(1);
  const HostId osd = env.add_host("osd", 1, 1e9, 5e-6);
  const HostId a = env.add_host("a", 1, 1e9, 5e-6);
  const std::string name = remote_reserver_name(0);
  env.endpoint(osd, name);
  env.spawn(osd, "reserver", [&] { run_reserver(env, osd, name, 1); }, {.daemon = true});
  std::vector<std::string> order;
  env.spawn(a, "first", [&] {
    Endpoint& reply = env.endpoint(a, "first.reply");
    ASSERT_TRUE(reserve(env, a, name, "first", kBackfillPriority, 1, reply).ok());
    order.push_back("first");
    env.sleep_s(1);  // the others queue meanwhile
    release(env, a, name, "first");
    release(env, a, name, "first");  // a duplicate release frees nothing
  });
  auto waiter = [&](std::string who, int32_t priority, double at_s) {
    env.spawn(a, who, [&env, &order, a, name, who, priority, at_s] {
      env.sleep_s(at_s);
      Endpoint& reply = env.endpoint(a, who + ".reply");
      ASSERT_TRUE(reserve(env, a, name, who, priority, 2, reply).ok());
      order.push_back(who);
      env.sleep_s(0.1);
      release(env, a, name, who);
    });
  };
  waiter("backfill", kBackfillPriority, 0.1);
  waiter("degraded1", kDegradedBackfillPriority, 0.2);
  waiter("recovery", kRecoveryPriority, 0.3);
  waiter("degraded2", kDegradedBackfillPriority, 0.4);
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(order,
            (std::vector<std::string>{"first", "recovery", "degraded1", "degraded2", "backfill"}));
  EXPECT_GT(env.now_s(), 1.4);  // one at a time: 1 s, then 4 x 0.1 s
}

}  // namespace
}  // namespace granary::recovery

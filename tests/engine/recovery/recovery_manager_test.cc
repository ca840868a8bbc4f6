#include "engine/recovery/recovery_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/cluster/map_placement.h"
#include "engine/cluster/monitor.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::recovery {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// 8 storage hosts x 4 OSDs with drives, the monitor and the manager on host 0, and a client
// host whose placement follows its own map client.
struct World {
  explicit World(int64_t pool) : env(3), pool(pool) {
    for (int h = 0; h < 8; ++h) {
      const HostId host = env.add_host("storage" + std::to_string(h), 16, 25e9, 5e-6);
      for (int d = 0; d < 4; ++d) env.add_device(host, uint64_t{1} << 40, 2e9, 0);
    }
    client_host = env.add_host("client", 16, 25e9, 5e-6);
    monitor = std::make_unique<cluster::MonitorService>(env, 0, cluster::test::make_map(),
                                                        cluster::MonitorOptions{});
    monitor->start();
    maps = std::make_unique<cluster::MapClient>(
        env, client_host, cluster::test::make_map(),
        cluster::MapClientOptions{.endpoint_name = "client.0.map"});
    placement = std::move(cluster::MapPlacement::create(*maps, pool).value());
    maps->start();
    RecoveryManagerOptions o;
    o.sizes = cluster::PgSizes::spread(256, 256 * 4, 256 * 16 * kMiB);
    o.on_idle = [this] { ++idle; };
    manager =
        std::move(RecoveryManager::create(env, 0, cluster::test::make_map(), pool, o).value());
  }
  void change(std::vector<int32_t> down, std::vector<int32_t> out) {
    cluster::Incremental inc;
    inc.mark_down = std::move(down);
    inc.mark_out = std::move(out);
    ASSERT_TRUE(monitor->apply(inc).ok());
  }
  std::vector<int32_t> devices(uint32_t pg) {
    std::vector<int32_t> d;
    placement->devices_of(pg, d);
    return d;
  }

  testing::MemoryEnv env;
  int64_t pool;
  HostId client_host = 0;
  std::unique_ptr<cluster::MonitorService> monitor;
  std::unique_ptr<cluster::MapClient> maps;
  std::unique_ptr<cluster::MapPlacement> placement;
  std::unique_ptr<RecoveryManager> manager;
  int idle = 0;
};

// osd.5 down then out: the mark-out epoch is primed, so a client never sees a backfill target
// in an acting set; the manager backfills, clears each PG's pg_temp as it completes, and at the
// end every client acting set is the up set, in a new interval for the PGs that moved.
TEST(RecoveryManager, AnOsdOutIsBackfilledAndThePgTempsCleared) {
  for (int64_t pool : {cluster::test::kReplicatedPool, cluster::test::kErasurePool}) {
    World w(pool);
    std::vector<uint32_t> moved;
    bool target_served = false;
    w.env.spawn(0, "script", [&] {
      w.manager->start();
      w.env.sleep_s(1);
      w.change({5}, {});
      w.env.sleep_s(1);
      const std::vector<std::vector<int32_t>> before = [&] {
        std::vector<std::vector<int32_t>> v;
        for (uint32_t pg = 0; pg < 256; ++pg) v.push_back(w.devices(pg));
        return v;
      }();
      w.change({}, {5});
      w.env.sleep_s(0.001);
      for (uint32_t pg = 0; pg < 256; ++pg) {
        if (w.placement->up_of(pg) == before[pg]) continue;
        moved.push_back(pg);
        // Served by the OSDs that hold the data, not by the new up-set member.
        target_served = target_served || w.devices(pg) != before[pg];
      }
      while (w.manager->busy() || w.manager->stats().plans == 0) w.env.sleep_s(1);
      w.env.sleep_s(1);
    });
    ASSERT_TRUE(w.env.run(testing::MemoryRunOptions{.max_time_s = 3600}).ok());
    EXPECT_FALSE(moved.empty());
    EXPECT_FALSE(target_served) << "pool " << pool;
    const RecoveryManagerStats st = w.manager->stats();
    EXPECT_EQ(st.plans, 1u);
    EXPECT_GT(st.bytes_moved, 0u);
    EXPECT_EQ(st.bytes_recovered, st.bytes_moved);
    EXPECT_GT(st.pg_temp_requests, 0u);
    EXPECT_GE(w.idle, 1);
    EXPECT_EQ(w.maps->epoch(), w.monitor->map().epoch());
    const cluster::OsdMap final_map = w.maps->map_on_task();
    for (const auto& [key, osds] : final_map.pg_temps()) {
      if (key.first != pool) continue;  // (the other pool has no manager here)
      ADD_FAILURE() << "pg_temp left for " << key.first << "." << key.second << " up "
                    << ::testing::PrintToString(w.placement->up_of(key.second)) << " temp "
                    << ::testing::PrintToString(osds);
    }
    for (uint32_t pg = 0; pg < 256; ++pg) {
      EXPECT_EQ(w.devices(pg), w.placement->up_of(pg)) << pg;
    }
    for (uint32_t pg : moved) EXPECT_GT(w.placement->interval_of(pg), 3u) << pg;
  }
}

// A drive failure reported by the OSD's host: its copies leave the manager's data; a PG that
// lost every copy gets no OSD at all (pg_temp to no OSD: its I/O blocks), also once the map has
// moved its up set to OSDs without data, rather than sending reads to them.
TEST(RecoveryManager, LostDrivesLeaveAPgWithNoOsd) {
  World w(cluster::test::kReplicatedPool);
  const std::vector<int32_t> up = w.placement->up_of(7);
  w.env.spawn(0, "script", [&] {
    w.manager->start();
    for (int32_t osd : up) {
      ASSERT_TRUE(w.env
                      .send(0, w.manager->endpoint_name(),
                            Message{OsdDeviceReport{osd, DeviceEvent::kFailed}, {}})
                      .ok());
    }
    w.env.sleep_s(1);
    // No copy left anywhere: blocked at once, though the map still has the OSDs up.
    EXPECT_TRUE(w.devices(7).empty());
    w.change(up, up);
    w.env.sleep_s(1);
    EXPECT_FALSE(w.placement->up_of(7).empty());
    EXPECT_TRUE(w.devices(7).empty());
    ASSERT_NE(w.monitor->map().pg_temp(cluster::test::kReplicatedPool, 7), nullptr);
    EXPECT_FALSE(w.manager->intact(up[0]));
    for (const auto& holders : w.manager->data().holders) {
      for (int32_t osd : up) EXPECT_EQ(std::count(holders.begin(), holders.end(), osd), 0);
    }
  });
  ASSERT_TRUE(w.env.run(testing::MemoryRunOptions{.max_time_s = 3600}).ok());
}

}  // namespace
}  // namespace granary::recovery

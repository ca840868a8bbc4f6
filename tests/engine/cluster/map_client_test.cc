#include "engine/cluster/map_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/cluster/map_placement.h"
#include "engine/cluster/monitor.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::cluster {
namespace {

constexpr double kLatencyS = 50e-6;

// A monitor host and `clients` hosts, each with a map client that records the epochs it applies.
struct World {
  explicit World(int clients, MonitorOptions options = {}, double renew_s = 0) : env(7) {
    mon_host = env.add_host("mon", 4, 10e9, kLatencyS);
    monitor = std::make_unique<MonitorService>(env, mon_host, test::make_map(4, 2, 32), options);
    monitor->start();
    for (int c = 0; c < clients; ++c) {
      hosts.push_back(env.add_host("node" + std::to_string(c), 4, 10e9, kLatencyS));
      maps.push_back(std::make_unique<MapClient>(
          env, hosts.back(), test::make_map(4, 2, 32),
          MapClientOptions{.endpoint_name = "node." + std::to_string(c) + ".map",
                           .renew_interval_s = renew_s}));
      applied.emplace_back();
      maps.back()->subscribe(
          [this, c](const OsdMap& m) { applied[static_cast<size_t>(c)].push_back(m.epoch()); });
    }
  }
  void start_clients() {
    for (auto& m : maps) m->start();
  }
  template <typename Script>
  void drive(Script script) {
    env.spawn(mon_host, "script", script);
  }
  // An operator's change (the monitor applies it as one epoch).
  void change(std::vector<int32_t> down, std::vector<int32_t> out = {}) {
    Incremental inc;
    inc.mark_down = std::move(down);
    inc.mark_out = std::move(out);
    ASSERT_TRUE(monitor->apply(inc).ok());
  }

  testing::MemoryEnv env;
  HostId mon_host = 0;
  std::vector<HostId> hosts;
  std::unique_ptr<MonitorService> monitor;
  std::vector<std::unique_ptr<MapClient>> maps;
  std::vector<std::vector<uint32_t>> applied;  // [client]: epochs, in the order applied
};

std::vector<uint32_t> epochs_from(uint32_t first, uint32_t last) {
  std::vector<uint32_t> v;
  for (uint32_t e = first; e <= last; ++e) v.push_back(e);
  return v;
}

// confirmed(): a client that asks for confirmation hears from the monitor even when its map is
// current; one that does not hears nothing until the next epoch. A client that starts behind
// (a restarted process holding the initial map) is confirmed once it has applied what it missed,
// not before.
TEST(MapClient, ConfirmationTellsWhenTheMapHeldIsTheMonitors) {
  World w(2);
  w.maps[0] = std::make_unique<MapClient>(
      w.env, w.hosts[0], test::make_map(4, 2, 32),
      MapClientOptions{.endpoint_name = "node.0.map", .renew_interval_s = 0, .confirm = true});
  // A late client (a restarted process) that starts from epoch 1 while the monitor is at 3.
  MapClient late(
      w.env, w.hosts[1], test::make_map(4, 2, 32),
      MapClientOptions{.endpoint_name = "late.map", .renew_interval_s = 0, .confirm = true});
  late.subscribe([](const OsdMap&) {});
  w.start_clients();
  bool current_confirmed = false, current_unasked = true, unasked_after_epochs = false;
  bool late_confirmed_at_start = true;
  uint32_t epoch_when_confirmed = 0;
  w.drive([&] {
    w.env.sleep_s(0.5);
    current_confirmed = w.maps[0]->confirmed();
    current_unasked = w.maps[1]->confirmed();
    w.change({1});
    w.change({2});
    w.env.sleep_s(0.5);
    unasked_after_epochs = w.maps[1]->confirmed();  // the epochs that came confirmed it
    late.start();
    late_confirmed_at_start = late.confirmed();
    while (!late.confirmed()) w.env.sleep_s(0.001);
    epoch_when_confirmed = late.epoch();
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_TRUE(current_confirmed);
  EXPECT_FALSE(current_unasked);
  EXPECT_TRUE(unasked_after_epochs);
  EXPECT_FALSE(late_confirmed_at_start);
  EXPECT_EQ(epoch_when_confirmed, 3u);
}

// Every subscriber ends on the monitor's epoch, having applied each epoch once, in order, and
// holds the same map (up sets and pg_temp) as the monitor.
TEST(MapClient, SubscribersConvergeOnTheMonitorsEpoch) {
  World w(3);
  w.start_clients();
  w.drive([&] {
    w.env.sleep_s(1);
    w.change({1});
    w.change({}, {1});
    w.env.sleep_s(0.5);
    w.change({5});
    w.change({}, {5});
    w.env.sleep_s(1);
  });
  ASSERT_TRUE(w.env.run().ok());
  const OsdMap mon = w.monitor->map();
  EXPECT_EQ(mon.epoch(), 5u);
  for (size_t c = 0; c < w.maps.size(); ++c) {
    EXPECT_EQ(w.maps[c]->epoch(), 5u) << c;
    EXPECT_EQ(w.applied[c], epochs_from(2, 5)) << c;
    const OsdMap mine = w.maps[c]->map_on_task();
    EXPECT_EQ(mine.acting_sets(test::kReplicatedPool).value(),
              mon.acting_sets(test::kReplicatedPool).value());
    EXPECT_EQ(mine.acting_sets(test::kErasurePool).value(),
              mon.acting_sets(test::kErasurePool).value());
    EXPECT_EQ(mine.pg_temps(), mon.pg_temps());
    EXPECT_EQ(w.maps[c]->resubscriptions(), 0u);
  }
  // The mark-out epochs were primed: PGs whose up set took a new OSD keep being served by the
  // OSDs that hold their data.
  EXPECT_FALSE(mon.pg_temps().empty());
}

// A client whose host was down while an epoch went out sees the gap at the next update and asks
// again: it applies the missing epoch, then the next, in order.
TEST(MapClient, ALostUpdateIsRecoveredAtTheNextOneInOrder) {
  World w(2);
  w.start_clients();
  w.drive([&] {
    w.env.sleep_s(1);
    w.env.set_host_down(w.hosts[1], true);
    w.change({2});  // lost for node 1
    w.env.sleep_s(1);
    w.env.set_host_down(w.hosts[1], false);
    w.change({3});
    w.env.sleep_s(1);
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(w.applied[0], epochs_from(2, 3));
  EXPECT_EQ(w.applied[1], epochs_from(2, 3));
  EXPECT_EQ(w.maps[1]->epoch(), 3u);
  EXPECT_EQ(w.maps[1]->resubscriptions(), 1u);
  EXPECT_FALSE(w.maps[1]->map_on_task().is_up(2));
}

// Without a later update, a client that renews its subscription catches up on its own; one
// further behind than the monitor's history gets the full map.
TEST(MapClient, RenewalCatchesUpAndAFullMapServesOneTooFarBehind) {
  MonitorOptions o;
  o.map_history = 2;
  World w(2, o, /*renew_s=*/5);
  w.start_clients();
  w.drive([&] {
    w.env.sleep_s(1);
    w.env.set_host_down(w.hosts[1], true);
    w.change({0});
    w.change({1});
    w.change({2});  // node 1 misses epochs 2..4; the monitor keeps only 3 and 4
    w.env.sleep_s(1);
    w.env.set_host_down(w.hosts[1], false);
    w.env.sleep_s(10);
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(w.applied[0], epochs_from(2, 4));
  EXPECT_EQ(w.applied[1], std::vector<uint32_t>{4});  // the full map at once
  EXPECT_EQ(w.maps[1]->epoch(), 4u);
  EXPECT_EQ(w.maps[1]->map_on_task().num_up(), w.monitor->map().num_up());
}

// A client that starts late (its host booted after the changes) gets the incrementals since the
// epoch it has, in order.
TEST(MapClient, ALateSubscriberGetsTheEpochsItMissed) {
  World w(1);
  w.drive([&] {
    w.change({1});
    w.change({}, {1});
    w.env.sleep_s(1);
    w.maps[0]->start();
    w.env.sleep_s(1);
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(w.applied[0], epochs_from(2, 3));
}

// A PgTempRequest is one new epoch: the placement's acting set is the pg_temp (its OSDs that
// are up), empty for a PG set to no OSD, the up set again once cleared; each change of an
// acting set, and only that, starts a new interval.
TEST(MapPlacement, PgTempSetsTheActingSetAndIntervalsFollowIt) {
  World w(1);
  auto placement = MapPlacement::create(*w.maps[0], test::kReplicatedPool);
  ASSERT_TRUE(placement.ok()) << placement.status().to_string();
  MapPlacement& p = **placement;
  w.start_clients();
  std::vector<int32_t> up0, up1, devices;
  w.drive([&] {
    p.devices_of(0, up0);
    p.devices_of(1, up1);
    ASSERT_EQ(p.interval_of(0), 1u);
    int32_t other = 0;
    while (std::find(up0.begin(), up0.end(), other) != up0.end()) ++other;
    PgTempRequest r;
    r.from = "test";
    r.entries.push_back(PgTempEntry{test::kReplicatedPool, 0, false, {other, up0[1]}});
    r.entries.push_back(PgTempEntry{test::kReplicatedPool, 1, false, {}});
    ASSERT_TRUE(w.env.send(w.mon_host, "mon.0", Message{r, {}}).ok());
    w.env.sleep_s(1);
    EXPECT_EQ(p.epoch(), 2u);
    p.devices_of(0, devices);
    EXPECT_EQ(devices, (std::vector<int32_t>{other, up0[1]}));
    p.devices_of(1, devices);
    EXPECT_TRUE(devices.empty());  // no copy to serve: I/O blocks
    EXPECT_EQ(p.interval_of(0), 2u);
    EXPECT_EQ(p.interval_of(1), 2u);
    EXPECT_EQ(p.interval_of(2), 1u);
    // The same request again changes nothing: no epoch.
    ASSERT_TRUE(w.env.send(w.mon_host, "mon.0", Message{r, {}}).ok());
    w.env.sleep_s(1);
    EXPECT_EQ(p.epoch(), 2u);
    // The pg_temp's first OSD goes down: the acting set loses it (a new interval).
    w.change({other});
    w.env.sleep_s(1);
    p.devices_of(0, devices);
    EXPECT_EQ(devices, (std::vector<int32_t>{up0[1]}));
    EXPECT_EQ(p.interval_of(0), 3u);
    // Cleared: the up set again.
    PgTempRequest clear;
    clear.entries.push_back(PgTempEntry{test::kReplicatedPool, 1, true, {}});
    ASSERT_TRUE(w.env.send(w.mon_host, "mon.0", Message{clear, {}}).ok());
    w.env.sleep_s(1);
    p.devices_of(1, devices);
    EXPECT_EQ(devices, p.up_of(1));
    EXPECT_EQ(p.interval_of(1), p.epoch());
  });
  ASSERT_TRUE(w.env.run().ok());
}

// Priming: marking out a down OSD moves up sets to new OSDs, but the acting sets stay on the
// OSDs that served the PGs (no new interval); without priming they follow the up sets.
TEST(MapPlacement, PrimedPgTempKeepsTheActingSetsOfAMarkOut) {
  for (bool prime : {true, false}) {
    MonitorOptions o;
    o.prime_pg_temp = prime;
    World w(1, o);
    auto placement = MapPlacement::create(*w.maps[0], test::kErasurePool);
    ASSERT_TRUE(placement.ok());
    MapPlacement& p = **placement;
    w.start_clients();
    w.drive([&] {
      w.change({3});
      w.env.sleep_s(1);
      std::vector<std::vector<int32_t>> before(p.num_groups());
      for (uint32_t pg = 0; pg < p.num_groups(); ++pg) p.devices_of(pg, before[pg]);
      w.change({}, {3});
      w.env.sleep_s(1);
      int moved = 0, kept = 0;
      for (uint32_t pg = 0; pg < p.num_groups(); ++pg) {
        std::vector<int32_t> now;
        p.devices_of(pg, now);
        if (p.up_of(pg) == before[pg]) continue;
        ++moved;
        kept += now == before[pg] && p.interval_of(pg) == 2u;
      }
      EXPECT_GT(moved, 0);
      EXPECT_EQ(kept, prime ? moved : 0) << "prime " << prime;
    });
    ASSERT_TRUE(w.env.run().ok());
  }
}

}  // namespace
}  // namespace granary::cluster

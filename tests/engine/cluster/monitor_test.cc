#include "engine/cluster/monitor.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/cluster/map_client.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::cluster {
namespace {

constexpr double kLatencyS = 50e-6;

struct Epoch {
  uint32_t epoch = 0;
  double at_s = 0;
  OsdMap map;
};

// Options for these tests: no pg_temp priming, so that each epoch says only what the
// detection changed (priming has its own tests in map_client_test.cc).
MonitorOptions detection_only() {
  MonitorOptions o;
  o.prime_pg_temp = false;
  return o;
}

// A monitor host and 2 storage hosts x 2 OSDs, one heartbeat agent per OSD; agents start at
// different phases of the 6 s interval. A map client on the monitor's host records the epochs
// as they arrive (at_s: the monitor's time of the change, from its history).
struct World {
  explicit World(MonitorOptions options = detection_only()) : env(1) {
    mon_host = env.add_host("mon", 4, 10e9, kLatencyS);
    for (int h = 0; h < 2; ++h) {
      storage.push_back(env.add_host("storage" + std::to_string(h), 4, 10e9, kLatencyS));
    }
    monitor = std::make_unique<MonitorService>(env, mon_host, test::make_map(2, 2, 16), options);
    maps = std::make_unique<MapClient>(env, mon_host, test::make_map(2, 2, 16),
                                       MapClientOptions{.endpoint_name = "test.0.map"});
    maps->subscribe([this](const OsdMap& m) {
      const double at_s = monitor->history().at(m.epoch() - 2).at_s;
      epochs.push_back({m.epoch(), at_s, m});
    });
    maps->start();
    monitor->start();
    for (int32_t osd = 0; osd < 4; ++osd) {
      agents.push_back(std::make_unique<HeartbeatAgent>(
          env, storage[static_cast<size_t>(osd / 2)], osd,
          HeartbeatOptions{.interval_s = 6, .first_at_s = 1.5 * osd}));
      agents.back()->start();
    }
  }

  // A non-daemon task that runs `script` on the monitor's host (it keeps the world running).
  template <typename Script>
  void drive(Script script) {
    env.spawn(mon_host, "script", script);
  }

  testing::MemoryEnv env;
  HostId mon_host = 0;
  std::vector<HostId> storage;
  std::unique_ptr<MonitorService> monitor;
  std::unique_ptr<MapClient> maps;
  std::vector<std::unique_ptr<HeartbeatAgent>> agents;
  std::vector<Epoch> epochs;
};

// Healthy agents: no change for an hour.
TEST(Monitor, NoFalseAlarms) {
  World w;
  w.drive([&] { w.env.sleep_s(3600); });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_TRUE(w.epochs.empty());
  EXPECT_EQ(w.monitor->map().epoch(), 1u);
  EXPECT_EQ(w.monitor->map().num_up(), 4);
}

// The crashed OSD is marked down between grace (20 s) and grace + interval (26 s) after the
// crash, whatever the phase of its heartbeats; one epoch per change.
TEST(Monitor, DetectsACrashBetweenGraceAndGracePlusInterval) {
  for (double crash_at : {100.0, 101.0, 102.5, 104.0, 105.9}) {
    for (int32_t osd : {0, 3}) {
      World w;
      w.drive([&] {
        w.env.sleep_s(crash_at);
        w.agents[static_cast<size_t>(osd)]->stop();
        w.env.sleep_s(60);
      });
      ASSERT_TRUE(w.env.run().ok());
      ASSERT_EQ(w.epochs.size(), 1u) << crash_at;
      const Epoch& e = w.epochs[0];
      EXPECT_EQ(e.epoch, 2u);
      EXPECT_FALSE(e.map.is_up(osd));
      EXPECT_TRUE(e.map.is_in(osd));
      EXPECT_EQ(e.map.num_up(), 3);
      const double detection_s = e.at_s - crash_at;
      std::printf("osd.%d crashed at %.1f s: marked down %.4f s later\n", osd, crash_at,
                  detection_s);
      EXPECT_GE(detection_s, 20.0);
      EXPECT_LE(detection_s, 26.0 + 2 * kLatencyS);
    }
  }
}

// Down, then out mon_osd_down_out_interval (600 s) after being marked down.
TEST(Monitor, MarksOutAfterTheDownOutInterval) {
  World w;
  w.drive([&] {
    w.env.sleep_s(50);
    w.agents[1]->stop();
    w.env.sleep_s(1000);
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(w.epochs.size(), 2u);
  EXPECT_EQ(w.epochs[0].epoch, 2u);
  EXPECT_EQ(w.epochs[1].epoch, 3u);
  EXPECT_FALSE(w.epochs[1].map.is_in(1));
  EXPECT_FALSE(w.epochs[1].map.is_up(1));
  EXPECT_NEAR(w.epochs[1].at_s - w.epochs[0].at_s, 600.0, 1e-6);
  const std::vector<MapChange> history = w.monitor->history();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].what, "down osd.1");
  EXPECT_EQ(history[1].what, "out osd.1");
}

// A restart before the down-out interval: up again, never out (no backfill; only the writes it
// missed need recovery).
TEST(Monitor, RestartBeforeDownOutIsUpWithoutOut) {
  World w;
  w.drive([&] {
    w.env.sleep_s(100);
    w.agents[2]->stop();
    w.env.sleep_s(200);
    w.agents[2]->restart();
    w.env.sleep_s(1000);
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(w.epochs.size(), 2u);
  EXPECT_FALSE(w.epochs[0].map.is_up(2));
  EXPECT_TRUE(w.epochs[1].map.is_up(2));
  EXPECT_TRUE(w.epochs[1].map.is_in(2));
  EXPECT_EQ(w.epochs[1].epoch, 3u);
  EXPECT_NEAR(w.epochs[1].at_s, 300.0, 2 * kLatencyS);  // its first heartbeat
  EXPECT_EQ(w.monitor->history().back().what, "up osd.2");
}

// Real mode's heartbeats carry the OSD process's incarnation: a heartbeat from an up OSD with a
// new incarnation is a restart faster than detection, marked down then up in two epochs (so
// that its PGs start a new interval and peer); the same incarnation again changes nothing.
TEST(Monitor, ANewIncarnationOfAnUpOsdIsMarkedDownThenUp) {
  World w;
  w.drive([&] {
    auto beat = [&](uint64_t incarnation) {
      ASSERT_TRUE(w.env
                      .send(w.storage[1], "mon.0",
                            Message{Heartbeat{2, w.env.now_s(), incarnation}, {}, 64})
                      .ok());
      w.env.sleep_s(1);
    };
    beat(7);  // the first incarnation heard: nothing to compare with
    beat(7);
    beat(8);  // a new process
    beat(8);
    w.env.sleep_s(100);
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(w.epochs.size(), 2u);
  EXPECT_FALSE(w.epochs[0].map.is_up(2));
  EXPECT_TRUE(w.epochs[1].map.is_up(2));
  EXPECT_NEAR(w.epochs[0].at_s, 2.0, 2 * kLatencyS);
  EXPECT_EQ(w.monitor->history()[0].what, "down osd.2");
  EXPECT_EQ(w.monitor->history()[1].what, "up osd.2");
}

// A restart after the monitor marked it out: up and in again in one epoch
// (mon_osd_auto_mark_auto_out_in); an OSD an operator marked out stays out.
TEST(Monitor, RestartAfterAutoOutMarksItBackIn) {
  World w;
  w.drive([&] {
    w.env.sleep_s(100);
    w.agents[0]->stop();
    Incremental operator_out;
    operator_out.mark_out = {3};
    ASSERT_TRUE(w.monitor->apply(operator_out).ok());
    w.env.sleep_s(900);
    w.agents[0]->restart();
    w.env.sleep_s(60);
  });
  ASSERT_TRUE(w.env.run().ok());
  const std::vector<MapChange> history = w.monitor->history();
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].what, "out osd.3");
  EXPECT_EQ(history[1].what, "down osd.0");
  EXPECT_EQ(history[2].what, "out osd.0");
  EXPECT_EQ(history[3].what, "up osd.0; in osd.0");
  const OsdMap now = w.monitor->map();
  EXPECT_EQ(now.epoch(), 5u);
  EXPECT_TRUE(now.is_up(0) && now.is_in(0));
  EXPECT_TRUE(now.is_up(3));
  EXPECT_FALSE(now.is_in(3));
}

// An operator marking up an OSD that never heartbeats: the monitor wakes up for the new
// deadline and marks it down again interval + grace later.
TEST(Monitor, OperatorChangesMoveTheDeadlines) {
  World w;
  w.drive([&] {
    w.env.sleep_s(10);
    w.agents[3]->stop();
    w.env.sleep_s(40);  // marked down by now
    Incremental up;
    up.mark_up = {3};
    ASSERT_TRUE(w.monitor->apply(up).ok());
    w.env.sleep_s(100);
  });
  ASSERT_TRUE(w.env.run().ok());
  const std::vector<MapChange> history = w.monitor->history();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1].what, "up osd.3");
  EXPECT_EQ(history[2].what, "down osd.3");
  EXPECT_NEAR(history[2].at_s - history[1].at_s, 26.0, 1e-9);
  Incremental bad;
  bad.mark_down = {42};
  EXPECT_FALSE(w.monitor->apply(bad).ok());
}

}  // namespace
}  // namespace granary::cluster

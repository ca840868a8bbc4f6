// DriveQueue: the command-unit model of a drive (sim/drive_model.h), with known answers.
#include "sim/drive_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <queue>

#include "engine/random.h"
#include "models/catalog.h"

namespace granary::sim {
namespace {

models::DriveProfile nvme() {
  models::DriveProfile d;
  d.read_kiops = 1000;
  d.write_kiops = 200;
  d.read_latency_us = 80;
  d.write_latency_us = 20;
  return d;
}

TEST(DriveTiming, UnitsFromLittlesLaw) {
  const DriveTiming t = DriveTiming::from_profile(nvme());
  EXPECT_EQ(t.units, 80);  // 1,000,000/s x 80 us
  EXPECT_NEAR(t.read_hold_s, 80e-6, 1e-12);
  EXPECT_NEAR(t.write_hold_s, 400e-6, 1e-12);  // 80 units / 200,000/s
  EXPECT_NEAR(t.read_latency_s, 80e-6, 1e-12);
  EXPECT_NEAR(t.write_latency_s, 20e-6, 1e-12);
}

TEST(DriveTiming, ProfileWithoutIopsHasNoUnitLimit) {
  models::DriveProfile d = nvme();
  d.read_kiops = 0;
  const DriveTiming t = DriveTiming::from_profile(d);
  EXPECT_EQ(t.units, 0);
  DriveQueue q(t);
  // A thousand operations at once all finish after the latency.
  for (int i = 0; i < 1000; ++i) EXPECT_DOUBLE_EQ(q.admit(1.0, false), 1.0 + 80e-6);
}

TEST(DriveQueue, QueueDepthOneSeesTheLatency) {
  DriveQueue q(DriveTiming::from_profile(nvme()));
  double t = 0;
  for (int i = 0; i < 100; ++i) {
    const double done = q.admit(t, false);
    EXPECT_NEAR(done - t, 80e-6, 1e-12);
    t = done;
  }
  EXPECT_DOUBLE_EQ(q.queued_s(), 0);
}

// A closed loop at queue depth `qd`: each completion admits the next operation at once.
double closed_loop_iops(DriveQueue& q, int qd, int ops, bool write) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> inflight;
  for (int i = 0; i < qd; ++i) inflight.push(q.admit(0, write));
  double last = 0;
  for (int i = qd; i < ops; ++i) {
    const double t = inflight.top();
    inflight.pop();
    inflight.push(q.admit(t, write));
    last = t;
  }
  return (ops - qd) / last;
}

TEST(DriveQueue, DeepQueueSaturatesAtTheRatedIops) {
  DriveQueue reads(DriveTiming::from_profile(nvme()));
  EXPECT_NEAR(closed_loop_iops(reads, 256, 200000, false), 1e6, 1e6 * 0.01);
  DriveQueue writes(DriveTiming::from_profile(nvme()));
  EXPECT_NEAR(closed_loop_iops(writes, 256, 100000, true), 2e5, 2e5 * 0.01);
}

TEST(DriveQueue, ShallowQueueIsLatencyBound) {
  // Queue depth 8 < 80 units: Little's law gives 8 / 80 us = 100,000 reads/s.
  DriveQueue q(DriveTiming::from_profile(nvme()));
  EXPECT_NEAR(closed_loop_iops(q, 8, 100000, false), 1e5, 1e5 * 0.01);
}

TEST(DriveQueue, RandomArrivalsQueueLikeMDc) {
  // Poisson arrivals at 90% of the rated IOPS on a one-unit drive (an HDD): M/D/1, whose mean
  // wait is rho / (2 mu (1 - rho)) = 0.9 / (2 * 100 * 0.1) = 45 ms.
  models::DriveProfile hdd;
  hdd.read_kiops = 0.1;
  hdd.write_kiops = 0.1;
  hdd.read_latency_us = 10000;
  hdd.write_latency_us = 10000;
  DriveQueue q(DriveTiming::from_profile(hdd));
  ASSERT_EQ(q.timing().units, 1);
  Random rng(7);
  double t = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    t += -std::log(1.0 - rng.uniform01()) / 90.0;
    q.admit(t, false);
  }
  EXPECT_NEAR(q.queued_s() / n, 0.045, 0.045 * 0.05);
}

TEST(DriveQueue, SlowdownStretchesHoldAndLatency) {
  DriveQueue q(DriveTiming::from_profile(nvme()));
  q.set_slowdown(3);
  EXPECT_NEAR(q.admit(0, false), 240e-6, 1e-12);
  EXPECT_NEAR(closed_loop_iops(q, 256, 100000, false), 1e6 / 3, 1e6 / 3 * 0.01);
}

TEST(DriveTiming, CatalogDrivesHaveUnits) {
  for (const auto& name : models::drive_profile_names()) {
    const auto d = models::drive_profile(name);
    ASSERT_TRUE(d.ok()) << name;
    const DriveTiming t = DriveTiming::from_profile(*d);
    EXPECT_GE(t.units, 1) << name;
    EXPECT_NEAR(t.units / t.read_hold_s, d->read_kiops * 1e3, 1e-6 * d->read_kiops * 1e3) << name;
  }
}

}  // namespace
}  // namespace granary::sim

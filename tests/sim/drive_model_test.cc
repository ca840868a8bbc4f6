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
  for (int i = 0; i < 1000; ++i) EXPECT_DOUBLE_EQ(q.admit(1.0, false, 4096), 1.0 + 80e-6);
}

TEST(DriveQueue, QueueDepthOneSeesTheLatency) {
  DriveQueue q(DriveTiming::from_profile(nvme()));
  double t = 0;
  for (int i = 0; i < 100; ++i) {
    const double done = q.admit(t, false, 4096);
    EXPECT_NEAR(done - t, 80e-6, 1e-12);
    t = done;
  }
  EXPECT_DOUBLE_EQ(q.queued_s(), 0);
}

// A closed loop at queue depth `qd`: each completion admits the next operation at once.
double closed_loop_iops(DriveQueue& q, int qd, int ops, bool write) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> inflight;
  for (int i = 0; i < qd; ++i) inflight.push(q.admit(0, write, 4096));
  double last = 0;
  for (int i = qd; i < ops; ++i) {
    const double t = inflight.top();
    inflight.pop();
    inflight.push(q.admit(t, write, 4096));
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
    q.admit(t, false, 4096);
  }
  EXPECT_NEAR(q.queued_s() / n, 0.045, 0.045 * 0.05);
}

TEST(DriveQueue, SlowdownStretchesHoldAndLatency) {
  DriveQueue q(DriveTiming::from_profile(nvme()));
  q.set_slowdown(3);
  EXPECT_NEAR(q.admit(0, false, 4096), 240e-6, 1e-12);
  EXPECT_NEAR(closed_loop_iops(q, 256, 100000, false), 1e6 / 3, 1e6 / 3 * 0.01);
}

// queue_depth caps the units: a drive that holds 16 commands at once serves at most 16 reads
// per 80 us (Little's law), a fifth of its rated 1,000,000 IOPS; the holds stay c / R.
TEST(DriveTiming, QueueDepthCapsTheUnits) {
  models::DriveProfile d = nvme();
  d.queue_depth = 16;
  const DriveTiming t = DriveTiming::from_profile(d);
  EXPECT_EQ(t.units, 16);
  EXPECT_NEAR(t.read_hold_s, 80e-6, 1e-12);
  EXPECT_NEAR(t.write_hold_s, 400e-6, 1e-12);
  EXPECT_NEAR(d.read_iops_limit(), 200e3, 1e-6);
  EXPECT_NEAR(d.write_iops_limit(), 40e3, 1e-6);
  DriveQueue q(t);
  EXPECT_NEAR(closed_loop_iops(q, 256, 100000, false), 200e3, 200e3 * 0.01);
  // One command at a time still sees the latency.
  DriveQueue one(t);
  EXPECT_NEAR(one.admit(0, false, 4096), 80e-6, 1e-12);
}

// A queue_depth at or above Little's law's units (the catalog's drives) changes nothing.
TEST(DriveTiming, QueueDepthAboveTheUnitsChangesNothing) {
  models::DriveProfile d = nvme();
  for (const int depth : {80, 128, 65535}) {
    d.queue_depth = depth;
    const DriveTiming t = DriveTiming::from_profile(d);
    EXPECT_EQ(t.units, 80) << depth;
    EXPECT_DOUBLE_EQ(d.read_iops_limit(), 1e6) << depth;
    EXPECT_DOUBLE_EQ(d.write_iops_limit(), 200e3) << depth;
  }
}

TEST(DriveTiming, CatalogDrivesHaveUnits) {
  for (const auto& name : models::drive_profile_names()) {
    const auto d = models::drive_profile(name);
    ASSERT_TRUE(d.ok()) << name;
    const DriveTiming t = DriveTiming::from_profile(*d);
    EXPECT_GE(t.units, 1) << name;
    EXPECT_NEAR(t.units / t.read_hold_s, d->read_kiops * 1e3, 1e-6 * d->read_kiops * 1e3) << name;
    // The catalog's queue depths hold the units its IOPS and latencies need.
    EXPECT_DOUBLE_EQ(d->read_iops_limit(), d->read_kiops * 1e3) << name;
  }
}

// ---------------------------------------------------------------- hard disks

models::DriveProfile hdd() {
  models::DriveProfile d;
  d.kind = models::DriveKind::kHdd;
  d.read_gbytes_per_s = 0.25;
  d.write_gbytes_per_s = 0.2;
  d.read_kiops = 0.2;   // 5 ms at queue depth 16
  d.write_kiops = 0.5;  // 2 ms
  d.read_latency_us = 12000;
  d.write_latency_us = 2000;
  d.queue_depth = 16;
  return d;
}

constexpr double kTransfer4k = 4096 / 0.25e9;  // the read profile's 4 KiB transfer

TEST(HeadTiming, PositioningRunsFromQueueDepthOneToTheRatedDepth) {
  const DriveTiming t = DriveTiming::from_profile(hdd());
  ASSERT_TRUE(t.hard_disk);
  EXPECT_EQ(t.units, 1);
  EXPECT_NEAR(t.read_hold_s, 5e-3, 1e-12);  // 1 / R: the IOPS bound's hold
  EXPECT_NEAR(t.write_hold_s, 2e-3, 1e-12);
  const HeadTiming& h = t.head;
  EXPECT_NEAR(h.positioning_s(1, false), 12e-3 - kTransfer4k, 1e-12);
  EXPECT_NEAR(h.positioning_s(16, false), 5e-3 - kTransfer4k, 1e-12);
  EXPECT_NEAR(h.positioning_s(64, false), 5e-3 - kTransfer4k, 1e-12);  // held at the rated one
  // Between: t_Q + (t_1 - t_Q) 2 (Q - q) / ((q + 1)(Q - 1)); at q = 4: (t_1 - t_Q) x 24 / 75.
  EXPECT_NEAR(h.positioning_s(4, false), 5e-3 - kTransfer4k + 7e-3 * 24.0 / 75.0, 1e-12);
  double last = 1;
  for (double q = 1; q <= 16; q += 0.5) {
    EXPECT_LT(h.positioning_s(q, false), last) << q;
    last = h.positioning_s(q, false);
  }
  // Writes from their own figures: 2 ms at both depths, so flat.
  EXPECT_NEAR(h.positioning_s(1, true), 2e-3 - 4096 / 0.2e9, 1e-12);
  EXPECT_NEAR(h.positioning_s(8, true), 2e-3 - 4096 / 0.2e9, 1e-12);
}

// A closed loop of `qd` operations of `bytes` on a hard disk: each operation is done when its
// data has moved at the media rate after the ready time (as the drive's link carries it) and
// the next one is admitted at that instant.
double head_closed_loop_bytes_per_s(DriveQueue& q, int qd, int ops, uint64_t bytes) {
  const double media_s = bytes / (q.timing().head.read_bytes_per_s * q.timing().share);
  std::priority_queue<double, std::vector<double>, std::greater<double>> inflight;
  for (int i = 0; i < qd; ++i) inflight.push(q.admit(0, false, bytes) + media_s);
  double first = 0, last = 0;
  const int warm = 2 * qd;
  for (int i = qd; i < ops; ++i) {
    const double t = inflight.top();
    inflight.pop();
    inflight.push(q.admit(t, false, bytes) + media_s);
    if (i == warm) first = t;
    last = t;
  }
  return static_cast<double>(ops - 1 - warm) * bytes / (last - first);
}

TEST(DriveQueue, HardDiskFollowsItsOwnEquation) {
  // S / (t_pos(q) + S / B) at every queue depth, for 4 KiB and 4 MiB operations.
  const HeadTiming h = DriveTiming::from_profile(hdd()).head;
  for (const uint64_t bytes : {uint64_t{4096}, uint64_t{4} << 20}) {
    for (const int qd : {1, 2, 4, 8, 16, 32}) {
      DriveQueue q(DriveTiming::from_profile(hdd()));
      const double expected = bytes / (h.positioning_s(qd, false) + bytes / h.read_bytes_per_s);
      const double measured = head_closed_loop_bytes_per_s(q, qd, 4000, bytes);
      EXPECT_NEAR(measured / expected, 1.0, 1e-9) << bytes << " bytes at queue depth " << qd;
      EXPECT_NEAR(q.queue_depth_sum() / q.operations(), qd, 0.01 * qd) << qd;
    }
  }
  // 4 KiB at the rated depth and beyond: the rated IOPS.
  DriveQueue q(DriveTiming::from_profile(hdd()));
  EXPECT_NEAR(head_closed_loop_bytes_per_s(q, 64, 4000, 4096) / 4096, 200, 200 * 1e-9);
}

TEST(DriveQueue, HardDiskAnswersAfterPositioningAndHoldsTheHeadForTheTransfer) {
  DriveQueue q(DriveTiming::from_profile(hdd()));
  const double pos1 = 12e-3 - kTransfer4k;
  const uint64_t mib = 1 << 20;
  // Idle: ready after t_pos(1); the head is busy until the 1 MiB has moved.
  EXPECT_NEAR(q.admit(0, false, mib), pos1, 1e-12);
  // A second op at 1 ms sees two at the drive and waits for the head.
  const double head_free = pos1 + mib / 0.25e9;
  const double pos2 = DriveTiming::from_profile(hdd()).head.positioning_s(2, false);
  EXPECT_NEAR(q.admit(1e-3, false, mib), head_free + pos2, 1e-12);
  EXPECT_NEAR(q.queued_s(), head_free - 1e-3, 1e-12);
  // Long after: idle again.
  EXPECT_NEAR(q.admit(10, false, mib), 10 + pos1, 1e-9);
  // A slowed drive positions and transfers `factor` times slower.
  q.set_slowdown(2);
  EXPECT_NEAR(q.admit(20, false, mib), 20 + 2 * pos1, 1e-9);
  EXPECT_NEAR(q.admit(20, false, mib),
              20 + 2 * pos1 + 2 * mib / 0.25e9 +
                  2 * DriveTiming::from_profile(hdd()).head.positioning_s(2, false),
              1e-9);
}

TEST(DriveQueue, SlicedHardDiskKeepsTheFullClustersEquation) {
  // A slice's drive at 1/4 of the capacity with 1/4 of the queue (2 instead of 8): 1/4 of the
  // full drive's throughput at queue depth 8, and it counts the full drive's depth.
  const DriveTiming full = DriveTiming::from_profile(hdd());
  const uint64_t bytes = uint64_t{4} << 20;
  const double expected =
      bytes / (full.head.positioning_s(8, false) + bytes / full.head.read_bytes_per_s);
  DriveQueue sliced(full.sliced(0.25));
  EXPECT_NEAR(head_closed_loop_bytes_per_s(sliced, 2, 4000, bytes) / (expected / 4), 1.0, 1e-9);
  EXPECT_NEAR(sliced.queue_depth_sum() / sliced.operations(), 8, 0.08);
  EXPECT_NEAR(full.sliced(0.25).read_hold_s, 4 * full.read_hold_s, 1e-12);
}

TEST(DriveQueue, SlicedFlashDividesItsHolds) {
  const DriveTiming t = DriveTiming::from_profile(nvme()).sliced(0.5);
  EXPECT_NEAR(t.read_hold_s, 160e-6, 1e-12);
  EXPECT_NEAR(t.write_hold_s, 800e-6, 1e-12);
  EXPECT_NEAR(t.read_latency_s, 80e-6, 1e-12);
  DriveQueue q(t);
  EXPECT_NEAR(closed_loop_iops(q, 256, 100000, false), 5e5, 5e5 * 0.01);
}

TEST(DriveTiming, CatalogHardDiskPositionsLessAtDepth) {
  const auto d = models::drive_profile("seagate-exos-x20-20tb");
  ASSERT_TRUE(d.ok());
  const DriveTiming t = DriveTiming::from_profile(*d);
  ASSERT_TRUE(t.hard_disk);
  // QD1 12.4 ms, QD16 1 / 168 IOPS = 5.95 ms, less the 14 us transfer of 4 KiB at 285 MB/s.
  EXPECT_NEAR(t.head.positioning_s(1, false), 12.4e-3 - 4096 / 285e6, 1e-9);
  EXPECT_NEAR(t.head.positioning_s(16, false), 1 / 168.0 - 4096 / 285e6, 1e-9);
}

// The units' work done: a drive whose queue is never empty works units x the time (busy 1);
// one that is idle half the time, half of it. Closed forms on the unit model.
TEST(DriveQueue, WorkDoneCountsTheUnitsBusyTime) {
  DriveTiming t;
  t.units = 2;
  t.read_hold_s = 1;
  t.read_latency_s = 1;
  DriveQueue q(t);
  EXPECT_EQ(q.busy_units(), 2);
  for (int i = 0; i < 8; ++i) q.admit(0, false, 4096);  // 4 s of work on each unit
  EXPECT_DOUBLE_EQ(q.work_done_s(0), 0);
  EXPECT_DOUBLE_EQ(q.work_done_s(1), 2);    // both units busy for 1 s
  EXPECT_DOUBLE_EQ(q.work_done_s(2.5), 5);  // busy fraction (5 - 2) / (2 x 1.5) = 1
  EXPECT_DOUBLE_EQ(q.work_done_s(4), 8);
  EXPECT_DOUBLE_EQ(q.work_done_s(10), 8);  // idle after 4 s: nothing more done
  // One operation on one of the two units for 1 s of 2: busy 1/4 over [10, 12].
  q.admit(10, false, 4096);
  EXPECT_DOUBLE_EQ((q.work_done_s(12) - q.work_done_s(10)) / (2 * 2.0), 0.25);
}

TEST(DriveQueue, WorkDoneOfAHardDiskIsItsHeadTime) {
  models::DriveProfile hdd;
  hdd.kind = models::DriveKind::kHdd;
  hdd.read_kiops = 0.168;
  hdd.write_kiops = 0.168;
  hdd.read_latency_us = 8000;
  hdd.write_latency_us = 8000;
  hdd.queue_depth = 16;
  hdd.read_gbytes_per_s = 0.285;
  hdd.write_gbytes_per_s = 0.285;
  DriveQueue q(DriveTiming::from_profile(hdd));
  EXPECT_EQ(q.busy_units(), 1);
  double done = 0;
  for (int i = 0; i < 10; ++i) done = q.admit(0, false, 1 << 20);  // positioning ends
  (void)done;
  // Ten 1 MiB reads back to back on one head: once all are done, the head worked exactly
  // until the last one finished, and not a moment after.
  const double all = q.work_done_s(1e6);
  EXPECT_GT(all, 10 * (1 << 20) / 285e6);
  EXPECT_DOUBLE_EQ(q.work_done_s(all), all);
  EXPECT_DOUBLE_EQ(q.work_done_s(all / 2), all / 2);  // one head, busy from 0 without a gap
}

}  // namespace
}  // namespace granary::sim

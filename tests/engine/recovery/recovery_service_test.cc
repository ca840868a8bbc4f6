#include "engine/recovery/recovery_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "engine/cluster/pg_states.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/cluster/cluster_fixture.h"

namespace granary::recovery {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

struct Hardware {
  int hosts = 2;
  int osds_per_host = 1;
  double device_bytes_per_s = 2e9;
  double device_latency_s = 0;
  double nic_bytes_per_s = 25e9;
  double nic_latency_s = 5e-6;
};

// Hosts with one drive per OSD; OSD id = device id, OSDs numbered host by host.
struct World {
  explicit World(const Hardware& hw = {}) : env(1) {
    for (int h = 0; h < hw.hosts; ++h) {
      const HostId host =
          env.add_host("storage" + std::to_string(h), 16, hw.nic_bytes_per_s, hw.nic_latency_s);
      for (int d = 0; d < hw.osds_per_host; ++d) {
        env.add_device(host, 8 * (uint64_t{1} << 40), hw.device_bytes_per_s, hw.device_latency_s);
      }
    }
  }
  testing::MemoryEnv env;
};

RecoveryOp backfill(uint32_t pg, std::vector<int32_t> sources, int32_t target, uint64_t bytes) {
  RecoveryOp op;
  op.pg = pg;
  op.kind = RecoveryKind::kBackfill;
  op.sources = std::move(sources);
  op.target = target;
  op.bytes_to_write = bytes;
  op.bytes_to_read = bytes * op.sources.size();
  op.restores_redundancy = true;
  return op;
}

RecoveryPlan plan_of(std::vector<RecoveryOp> ops) {
  RecoveryPlan p;
  for (RecoveryOp& op : ops) {
    p.bytes_to_write += op.bytes_to_write;
    p.bytes_to_read += op.bytes_to_read;
    p.ops.push_back(std::move(op));
  }
  return p;
}

// Runs `plan` in a fresh world and returns the stats.
RecoveryStats run(const RecoveryPlan& plan, const RecoveryOptions& options, const Hardware& hw = {},
                  std::vector<OpRecord>* records = nullptr) {
  World w(hw);
  RecoveryService service(w.env, options);
  service.execute(plan);
  Status s = w.env.run();
  EXPECT_TRUE(s.ok()) << s.to_string();
  if (records != nullptr) *records = service.op_records();
  return service.stats();
}

// A RecoveryRead of a range the drive does not have is answered with an error that names the
// range, not with data (Env::send_from_device refuses the range) and not with a crash.
TEST(RecoveryService, AReadBeyondTheDriveIsAnsweredWithAnError) {
  World w;
  RecoveryService service(w.env, RecoveryOptions{});
  service.start_daemon(0);
  const uint64_t capacity = w.env.device(0).capacity_bytes();
  std::vector<RecoveryReadReply> replies;
  w.env.spawn(1, "asker", [&] {
    Endpoint& inbox = w.env.endpoint(1, "asker");
    for (const uint64_t offset : {capacity - 100, capacity - 10}) {
      RecoveryRead read;
      read.op_id = offset;
      read.offset = offset;
      read.length = 100;
      read.reply_to = "asker";
      w.env.send(1, recovery_endpoint_name(0), Message{read, {}});
      Result<Message> m = inbox.recv(1.0);
      ASSERT_TRUE(m.ok()) << m.status().to_string();
      const auto* r = std::get_if<RecoveryReadReply>(&m->body);
      ASSERT_NE(r, nullptr);
      replies.push_back(*r);
      if (r->ok) {
        EXPECT_EQ(m->payload.size_bytes, 100u);
      }
    }
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_TRUE(replies[0].ok) << replies[0].error;  // the last 100 bytes: fine
  EXPECT_FALSE(replies[1].ok);
  EXPECT_NE(replies[1].error.find("beyond its capacity"), std::string::npos) << replies[1].error;
  EXPECT_EQ(replies[1].op_id, capacity - 10);
}

// Known answer: N bytes through one OSD limited to B bytes/s take N / B (a token bucket of one
// chunk: within one chunk's time plus the last chunk's I/O).
TEST(RecoveryService, BandwidthLimitTakesNOverB) {
  const uint64_t n = kGiB;
  const double b = 100e6;
  RecoveryOptions options;
  options.osd_recovery_bytes_per_s = b;
  const RecoveryStats st = run(plan_of({backfill(0, {0}, 1, n)}), options);
  const double took = st.finished_at_s - st.started_at_s;
  const double expected = double(n) / b;
  std::printf("1 GiB at 100 MB/s: %.4f s (N/B = %.4f s, %+.3f%%)\n", took, expected,
              100 * (took - expected) / expected);
  EXPECT_NEAR(took, expected, double(options.chunk_bytes) / b + 0.01);
  EXPECT_EQ(st.bytes_written, n);
  EXPECT_EQ(st.bytes_read, n);
  EXPECT_EQ(st.bytes_written_per_osd[1], n);
  EXPECT_EQ(st.bytes_read_per_osd[0], n);
  EXPECT_EQ(st.ops_done, 1u);
  EXPECT_EQ(st.pgs_remaining, 0u);
  EXPECT_EQ(st.degraded_pgs_remaining, 0u);
  EXPECT_EQ(st.redundancy_restored_at_s, st.finished_at_s);

  // Unthrottled, the drives (2 GB/s each) set the pace: recovery_max_active = 3 chunks in
  // flight keep the source's reads and the target's writes overlapped.
  const RecoveryStats free = run(plan_of({backfill(0, {0}, 1, n)}), RecoveryOptions{});
  const double free_s = free.finished_at_s - free.started_at_s;
  std::printf("1 GiB unthrottled: %.4f s (drive bound %.4f s)\n", free_s, double(n) / 2e9);
  EXPECT_GT(free_s, double(n) / 2e9);
  EXPECT_LT(free_s, 1.05 * double(n) / 2e9);
}

// osd_max_backfills = 1: four backfills into one target run one after the other; with 4 they
// all start at once.
TEST(RecoveryService, MaxBackfillsSerialisesBackfillsIntoOneTarget) {
  Hardware hw;
  hw.hosts = 5;
  const uint64_t bytes = 256 * kMiB;
  const RecoveryPlan plan = plan_of({backfill(0, {1}, 0, bytes), backfill(1, {2}, 0, bytes),
                                     backfill(2, {3}, 0, bytes), backfill(3, {4}, 0, bytes)});
  std::vector<OpRecord> serial, parallel;
  RecoveryOptions one;
  const RecoveryStats s1 = run(plan, one, hw, &serial);
  RecoveryOptions four;
  four.max_backfills = 4;
  const RecoveryStats s4 = run(plan, four, hw, &parallel);
  std::sort(serial.begin(), serial.end(),
            [](const OpRecord& a, const OpRecord& b) { return a.started_at_s < b.started_at_s; });
  for (size_t i = 1; i < serial.size(); ++i) {
    EXPECT_GE(serial[i].started_at_s, serial[i - 1].finished_at_s) << i;
  }
  // All at once: after the round trip of the remote reservation (request and grant).
  for (const OpRecord& r : parallel) EXPECT_LE(r.started_at_s, 2 * hw.nic_latency_s + 1e-6);
  const double single = serial[0].finished_at_s - serial[0].started_at_s;
  std::printf("4 x 256 MiB into one OSD: max_backfills=1 %.4f s (4 x %.4f s), =4 %.4f s\n",
              s1.finished_at_s, single, s4.finished_at_s);
  // Back to back, but for the reservation messages (reserver.h): each of the 3 hand-offs of
  // the target's slot is a release to the target's reserver and a grant to the next driver
  // (a one-way latency of 5 us each, and the messages queue behind the data on the NICs).
  EXPECT_GE(s1.finished_at_s, 4 * single + 3 * 2 * hw.nic_latency_s - 1e-9);
  EXPECT_LE(s1.finished_at_s, 4 * single + 3 * 3 * hw.nic_latency_s);
  EXPECT_EQ(s1.bytes_written_per_osd[0], 4 * bytes);
  EXPECT_EQ(s4.bytes_written_per_osd[0], 4 * bytes);
}

// Erasure 4+2: rebuilding a lost chunk reads k = 4 chunks for every chunk written.
TEST(RecoveryService, ErasureRebuildReadsKTimesWhatItWrites) {
  Hardware hw;
  hw.hosts = 7;
  Result<RecoveryPlan> plan = plan_recovery(
      {{0, 1, 2, 3, 4, 5}}, {{0, 1, 2, 3, 4, 6}}, {kGiB}, cluster::Redundancy::erasure_coded(4, 2),
      {.readable = {true, true, true, true, true, false, true}});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 1u);
  const RecoveryStats st = run(*plan, RecoveryOptions{}, hw);
  std::printf("erasure 4+2 rebuild of a 256 MiB chunk: wrote %llu MiB, read %llu MiB, %.4f s\n",
              (unsigned long long)(st.bytes_written / kMiB),
              (unsigned long long)(st.bytes_read / kMiB), st.finished_at_s);
  EXPECT_EQ(st.bytes_written, kGiB / 4);
  EXPECT_EQ(st.bytes_read, 4 * st.bytes_written);
  for (int32_t osd : {0, 1, 2, 3}) EXPECT_EQ(st.bytes_read_per_osd[osd], kGiB / 4);
  EXPECT_EQ(st.bytes_read_per_osd[4], 0u);
  EXPECT_EQ(st.bytes_written_per_osd[6], kGiB / 4);
}

// osd_recovery_sleep: one chunk stream (recovery_max_active = 1) pauses after each of its 32
// chunks.
TEST(RecoveryService, RecoverySleepPausesBetweenChunks) {
  RecoveryOptions options;
  options.recovery_max_active = 1;
  const RecoveryPlan plan = plan_of({backfill(0, {0}, 1, 32 * 4 * kMiB)});
  const RecoveryStats base = run(plan, options);
  options.recovery_sleep_s = 0.01;
  const RecoveryStats slept = run(plan, options);
  EXPECT_NEAR(slept.finished_at_s - base.finished_at_s, 32 * 0.01, 1e-9);
}

// Carried data (move_objects): an op moves its objects by the function, once its reservations
// are held, from its driver's host; the counts are what it says it moved (not the planned
// 8 MiB per op of a chunk stream), the sleep is per object pushed, and a move that fails is
// counted as an error.
TEST(RecoveryService, CarriedOpsMoveByTheirFunctionInsideTheReservations) {
  Hardware hw;
  hw.hosts = 4;
  const RecoveryPlan plan = plan_of({backfill(0, {1}, 0, 8 * kMiB), backfill(1, {2}, 0, 8 * kMiB),
                                     backfill(2, {3, 2}, 1, 8 * kMiB)});
  World w(hw);
  std::vector<std::pair<uint32_t, double>> moved;  // (pg, when)
  std::vector<HostId> hosts;
  RecoveryOptions options;
  options.recovery_sleep_s = 0.01;
  options.move_objects = [&](const RecoveryOp& op, HostId host) -> Result<CarriedMove> {
    moved.emplace_back(op.pg, w.env.now_s());
    hosts.push_back(host);
    w.env.sleep_s(0.1);  // the peering's messages
    if (op.pg == 2) return Status::io_error("osd.3 did not answer");
    return CarriedMove{.objects_pushed = 3, .bytes_written = 3 * kMiB, .bytes_read = 3 * kMiB};
  };
  RecoveryService service(w.env, options);
  service.execute(plan);
  ASSERT_TRUE(w.env.run().ok());
  const RecoveryStats st = service.stats();
  ASSERT_EQ(moved.size(), 3u);
  // PGs 0 and 1 share their target (max_backfills 1): one after the other, each 0.1 s of move
  // and 3 x 0.01 s of sleep; PG 2 (another target) alongside.
  std::sort(moved.begin(), moved.end());
  EXPECT_GE(std::abs(moved[1].second - moved[0].second), 0.13 - 1e-9);
  EXPECT_LT(moved[2].second, 0.01);
  EXPECT_EQ(hosts.size(), 3u);
  EXPECT_EQ(st.ops_done, 3u);
  EXPECT_EQ(st.bytes_written, 6 * kMiB);
  EXPECT_EQ(st.bytes_written_per_osd[0], 6 * kMiB);
  EXPECT_EQ(st.bytes_read_per_osd[1], 3 * kMiB);
  EXPECT_EQ(st.bytes_read_per_osd[2], 3 * kMiB);
  EXPECT_EQ(st.chunk_errors, 1u);
  EXPECT_EQ(st.first_error, "I/O error: osd.3 did not answer");
}

// osd_recovery_max_active: chunks in flight per driving OSD. With a 1 ms one-way latency each
// chunk round trip is latency-bound, so 3 in flight is about 3 times faster than 1.
TEST(RecoveryService, MaxActiveOverlapsChunks) {
  Hardware hw;
  hw.nic_latency_s = 1e-3;
  hw.device_bytes_per_s = 20e9;
  const RecoveryPlan plan = plan_of({backfill(0, {0}, 1, 64 * 4 * kMiB)});
  RecoveryOptions one;
  one.recovery_max_active = 1;
  const double t1 = run(plan, one, hw).finished_at_s;
  const double t3 = run(plan, RecoveryOptions{}, hw).finished_at_s;
  std::printf("256 MiB, 1 ms latency: max_active=1 %.4f s, =3 %.4f s\n", t1, t3);
  EXPECT_GT(t1 / t3, 2.5);
}

// Recovery shares the drives with client reads through the Env: each slows the other. The
// client reads 1 GiB in 4 MiB requests from the recovery source's drive (FIFO in the MemoryEnv),
// so the two share it about evenly.
TEST(RecoveryService, CompetesWithClientReadsForTheDrive) {
  const RecoveryPlan plan = plan_of({backfill(0, {0}, 1, kGiB)});
  auto client = [](testing::MemoryEnv& env, double& done_at) {
    env.spawn(0, "client-reads", [&env, &done_at] {
      for (int i = 0; i < 256; ++i) ASSERT_TRUE(env.device(0).read(0, 4 * kMiB).ok());
      done_at = env.now_s();
    });
  };
  double alone_s = 0, client_alone_s = 0, client_shared_s = 0;
  {
    World w;
    client(w.env, client_alone_s);
    ASSERT_TRUE(w.env.run().ok());
  }
  alone_s = run(plan, RecoveryOptions{}).finished_at_s;
  World w;
  RecoveryService service(w.env, RecoveryOptions{});
  service.execute(plan);
  client(w.env, client_shared_s);
  ASSERT_TRUE(w.env.run().ok());
  const double shared_s = service.stats().finished_at_s;
  std::printf(
      "recovery alone %.4f s, with client reads %.4f s; client alone %.4f s, shared %.4f s\n",
      alone_s, shared_s, client_alone_s, client_shared_s);
  EXPECT_GT(shared_s, 1.4 * alone_s);
  EXPECT_GT(client_shared_s, 1.4 * client_alone_s);
}

// The whole loop on an 8 x 4 cluster: an OSD is marked out, the planner's ops run through the
// service, PgData follows each finished op, and every PG ends active+clean.
TEST(RecoveryService, OsdOutEndsWithEveryPgClean) {
  for (int64_t pool : {cluster::test::kReplicatedPool, cluster::test::kErasurePool}) {
    const cluster::OsdMap clean = cluster::test::make_map();
    const cluster::OsdMap out = cluster::test::without(clean, {5}, true);
    const cluster::Redundancy red = clean.pool(pool)->redundancy;
    Result<cluster::PgData> data = cluster::PgData::of_map(clean, pool);
    ASSERT_TRUE(data.ok());
    const cluster::PgSizes sizes = cluster::PgSizes::spread(256, 256 * 16, 256 * 64 * kMiB);
    Result<RecoveryPlan> plan = plan_recovery(*data, out, pool, sizes);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();

    Hardware hw;
    hw.hosts = 8;
    hw.osds_per_host = 4;
    World w(hw);
    size_t callbacks = 0;
    RecoveryOptions options;
    options.on_op_done = [&](const RecoveryOp& op, size_t, double) {
      apply_completed(op, red, *data);
      ++callbacks;
    };
    RecoveryService service(w.env, options);
    service.execute(*plan);
    ASSERT_TRUE(w.env.run().ok());
    const RecoveryStats st = service.stats();
    EXPECT_EQ(callbacks, plan->ops.size());
    EXPECT_EQ(st.bytes_written, plan->bytes_to_write);
    EXPECT_EQ(st.bytes_read, plan->bytes_to_read);
    EXPECT_EQ(st.pgs_total, plan->pgs_to_move);
    EXPECT_EQ(st.degraded_pgs_remaining, 0u);
    EXPECT_EQ(st.redundancy_restored_at_s, st.finished_at_s);
    EXPECT_EQ(st.chunk_errors, 0u);
    Result<cluster::PgStatesReport> r =
        cluster::pg_states({.map = &out, .pool_id = pool, .data = &*data, .sizes = &sizes});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->by_name.at("active+clean"), 256u);
    std::printf("pool %lld osd.5 out: %u PGs, %.2f GiB written, %.2f GiB read, %.3f s\n",
                (long long)pool, st.pgs_total, double(st.bytes_written) / kGiB,
                double(st.bytes_read) / kGiB, st.finished_at_s);
  }
}

TEST(RecoveryService, AnEmptyPlanIsDoneAtOnce) {
  World w;
  RecoveryService service(w.env, RecoveryOptions{});
  service.execute(RecoveryPlan{});
  bool waited = false;
  w.env.spawn(0, "waiter", [&] {
    service.wait();
    waited = true;
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_TRUE(waited);
  EXPECT_EQ(service.stats().finished_at_s, 0.0);
}

// The OSDs' op queues, one per OSD of the world (8 shards x 2 threads, flash).
std::vector<std::unique_ptr<services::OsdOpQueue>> queues_for(
    testing::MemoryEnv& env, int osds, const services::SchedulerOptions& so) {
  std::vector<std::unique_ptr<services::OsdOpQueue>> q;
  for (int osd = 0; osd < osds; ++osd) {
    services::OpQueueOptions o;
    o.scheduler = so;
    q.push_back(std::make_unique<services::OsdOpQueue>(env, env.device(osd).host(), o, 1 + osd));
  }
  return q;
}

// mClock with Ceph 17.0.0-dev's high_client_ops: a PGRecovery item costs osd_recovery_cost
// (20 MiB: 231 IOPS units on flash) against the recovery limit of 100% of 21,500 / 8 IOPS per
// shard, so one PG's 16 objects start 231 / 2687.5 = 0.0860 s apart: ~1.4 s, where the
// throttles alone take 0.03 s.
TEST(RecoveryService, MclockLimitPacesPgRecoveryItems) {
  RecoveryPlan plan = plan_of({backfill(3, {0}, 1, 64 * kMiB)});
  RecoveryOptions options;
  options.recovery_max_active = 10;
  const double alone = run(plan, options).finished_at_s;
  World w;
  services::SchedulerOptions so;
  so.kind = services::SchedulerKind::kMclock;
  so.mclock = services::MclockOptions::for_device(false, services::MclockCostModel::kLegacyIops);
  so.mclock.allocations = services::mclock_allocations(services::MclockAllocationSet::kQuincyDev,
                                                       services::MclockProfile::kHighClientOps);
  auto queues = queues_for(w.env, 2, so);
  options.op_queues = {queues[0].get(), queues[1].get()};
  options.recovery_item_cost_bytes = services::kOsdRecoveryCostBytes;
  RecoveryService service(w.env, options);
  service.execute(plan);
  ASSERT_TRUE(w.env.run().ok());
  const double queued = service.stats().finished_at_s;
  std::printf("64 MiB, one PG: throttles alone %.4f s, mClock high_client_ops %.4f s\n", alone,
              queued);
  EXPECT_LT(alone, 0.05);
  EXPECT_NEAR(queued, 16 * 231 / 2687.5, 0.1 * 16 * 231 / 2687.5);
  EXPECT_EQ(service.stats().bytes_written, 64 * kMiB);
  // Each object: a PGRecovery item on the driver, a push on the target, its reply on the driver.
  EXPECT_EQ(queues[0]->stats().ops[static_cast<size_t>(services::OpClass::kBackgroundRecovery)],
            16u);
  EXPECT_EQ(queues[1]->stats().ops[static_cast<size_t>(services::OpClass::kImmediate)], 16u);
  EXPECT_EQ(queues[0]->stats().ops[static_cast<size_t>(services::OpClass::kImmediate)], 16u);
}

// WPQ: recovery items (priority 5, cost 20 MiB) against client ops (63, 4 KiB) that keep the
// PG's shard busy get ~0.8% of its dequeues, so recovery crawls; on an idle OSD it runs at the
// drive's pace.
TEST(RecoveryService, WpqStarvesRecoveryBehindBusyClientShard) {
  RecoveryPlan plan = plan_of({backfill(3, {0}, 1, 64 * kMiB)});
  auto run_wpq = [&](bool clients) {
    World w;
    auto queues = queues_for(w.env, 2, services::SchedulerOptions{});
    RecoveryOptions options;
    options.recovery_max_active = 10;
    options.op_queues = {queues[0].get(), queues[1].get()};
    options.recovery_item_cost_bytes = services::kOsdRecoveryCostBytes;
    RecoveryService service(w.env, options);
    service.execute(plan);
    if (clients) {
      // Eight client loops on the PG's shard of the driver: 1 ms of op thread each, forever.
      for (int c = 0; c < 8; ++c) {
        w.env.spawn(
            w.env.device(0).host(), "client" + std::to_string(c),
            [&w, &queues] {
              for (;;) {
                services::OpItem op;
                op.op_class = services::OpClass::kClient;
                op.priority = services::kClientOpPriority;
                op.cost = 4096;
                op.owner = 100;
                queues[0]->run(3, op, [&w] { w.env.sleep_s(1e-3); });
              }
            },
            TaskOptions{.daemon = true});
      }
    }
    EXPECT_TRUE(w.env.run().ok());
    return service.stats().finished_at_s;
  };
  const double idle = run_wpq(false), busy = run_wpq(true);
  std::printf("64 MiB, one PG, WPQ: idle OSD %.4f s, client-busy shard %.4f s\n", idle, busy);
  EXPECT_LT(idle, 0.06);
  // 16 items, each picked about once per 127 dequeues of 0.5 ms: ~1 s.
  EXPECT_GT(busy, 0.4);
  EXPECT_LT(busy, 3.0);
}

}  // namespace
}  // namespace granary::recovery

#include "engine/testing/memory_env.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace granary::testing {
namespace {

constexpr double kGB = 1e9;

Message message_of(uint64_t payload_bytes) {
  Message m;
  m.body = Shutdown{};
  m.payload = Payload::of_size(payload_bytes);
  return m;
}

TEST(MemoryEnv, SleepWakesInTimeOrderThenSpawnOrder) {
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  std::vector<std::string> log;
  for (auto [name, delay] : std::vector<std::pair<std::string, double>>{
           {"a", 2.0}, {"b", 1.0}, {"c", 1.0}, {"d", 0.0}}) {
    env.spawn(h, name, [&env, &log, name, delay] {
      env.sleep_s(delay);
      log.push_back(name + "@" + std::to_string(env.now_s()));
    });
  }
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(log,
            (std::vector<std::string>{"d@0.000000", "b@1.000000", "c@1.000000", "a@2.000000"}));
  EXPECT_DOUBLE_EQ(env.now_s(), 2.0);
  EXPECT_TRUE(env.live_tasks().empty());
}

TEST(MemoryEnv, ComputeSharesTheCoresOfAHost) {
  MemoryEnv env(1);
  const HostId two = env.add_host("two-cores", 2, kGB, 0);
  const HostId one = env.add_host("one-core", 1, kGB, 0);
  std::vector<double> done(4, -1);
  for (int i = 0; i < 4; ++i) {
    env.spawn(two, "c" + std::to_string(i), [&env, &done, i] {
      env.compute_s(1.0);
      done[static_cast<size_t>(i)] = env.now_s();
    });
  }
  // One core: A alone for 1 s, then A and B share it at half speed each.
  double a_done = -1, b_done = -1;
  env.spawn(one, "A", [&] {
    env.compute_s(2.0);
    a_done = env.now_s();
  });
  env.spawn(one, "B", [&] {
    env.sleep_s(1.0);
    env.compute_s(0.5);
    b_done = env.now_s();
  });
  ASSERT_TRUE(env.run().ok());
  for (double d : done) EXPECT_NEAR(d, 2.0, 1e-9);  // 4 core-s on 2 cores
  EXPECT_NEAR(b_done, 2.0, 1e-9);                   // 0.5 core-s at rate 0.5
  EXPECT_NEAR(a_done, 2.5, 1e-9);                   // 1 s alone + 0.5 shared + 0.5 alone
}

TEST(MemoryEnv, SendTakesLatencyPlusBytesOverBandwidthInFifoOrder) {
  MemoryEnv env(1);
  const HostId a = env.add_host("a", 1, 1e9, 1e-3);
  const HostId b = env.add_host("b", 1, 1e9, 0);
  Endpoint& inbox = env.endpoint(b, "inbox");
  Endpoint& local = env.endpoint(a, "local");
  std::vector<double> arrivals;
  env.spawn(a, "sender", [&] {
    env.send(a, "inbox", message_of(1'000'000 - Message::kDefaultHeaderBytes));  // 1 MB wire
    env.send(a, "inbox", message_of(1'000'000 - Message::kDefaultHeaderBytes));
    env.send(a, "local", message_of(1'000'000));  // same host: at once, no NIC
  });
  env.spawn(b, "receiver", [&] {
    for (int i = 0; i < 2; ++i) {
      Result<Message> m = inbox.recv();
      ASSERT_TRUE(m.ok());
      EXPECT_EQ(m->wire_bytes(), 1'000'000u);
      arrivals.push_back(env.now_s());
    }
  });
  double local_at = -1;
  env.spawn(a, "local-receiver", [&] {
    ASSERT_TRUE(local.recv().ok());
    local_at = env.now_s();
  });
  ASSERT_TRUE(env.run().ok());
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_NEAR(arrivals[0], 1e-3 + 1e-3, 1e-12);
  EXPECT_NEAR(arrivals[1], 2e-3 + 1e-3, 1e-12);
  EXPECT_EQ(local_at, 0.0);
}

TEST(MemoryEnv, MessagesWaitForTheirEndpoint) {
  MemoryEnv env(1);
  const HostId a = env.add_host("a", 1, 1e9, 0);
  env.send(a, "later", message_of(10));  // nobody asked for "later" yet
  bool got = false;
  env.spawn(a, "receiver", [&] {
    env.sleep_s(1);
    got = env.endpoint(a, "later").recv().ok();
  });
  ASSERT_TRUE(env.run().ok());
  EXPECT_TRUE(got);
}

TEST(MemoryEnv, DeviceOperationsAreSerialised) {
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  const DeviceId d = env.add_device(h, 10'000'000, 1e9, 1e-4);
  std::vector<double> done;
  for (int i = 0; i < 2; ++i) {
    env.spawn(h, "reader" + std::to_string(i), [&] {
      Result<Payload> p = env.device(d).read(0, 1'000'000);
      ASSERT_TRUE(p.ok());
      EXPECT_EQ(p->size_bytes, 1'000'000u);
      done.push_back(env.now_s());
    });
  }
  Status beyond;
  env.spawn(h, "bad", [&] { beyond = env.device(d).read(9'999'999, 2).status(); });
  ASSERT_TRUE(env.run().ok());
  ASSERT_EQ(done.size(), 2u);
  EXPECT_NEAR(done[0], 1.1e-3, 1e-12);
  EXPECT_NEAR(done[1], 2.2e-3, 1e-12);
  EXPECT_EQ(beyond.code(), Status::Code::kInvalidArgument);
}

TEST(MemoryEnv, SendFromDevicePipelinesTheReadAndTheTransfer) {
  // Device 1 GB/s behind a 2 GB/s NIC: the drive is the bottleneck. Then a 0.5 GB/s NIC.
  for (double nic : {2e9, 0.5e9}) {
    MemoryEnv env(1);
    const HostId server = env.add_host("server", 1, nic, 2e-6);
    const HostId client = env.add_host("client", 1, kGB, 0);
    const DeviceId d = env.add_device(server, 1ull << 30, 1e9, 1e-4);
    Endpoint& inbox = env.endpoint(client, "inbox");
    double at = -1;
    uint64_t payload = 0;
    env.spawn(server, "server", [&] {
      env.send_from_device(env.device(d), 4096, 8'000'000, "inbox", message_of(0));
    });
    env.spawn(client, "client", [&] {
      Result<Message> m = inbox.recv();
      ASSERT_TRUE(m.ok());
      payload = m->payload.size_bytes;
      at = env.now_s();
    });
    ASSERT_TRUE(env.run().ok());
    EXPECT_EQ(payload, 8'000'000u);
    const double dev_done = 1e-4 + 8e-3;
    const double nic_done = 1e-4 + (8'000'000.0 + Message::kDefaultHeaderBytes) / nic;
    EXPECT_NEAR(at, std::max(dev_done, nic_done) + 2e-6, 1e-12) << "nic " << nic;
  }
}

TEST(MemoryEnv, RecvTimesOut) {
  MemoryEnv env(1);
  const HostId a = env.add_host("a", 1, 1e9, 0.5);
  const HostId b = env.add_host("b", 1, 1e9, 0);
  Endpoint& inbox = env.endpoint(b, "inbox");
  std::vector<std::string> log;
  env.spawn(b, "receiver", [&] {
    Result<Message> first = inbox.recv(0.25);  // nothing within 0.25 s
    log.push_back((first.ok() ? "msg@" : "timeout@") + std::to_string(env.now_s()));
    EXPECT_EQ(first.status().code(), Status::Code::kNotFound);
    Result<Message> second = inbox.recv(10);  // the message lands at 0.5 s
    log.push_back((second.ok() ? "msg@" : "timeout@") + std::to_string(env.now_s()));
    Result<Message> third = inbox.recv(1);  // the stale 10 s timer must not fire this one
    log.push_back((third.ok() ? "msg@" : "timeout@") + std::to_string(env.now_s()));
  });
  env.spawn(a, "sender", [&] { env.send(a, "inbox", message_of(0)); });
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(log,
            (std::vector<std::string>{"timeout@0.250000", "msg@0.500000", "timeout@1.500000"}));
}

TEST(MemoryEnv, SemaphoreHandsPermitsOverInFifoOrder) {
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  std::unique_ptr<Semaphore> sem = env.make_semaphore(1);
  std::vector<std::string> log;
  for (int i = 0; i < 3; ++i) {
    env.spawn(h, "t" + std::to_string(i), [&, i] {
      sem->acquire();
      log.push_back("t" + std::to_string(i) + "@" + std::to_string(env.now_s()));
      env.sleep_s(1);
      sem->release();
    });
  }
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(log, (std::vector<std::string>{"t0@0.000000", "t1@1.000000", "t2@2.000000"}));
}

TEST(MemoryEnv, DeadlockIsReportedWithTheBlockedTasks) {
  MemoryEnv env(1);
  const HostId h = env.add_host("node7", 1, kGB, 0);
  Endpoint& a = env.endpoint(h, "a");
  Endpoint& b = env.endpoint(h, "b");
  env.spawn(h, "waits-for-a", [&] { (void)a.recv(); });
  env.spawn(h, "waits-for-b", [&] { (void)b.recv(); });
  env.spawn(
      h, "server", [&] { (void)b.recv(); }, TaskOptions{.daemon = true});
  const Status s = env.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("deadlock"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("'waits-for-a' on node7 (recv on a)"), std::string::npos)
      << s.to_string();
  EXPECT_NE(s.message().find("'waits-for-b' on node7 (recv on b)"), std::string::npos);
  EXPECT_NE(s.message().find("'server' [daemon]"), std::string::npos);
  EXPECT_TRUE(env.live_tasks().empty());  // all terminated
}

TEST(MemoryEnv, DaemonsAreTerminatedWhenTheLastTaskEnds) {
  struct Flag {
    bool* destroyed;
    ~Flag() { *destroyed = true; }
  };
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  int ticks = 0;
  bool unwound = false;
  env.spawn(
      h, "ticker",
      [&] {
        Flag flag{&unwound};
        for (;;) {
          env.sleep_s(1);
          ++ticks;
        }
      },
      TaskOptions{.daemon = true});
  env.spawn(h, "main", [&] { env.sleep_s(10.5); });
  ASSERT_TRUE(env.run().ok());
  EXPECT_EQ(ticks, 10);
  EXPECT_TRUE(unwound);
  EXPECT_DOUBLE_EQ(env.now_s(), 10.5);
}

TEST(MemoryEnv, AnEscapingExceptionFailsTheRun) {
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  env.spawn(h, "thrower", [] { throw std::runtime_error("boom"); });
  env.spawn(h, "sleeper", [&] { env.sleep_s(5); });
  const Status s = env.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'thrower'"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("boom"), std::string::npos);
}

TEST(MemoryEnv, TimeLimitStopsARunawayWorld) {
  MemoryEnv env(1);
  const HostId h = env.add_host("h", 1, kGB, 0);
  env.spawn(h, "forever", [&] {
    for (;;) env.sleep_s(1);
  });
  const Status s = env.run(MemoryRunOptions{.max_time_s = 100});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'forever'"), std::string::npos);
  EXPECT_LE(env.now_s(), 100);
}

// A world with random sleeps, messages over NICs, shared cores and a device: the trace of
// (time, event) must be identical for the same seed.
std::vector<std::string> random_world_trace(uint64_t seed) {
  MemoryEnv env(seed);
  std::vector<HostId> hosts;
  for (int i = 0; i < 4; ++i) {
    hosts.push_back(env.add_host("h" + std::to_string(i), 2, 1e9 * (i + 1), 1e-5 * i));
  }
  const DeviceId dev = env.add_device(hosts[0], 1ull << 40, 2e9, 1e-4);
  for (int i = 0; i < 4; ++i) env.endpoint(hosts[static_cast<size_t>(i)], "ep" + std::to_string(i));
  std::vector<std::string> trace;
  auto log = [&](const std::string& what) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.12f ", env.now_s());
    trace.push_back(buf + what);
  };
  for (int i = 0; i < 4; ++i) {
    const HostId h = hosts[static_cast<size_t>(i)];
    env.spawn(h, "worker" + std::to_string(i), [&, i, h] {
      for (int k = 0; k < 20; ++k) {
        env.sleep_s(env.random().uniform01() * 1e-3);
        env.compute_s(env.random().uniform01() * 1e-3);
        const int to = static_cast<int>(env.random().uniform(4));
        env.send(h, "ep" + std::to_string(to), message_of(env.random().uniform(1 << 20)));
        log("w" + std::to_string(i) + " sent to " + std::to_string(to));
      }
      if (i == 0) {
        (void)env.device(dev).read(0, 1 << 20);
        env.send_from_device(env.device(dev), 0, 1 << 20, "ep3", message_of(0));
        log("w0 read");
      }
    });
    env.spawn(
        h, "listener" + std::to_string(i),
        [&, i, h] {
          Endpoint& ep = env.endpoint(h, "ep" + std::to_string(i));
          for (;;) {
            Result<Message> m = ep.recv();
            log("ep" + std::to_string(i) + " got " + std::to_string(m->wire_bytes()));
          }
        },
        TaskOptions{.daemon = true});
  }
  EXPECT_TRUE(env.run().ok());
  log("end after " + std::to_string(env.events_processed()) + " events");
  return trace;
}

TEST(MemoryEnv, SameSeedSameRun) {
  const std::vector<std::string> a = random_world_trace(42);
  const std::vector<std::string> b = random_world_trace(42);
  const std::vector<std::string> c = random_world_trace(43);
  EXPECT_GT(a.size(), 100u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace granary::testing

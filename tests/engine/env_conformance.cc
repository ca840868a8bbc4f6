// The bodies of the Env conformance suite (env_conformance.h). Each test states the part of
// engine/env.h's contract it checks. Tasks record what they see; the checks run after the world
// has run, outside the tasks. Tasks may be threads (a real Env): what several tasks record in
// one container is guarded by a mutex.
#include "tests/engine/env_conformance.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace granary::testing {

std::string env_under_test_name(const ::testing::TestParamInfo<EnvUnderTest>& info) {
  return info.param.name;
}

void PrintTo(const EnvUnderTest& under_test, std::ostream* out) {
  *out << under_test.name;
}

void EnvConformance::SetUp() {
  static int tests_in_this_process = 0;
  const std::unique_ptr<EnvHarness> harness = GetParam().make();
  if (const std::string why = harness->unavailable_reason(); !why.empty()) {
    GTEST_SKIP() << GetParam().name << " cannot run here: " << why;
  }
  if (harness->traits().one_world_per_process && tests_in_this_process++ > 0) {
    GTEST_FAIL() << GetParam().name
                 << " allows one world per process: run the EnvConformance tests one per "
                    "process (ctest does; or one --gtest_filter at a time)";
  }
}

namespace {

using Bytes = std::vector<std::byte>;

// A message numbered `id` (a heartbeat's osd field carries the number) with a size-only payload.
Message numbered(int32_t id, uint64_t payload_bytes = 0) {
  Message m;
  m.body = Heartbeat{id, 0};
  m.payload = Payload::of_size(payload_bytes);
  return m;
}

int32_t number_of(const Message& m) {
  const auto* h = std::get_if<Heartbeat>(&m.body);
  return h == nullptr ? -1 : h->osd;
}

// `n` bytes, none of them zero, that differ with `seed`.
Bytes pattern(size_t n, uint32_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) {
    b[i] = static_cast<std::byte>((i * 131 + seed * 29 + i / 251) % 255 + 1);
  }
  return b;
}

Payload bytes_of(const Bytes& b) {
  return Payload::of(Buffer::copy_of(b));
}

class World {
 public:
  explicit World(const EnvUnderTest& under_test) : harness_(under_test.make()) {}
  EnvTraits traits() const { return harness_->traits(); }
  Env& build(const WorldSpec& spec) {
    env_ = &harness_->build(spec);
    return *env_;
  }
  Status run() { return harness_->run(); }
  Status crash_device(DeviceId id, uint64_t seed) { return harness_->crash_device(id, seed); }
  void set_host_down(HostId host, bool down) { harness_->set_host_down(host, down); }
  // The tolerance on a time of about `expected_s` seconds.
  double tolerance(double expected_s) const {
    const EnvTraits t = traits();
    return t.absolute_s + t.relative * std::abs(expected_s);
  }

 private:
  std::unique_ptr<EnvHarness> harness_;
  Env* env_ = nullptr;
};

WorldSpec hosts(std::vector<HostSpec> h, uint64_t seed = 1) {
  WorldSpec w;
  w.hosts = std::move(h);
  w.seed = seed;
  return w;
}

// ---- endpoints

// Contract: messages of at most kSmallMessageBytes on the wire, sent by one task to one
// endpoint, arrive in send order, whatever their sizes and however closely they follow each
// other.
TEST_P(EnvConformance, SmallMessagesFromOneSenderArriveInSendOrder) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 1e-3}, {1, 1e9, 0}}));
  constexpr int kMessages = 40;
  std::vector<int32_t> got;
  env.spawn(1, "receiver", [&] {
    Endpoint& inbox = env.endpoint(1, "inbox");
    for (int i = 0; i < kMessages; ++i) {
      Result<Message> m = inbox.recv();
      if (!m.ok()) return;
      got.push_back(number_of(*m));
    }
  });
  env.spawn(0, "sender", [&] {
    for (int i = 0; i < kMessages; ++i) {
      // Sizes from 0 to the largest small message, not monotonic; some sent at the same
      // instant, some a fraction of the latency apart (several in flight at once).
      const uint64_t wire = (static_cast<uint64_t>(i) * 7919) % (kSmallMessageBytes + 1);
      const uint64_t payload =
          wire > Message::kDefaultHeaderBytes ? wire - Message::kDefaultHeaderBytes : 0;
      env.send(0, "inbox", numbered(i, payload));
      if (i % 3 == 2) env.sleep_s(1e-4);
    }
  });
  ASSERT_TRUE(w.run().ok());
  std::vector<int32_t> want(kMessages);
  for (int i = 0; i < kMessages; ++i) want[static_cast<size_t>(i)] = i;
  EXPECT_EQ(got, want);
}

// Contract: recv() blocks until a message arrives.
TEST_P(EnvConformance, RecvBlocksUntilAMessageArrives) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 2e-3}, {1, 1e9, 0}}));
  double received_at = -1;
  int32_t number = -1;
  env.spawn(1, "receiver", [&] {
    Result<Message> m = env.endpoint(1, "inbox").recv();
    if (!m.ok()) return;
    received_at = env.now_s();
    number = number_of(*m);
  });
  env.spawn(0, "sender", [&] {
    env.sleep_s(3.0);
    env.send(0, "inbox", numbered(5));
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_EQ(number, 5);
  EXPECT_GE(received_at, 3.0);
  // At most the latency and the header's bytes at the NIC's bandwidth after the send.
  EXPECT_LE(received_at, 3.0 + 2e-3 + Message::kDefaultHeaderBytes / 1e9 + w.tolerance(3.0));
}

// Contract: recv(timeout) gives kNotFound when nothing arrived within the timeout, and the
// clock has advanced by the timeout; a message that arrives in time is returned when it
// arrives.
TEST_P(EnvConformance, RecvWithATimeoutGivesNotFoundAfterTheTimeout) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 1e-3}, {1, 1e9, 0}}));
  Status first, third;
  double first_at = -1, second_at = -1, third_at = -1;
  int32_t second = -1;
  env.spawn(1, "receiver", [&] {
    Endpoint& inbox = env.endpoint(1, "inbox");
    first = inbox.recv(2.5).status();
    first_at = env.now_s();
    Result<Message> m = inbox.recv(10.0);  // the message sent at t = 4 s
    second_at = env.now_s();
    if (m.ok()) second = number_of(*m);
    third = inbox.recv(0.75).status();
    third_at = env.now_s();
  });
  env.spawn(0, "sender", [&] {
    env.sleep_s(4.0);
    env.send(0, "inbox", numbered(9));
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_EQ(first.code(), Status::Code::kNotFound) << first.to_string();
  EXPECT_NEAR(first_at, 2.5, w.tolerance(2.5));
  EXPECT_EQ(second, 9);
  EXPECT_GE(second_at, 4.0);
  EXPECT_LE(second_at, 4.0 + 1e-3 + Message::kDefaultHeaderBytes / 1e9 + w.tolerance(4.0));
  EXPECT_EQ(third.code(), Status::Code::kNotFound) << third.to_string();
  EXPECT_NEAR(third_at - second_at, 0.75, w.tolerance(second_at + 0.75));
}

// Contract: a message sent to a name nobody has asked for yet waits until the endpoint is
// created, and is then delivered (in send order with the others).
TEST_P(EnvConformance, AMessageWaitsForItsEndpointToBeCreated) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 1e-3}, {1, 1e9, 0}}));
  std::vector<int32_t> got;
  double created_at = -1;
  env.spawn(0, "sender", [&] {
    env.send(0, "late", numbered(1));
    env.send(0, "late", numbered(2, 1000));
  });
  env.spawn(1, "receiver", [&] {
    env.sleep_s(2.0);
    created_at = env.now_s();
    Endpoint& late = env.endpoint(1, "late");
    for (int i = 0; i < 2; ++i) {
      Result<Message> m = late.recv(5.0);
      if (!m.ok()) return;
      got.push_back(number_of(*m));
    }
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_NEAR(created_at, 2.0, w.tolerance(2.0));
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2}));
}

// ---- time

// Contract: sleep_s(d) advances now_s() by exactly d (d <= 0 leaves the clock alone),
// whatever else the world does.
TEST_P(EnvConformance, SleepAdvancesTheClockByExactlyTheAmount) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {2, 1e9, 0}}));
  const std::vector<double> naps = {0.25, 1.0, 0.0, 3.5, -2.0, 1e-3, 0.125};
  std::vector<double> woke;
  env.spawn(0, "sleeper", [&] {
    for (double d : naps) {
      env.sleep_s(d);
      woke.push_back(env.now_s());
    }
  });
  env.spawn(1, "busy", [&] { env.compute_s(2.0); });  // other activity changes nothing
  ASSERT_TRUE(w.run().ok());
  ASSERT_EQ(woke.size(), naps.size());
  double t = 0;
  for (size_t i = 0; i < naps.size(); ++i) {
    t += std::max(0.0, naps[i]);
    EXPECT_NEAR(woke[i], t, w.tolerance(t)) << "after nap " << i;
  }
}

// Contract: with n computations on a host of c cores, each progresses at min(1, c / n)
// core-seconds per second: n equal computations of w core-seconds that start together all
// take max(1, n / c) * w.
TEST_P(EnvConformance, ComputeSharesTheCoresOfAHost) {
  struct Case {
    int cores;
    int tasks;
  };
  const std::vector<Case> cases = {{1, 1}, {1, 3}, {2, 1}, {2, 2}, {2, 4}, {4, 6}, {8, 3}};
  std::vector<HostSpec> specs;
  for (const Case& c : cases) specs.push_back({c.cores, 1e9, 0});
  World w(GetParam());
  Env& env = w.build(hosts(specs));
  constexpr double kWork = 2.0;
  std::vector<std::vector<double>> done(cases.size());
  for (size_t h = 0; h < cases.size(); ++h) {
    done[h].assign(static_cast<size_t>(cases[h].tasks), -1);
    for (int t = 0; t < cases[h].tasks; ++t) {
      env.spawn(static_cast<HostId>(h), "c" + std::to_string(h) + "." + std::to_string(t),
                [&env, &done, h, t] {
                  env.compute_s(kWork);
                  done[h][static_cast<size_t>(t)] = env.now_s();
                });
    }
  }
  ASSERT_TRUE(w.run().ok());
  for (size_t h = 0; h < cases.size(); ++h) {
    const double want = kWork * std::max(1.0, static_cast<double>(cases[h].tasks) / cases[h].cores);
    for (double d : done[h]) {
      EXPECT_NEAR(d, want, w.tolerance(want))
          << cases[h].tasks << " tasks on " << cases[h].cores << " cores";
    }
  }
}

// ---- transfers

// Contract: a message larger than kSmallMessageBytes takes at least wire_bytes / bandwidth of
// the sender's NIC to arrive; messages that leave one NIC together share it.
TEST_P(EnvConformance, ATransferTakesAtLeastItsBytesOverTheNicBandwidth) {
  World w(GetParam());
  constexpr double kNic = 1e8;
  Env& env = w.build(hosts({{1, kNic, 1e-3}, {1, 1e10, 0}}));
  constexpr uint64_t kPayload = 20'000'000;
  const double one = static_cast<double>(kPayload + Message::kDefaultHeaderBytes) / kNic;
  std::map<int32_t, double> arrived;
  env.spawn(1, "receiver", [&] {
    Endpoint& inbox = env.endpoint(1, "inbox");
    for (int i = 0; i < 3; ++i) {
      Result<Message> m = inbox.recv();
      if (!m.ok()) return;
      arrived[number_of(*m)] = env.now_s();
    }
  });
  env.spawn(0, "sender", [&] {
    env.send(0, "inbox", numbered(1, kPayload));
    env.sleep_s(10.0);  // the NIC is idle again
    env.send(0, "inbox", numbered(2, kPayload));
    env.send(0, "inbox", numbered(3, kPayload));
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_EQ(arrived.size(), 3u);
  EXPECT_GE(arrived[1], one - w.tolerance(one));
  // Not wildly slower either: an idle NIC moves it at its bandwidth (plus the latency).
  EXPECT_LE(arrived[1], 1.01 * one + 1e-3 + w.tolerance(one));
  const double both_done = std::max(arrived[2], arrived[3]) - 10.0;
  EXPECT_GE(both_done, 2 * one - w.tolerance(2 * one));
  EXPECT_LE(both_done, 2.02 * one + 1e-3 + w.tolerance(2 * one));
}

// Contract: send_from_device delivers the message with a payload of `length` bytes (the
// device's bytes where it keeps them) and refuses a range beyond the capacity with
// InvalidArgument, sending nothing.
TEST_P(EnvConformance, SendFromDeviceDeliversAPayloadOfTheLengthAsked) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 1e-4}, {1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{64} << 20, 2e9, 1e-4});
  Env& env = w.build(spec);
  const bool keeps = w.traits().keeps_bytes;
  const Bytes written = pattern(1 << 20, 3);
  struct Ask {
    uint64_t offset, length;
  };
  const std::vector<Ask> asks = {{0, 0}, {0, 1}, {4096, 4096}, {7, (1 << 20) - 7}, {0, 5'000'000}};
  std::map<int32_t, Payload> got;
  Status refused, late;
  env.spawn(1, "receiver", [&] {
    Endpoint& inbox = env.endpoint(1, "inbox");
    for (size_t i = 0; i < asks.size(); ++i) {
      Result<Message> m = inbox.recv();
      if (!m.ok()) return;
      got[number_of(*m)] = m->payload;
    }
    late = inbox.recv(5.0).status();  // the refused one never comes
  });
  env.spawn(0, "server", [&] {
    Device& d = env.device(0);
    if (!d.write(0, bytes_of(written)).ok()) return;
    for (size_t i = 0; i < asks.size(); ++i) {
      const Status s = env.send_from_device(d, asks[i].offset, asks[i].length, "inbox",
                                            numbered(static_cast<int32_t>(i)));
      if (!s.ok()) return;
    }
    refused = env.send_from_device(d, d.capacity_bytes() - 10, 11, "inbox", numbered(99));
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_EQ(got.size(), asks.size());
  for (size_t i = 0; i < asks.size(); ++i) {
    const Payload& p = got[static_cast<int32_t>(i)];
    EXPECT_EQ(p.size_bytes, asks[i].length) << "ask " << i;
    if (!keeps) continue;
    ASSERT_TRUE(p.bytes) << "ask " << i;
    ASSERT_EQ(p.bytes.size(), asks[i].length);
    for (uint64_t k = 0; k < asks[i].length; ++k) {
      const uint64_t at = asks[i].offset + k;
      const std::byte want = at < written.size() ? written[at] : std::byte{0};
      ASSERT_EQ((p.bytes)[k], want) << "ask " << i << " byte " << k;
    }
  }
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument) << refused.to_string();
  EXPECT_EQ(late.code(), Status::Code::kNotFound) << late.to_string();
}

// Contract: while a host is down, a send from it or to one of its endpoints fails with
// kUnavailable and sends nothing (send_from_device too); other hosts are unaffected, a name
// nobody has created yet is not known to be down, and sends work again once it is back.
TEST_P(EnvConformance, ASendInvolvingAHostThatIsDownFailsWithUnavailable) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 1e-4}, {1, 1e9, 1e-4}, {1, 1e9, 1e-4}});
  spec.devices.push_back({1, uint64_t{1} << 30, 1e9, 0});
  Env& env = w.build(spec);
  std::map<std::string, Status> sent;
  std::map<std::string, std::vector<int32_t>> got;  // by endpoint
  std::mutex got_mutex;
  for (HostId h : {1, 2}) {
    env.spawn(
        h, "listener" + std::to_string(h),
        [&, h] {
          Endpoint& ep = env.endpoint(h, "inbox" + std::to_string(h));
          for (;;) {
            Result<Message> m = ep.recv();
            if (!m.ok()) return;
            std::lock_guard lock(got_mutex);  // tasks may be threads (a real Env)
            got[ep.name()].push_back(number_of(*m));
          }
        },
        TaskOptions{.daemon = true});
  }
  env.spawn(0, "sender", [&] {
    env.sleep_s(0.5);
    sent["before"] = env.send(0, "inbox1", numbered(1));
    env.sleep_s(0.5);
    w.set_host_down(1, true);
    sent["to the down host"] = env.send(0, "inbox1", numbered(2));
    sent["large, to the down host"] = env.send(0, "inbox1", numbered(3, 1'000'000));
    sent["from the down host"] = env.send(1, "inbox2", numbered(4));
    sent["from a device of the down host"] =
        env.send_from_device(env.device(0), 0, 4096, "inbox2", numbered(5));
    sent["between the others"] = env.send(0, "inbox2", numbered(6));
    sent["to a name not yet created"] = env.send(0, "nobody yet", numbered(7));
    env.sleep_s(1.0);
    w.set_host_down(1, false);
    sent["after"] = env.send(0, "inbox1", numbered(8));
    sent["from a device, after"] =
        env.send_from_device(env.device(0), 0, 4096, "inbox2", numbered(9));
    env.sleep_s(1.0);
  });
  ASSERT_TRUE(w.run().ok());
  for (const char* refused : {"to the down host", "large, to the down host", "from the down host",
                              "from a device of the down host"}) {
    EXPECT_EQ(sent[refused].code(), Status::Code::kUnavailable)
        << refused << ": " << sent[refused].to_string();
  }
  for (const char* ok : {"before", "between the others", "to a name not yet created", "after",
                         "from a device, after"}) {
    EXPECT_TRUE(sent[ok].ok()) << ok << ": " << sent[ok].to_string();
  }
  EXPECT_EQ(got["inbox1"], (std::vector<int32_t>{1, 8}));
  EXPECT_EQ(got["inbox2"], (std::vector<int32_t>{6, 9}));
}

// Contract: host_of gives the host of a created endpoint, kNotFound for a name nobody has
// created (even one that messages were sent to).
TEST_P(EnvConformance, HostOfGivesTheHostOfACreatedEndpoint) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {1, 1e9, 0}, {1, 1e9, 0}}));
  Result<HostId> before = Status::io_error("not asked"), osd = before, reply = before,
                 unsent = before, sent_only = before;
  env.spawn(2, "osd", [&] {
    env.sleep_s(1.0);
    (void)env.endpoint(2, "osd.3");
    (void)env.endpoint(2, "osd.3.recovery");
  });
  env.spawn(0, "client", [&] {
    (void)env.send(0, "client0.reply.7", numbered(1));  // sent to, never created
    before = env.host_of("osd.3");
    env.sleep_s(2.0);
    osd = env.host_of("osd.3");
    reply = env.host_of("osd.3.recovery");
    unsent = env.host_of("osd.4");
    sent_only = env.host_of("client0.reply.7");
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_EQ(before.status().code(), Status::Code::kNotFound) << before.status().to_string();
  ASSERT_TRUE(osd.ok()) << osd.status().to_string();
  EXPECT_EQ(*osd, 2);
  ASSERT_TRUE(reply.ok()) << reply.status().to_string();
  EXPECT_EQ(*reply, 2);
  EXPECT_EQ(unsent.status().code(), Status::Code::kNotFound) << unsent.status().to_string();
  EXPECT_EQ(sent_only.status().code(), Status::Code::kNotFound) << sent_only.status().to_string();
}

// Contract: with a queue limit, a send that finds bytes queued (sent and not yet received) and
// would take them past the limit fails with kNoSpace and sends nothing; a send to an empty
// queue always goes; receiving frees the room; queued_bytes() counts the wire bytes.
TEST_P(EnvConformance, AQueueLimitRefusesSendsWithNoSpaceUntilTheReceiverCatchesUp) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 1e-4}, {1, 1e9, 1e-4}}));
  constexpr uint64_t kWire = 3000;  // each small message's wire bytes
  const uint64_t payload = kWire - Message::kDefaultHeaderBytes;
  std::map<std::string, Status> sent;
  std::map<std::string, uint64_t> queued;
  std::vector<int32_t> got;
  env.spawn(1, "receiver", [&] {
    Endpoint& inbox = env.endpoint(1, "inbox");
    inbox.set_queue_limit(10'000);
    auto take = [&] {
      Result<Message> m = inbox.recv(5.0);
      if (m.ok()) got.push_back(number_of(*m));
    };
    env.sleep_s(2.0);
    queued["at 2"] = inbox.queued_bytes();
    take();
    queued["after one"] = inbox.queued_bytes();
    env.sleep_s(1.0);
    for (int i = 0; i < 3; ++i) take();
    queued["drained"] = inbox.queued_bytes();
    env.sleep_s(2.0);
    take();
    take();
    queued["end"] = inbox.queued_bytes();
  });
  env.spawn(0, "sender", [&] {
    env.sleep_s(1.0);
    for (int32_t i = 1; i <= 4; ++i)
      sent["m" + std::to_string(i)] = env.send(0, "inbox", numbered(i, payload));
    env.sleep_s(1.5);  // the receiver took one at 2
    sent["m5"] = env.send(0, "inbox", numbered(5, payload));
    sent["m6"] = env.send(0, "inbox", numbered(6, payload));
    env.sleep_s(1.5);  // drained at 3: an empty queue takes a message larger than the limit
    sent["big"] = env.send(0, "inbox", numbered(7, 20'000));
    sent["behind big"] = env.send(0, "inbox", numbered(8, payload));
    env.sleep_s(2.0);  // the big one was taken at 5
    sent["after big"] = env.send(0, "inbox", numbered(9, payload));
  });
  ASSERT_TRUE(w.run().ok());
  for (const char* ok : {"m1", "m2", "m3", "m5", "big", "after big"}) {
    EXPECT_TRUE(sent[ok].ok()) << ok << ": " << sent[ok].to_string();
  }
  for (const char* refused : {"m4", "m6", "behind big"}) {
    EXPECT_EQ(sent[refused].code(), Status::Code::kNoSpace)
        << refused << ": " << sent[refused].to_string();
  }
  EXPECT_EQ(queued["at 2"], 3 * kWire);
  EXPECT_EQ(queued["after one"], 2 * kWire);
  EXPECT_EQ(queued["drained"], 0u);
  EXPECT_EQ(queued["end"], 0u);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3, 5, 7, 9}));
}

// ---- devices

// Contract: a write that returned OK is visible to every later read (bytes where the device
// keeps them, sizes otherwise); a size-only write leaves the contents alone; flush() is OK.
TEST_P(EnvConformance, AReadReturnsWhatWasWritten) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{16} << 20, 1e9, 1e-4});
  Env& env = w.build(spec);
  const Bytes a = pattern(10'000, 1), b = pattern(3000, 2);
  std::vector<Status> statuses;
  std::vector<Payload> reads;
  env.spawn(0, "io", [&] {
    Device& d = env.device(0);
    statuses.push_back(d.write(8192 + 5, bytes_of(a)));  // unaligned, several blocks
    statuses.push_back(d.write(8192 + 5 + 4000, bytes_of(b)));
    statuses.push_back(d.write(8192, Payload::of_size(20'000)));  // size-only
    statuses.push_back(d.flush());
    for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
             {8192 + 5, 10'000}, {8192 + 5 + 3999, 3002}, {8192 + 5 + 9000, 1000}}) {
      Result<Payload> p = d.read(off, len);
      statuses.push_back(p.status());
      if (p.ok()) reads.push_back(*p);
    }
  });
  ASSERT_TRUE(w.run().ok());
  for (size_t i = 0; i < statuses.size(); ++i) {
    EXPECT_TRUE(statuses[i].ok()) << "operation " << i << ": " << statuses[i].to_string();
  }
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].size_bytes, 10'000u);
  EXPECT_EQ(reads[1].size_bytes, 3002u);
  EXPECT_EQ(reads[2].size_bytes, 1000u);
  if (!w.traits().keeps_bytes) return;
  Bytes want = a;  // a with b over [4000, 7000)
  std::copy(b.begin(), b.end(), want.begin() + 4000);
  ASSERT_TRUE(reads[0].bytes && reads[1].bytes && reads[2].bytes);
  EXPECT_EQ(reads[0].bytes.to_vector(), want);
  EXPECT_EQ(reads[1].bytes.to_vector(), Bytes(want.begin() + 3999, want.begin() + 7001));
  EXPECT_EQ(reads[2].bytes.to_vector(), Bytes(want.begin() + 9000, want.end()));
}

// Contract: Env::allocate gives zeroed memory aligned to kBufferAlignment (what O_DIRECT and a
// fabric's registered memory need), whose views keep the Env's registration; where the device
// keeps bytes, a read returns them in aligned memory, and a block-aligned slice of a payload
// can be written without a copy.
TEST_P(EnvConformance, BuffersAreAlignedAndDeviceReadsReturnAlignedMemory) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{16} << 20, 1e9, 1e-4});
  Env& env = w.build(spec);
  std::vector<Buffer> got;
  bool zeroed = true;
  const void* region = nullptr;
  env.spawn(0, "io", [&] {
    MutableBuffer m = env.allocate(3 * 4096 + 100);
    zeroed = std::all_of(m.begin(), m.end(), [](std::byte x) { return x == std::byte{0}; });
    const Bytes p = pattern(m.size(), 3);
    m.write_at(0, p);
    Buffer b = std::move(m).freeze();
    region = b.region();
    got.push_back(b);
    Device& d = env.device(0);
    ASSERT_TRUE(d.write(4096, Payload::of(b.slice(4096, 2 * 4096))).ok());
    Result<Payload> r = d.read(4096, 2 * 4096);
    ASSERT_TRUE(r.ok());
    if (r->bytes) got.push_back(r->bytes);
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(zeroed);
  EXPECT_TRUE(got[0].aligned());
  EXPECT_EQ(got[0].size(), 3u * 4096 + 100);
  EXPECT_TRUE(got[0].slice(4096, 10).aligned());
  EXPECT_EQ(got[0].slice(4096, 10).region(), region);
  if (!w.traits().keeps_bytes) return;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[1].aligned());
  EXPECT_TRUE(got[1] == got[0].slice(4096, 2 * 4096));
}

// Contract: ranges never written read as zeros (where the device keeps bytes; sizes
// otherwise).
TEST_P(EnvConformance, NeverWrittenRangesReadAsZeros) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{16} << 20, 1e9, 0});
  Env& env = w.build(spec);
  const Bytes a = pattern(4000, 5);
  std::vector<Result<Payload>> reads;
  env.spawn(0, "io", [&] {
    Device& d = env.device(0);
    if (!d.write(100, bytes_of(a)).ok()) return;
    reads.push_back(d.read(4 << 20, 8192));  // far from anything written
    reads.push_back(d.read(0, 4200));        // zeros, a, zeros
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_EQ(reads.size(), 2u);
  ASSERT_TRUE(reads[0].ok() && reads[1].ok());
  EXPECT_EQ(reads[0]->size_bytes, 8192u);
  EXPECT_EQ(reads[1]->size_bytes, 4200u);
  if (!w.traits().keeps_bytes) return;
  ASSERT_TRUE(reads[0]->bytes && reads[1]->bytes);
  EXPECT_EQ(reads[0]->bytes.to_vector(), Bytes(8192));
  Bytes want(4200);
  std::copy(a.begin(), a.end(), want.begin() + 100);
  EXPECT_EQ(reads[1]->bytes.to_vector(), want);
}

// Contract: a read or write of a range beyond the device's capacity (or whose end overflows)
// fails with InvalidArgument and changes nothing; a write whose bytes do not match its size
// likewise. The last byte itself is usable.
TEST_P(EnvConformance, RangesBeyondTheCapacityAreRefusedWithAStatus) {
  World w(GetParam());
  WorldSpec spec = hosts({{1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{1} << 20, 1e9, 0});
  Env& env = w.build(spec);
  const Bytes tail = pattern(10, 7);
  std::vector<std::pair<std::string, Status>> refused, accepted;
  Result<Payload> after = Status::io_error("not read");
  env.spawn(0, "io", [&] {
    Device& d = env.device(0);
    const uint64_t cap = d.capacity_bytes();
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    accepted.emplace_back("write of the last 10 bytes", d.write(cap - 10, bytes_of(tail)));
    accepted.emplace_back("read of the last byte", d.read(cap - 1, 1).status());
    accepted.emplace_back("read of nothing at the end", d.read(cap, 0).status());
    for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
             {cap, 1}, {cap - 10, 11}, {cap + 1, 0}, {kMax, 1}, {1, kMax}, {kMax, kMax}}) {
      const std::string range = "[" + std::to_string(off) + ", +" + std::to_string(len) + ")";
      refused.emplace_back("read " + range, d.read(off, len).status());
      refused.emplace_back("write " + range, d.write(off, Payload::of_size(len)));
    }
    refused.emplace_back("write of 11 bytes over the end",
                         d.write(cap - 10, bytes_of(pattern(11, 8))));
    refused.emplace_back("write whose bytes do not match its size",
                         d.write(cap - 10, Payload{10, Buffer::copy_of(pattern(3, 9))}));
    after = d.read(cap - 10, 10);
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_FALSE(accepted.empty());
  for (const auto& [what, s] : accepted) EXPECT_TRUE(s.ok()) << what << ": " << s.to_string();
  ASSERT_EQ(refused.size(), 14u);
  for (const auto& [what, s] : refused) {
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << what << ": " << s.to_string();
  }
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  EXPECT_EQ(after->size_bytes, 10u);
  if (w.traits().keeps_bytes) {
    ASSERT_TRUE(after->bytes);
    EXPECT_EQ(after->bytes.to_vector(), tail);  // the refused writes changed nothing
  }
}

// Contract (only where the Env can crash a device): flushed bytes survive a crash exactly;
// each unflushed write is, independently, kept, dropped or torn (a prefix of its 512-byte
// sectors present, the old bytes after it), and nothing else changes.
TEST_P(EnvConformance, ACrashKeepsFlushedBytesAndKeepsDropsOrTearsEachUnflushedWrite) {
  World w(GetParam());
  if (!w.traits().can_crash) GTEST_SKIP() << "this Env cannot crash a device";
  WorldSpec spec = hosts({{1, 1e9, 0}});
  spec.devices.push_back({0, uint64_t{16} << 20, 1e9, 0});
  Env& env = w.build(spec);
  constexpr int kRegions = 6;
  constexpr uint64_t kLength = 5000;  // 10 or 11 sectors
  auto region = [](int r) { return static_cast<uint64_t>(r) * 16384 + 300 + 37 * r; };
  constexpr uint64_t kFlushedAt = 1 << 20;  // written and flushed last: must survive
  int kept = 0, dropped = 0, torn = 0;
  for (uint32_t round = 0; round < 12; ++round) {
    const Bytes old_bytes = pattern(kLength, 100 + round);
    const Bytes flushed = pattern(kLength, 200 + round);
    std::vector<Bytes> fresh;
    for (int r = 0; r < kRegions; ++r) fresh.push_back(pattern(kLength, 300 + round * 16 + r));
    Status wrote;
    env.spawn(0, "writer", [&] {
      Device& d = env.device(0);
      for (int r = 0; r < kRegions; ++r) {
        if (!(wrote = d.write(region(r), bytes_of(old_bytes))).ok()) return;
      }
      if (!(wrote = d.write(kFlushedAt, bytes_of(pattern(kLength, 1)))).ok()) return;
      if (!(wrote = d.flush()).ok()) return;
      if (!(wrote = d.write(kFlushedAt, bytes_of(flushed))).ok()) return;
      if (!(wrote = d.flush()).ok()) return;
      for (int r = 0; r < kRegions; ++r) {
        if (!(wrote = d.write(region(r), bytes_of(fresh[static_cast<size_t>(r)]))).ok()) return;
      }
    });
    ASSERT_TRUE(w.run().ok());
    ASSERT_TRUE(wrote.ok()) << wrote.to_string();
    ASSERT_TRUE(w.crash_device(0, 1000 + round).ok());
    std::vector<Bytes> seen(kRegions + 1);
    env.spawn(0, "reader", [&] {
      Device& d = env.device(0);
      for (int r = 0; r <= kRegions; ++r) {
        Result<Payload> p = d.read(r < kRegions ? region(r) : kFlushedAt, kLength);
        if (p.ok() && p->bytes) seen[static_cast<size_t>(r)] = p->bytes.to_vector();
      }
    });
    ASSERT_TRUE(w.run().ok());
    EXPECT_EQ(seen[kRegions], flushed) << "round " << round;
    for (int r = 0; r < kRegions; ++r) {
      const Bytes& s = seen[static_cast<size_t>(r)];
      const Bytes& n = fresh[static_cast<size_t>(r)];
      ASSERT_EQ(s.size(), kLength) << "round " << round << " region " << r;
      uint64_t prefix = 0;
      while (prefix < kLength && s[prefix] == n[prefix]) ++prefix;
      // The new bytes up to `prefix`, the old ones after it.
      for (uint64_t i = prefix; i < kLength; ++i) {
        ASSERT_EQ(s[i], old_bytes[i]) << "round " << round << " region " << r << " byte " << i;
      }
      // The old and new patterns differ at every byte (their seeds differ by less than 255),
      // so `prefix` is exactly what survived: all, nothing, or whole sectors of the device.
      if (prefix == kLength) {
        ++kept;
      } else if (prefix == 0) {
        ++dropped;
      } else {
        EXPECT_EQ((region(r) + prefix) % 512, 0u)
            << "round " << round << " region " << r << ": a torn write ends inside a sector";
        ++torn;
      }
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(dropped, 0);
  EXPECT_GT(torn, 0);
}

// ---- semaphores

// Contract: acquire() blocks until a permit is free; release() hands the permit to the task
// that has waited longest, before any task that asks later (FIFO hand-off, no barging).
TEST_P(EnvConformance, SemaphoresHandPermitsOverInFifoOrder) {
  World w(GetParam());
  Env& env = w.build(hosts({{4, 1e9, 0}}));
  std::unique_ptr<Semaphore> sem = env.make_semaphore(0);
  std::vector<std::pair<std::string, double>> acquired;
  for (int i = 0; i < 4; ++i) {
    env.spawn(0, "w" + std::to_string(i), [&, i] {
      env.sleep_s(0.1 * (4 - i) + (i == 2 ? 0.35 : 0));  // queue in the order w3 w1 w0 w2
      sem->acquire();
      acquired.emplace_back("w" + std::to_string(i), env.now_s());
      env.sleep_s(0.5);
      sem->release();
    });
  }
  env.spawn(0, "releaser", [&] {
    env.sleep_s(1.0);
    sem->release();  // goes to w3; asking at once queues the releaser after w2
    sem->acquire();
    acquired.emplace_back("releaser", env.now_s());
  });
  ASSERT_TRUE(w.run().ok());
  const std::vector<std::pair<std::string, double>> want = {
      {"w3", 1.0}, {"w1", 1.5}, {"w0", 2.0}, {"w2", 2.5}, {"releaser", 3.0}};
  ASSERT_EQ(acquired.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(acquired[i].first, want[i].first) << i;
    EXPECT_NEAR(acquired[i].second, want[i].second, w.tolerance(want[i].second)) << i;
  }
}

// Contract: acquire() takes a free permit at once and blocks while none is free.
TEST_P(EnvConformance, AcquireBlocksUntilAPermitIsReleased) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {1, 1e9, 0}}));
  std::unique_ptr<Semaphore> sem = env.make_semaphore(2);
  std::vector<double> times;
  env.spawn(0, "acquirer", [&] {
    for (int i = 0; i < 3; ++i) {
      sem->acquire();
      times.push_back(env.now_s());
    }
  });
  env.spawn(0, "releaser", [&] {
    env.sleep_s(2.0);
    sem->release();
  });
  ASSERT_TRUE(w.run().ok());
  ASSERT_EQ(times.size(), 3u);
  EXPECT_NEAR(times[0], 0.0, w.tolerance(0));
  EXPECT_NEAR(times[1], 0.0, w.tolerance(0));
  EXPECT_NEAR(times[2], 2.0, w.tolerance(2.0));
}

// ---- tasks

// Contract: the run ends when only daemon tasks remain; they are terminated then.
TEST_P(EnvConformance, DaemonTasksDoNotKeepTheWorldAlive) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {1, 1e9, 0}}));
  int ticks = 0;
  int unreachable = 0;
  env.spawn(
      1, "ticker",
      [&] {
        for (;;) {
          env.sleep_s(1.0);
          ++ticks;
        }
      },
      TaskOptions{.daemon = true});
  env.spawn(
      1, "listener",
      [&] {
        (void)env.endpoint(1, "never").recv();  // blocks for ever
        ++unreachable;
      },
      TaskOptions{.daemon = true});
  env.spawn(0, "worker", [&] { env.sleep_s(5.5); });
  ASSERT_TRUE(w.run().ok());
  EXPECT_NEAR(env.now_s(), 5.5, w.tolerance(5.5));
  EXPECT_EQ(ticks, 5);
  EXPECT_EQ(unreachable, 0);
}

// Contract: so a world of daemons alone ends at once.
TEST_P(EnvConformance, AWorldOfDaemonsEndsAtOnce) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}}));
  int ticks = 0;
  env.spawn(
      0, "ticker",
      [&] {
        for (;;) {
          env.sleep_s(1.0);
          ++ticks;
        }
      },
      TaskOptions{.daemon = true});
  ASSERT_TRUE(w.run().ok());
  EXPECT_NEAR(env.now_s(), 0.0, w.tolerance(0));
  EXPECT_EQ(ticks, 0);
}

// Contract: a non-daemon task keeps the world alive until it ends, also one spawned by
// another task later.
TEST_P(EnvConformance, ANonDaemonTaskKeepsTheWorldAlive) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {1, 1e9, 0}}));
  int ticks = 0;
  double child_done = -1;
  env.spawn(
      0, "ticker",
      [&] {
        for (;;) {
          env.sleep_s(1.0);
          ++ticks;
        }
      },
      TaskOptions{.daemon = true});
  env.spawn(1, "parent", [&] {
    env.sleep_s(3.0);
    env.spawn(1, "child", [&] {
      env.sleep_s(4.25);
      child_done = env.now_s();
    });
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_NEAR(child_done, 7.25, w.tolerance(7.25));
  EXPECT_NEAR(env.now_s(), 7.25, w.tolerance(7.25));
  EXPECT_EQ(ticks, 7);
}

// Contract: spawn returns distinct ids; join blocks until the task has ended and returns at
// once when it already has; ids never given out and the caller's own are refused.
TEST_P(EnvConformance, JoinBlocksUntilTheTaskHasEnded) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}, {1, 1e9, 0}}));
  std::vector<TaskId> ids;
  for (int i = 1; i <= 3; ++i) {
    ids.push_back(env.spawn(1, "sleeper" + std::to_string(i),
                            [&env, i] { env.sleep_s(static_cast<double>(i)); }));
  }
  std::vector<double> joined;
  Status own, unknown;
  TaskId self = 0;
  self = env.spawn(0, "joiner", [&] {
    for (size_t k : {size_t{1}, size_t{0}, size_t{2}, size_t{1}}) {
      if (!env.join(ids[k]).ok()) return;
      joined.push_back(env.now_s());
    }
    own = env.join(self);
    unknown = env.join(*std::max_element(ids.begin(), ids.end()) + 1000);
  });
  ASSERT_TRUE(w.run().ok());
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_NE(ids[0], ids[2]);
  for (TaskId id : ids) EXPECT_NE(id, self);
  // sleeper2 ends at 2; sleeper1 had ended at 1 (at once); sleeper3 at 3; sleeper2 again.
  const std::vector<double> want = {2.0, 2.0, 3.0, 3.0};
  ASSERT_EQ(joined.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(joined[i], want[i], w.tolerance(want[i])) << "join " << i;
  }
  EXPECT_EQ(own.code(), Status::Code::kInvalidArgument) << own.to_string();
  EXPECT_EQ(unknown.code(), Status::Code::kInvalidArgument) << unknown.to_string();
}

// Records, on destruction, that a task's stack was unwound.
struct UnwindFlag {
  bool* flag;
  ~UnwindFlag() { *flag = true; }
};

// Contract: cancel terminates a task at the current time, unwinding its stack from the Env call
// it is blocked in (sleep, recv, compute, acquire, join); what it waited for is abandoned (its
// computation stops sharing the cores, a message goes to the next receiver, a permit to the
// next waiter); a task not started yet never runs; a cancelled non-daemon task no longer keeps
// the world alive; cancelling an ended task is OK, an unknown id or oneself is refused.
TEST_P(EnvConformance, CancelUnwindsATaskFromTheCallItIsBlockedIn) {
  World w(GetParam());
  Env& env = w.build(hosts({{1, 1e9, 0}}));
  std::unique_ptr<Semaphore> sem = env.make_semaphore(0);
  enum Victim { kSleep, kRecv, kCompute, kAcquire, kJoin, kNotStarted, kVictims };
  const char* names[kVictims] = {"sleep", "recv", "compute", "acquire", "join", "not started"};
  bool unwound[kVictims] = {}, went_on[kVictims] = {};
  std::vector<TaskId> victims(kVictims);
  victims[kSleep] = env.spawn(0, "v.sleep", [&] {
    UnwindFlag f{&unwound[kSleep]};
    env.sleep_s(100);
    went_on[kSleep] = true;
  });
  victims[kRecv] = env.spawn(0, "v.recv", [&] {
    UnwindFlag f{&unwound[kRecv]};
    (void)env.endpoint(0, "inbox").recv();
    went_on[kRecv] = true;
  });
  victims[kCompute] = env.spawn(0, "v.compute", [&] {
    UnwindFlag f{&unwound[kCompute]};
    env.compute_s(100);
    went_on[kCompute] = true;
  });
  victims[kAcquire] = env.spawn(0, "v.acquire", [&] {
    UnwindFlag f{&unwound[kAcquire]};
    sem->acquire();
    went_on[kAcquire] = true;
  });
  victims[kJoin] = env.spawn(0, "v.join", [&] {
    UnwindFlag f{&unwound[kJoin]};
    (void)env.join(victims[kSleep]);
    went_on[kJoin] = true;
  });
  double computed = -1, received_at = -1, acquired_at = -1;
  int32_t received = -1;
  std::vector<double> joined;
  Status again, unknown, own;
  TaskId canceller = 0;
  env.spawn(0, "cruncher", [&] {  // shares the one core with v.compute until the cancel
    env.compute_s(2.0);
    computed = env.now_s();
  });
  env.spawn(0, "late waiter", [&] {
    env.sleep_s(0.5);  // queues behind v.acquire
    sem->acquire();
    acquired_at = env.now_s();
  });
  // Cancelled before the world runs: never starts.
  victims[kNotStarted] = env.spawn(0, "v.not-started", [&] {
    UnwindFlag f{&unwound[kNotStarted]};
    went_on[kNotStarted] = true;
  });
  const Status before_run = env.cancel(victims[kNotStarted]);
  canceller = env.spawn(0, "canceller", [&] {
    env.sleep_s(1.0);
    // v.join first: cancelling v.sleep ends the join it waits in, and other tasks may run
    // between two Env calls of this one.
    for (int v : {kJoin, kSleep, kRecv, kCompute, kAcquire}) {
      if (!env.cancel(victims[static_cast<size_t>(v)]).ok()) return;
    }
    for (TaskId id : victims) {
      if (!env.join(id).ok()) return;
      joined.push_back(env.now_s());
    }
    again = env.cancel(victims[kSleep]);
    unknown = env.cancel(*std::max_element(victims.begin(), victims.end()) + 1000);
    own = env.cancel(canceller);
    env.sleep_s(1.0);
    sem->release();  // at 2: to the late waiter, not to the cancelled v.acquire
    (void)env.send(0, "inbox", numbered(7));
  });
  env.spawn(0, "next receiver", [&] {
    env.sleep_s(1.5);
    Result<Message> m = env.endpoint(0, "inbox").recv(10.0);
    if (!m.ok()) return;
    received = number_of(*m);
    received_at = env.now_s();
  });
  ASSERT_TRUE(before_run.ok()) << before_run.to_string();
  ASSERT_TRUE(w.run().ok());
  for (int v = 0; v < kVictims; ++v) {
    EXPECT_FALSE(went_on[v]) << names[v];
    if (v != kNotStarted) {
      EXPECT_TRUE(unwound[v]) << names[v] << ": its stack was not unwound";
    }
  }
  ASSERT_EQ(joined.size(), static_cast<size_t>(kVictims));
  for (size_t v = 0; v < joined.size(); ++v) {
    EXPECT_NEAR(joined[v], 1.0, w.tolerance(1.0)) << names[v] << " ended then";
  }
  // Both computations progressed at 0.5 until 1; the cruncher alone then needs 1.5 more.
  EXPECT_NEAR(computed, 2.5, w.tolerance(2.5));
  EXPECT_NEAR(acquired_at, 2.0, w.tolerance(2.0));
  EXPECT_EQ(received, 7);
  EXPECT_NEAR(received_at, 2.0, w.tolerance(2.0) + 1e-6);
  EXPECT_TRUE(again.ok()) << again.to_string();
  EXPECT_EQ(unknown.code(), Status::Code::kInvalidArgument) << unknown.to_string();
  EXPECT_EQ(own.code(), Status::Code::kInvalidArgument) << own.to_string();
  // The world did not wait for the cancelled sleeper's 100 s.
  EXPECT_NEAR(env.now_s(), 2.5, w.tolerance(2.5));
}

// ---- determinism

// A world with random sleeps, computations and messages of random sizes (small and large)
// between three hosts; every task writes (time, what) lines. The trace of one run.
std::string trace_of_run(const EnvUnderTest& under_test, uint64_t seed) {
  World w(under_test);
  WorldSpec spec = hosts({{2, 1e9, 1e-4}, {1, 5e8, 2e-4}, {4, 2e9, 5e-5}}, seed);
  spec.devices.push_back({2, uint64_t{1} << 30, 3e9, 1e-4});
  Env& env = w.build(spec);
  std::vector<std::string> lines;
  std::mutex lines_mutex;  // tasks may be threads (a real Env)
  auto note = [&](const std::string& what) {
    char t[32];
    std::snprintf(t, sizeof t, "%.9f ", env.now_s());
    std::lock_guard lock(lines_mutex);
    lines.push_back(t + what);
  };
  constexpr int kRounds = 12;
  for (HostId h = 0; h < 3; ++h) {
    const std::string inbox = "inbox" + std::to_string(h);
    env.spawn(
        h, "listener" + std::to_string(h),
        [&, h, inbox] {
          Endpoint& ep = env.endpoint(h, inbox);
          for (;;) {
            Result<Message> m = ep.recv();
            if (!m.ok()) return;
            note(inbox + " got " + std::to_string(number_of(*m)) + " of " +
                 std::to_string(m->payload.size_bytes));
          }
        },
        TaskOptions{.daemon = true});
  }
  for (HostId h = 0; h < 3; ++h) {
    env.spawn(h, "actor" + std::to_string(h), [&, h] {
      for (int i = 0; i < kRounds; ++i) {
        Random& r = env.random();
        const uint64_t draw = r.uniform(1000);
        env.sleep_s(static_cast<double>(draw) * 1e-4);
        env.compute_s(static_cast<double>(r.uniform(100)) * 1e-4);
        const auto to = static_cast<HostId>((h + 1 + r.uniform(2)) % 3);  // another host
        const uint64_t bytes = r.uniform(2) == 0 ? r.uniform(4096) : 100'000 + r.uniform(5'000'000);
        const int32_t id = static_cast<int32_t>(h * 1000 + i);
        if (h == 2 && i % 4 == 0) {
          (void)env.send_from_device(env.device(0), 0, bytes, "inbox" + std::to_string(to),
                                     numbered(id));
        } else {
          env.send(h, "inbox" + std::to_string(to), numbered(id, bytes));
        }
        note("actor" + std::to_string(h) + " drew " + std::to_string(draw) + " sent " +
             std::to_string(id) + " to " + std::to_string(to));
      }
      env.sleep_s(10.0);  // until every message has arrived
    });
  }
  const Status s = w.run();
  std::string out = s.ok() ? "" : "run failed: " + s.to_string() + "\n";
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Runs trace_of_run in a child process (one world per process, whatever the Env) and returns
// what it wrote.
std::string trace_in_child(const EnvUnderTest& under_test, uint64_t seed) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    close(fds[0]);
    const std::string trace = trace_of_run(under_test, seed);
    size_t done = 0;
    while (done < trace.size()) {
      const ssize_t n = write(fds[1], trace.data() + done, trace.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out += "child exited abnormally (status " + std::to_string(status) + ")\n";
  }
  return out;
}

// Contract: the same seed, world and tasks give the same run: the same events at the same
// times in the same order. A real world (traits().deterministic false) is held to the weaker
// form: a run has every event.
TEST_P(EnvConformance, TheSameSeedAndWorldGiveTheSameTrace) {
  const std::string a = trace_in_child(GetParam(), 42);
  EXPECT_EQ(a.find("run failed"), std::string::npos) << a;
  EXPECT_EQ(a.find("abnormally"), std::string::npos) << a;
  // 36 sends and as many receptions.
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 72) << a;
  if (!World(GetParam()).traits().deterministic) return;
  const std::string b = trace_in_child(GetParam(), 42);
  const std::string c = trace_in_child(GetParam(), 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // the trace does depend on the seed
}

}  // namespace
}  // namespace granary::testing

#include "engine/services/mds.h"

#include <gtest/gtest.h>

#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

struct MdsWorld {
  explicit MdsWorld(const MetadataServiceOptions& options,
                    TaskOptions task_options = {.daemon = true})
      : env(1),
        mds_host(env.add_host("mds", 8, 25e9, 5e-6)),
        client_host(env.add_host("client", 8, 25e9, 5e-6)),
        mds(env, mds_host, {{"a", 100}, {"b", 200}}, options) {
    mds.start(task_options);
  }
  testing::MemoryEnv env;
  HostId mds_host;
  HostId client_host;
  MetadataService mds;
};

MetadataRequest request(uint64_t id, MetadataOp op, std::string path, std::string reply_to) {
  MetadataRequest r;
  r.request_id = id;
  r.op = op;
  r.path = std::move(path);
  r.reply_to = std::move(reply_to);
  return r;
}

// 400 opens in flight at once against 4 operations in service of 1 ms each: 4,000 ops/s.
TEST(MetadataService, ParallelismAndServiceTimeLimitTheOpenRate) {
  MdsWorld w({.endpoint_name = "mds.0",
              .parallel_ops = 4,
              .open_time_s = 1e-3,
              .close_time_s = 1e-3,
              .create_time_s = 1e-3,
              .stat_time_s = 1e-3});
  constexpr int kOps = 400;
  double last_reply_s = 0;
  int ok = 0;
  w.env.spawn(w.client_host, "storm", [&] {
    Endpoint& inbox = w.env.endpoint(w.client_host, "storm.reply");
    for (int i = 0; i < kOps; ++i) {
      w.env.send(
          w.client_host, "mds.0",
          Message{request(uint64_t(i), MetadataOp::kOpen, i % 2 ? "a" : "b", "storm.reply"), {}});
    }
    for (int i = 0; i < kOps; ++i) {
      Result<Message> m = inbox.recv();
      ASSERT_TRUE(m.ok());
      const auto& reply = std::get<MetadataReply>(m->body);
      ok += reply.ok;
      EXPECT_EQ(reply.size_bytes, reply.request_id % 2 ? 100u : 200u);
    }
    last_reply_s = w.env.now_s();
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(ok, kOps);
  EXPECT_EQ(w.mds.stats().opens, uint64_t(kOps));
  // 100 rounds of 1 ms, plus the requests' and replies' trips (microseconds).
  EXPECT_GE(last_reply_s, 0.1);
  EXPECT_LT(last_reply_s, 0.1 + 1e-3);
  EXPECT_NEAR(kOps / last_reply_s, 4 / 1e-3, 40);  // within 1%
}

// Each kind of operation has its own cost: 200 opens of 1 ms and 200 closes of 0.25 ms on 4
// workers take (200 x 1 + 200 x 0.25) / 4 = 62.5 ms, not the 100 ms of one rate for both.
TEST(MetadataService, EachOperationKindCostsItsOwnTime) {
  MdsWorld w({.endpoint_name = "mds.0",
              .parallel_ops = 4,
              .open_time_s = 1e-3,
              .close_time_s = 0.25e-3,
              .create_time_s = 1e-3,
              .stat_time_s = 1e-3});
  constexpr int kFiles = 200;
  double last_reply_s = 0;
  w.env.spawn(w.client_host, "storm", [&] {
    Endpoint& inbox = w.env.endpoint(w.client_host, "storm.reply");
    // Interleaved open and close of the same file: each close follows its open on a worker.
    for (int i = 0; i < kFiles; ++i) {
      w.env.send(w.client_host, "mds.0",
                 Message{request(uint64_t(2 * i), MetadataOp::kOpen, "a", "storm.reply"), {}});
    }
    for (int i = 0; i < kFiles; ++i) ASSERT_TRUE(std::get<MetadataReply>(inbox.recv()->body).ok);
    for (int i = 0; i < kFiles; ++i) {
      w.env.send(w.client_host, "mds.0",
                 Message{request(uint64_t(2 * i + 1), MetadataOp::kClose, "a", "storm.reply"), {}});
    }
    for (int i = 0; i < kFiles; ++i) ASSERT_TRUE(std::get<MetadataReply>(inbox.recv()->body).ok);
    last_reply_s = w.env.now_s();
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(w.mds.stats().opens, uint64_t(kFiles));
  EXPECT_EQ(w.mds.stats().closes, uint64_t(kFiles));
  EXPECT_GE(last_reply_s, 0.0625);
  EXPECT_LT(last_reply_s, 0.0625 + 1e-3);
}

TEST(MetadataService, UnknownFilesAndStrayClosesFail) {
  MdsWorld w({.parallel_ops = 2,
              .open_time_s = 1e-4,
              .close_time_s = 1e-4,
              .create_time_s = 1e-4,
              .stat_time_s = 1e-4});
  std::vector<MetadataReply> replies;
  w.env.spawn(w.client_host, "client", [&] {
    Endpoint& inbox = w.env.endpoint(w.client_host, "c");
    const std::vector<MetadataRequest> requests = {
        request(1, MetadataOp::kOpen, "nope", "c"), request(2, MetadataOp::kClose, "a", "c"),
        request(3, MetadataOp::kStat, "b", "c"), request(4, MetadataOp::kOpen, "a", "c"),
        request(5, MetadataOp::kClose, "a", "c")};
    for (const MetadataRequest& r : requests) {  // one at a time, in order
      w.env.send(w.client_host, "mds.0", Message{r, {}});
      replies.push_back(std::get<MetadataReply>(inbox.recv()->body));
    }
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(replies.size(), 5u);
  EXPECT_FALSE(replies[0].ok);
  EXPECT_EQ(replies[0].error_code, ReplyError::kNotFound);
  EXPECT_EQ(replies[0].error, "mds.0: no such file nope");
  EXPECT_FALSE(replies[1].ok);
  EXPECT_EQ(replies[1].error_code, ReplyError::kInvalid);
  EXPECT_TRUE(replies[2].ok);
  EXPECT_EQ(replies[2].size_bytes, 200u);
  EXPECT_TRUE(replies[3].ok);
  EXPECT_TRUE(replies[4].ok);
  const MdsStats s = w.mds.stats();
  EXPECT_EQ(s.opens, 2u);
  EXPECT_EQ(s.closes, 2u);
  EXPECT_EQ(s.stats, 1u);
  EXPECT_EQ(s.errors, 2u);
}

TEST(MetadataService, ShutdownStopsEveryWorker) {
  MdsWorld w({.parallel_ops = 5,
              .open_time_s = 1e-4,
              .close_time_s = 1e-4,
              .create_time_s = 1e-4,
              .stat_time_s = 1e-4},
             TaskOptions{.daemon = false});
  w.env.spawn(w.client_host, "admin", [&] {
    w.env.send(w.client_host, "mds.0", Message{Shutdown{}, {}});
  });
  const Status s = w.env.run();
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(w.env.live_tasks().empty());
}

}  // namespace
}  // namespace granary::services

#include "engine/services/gpu_consumer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

// One OSD on one drive serving a dataset; consumers on the client host read through one
// client.
struct ConsumerWorld {
  ConsumerWorld(uint64_t seed, const test::HardwareSpec& hw, const DatasetSpec& stored)
      : w(seed, hw), ring(test::make_ring(1, 1)), dataset(test::make_dataset(stored)) {
    EXPECT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
    w.start_osds();
    client = std::make_unique<StorageClient>(w.env, w.client_host,
                                             RadosBackend{layout, &ring, 0, {}, nullptr, 1.0},
                                             StorageClientOptions{});
  }
  test::World w;
  placement::Ring ring;
  layout::RbdLayout layout = layout::RbdLayout::default_layout();
  Dataset dataset;
  std::unique_ptr<StorageClient> client;
};

TEST(GpuConsumer, AuIsOneWhenStorageKeepsUp) {
  ConsumerWorld cw(1, {}, {.name = "fast", .files = 64, .sample_bytes_mean = double(kMiB)});
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                  {.read_threads = 4,
                   .batch_size = 4,
                   .prefetch_batches = 2,
                   .compute_s_per_step = 0.1,
                   .shuffle_seed = 5});
  gpu.start();
  ASSERT_TRUE(cw.w.env.run().ok());
  ASSERT_TRUE(gpu.status().ok()) << gpu.status().to_string();
  const ConsumerMetrics& m = gpu.metrics();
  EXPECT_EQ(m.steps, 16);
  EXPECT_EQ(m.files_read, 64u);
  EXPECT_EQ(m.bytes_read, 64 * kMiB);
  EXPECT_EQ(m.file_read_latency_s.size(), 64u);
  // DLIO's total_compute_time leaves the first step out: 15 of the 16 steps.
  EXPECT_NEAR(m.compute_time_s, 1.5, 1e-12);
  EXPECT_GT(m.step_io_wait_s[0], 0);  // the loader's start-up, with the first compute...
  EXPECT_NEAR(m.excluded_s, m.step_io_wait_s[0] + 0.1, 1e-12);  // ...is what AU leaves out
  for (size_t s = 1; s < m.step_io_wait_s.size(); ++s) EXPECT_EQ(m.step_io_wait_s[s], 0);
  EXPECT_NEAR(m.au, 1.0, 1e-9);
  ASSERT_EQ(m.epoch_au.size(), 1u);
  EXPECT_NEAR(m.epoch_au[0], 1.0, 1e-9);
}

// One reader, one sample per batch, each file taking T > c to arrive: step k's batch is ready
// at k T and the epoch ends at S T + c. DLIO (statscounter.py compute_metrics_train) counts the
// compute of steps 2..S, (S - 1) c, over the epoch less the first step's processing (T + c):
// AU = (S - 1) c / ((S - 1) T) = c / T. (Counting every step's compute and leaving out only
// the first wait, as Granary did before, gives S c / ((S - 1) T + c).)
TEST(GpuConsumer, AuMatchesTheHandComputedSlowCase) {
  test::HardwareSpec hw;
  hw.device_bytes_per_s = 1e9;
  const uint64_t size = 8 * kMiB;
  ConsumerWorld cw(1, hw, {.name = "slow", .files = 20, .sample_bytes_mean = double(size)});
  const double c = 1e-3;
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                  {.read_threads = 1,
                   .batch_size = 1,
                   .prefetch_batches = 1,
                   .compute_s_per_step = c,
                   .shuffle_seed = 9});
  gpu.start();
  ASSERT_TRUE(cw.w.env.run().ok());
  ASSERT_TRUE(gpu.status().ok()) << gpu.status().to_string();
  // Closed form of one read (two 4 MiB objects read back to back by the drive): the first
  // request on the wire + client latency, both objects from the drive, server latency.
  const double T = 256 / hw.client_nic_bytes_per_s + hw.client_latency_s + 2 * hw.device_latency_s +
                   double(size) / hw.device_bytes_per_s + hw.server_latency_s;
  const ConsumerMetrics& m = gpu.metrics();
  const int S = 20;
  ASSERT_EQ(m.steps, S);
  for (double l : m.file_read_latency_s) EXPECT_NEAR(l, T, 1e-9);
  EXPECT_NEAR(m.step_io_wait_s[0], T, 1e-9);
  for (int s = 1; s < S; ++s) EXPECT_NEAR(m.step_io_wait_s[size_t(s)], T - c, 1e-9);
  EXPECT_NEAR(m.total_run_time_s, S * T + c, 1e-9);
  EXPECT_NEAR(m.au, c / T, 1e-9);
  EXPECT_NEAR(m.compute_time_s, (S - 1) * c, 1e-12);
  EXPECT_NEAR(m.excluded_s, T + c, 1e-9);
  EXPECT_LT(m.au, 0.15);
}

TEST(GpuConsumer, MultipleEpochsExcludeEachEpochsFirstStep) {
  ConsumerWorld cw(1, {}, {.name = "ds", .files = 24, .sample_bytes_mean = 2.0 * kMiB});
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                  {.read_threads = 2,
                   .batch_size = 3,
                   .prefetch_batches = 2,
                   .compute_s_per_step = 2e-4,
                   .epochs = 3,
                   .shuffle_seed = 1});
  gpu.start();
  ASSERT_TRUE(cw.w.env.run().ok());
  ASSERT_TRUE(gpu.status().ok());
  const ConsumerMetrics& m = gpu.metrics();
  EXPECT_EQ(m.steps, 24);
  EXPECT_EQ(m.files_read, 72u);
  ASSERT_EQ(m.epoch_au.size(), 3u);
  // Each epoch leaves out its own first step (wait + compute); AU is the epochs' mean, as
  // DLIO's train_au_mean_percentage.
  EXPECT_NEAR(m.excluded_s,
              m.step_io_wait_s[0] + m.step_io_wait_s[8] + m.step_io_wait_s[16] + 3 * 2e-4, 1e-15);
  EXPECT_NEAR(m.compute_time_s, 3 * 7 * 2e-4, 1e-15);
  EXPECT_NEAR(m.au, (m.epoch_au[0] + m.epoch_au[1] + m.epoch_au[2]) / 3, 1e-15);
  EXPECT_GT(m.au, 0);
  EXPECT_LT(m.au, 1);
  // Each epoch reads every file once, in a different order.
  EXPECT_NE(gpu.epoch_files(0), gpu.epoch_files(1));
  for (int e = 0; e < 3; ++e) {
    std::vector<size_t> files = gpu.epoch_files(e);
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files.size(), 24u);
    EXPECT_EQ(std::unique(files.begin(), files.end()), files.end());
  }
}

TEST(GpuConsumer, RanksReadDisjointShards) {
  ConsumerWorld cw(1, {}, {.name = "ds", .files = 42, .sample_bytes_mean = double(kMiB)});
  std::vector<std::unique_ptr<GpuConsumer>> gpus;
  const uint64_t shuffle_seed = cw.w.env.random().next_u64();
  for (int r = 0; r < 4; ++r) {
    gpus.push_back(
        std::make_unique<GpuConsumer>(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                                      GpuConsumerOptions{.name = "gpu" + std::to_string(r),
                                                         .rank = r,
                                                         .accelerators = 4,
                                                         .read_threads = 2,
                                                         .batch_size = 2,
                                                         .compute_s_per_step = 1e-3,
                                                         .shuffle_seed = shuffle_seed}));
    gpus.back()->start();
  }
  ASSERT_TRUE(cw.w.env.run().ok());
  std::set<size_t> seen;
  for (const auto& g : gpus) {
    ASSERT_TRUE(g->status().ok());
    EXPECT_EQ(g->files_per_rank(), 10);  // 42 / 4; two files are left out
    EXPECT_EQ(g->metrics().steps, 5);
    for (size_t f : g->epoch_files(0)) EXPECT_TRUE(seen.insert(f).second) << f;
  }
  EXPECT_EQ(seen.size(), 40u);
  EXPECT_EQ(cw.client->stats().files_read, 40u);
}

ConsumerMetrics run_once(uint64_t world_seed, uint64_t shuffle_seed) {
  test::HardwareSpec hw;
  hw.device_bytes_per_s = 3e9;
  ConsumerWorld cw(world_seed, hw,
                   {.name = "ds",
                    .files = 48,
                    .sample_bytes_mean = 3.0 * kMiB,
                    .sample_bytes_stddev = 1.5 * kMiB});
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                  {.read_threads = 3,
                   .batch_size = 2,
                   .prefetch_batches = 2,
                   .compute_s_per_step = 1.5e-3,
                   .epochs = 2,
                   .shuffle_seed = shuffle_seed});
  gpu.start();
  EXPECT_TRUE(cw.w.env.run().ok());
  EXPECT_TRUE(gpu.status().ok());
  return gpu.metrics();
}

TEST(GpuConsumer, SameSeedSameTimings) {
  const ConsumerMetrics a = run_once(1, 77);
  const ConsumerMetrics b = run_once(1, 77);
  EXPECT_EQ(a.step_io_wait_s, b.step_io_wait_s);
  EXPECT_EQ(a.file_read_latency_s, b.file_read_latency_s);
  EXPECT_EQ(a.au, b.au);
  EXPECT_EQ(a.total_run_time_s, b.total_run_time_s);
  EXPECT_EQ(a.bytes_read, b.bytes_read);
  const ConsumerMetrics c = run_once(1, 78);  // another shuffle: other file order
  EXPECT_NE(a.file_read_latency_s, c.file_read_latency_s);
  EXPECT_EQ(a.bytes_read, c.bytes_read);  // the same files, all of them
}

TEST(GpuConsumer, AFailedReadEndsTheRunWithItsError) {
  // The store holds the first 8 files of the 16 the consumer expects.
  ConsumerWorld cw(1, {}, {.name = "ds", .files = 8, .sample_bytes_mean = double(kMiB)});
  const Dataset expected =
      test::make_dataset({.name = "ds", .files = 16, .sample_bytes_mean = double(kMiB)});
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, expected,
                  {.read_threads = 3,
                   .batch_size = 1,
                   .prefetch_batches = 1,
                   .compute_s_per_step = 0.01,
                   .shuffle_seed = 3});
  gpu.start();
  const Status run = cw.w.env.run();
  ASSERT_TRUE(run.ok()) << run.to_string();  // no deadlock: every reader stopped
  EXPECT_EQ(gpu.status().code(), Status::Code::kNotFound) << gpu.status().to_string();
  EXPECT_LT(gpu.metrics().steps, 16);
}

TEST(GpuConsumer, RejectsAShardSmallerThanABatch) {
  ConsumerWorld cw(1, {}, {.name = "ds", .files = 4, .sample_bytes_mean = double(kMiB)});
  GpuConsumer gpu(cw.w.env, cw.w.client_host, *cw.client, cw.dataset,
                  {.accelerators = 2, .batch_size = 3});
  gpu.start();
  ASSERT_TRUE(cw.w.env.run().ok());
  EXPECT_EQ(gpu.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(gpu.status().message().find("smaller than one batch"), std::string::npos);
}

}  // namespace
}  // namespace granary::services

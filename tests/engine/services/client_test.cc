#include "engine/services/client.h"

#include <gtest/gtest.h>

#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

struct PfsWorld {
  explicit PfsWorld(const test::HardwareSpec& hw, const DatasetSpec& spec, int stripe_count)
      : w(5, hw), dataset(test::make_dataset(spec)) {
    std::vector<layout::Ost> pool;
    for (int d = 0; d < w.device_count(); ++d) {
      pool.push_back({uint32_t(d), uint32_t(d / hw.devices_per_server), test::kTiB, test::kTiB,
                      layout::OstState::kActive});
    }
    Result<layout::OstAllocator> allocator = layout::OstAllocator::create(pool, {});
    EXPECT_TRUE(allocator.ok());
    Random rng(11);
    Result<PfsLayouts> l = allocate_pfs_layouts(
        dataset, *allocator, {.stripe_size_bytes = kMiB, .stripe_count = stripe_count}, rng);
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    layouts = std::move(l).value();
    EXPECT_TRUE(populate_pfs(dataset, layouts, w.stores).ok());
    mds_host = w.env.add_host("mds", 8, 25e9, 5e-6);
    mds = std::make_unique<MetadataService>(w.env, mds_host, dataset.sizes_by_path(),
                                            MetadataServiceOptions{.endpoint_name = "mds.0",
                                                                   .parallel_ops = 2,
                                                                   .open_time_s = 50e-6,
                                                                   .close_time_s = 50e-6,
                                                                   .create_time_s = 50e-6,
                                                                   .stat_time_s = 50e-6});
    mds->start();
    w.start_osts();
  }
  test::World w;
  Dataset dataset;
  PfsLayouts layouts;
  HostId mds_host = 0;
  std::unique_ptr<MetadataService> mds;
};

TEST(StorageClient, PfsOpensOnceThenStripesOverTheOsts) {
  test::HardwareSpec hw;
  hw.servers = 2;
  hw.devices_per_server = 2;
  PfsWorld p(hw, {.name = "pfs", .files = 6, .sample_bytes_mean = 5.5 * kMiB}, 2);
  StorageClient client(p.w.env, p.w.client_host,
                       PfsBackend{.layouts = &p.layouts, .max_request_bytes = kMiB}, {});
  Status close_twice;
  p.w.env.spawn(p.w.client_host, "reader", [&] {
    for (int pass = 0; pass < 2; ++pass) {
      for (const DatasetFile& f : p.dataset.files()) {
        Result<FileRead> r = client.read_file(f.path, f.size_bytes);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        EXPECT_EQ(r->bytes, f.size_bytes);
        EXPECT_EQ(r->requests, 6u);  // 5.5 MiB in 1 MiB RPCs over 2 stripes: 3 + 3
      }
    }
    for (const DatasetFile& f : p.dataset.files()) EXPECT_TRUE(client.close_file(f.path).ok());
    close_twice = client.close_file(p.dataset.files()[0].path);
  });
  ASSERT_TRUE(p.w.env.run().ok());
  EXPECT_EQ(p.mds->stats().opens, 6u);  // the second pass reuses the handles
  EXPECT_EQ(p.mds->stats().closes, 6u);
  EXPECT_EQ(close_twice.code(), Status::Code::kInvalidArgument);
  uint64_t served = 0;
  for (const auto& ost : p.w.osds) {
    served += ost->stats().bytes_sent;
    EXPECT_GT(ost->stats().requests, 0u) << ost->endpoint_name();  // RR spreads the stripes
  }
  EXPECT_EQ(served, 2 * p.dataset.total_bytes());
  EXPECT_EQ(client.stats().metadata_ops, 12u);
}

TEST(StorageClient, PfsSpreadsFilesOverMetadataServers) {
  // Lustre DNE: with two metadata servers each file's operations go to the one its path
  // hashes to, so both serve and every open finds its file.
  test::HardwareSpec hw;
  hw.servers = 2;
  PfsWorld p(hw, {.name = "pfs", .files = 32, .sample_bytes_mean = kMiB}, 1);
  MetadataService second(p.w.env, p.mds_host, p.dataset.sizes_by_path(),
                         MetadataServiceOptions{.endpoint_name = "mds.1",
                                                .parallel_ops = 2,
                                                .open_time_s = 50e-6,
                                                .close_time_s = 50e-6,
                                                .create_time_s = 50e-6,
                                                .stat_time_s = 50e-6});
  second.start();
  PfsBackend backend{.layouts = &p.layouts, .max_request_bytes = kMiB};
  backend.mds_count = 2;
  StorageClient client(p.w.env, p.w.client_host, backend, {});
  p.w.env.spawn(p.w.client_host, "reader", [&] {
    for (const DatasetFile& f : p.dataset.files()) {
      Result<FileRead> r = client.read_file(f.path, f.size_bytes);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_TRUE(client.close_file(f.path).ok());
    }
  });
  ASSERT_TRUE(p.w.env.run().ok());
  EXPECT_EQ(p.mds->stats().opens + second.stats().opens, 32u);
  EXPECT_GT(p.mds->stats().opens, 4u);
  EXPECT_GT(second.stats().opens, 4u);
  EXPECT_EQ(p.mds->stats().errors + second.stats().errors, 0u);
}

TEST(StorageClient, PfsUnknownFileFailsAtTheMds) {
  test::HardwareSpec hw;
  PfsWorld p(hw, {.name = "pfs", .files = 1, .sample_bytes_mean = kMiB}, 1);
  StorageClient client(p.w.env, p.w.client_host, PfsBackend{.layouts = &p.layouts}, {});
  Status missing, wrong_size;
  p.w.env.spawn(p.w.client_host, "reader", [&] {
    missing = client.read_file("pfs/nothing", 10).status();
    wrong_size = client.read_file(p.dataset.files()[0].path, 10).status();
  });
  ASSERT_TRUE(p.w.env.run().ok());
  EXPECT_EQ(missing.code(), Status::Code::kNotFound);
  EXPECT_EQ(missing.message(), "mds.0: no such file pfs/nothing");
  EXPECT_EQ(wrong_size.code(), Status::Code::kCorruption);
  EXPECT_EQ(p.mds->stats().errors, 1u);
}

// NFS: requests of rsize to the file's head; the window bounds the requests in flight.
TEST(StorageClient, NfsReadsInWindowsFromTheFilesHead) {
  auto latency = [](int window, double cpu_s_per_byte = 0) {
    test::HardwareSpec hw;
    hw.servers = 2;
    hw.device_latency_s = 0;
    hw.device_bytes_per_s = 1e9;
    test::World w(1, hw);
    const Dataset dataset =
        test::make_dataset({.name = "nfs", .files = 8, .sample_bytes_mean = 8.0 * kMiB});
    EXPECT_TRUE(populate_nfs(dataset, w.stores).ok());
    w.start_nfs_heads();
    StorageClient client(w.env, w.client_host,
                         NfsBackend{.heads = 2, .rsize_bytes = kMiB, .window_requests = window},
                         {.cpu_s_per_byte = cpu_s_per_byte});
    w.env.spawn(w.client_host, "reader", [&] {
      for (const DatasetFile& f : dataset.files()) {
        Result<FileRead> r = client.read_file(f.path, f.size_bytes);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        EXPECT_EQ(r->requests, 8u);
      }
    });
    EXPECT_TRUE(w.env.run().ok());
    uint64_t per_head[2] = {w.osds[0]->stats().bytes_sent, w.osds[1]->stats().bytes_sent};
    uint64_t expected[2] = {0, 0};
    for (const DatasetFile& f : dataset.files()) expected[nfs_head_of(f.path, 2)] += f.size_bytes;
    EXPECT_EQ(per_head[0], expected[0]);
    EXPECT_EQ(per_head[1], expected[1]);
    const std::vector<double> l = client.stats().file_latency_s;
    return l.front();
  };
  const double one = latency(1);
  const double eight = latency(8);
  // Window 1: eight round trips, each 1 MiB from the drive (1.048576 ms) plus ~20 us.
  EXPECT_NEAR(one, 8 * (kMiB / 1e9 + 2 * 5e-6 + 256 / 25e9), 1e-9);
  // Window 8: the drive streams back to back; one round trip of latency overall.
  EXPECT_NEAR(eight, 8 * kMiB / 1e9 + 2 * 5e-6 + 8 * 256 / 25e9, 1e-6);
  // A protocol that copies costs the client CPU per byte before each request goes: 100 us per
  // MiB adds 8 x 0.1 ms to the window-1 read (the host's core runs at 1 s of work per second).
  const double copying = latency(1, 100e-6 / kMiB);
  EXPECT_NEAR(copying - one, 8 * 100e-6, 1e-9);
}

// Design local: every node holds every file; a client with its own head reads all of them
// there, whatever head the path's hash would pick.
TEST(StorageClient, NfsLocalHeadReadsEveryFileFromTheNodesOwnDrives) {
  test::HardwareSpec hw;
  hw.servers = 2;
  test::World w(1, hw);
  const Dataset dataset =
      test::make_dataset({.name = "local", .files = 16, .sample_bytes_mean = 2.0 * kMiB});
  for (const DatasetFile& f : dataset.files()) {
    for (auto& [head, store] : w.stores) ASSERT_TRUE(store.put(f.path, f.size_bytes).ok());
  }
  w.start_nfs_heads();
  StorageClient client(
      w.env, w.client_host,
      NfsBackend{.heads = 2, .rsize_bytes = kMiB, .window_requests = 4, .local_head = 1}, {});
  uint64_t total = 0;
  int hashed_to_head0 = 0;
  w.env.spawn(w.client_host, "reader", [&] {
    for (const DatasetFile& f : dataset.files()) {
      Result<FileRead> r = client.read_file(f.path, f.size_bytes);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      total += f.size_bytes;
      hashed_to_head0 += nfs_head_of(f.path, 2) == 0;
    }
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_GT(hashed_to_head0, 0);  // the hash alone would have sent some files elsewhere
  EXPECT_EQ(w.osds[0]->stats().bytes_sent, 0u);
  EXPECT_EQ(w.osds[1]->stats().bytes_sent, total);
}

TEST(StorageClient, ConcurrentReadersShareOneClient) {
  test::HardwareSpec hw;
  hw.servers = 2;
  hw.devices_per_server = 2;
  test::World w(2, hw);
  placement::Ring ring = test::make_ring(4, 1, 2);
  const Dataset dataset = test::make_dataset(
      {.name = "ds", .files = 40, .sample_bytes_mean = 6.0 * kMiB, .sample_bytes_stddev = kMiB});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ASSERT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
  w.start_osds();
  StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0},
                       {.name = "gpu-node", .cpu_s_per_op = 5e-6});
  for (int k = 0; k < 4; ++k) {
    w.env.spawn(w.client_host, "reader" + std::to_string(k), [&, k] {
      for (size_t i = size_t(k); i < dataset.files().size(); i += 4) {
        const DatasetFile& f = dataset.files()[i];
        Result<FileRead> r = client.read_file(f.path, f.size_bytes);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        EXPECT_EQ(r->bytes, f.size_bytes);
      }
    });
  }
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(client.stats().files_read, 40u);
  EXPECT_EQ(client.stats().bytes_read, dataset.total_bytes());
  EXPECT_EQ(client.stats().file_latency_s.size(), 40u);
}

}  // namespace
}  // namespace granary::services

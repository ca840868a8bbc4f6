#include "engine/services/osd.h"

#include <gtest/gtest.h>

#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

// One reader, one OSD, files of one object each, read one after the other: every read takes
// exactly the closed form of the MemoryEnv's models.
TEST(OsdService, SingleReaderMatchesTheClosedForm) {
  test::HardwareSpec hw;
  hw.server_cpu_s_per_op = 20e-6;
  test::World w(1, hw);
  placement::Ring ring = test::make_ring(1, 1);
  const uint64_t size = 3 * kMiB;
  const Dataset dataset = test::make_dataset(
      {.name = "ds", .files = 16, .samples_per_file = 1, .sample_bytes_mean = double(size)});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ASSERT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
  w.start_osds();
  StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0}, {});
  std::vector<double> latencies;
  w.env.spawn(w.client_host, "reader", [&] {
    for (const DatasetFile& f : dataset.files()) {
      Result<FileRead> r = client.read_file(f.path, f.size_bytes);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_EQ(r->bytes, size);
      EXPECT_EQ(r->requests, 1u);
      latencies.push_back(r->latency_s);
    }
  });
  ASSERT_TRUE(w.env.run().ok());

  const double request_s =
      double(Message::kDefaultHeaderBytes) / hw.client_nic_bytes_per_s + hw.client_latency_s;
  const double device_s = hw.device_latency_s + double(size) / hw.device_bytes_per_s;
  // The server's NIC (25 GB/s) is faster than the drive (2 GB/s): the drive sets the pace.
  const double per_file_s = request_s + hw.server_cpu_s_per_op + device_s + hw.server_latency_s;
  ASSERT_EQ(latencies.size(), 16u);
  for (double l : latencies) EXPECT_NEAR(l, per_file_s, 1e-12);
  EXPECT_NEAR(w.env.now_s(), 16 * per_file_s, 1e-10);
  EXPECT_EQ(w.osds[0]->stats().requests, 16u);
  EXPECT_EQ(w.osds[0]->stats().bytes_sent, 16 * size);
  const ClientStats stats = client.stats();
  EXPECT_EQ(stats.files_read, 16u);
  EXPECT_EQ(stats.bytes_read, 16 * size);
  EXPECT_EQ(stats.file_latency_s, latencies);
}

// The protocol's server CPU per byte is charged with the per-request CPU on each request's
// length: one reader's file latency grows by exactly size x cpu_s_per_byte (reads), and a
// write pays it on its bytes too.
TEST(OsdService, ServerCpuPerByteAddsToEachRequest) {
  const uint64_t size = 3 * kMiB;
  auto run = [&](double cpu_s_per_byte) {
    test::HardwareSpec hw;
    hw.server_cpu_s_per_op = 20e-6;
    hw.server_cpu_s_per_byte = cpu_s_per_byte;
    test::World w(1, hw);
    placement::Ring ring = test::make_ring(1, 1);
    const Dataset dataset = test::make_dataset(
        {.name = "ds", .files = 4, .samples_per_file = 1, .sample_bytes_mean = double(size)});
    const layout::RbdLayout layout = layout::RbdLayout::default_layout();
    EXPECT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
    w.start_writable_services([](int d) { return osd_endpoint_name(d); });
    StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0},
                         {});
    std::vector<double> latencies;
    double write_s = 0;
    w.env.spawn(w.client_host, "reader", [&] {
      for (const DatasetFile& f : dataset.files()) {
        Result<FileRead> r = client.read_file(f.path, f.size_bytes);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        latencies.push_back(r->latency_s);
      }
      const double t0 = w.env.now_s();
      EXPECT_TRUE(client.write_file("new/file", size).ok());
      write_s = w.env.now_s() - t0;
    });
    EXPECT_TRUE(w.env.run().ok());
    return std::make_pair(latencies, write_s);
  };
  const double per_byte_s = 1e-9;  // 1 ms per MB: ~3.1 ms a 3 MiB request
  const auto [base, base_write_s] = run(0);
  const auto [costly, costly_write_s] = run(per_byte_s);
  ASSERT_EQ(base.size(), 4u);
  ASSERT_EQ(costly.size(), 4u);
  for (size_t i = 0; i < base.size(); ++i) {
    EXPECT_NEAR(costly[i] - base[i], double(size) * per_byte_s, 1e-12);
  }
  EXPECT_NEAR(costly_write_s - base_write_s, double(size) * per_byte_s, 1e-9);
}

// Eight readers keep one drive busy: the aggregate rate is the drive's bandwidth; one reader
// leaves it idle between requests.
TEST(OsdService, ConcurrentReadersSaturateTheDevice) {
  auto throughput = [](int readers) {
    test::HardwareSpec hw;
    hw.device_bytes_per_s = 1e9;
    hw.device_latency_s = 0;
    hw.server_latency_s = 10e-6;
    hw.client_latency_s = 10e-6;
    test::World w(1, hw);
    placement::Ring ring = test::make_ring(1, 1);
    const Dataset dataset =
        test::make_dataset({.name = "ds", .files = 256, .sample_bytes_mean = 256.0 * 1024});
    const layout::RbdLayout layout = layout::RbdLayout::default_layout();
    EXPECT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
    w.start_osds();
    StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0},
                         {});
    for (int k = 0; k < readers; ++k) {
      w.env.spawn(w.client_host, "reader" + std::to_string(k), [&, k] {
        for (size_t i = static_cast<size_t>(k); i < dataset.files().size();
             i += static_cast<size_t>(readers)) {
          const DatasetFile& f = dataset.files()[i];
          EXPECT_TRUE(client.read_file(f.path, f.size_bytes).ok());
        }
      });
    }
    EXPECT_TRUE(w.env.run().ok());
    EXPECT_EQ(client.stats().bytes_read, dataset.total_bytes());
    return double(dataset.total_bytes()) / w.env.now_s();
  };
  const double one = throughput(1);
  const double eight = throughput(8);
  EXPECT_GT(eight, 0.999 * 1e9);
  EXPECT_LE(eight, 1e9 * (1 + 1e-12));
  // One reader: 262 us on the drive per 20.01 us of round trip.
  const double size = 256.0 * 1024;
  EXPECT_NEAR(one, size / (size / 1e9 + 20e-6 + 256 / 25e9), 1e3);
}

TEST(OsdService, ErrorRepliesBecomeClientErrors) {
  test::World w(1);
  placement::Ring ring = test::make_ring(1, 1);
  const Dataset dataset = test::make_dataset({.name = "ds", .files = 2, .sample_bytes_mean = 1e6});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ASSERT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
  w.start_osds();
  StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0}, {});
  Status missing, too_long, fine;
  w.env.spawn(w.client_host, "reader", [&] {
    missing = client.read_file("ds/no_such_file", 1000).status();
    const DatasetFile& f = dataset.files()[0];
    too_long = client.read_file(f.path, f.size_bytes + 1).status();
    fine = client.read_file(f.path, f.size_bytes).status();
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(missing.code(), Status::Code::kNotFound) << missing.to_string();
  EXPECT_NE(missing.message().find("osd.0: no object ds/no_such_file.0000000000000000"),
            std::string::npos)
      << missing.to_string();
  EXPECT_EQ(too_long.code(), Status::Code::kInvalidArgument) << too_long.to_string();
  EXPECT_NE(too_long.message().find("goes past the end"), std::string::npos);
  EXPECT_TRUE(fine.ok()) << fine.to_string();
  EXPECT_EQ(w.osds[0]->stats().errors, 2u);
  EXPECT_EQ(w.osds[0]->stats().requests, 3u);
  EXPECT_EQ(client.stats().errors, 2u);
  EXPECT_EQ(client.stats().files_read, 1u);
}

// A multi-object file: all its object requests go out at once and every byte comes back.
TEST(OsdService, ServesEveryObjectOfAStripedFile) {
  test::HardwareSpec hw;
  hw.servers = 2;
  hw.devices_per_server = 2;
  test::World w(3, hw);
  placement::Ring ring = test::make_ring(4, 2, 2);
  const Dataset dataset =
      test::make_dataset({.name = "big", .files = 4, .sample_bytes_mean = 37.5 * kMiB});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ASSERT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
  // Every object is stored twice (2 replicas) on distinct devices.
  size_t objects = 0;
  for (const auto& [id, store] : w.stores) objects += store.object_count();
  EXPECT_EQ(objects, 2 * 4 * 10u);  // 37.5 MiB -> 10 objects of <= 4 MiB
  w.start_osds();
  StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0}, {});
  w.env.spawn(w.client_host, "reader", [&] {
    for (const DatasetFile& f : dataset.files()) {
      Result<FileRead> r = client.read_file(f.path, f.size_bytes);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_EQ(r->bytes, f.size_bytes);
      EXPECT_EQ(r->requests, 10u);
    }
  });
  ASSERT_TRUE(w.env.run().ok());
  uint64_t served = 0, requests = 0;
  for (const auto& osd : w.osds) {
    served += osd->stats().bytes_sent;
    requests += osd->stats().requests;
  }
  EXPECT_EQ(served, dataset.total_bytes());
  EXPECT_EQ(requests, 40u);
  // Only primaries serve: the served requests per OSD match the placement's primaries.
  std::map<std::string, uint64_t> expected;
  for (const DatasetFile& f : dataset.files()) {
    Result<std::vector<ObjectRead>> reads = rados_reads(layout, ring, f.path, 0, f.size_bytes);
    ASSERT_TRUE(reads.ok());
    for (const ObjectRead& r : *reads) ++expected[r.endpoint];
  }
  for (const auto& osd : w.osds) {
    EXPECT_EQ(osd->stats().requests, expected[osd->endpoint_name()]) << osd->endpoint_name();
  }
}

TEST(OsdService, ShutdownStopsEveryWorker) {
  test::HardwareSpec hw;
  hw.osd_workers = 3;
  test::World w(1, hw);
  placement::Ring ring = test::make_ring(1, 1);
  const Dataset dataset = test::make_dataset({.name = "ds", .files = 1, .sample_bytes_mean = 1e6});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ASSERT_TRUE(populate_rados(dataset, layout, ring, w.stores).ok());
  w.start_osds(TaskOptions{.daemon = false});  // the run ends only if every worker stops
  StorageClient client(w.env, w.client_host, RadosBackend{layout, &ring, 0, {}, nullptr, 1.0}, {});
  Status after;
  w.env.spawn(w.client_host, "reader", [&] {
    const DatasetFile& f = dataset.files()[0];
    EXPECT_TRUE(client.read_file(f.path, f.size_bytes).ok());
    w.env.send(w.client_host, "osd.0", Message{Shutdown{}, {}});
    w.env.sleep_s(1);
    // A stopped OSD answers nothing.
    Endpoint& ep = w.env.endpoint(w.client_host, "late");
    ReadRequest late;
    late.request_id = 99;
    late.object = "ds/file_00000000.0000000000000000";
    late.length = 10;
    late.reply_to = "late";
    w.env.send(w.client_host, "osd.0", Message{late, {}});
    after = ep.recv(1.0).status();
  });
  const Status run = w.env.run();
  ASSERT_TRUE(run.ok()) << run.to_string();
  EXPECT_EQ(after.code(), Status::Code::kNotFound);  // timed out
  EXPECT_EQ(w.osds[0]->stats().requests, 1u);
}

}  // namespace
}  // namespace granary::services

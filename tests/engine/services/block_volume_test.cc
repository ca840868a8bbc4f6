// BlockVolume: RBD image I/O through the rados client, clones reading from their parent and
// copying objects up on first write (librbd's behaviour), with known byte counts.
#include "engine/services/block_volume.h"

#include <gtest/gtest.h>

#include <memory>

#include "engine/services/dataset.h"
#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

uint64_t sum(const test::World& w, uint64_t OsdStats::*field) {
  uint64_t n = 0;
  for (const auto& o : w.osds) n += o->stats().*field;
  return n;
}

// Three servers, three replicas, a 16 MiB parent image "golden/file_00000000" stored on them.
struct CloneWorld {
  test::World w{3, {.servers = 3}};
  placement::Ring ring = test::make_ring(3, 3);
  layout::RbdLayout layout = layout::RbdLayout::default_layout();
  Dataset golden;
  std::string parent;
  std::unique_ptr<StorageClient> client;

  CloneWorld() : golden(make_golden(w)) {
    parent = golden.files().front().path;
    EXPECT_TRUE(populate_rados(golden, layout, ring, w.stores).ok());
    w.start_writable_services([](int d) { return osd_endpoint_name(d); });
    client = std::make_unique<StorageClient>(w.env, w.client_host,
                                             RadosBackend{layout, &ring, 0, {}, nullptr, 1.0},
                                             StorageClientOptions{.name = "c"});
  }
  static Dataset make_golden(test::World& w) {
    DatasetSpec spec{.name = "golden",
                     .files = 1,
                     .samples_per_file = 1,
                     .sample_bytes_mean = 16.0 * kMiB,
                     .sample_bytes_stddev = 0};
    return *Dataset::create(spec, w.env.random());
  }
  std::unique_ptr<BlockVolume> clone(const std::string& name) {
    auto v = BlockVolume::open(w.env, *client, layout,
                               {.image = name, .size_bytes = 16 * kMiB, .parent = parent});
    EXPECT_TRUE(v.ok()) << v.status().to_string();
    return std::move(*v);
  }
};

TEST(BlockVolume, CloneReadsItsParentUntilWritten) {
  CloneWorld cw;
  auto vol = cw.clone("clones/node0");
  Result<BlockIo> r = Status::io_error("not run");
  cw.w.env.spawn(cw.w.client_host, "io", [&] { r = vol->read(5 * kMiB, 4096); });
  cw.w.env.run();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->bytes, 4096u);
  EXPECT_GT(r->latency_s, 0);
  EXPECT_EQ(vol->stats().parent_reads, 1u);
  EXPECT_EQ(sum(cw.w, &OsdStats::writes), 0u);
  EXPECT_FALSE(vol->owns_object(1));
}

TEST(BlockVolume, FirstWriteCopiesTheObjectUpOnce) {
  CloneWorld cw;
  auto vol = cw.clone("clones/node0");
  Result<BlockIo> first = Status::io_error("not run"), second = first, after = first;
  cw.w.env.spawn(cw.w.client_host, "io", [&] {
    first = vol->write(5 * kMiB, 4096);
    second = vol->write(5 * kMiB + 8192, 4096);
    after = vol->read(5 * kMiB, 4096);
  });
  cw.w.env.run();
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  ASSERT_TRUE(after.ok()) << after.status().to_string();
  EXPECT_EQ(first->copyups, 1);
  EXPECT_EQ(second->copyups, 0);
  // The copy-up: object 1 (4 MiB) read from the parent and written whole to three replicas,
  // carrying the first write; the second write: 4 KiB on three replicas.
  EXPECT_EQ(sum(cw.w, &OsdStats::bytes_written), 3 * (4 * kMiB + 4096));
  EXPECT_GT(first->latency_s, second->latency_s);
  const BlockVolumeStats st = vol->stats();
  EXPECT_EQ(st.copyups, 1u);
  EXPECT_EQ(st.copyup_bytes, 4 * kMiB);
  EXPECT_EQ(st.parent_reads, 0u);  // the read after the write is the clone's own
  EXPECT_TRUE(vol->owns_object(1));
  EXPECT_FALSE(vol->owns_object(0));
}

TEST(BlockVolume, ConcurrentWritesShareOneCopyUp) {
  CloneWorld cw;
  auto vol = cw.clone("clones/node0");
  int ok = 0, copyups = 0;
  for (int i = 0; i < 8; ++i) {
    cw.w.env.spawn(cw.w.client_host, "io" + std::to_string(i), [&, i] {
      auto r = vol->write(8 * kMiB + i * 4096, 4096);
      if (r.ok()) {
        ++ok;
        copyups += r->copyups;
      }
    });
  }
  cw.w.env.run();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(copyups, 1);
  EXPECT_EQ(vol->stats().copyups, 1u);
  // One whole object, plus the seven writes that waited for the copy-up.
  EXPECT_EQ(sum(cw.w, &OsdStats::bytes_written), 3 * (4 * kMiB + 7 * 4096));
}

TEST(BlockVolume, ThickImageReadsAndWritesItsOwnObjects) {
  CloneWorld cw;
  // The parent itself opened as a plain image: every object is its own.
  auto vol = BlockVolume::open(cw.w.env, *cw.client, cw.layout,
                               {.image = cw.parent, .size_bytes = 16 * kMiB, .parent = ""});
  ASSERT_TRUE(vol.ok());
  Result<BlockIo> r = Status::io_error("not run"), wr = r, span = r;
  cw.w.env.spawn(cw.w.client_host, "io", [&] {
    r = (*vol)->read(12 * kMiB, 65536);
    wr = (*vol)->write(0, 4096);
    span = (*vol)->read(4 * kMiB - 4096, 8192);  // two objects
  });
  cw.w.env.run();
  ASSERT_TRUE(r.ok() && wr.ok() && span.ok());
  EXPECT_EQ(wr->copyups, 0);
  EXPECT_EQ(sum(cw.w, &OsdStats::bytes_written), 3 * 4096u);
  EXPECT_EQ(cw.client->stats().requests, 3u);  // 1 + 2 object reads
}

TEST(BlockVolume, RejectsRangesOutsideTheImage) {
  CloneWorld cw;
  auto vol = cw.clone("clones/node0");
  Result<BlockIo> past = Status::io_error("not run"), empty = past;
  cw.w.env.spawn(cw.w.client_host, "io", [&] {
    past = vol->read(16 * kMiB - 4096, 8192);
    empty = vol->write(0, 0);
  });
  cw.w.env.run();
  EXPECT_EQ(past.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(past.status().message().find("leaves the image"), std::string::npos);
  EXPECT_EQ(empty.status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(BlockVolume::open(cw.w.env, *cw.client, cw.layout,
                                 {.image = "x", .size_bytes = 0, .parent = ""})
                   .ok());
}

TEST(BlockVolume, NeedsARadosBackend) {
  test::World w(1, {.servers = 1});
  w.start_writable_services([](int d) { return nfs_endpoint_name(d); });
  StorageClient nfs(w.env, w.client_host, NfsBackend{1, kMiB, 4}, {.name = "c"});
  Result<uint64_t> r = Status::io_error("not run");
  w.env.spawn(w.client_host, "io", [&] { r = nfs.read_extent("vol", 0, 4096); });
  w.env.run();
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace granary::services

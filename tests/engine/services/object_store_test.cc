#include "engine/services/object_store.h"

#include <gtest/gtest.h>

#include "engine/services/written_store.h"
#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

TEST(ObjectStore, AllocatesAlignedExtentsInOrder) {
  ObjectStore store(10000, {.alignment_bytes = 1000});
  ASSERT_TRUE(store.put("a", 1500).ok());
  ASSERT_TRUE(store.put("b", 0).ok());
  ASSERT_TRUE(store.put("c", 999).ok());
  EXPECT_EQ(store.find("a")->offset_bytes, 0u);
  EXPECT_EQ(store.find("b")->offset_bytes, 2000u);
  EXPECT_EQ(store.find("c")->offset_bytes, 2000u);  // after an empty object
  EXPECT_EQ(store.find("c")->size_bytes, 999u);
  EXPECT_EQ(store.used_bytes(), 2999u);
  EXPECT_EQ(store.put("a", 1).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store.put("d", 7001).code(), Status::Code::kIOError);  // 3000 + 7001 > 10000
  EXPECT_TRUE(store.put("d", 7000).ok());
  EXPECT_EQ(store.find("zz").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(store.object_count(), 4u);
}

TEST(ObjectStore, PopulateRadosStoresEveryReplica) {
  placement::Ring ring = test::make_ring(6, 3, 2);
  const Dataset dataset = test::make_dataset(
      {.name = "ds", .files = 10, .sample_bytes_mean = 9.0 * kMiB, .sample_bytes_stddev = kMiB});
  const layout::RbdLayout layout = layout::RbdLayout::default_layout();
  ObjectStores stores;
  for (int i = 0; i < 6; ++i) stores.emplace(i, ObjectStore(test::kTiB));
  ASSERT_TRUE(populate_rados(dataset, layout, ring, stores).ok());
  uint64_t bytes = 0;
  for (const auto& [id, s] : stores) {
    for (const DatasetFile& f : dataset.files()) {
      Result<std::vector<StoredObjectSpec>> objects =
          rados_objects(layout, ring, f.path, f.size_bytes);
      ASSERT_TRUE(objects.ok());
      for (const StoredObjectSpec& o : *objects) {
        const bool holds = std::find(o.holders.begin(), o.holders.end(), id) != o.holders.end();
        EXPECT_EQ(s.find(o.object).ok(), holds) << o.object << " on " << id;
        if (holds) bytes += s.find(o.object)->size_bytes;
      }
    }
  }
  EXPECT_EQ(bytes, 3 * dataset.total_bytes());
  // A store missing for a device of the placement is an error.
  ObjectStores partial;
  partial.emplace(0, ObjectStore(test::kTiB));
  EXPECT_EQ(populate_rados(dataset, layout, ring, partial).code(), Status::Code::kNotFound);
}

TEST(ObjectStore, PopulatePfsAndNfs) {
  const Dataset dataset =
      test::make_dataset({.name = "ds", .files = 5, .sample_bytes_mean = 2.5 * kMiB});
  PfsLayouts layouts;
  for (const DatasetFile& f : dataset.files()) {
    layouts.emplace(f.path, *layout::LustreFileLayout::create(kMiB, {2, 0}));
  }
  ObjectStores osts;
  for (int i = 0; i < 3; ++i) osts.emplace(i, ObjectStore(test::kTiB));
  ASSERT_TRUE(populate_pfs(dataset, layouts, osts).ok());
  EXPECT_EQ(osts.at(1).object_count(), 0u);
  const std::string f0 = dataset.files()[0].path;
  EXPECT_EQ(osts.at(2).find(f0 + ".stripe0")->size_bytes, 3 * kMiB / 2);  // stripes 0 and 2
  EXPECT_EQ(osts.at(0).find(f0 + ".stripe1")->size_bytes, kMiB);

  ObjectStores heads;
  for (int i = 0; i < 2; ++i) heads.emplace(i, ObjectStore(test::kTiB));
  ASSERT_TRUE(populate_nfs(dataset, heads).ok());
  for (const DatasetFile& f : dataset.files()) {
    EXPECT_TRUE(heads.at(nfs_head_of(f.path, 2)).find(f.path).ok());
  }
  EXPECT_EQ(heads.at(0).object_count() + heads.at(1).object_count(), 5u);
}

// The table-free index agrees with what populating stores would put, object for object.
TEST(DatasetObjectIndex, AgreesWithPopulatedStores) {
  placement::Ring ring = test::make_ring(6, 3, 2);
  const Dataset dataset = test::make_dataset({.name = "ds",
                                              .files = 12,
                                              .sample_bytes_mean = 9.0 * kMiB,
                                              .sample_bytes_stddev = 3 * kMiB});
  for (const layout::RbdLayout& layout :
       {layout::RbdLayout::default_layout(),
        *layout::RbdLayout::create(
            {.object_size_bytes = 4 * kMiB, .stripe_unit_bytes = kMiB, .stripe_count = 3})}) {
    const DatasetObjectIndex index(dataset, DatasetObjectIndex::Naming::kRados, layout);
    uint64_t bytes = 0;
    for (const DatasetFile& f : dataset.files()) {
      auto objects = rados_objects(layout, ring, f.path, f.size_bytes);
      ASSERT_TRUE(objects.ok());
      for (const StoredObjectSpec& o : *objects) {
        auto found = index.find(o.object);
        ASSERT_TRUE(found.ok()) << o.object;
        EXPECT_EQ(found->size_bytes, o.size_bytes) << o.object;
        bytes += found->size_bytes;
      }
      EXPECT_FALSE(index.find(rados_object_name(f.path, layout.num_objects(f.size_bytes))).ok());
    }
    EXPECT_GE(bytes, dataset.total_bytes());
  }
  PfsLayouts layouts;
  for (const DatasetFile& f : dataset.files())
    layouts.emplace(f.path, *layout::LustreFileLayout::create(kMiB, {2, 0, 1}));
  const DatasetObjectIndex pfs(dataset, DatasetObjectIndex::Naming::kPfs,
                               layout::RbdLayout::default_layout(), &layouts);
  for (const DatasetFile& f : dataset.files()) {
    for (const StoredObjectSpec& o : pfs_objects(layouts.at(f.path), f.path, f.size_bytes)) {
      EXPECT_EQ(pfs.find(o.object)->size_bytes, o.size_bytes) << o.object;
    }
    EXPECT_FALSE(pfs.find(f.path + ".stripe3").ok());
  }
  const DatasetObjectIndex nfs(dataset, DatasetObjectIndex::Naming::kNfs);
  EXPECT_EQ(nfs.find(dataset.files()[4].path)->size_bytes, dataset.files()[4].size_bytes);
  for (const char* bad : {"", "ds/file_", "ds/file_00000012", "ds/file_0000001",
                          "other/file_00000001", "ds/file_00000001.stripe0", "ds/file_00000001x"}) {
    EXPECT_FALSE(nfs.find(bad).ok()) << bad;
  }
}

TEST(FileMapping, NamesAndRequests) {
  EXPECT_EQ(rados_object_name("ds/file_00000001", 0x2a), "ds/file_00000001.000000000000002a");
  EXPECT_EQ(lustre_object_name("f", 3), "f.stripe3");
  EXPECT_EQ(osd_endpoint_name(7), "osd.7");
  EXPECT_EQ(ost_endpoint_name(7), "ost.7");
  const std::vector<ObjectRead> reads = nfs_reads("f", 3, 0, 2500, 1000);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[2].offset_bytes, 2000u);
  EXPECT_EQ(reads[2].length_bytes, 500u);
  EXPECT_EQ(reads[0].endpoint, "nfs.3");
  Result<std::vector<ObjectRead>> pfs =
      pfs_reads(*layout::LustreFileLayout::create(kMiB, {4, 9}), "f", 0, 3 * kMiB, kMiB / 2);
  ASSERT_TRUE(pfs.ok());
  ASSERT_EQ(pfs->size(), 6u);  // 2 MiB on ost.4 and 1 MiB on ost.9, in halves
  EXPECT_EQ((*pfs)[0].endpoint, "ost.4");
  EXPECT_EQ((*pfs)[3].offset_bytes, 3 * kMiB / 2);
  EXPECT_EQ((*pfs)[4].endpoint, "ost.9");
}

TEST(WrittenObjectStore, RewritingAnExtentIsIdempotentAndClearEmptiesTheDrive) {
  ObjectStore base(1ull << 40);
  ASSERT_TRUE(base.put("old", kMiB).ok());
  WrittenObjectStore store(1ull << 40, &base);
  auto first = store.write("ckpt.0", 0, 4 * kMiB, 4 * kMiB);
  ASSERT_TRUE(first.ok());
  const uint64_t used = store.used_bytes();
  // The same extent again (a resent write): the same device range, no new space.
  auto again = store.write("ckpt.0", 0, 4 * kMiB, 4 * kMiB);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].offset_bytes, (*first)[0].offset_bytes);
  EXPECT_EQ(store.used_bytes(), used);
  EXPECT_EQ(store.written_objects(), 1u);
  std::vector<std::pair<std::string, uint64_t>> listed;
  store.for_each_written([&](std::string_view name, const StoredObject& o) {
    listed.emplace_back(std::string(name), o.size_bytes);
  });
  EXPECT_EQ(listed, (std::vector<std::pair<std::string, uint64_t>>{{"ckpt.0", 4 * kMiB}}));
  // A replaced drive: nothing written survives; the base index still answers.
  store.clear();
  EXPECT_EQ(store.written_objects(), 0u);
  EXPECT_EQ(store.used_bytes(), 0u);
  EXPECT_FALSE(store.find("ckpt.0").ok());
  EXPECT_TRUE(store.find("old").ok());
}

}  // namespace
}  // namespace granary::services

#include "engine/redundancy/erasure.h"

#include <gtest/gtest.h>

namespace granary::redundancy {
namespace {

constexpr uint64_t kSu = 4096;

TEST(Erasure, ShardBytesRoundUpToWholeStripes) {
  const ErasureProfile p{8, 3, kSu};
  EXPECT_EQ(shard_bytes(p, 0), 0u);
  EXPECT_EQ(shard_bytes(p, 1), kSu);
  EXPECT_EQ(shard_bytes(p, 8 * kSu), kSu);
  EXPECT_EQ(shard_bytes(p, 8 * kSu + 1), 2 * kSu);
  // A 4 MiB object: 128 stripes of 32 KiB, 512 KiB a shard; 11 shards hold 5.5 MiB (1.375x).
  EXPECT_EQ(shard_bytes(p, 4u << 20), 512u << 10);
}

TEST(Erasure, CheckRejectsImpossibleProfiles) {
  EXPECT_TRUE((ErasureProfile{4, 2, kSu}).check().ok());
  EXPECT_FALSE((ErasureProfile{0, 2, kSu}).check().ok());
  EXPECT_FALSE((ErasureProfile{4, -1, kSu}).check().ok());
  EXPECT_FALSE((ErasureProfile{200, 60, kSu}).check().ok());
  EXPECT_FALSE((ErasureProfile{4, 2, 0}).check().ok());
}

TEST(Erasure, DataExtentsFollowTheStripeLayout) {
  const ErasureProfile p{4, 2, kSu};
  // A whole object of 3 stripes: each data shard holds 3 stripe units.
  auto whole = data_extents(p, 0, 3 * 4 * kSu);
  ASSERT_EQ(whole.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(whole[i].shard, i);
    EXPECT_EQ(whole[i].offset_bytes, 0u);
    EXPECT_EQ(whole[i].length_bytes, 3 * kSu);
  }
  // 100 bytes at 5000: chunk 1 of stripe 0, shard offset 5000 - 4096.
  auto small = data_extents(p, 5000, 100);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].shard, 1);
  EXPECT_EQ(small[0].offset_bytes, 5000u - kSu);
  EXPECT_EQ(small[0].length_bytes, 100u);
  // From inside chunk 3 of stripe 0 to inside chunk 2 of stripe 1.
  auto cross = data_extents(p, 3 * kSu + 10, kSu + 2 * kSu);
  uint64_t total = 0;
  for (const auto& e : cross) total += e.length_bytes;
  EXPECT_EQ(total, 3 * kSu);
  ASSERT_EQ(cross.size(), 4u);
  const uint64_t want[4][2] = {{kSu, kSu}, {kSu, kSu}, {kSu, 10}, {10, kSu - 10}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(cross[i].shard, i);
    EXPECT_EQ(cross[i].offset_bytes, want[i][0]) << i;
    EXPECT_EQ(cross[i].length_bytes, want[i][1]) << i;
  }
}

TEST(Erasure, FullStripeWritesReadNothingAndWriteKPlusMOverK) {
  const ErasureProfile p{8, 3, kSu};
  const uint64_t object = 4u << 20;
  const WritePlan w = plan_write(p, 0, 0, object);
  EXPECT_TRUE(w.reads.empty());
  EXPECT_EQ(w.partial_stripes, 0u);
  EXPECT_EQ(w.stripes, 128u);
  EXPECT_EQ(w.encode_bytes, object);
  // The EC overhead: (k + m) / k of the data lands on the drives.
  EXPECT_EQ(total_bytes(w.writes), object / 8 * 11);
  EXPECT_EQ(w.writes.size(), 11u);
}

TEST(Erasure, PartialStripeOverwriteReadsTheRestOfTheStripe) {
  const ErasureProfile p{4, 2, kSu};
  const uint64_t object = 16 * 4 * kSu;  // 16 stripes exist
  // 100 bytes inside chunk 2 of stripe 5: read the other 3 data chunks of stripe 5 (chunk 2 is
  // partly kept, so it is read too), write chunk 2 and both coding chunks.
  const WritePlan w = plan_write(p, object, 5 * 4 * kSu + 2 * kSu + 7, 100);
  EXPECT_EQ(w.stripes, 1u);
  EXPECT_EQ(w.partial_stripes, 1u);
  EXPECT_EQ(total_bytes(w.reads), 4 * kSu);
  EXPECT_EQ(total_bytes(w.writes), 3 * kSu);
  EXPECT_EQ(w.encode_bytes, 4 * kSu);
  // Appending past the end reads nothing: there is no old data.
  const WritePlan append = plan_write(p, object, object, 100);
  EXPECT_TRUE(append.reads.empty());
  EXPECT_EQ(append.partial_stripes, 0u);
  // An overwrite of a whole chunk still reads the stripe's other chunks.
  const WritePlan chunk = plan_write(p, object, 4 * kSu, kSu);
  EXPECT_EQ(total_bytes(chunk.reads), 3 * kSu);
}

TEST(Erasure, DegradedReadsDecodeFromAnyKShards) {
  const ErasureProfile p{4, 2, kSu};
  std::vector<bool> all(6, true);
  auto healthy = plan_read(p, 0, 8 * kSu, all);
  ASSERT_TRUE(healthy.ok());
  EXPECT_EQ(healthy->decode_bytes, 0u);
  EXPECT_EQ(total_bytes(healthy->reads), 8 * kSu);
  std::vector<bool> one_down = all;
  one_down[1] = false;
  auto degraded = plan_read(p, 0, 8 * kSu, one_down);
  ASSERT_TRUE(degraded.ok());
  ASSERT_EQ(degraded->reads.size(), 4u);  // shards 0, 2, 3 and the first coding shard 4
  EXPECT_EQ(degraded->reads[3].shard, 4);
  EXPECT_EQ(degraded->decode_bytes, 2 * kSu);  // shard 1's two stripe units
  // A read that does not touch the missing shard needs no decode.
  auto avoid = plan_read(p, 0, kSu, one_down);
  ASSERT_TRUE(avoid.ok());
  EXPECT_EQ(avoid->decode_bytes, 0u);
  std::vector<bool> three_down = {false, false, false, true, true, true};
  auto lost = plan_read(p, 0, kSu, three_down);
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.status().message().find("only 3 shards available"), std::string::npos);
}

}  // namespace
}  // namespace granary::redundancy

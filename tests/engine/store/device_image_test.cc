// DeviceImage (engine/store/device_image.h): the sparse bytes of an in-memory device.
#include "engine/store/device_image.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace granary::store {
namespace {

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 31 + seed) % 251 + 1);
  return b;
}

TEST(DeviceImage, ReadsBackWhatWasWrittenAcrossBlocksAndZerosElsewhere) {
  DeviceImage image;
  const std::vector<std::byte> a = pattern(10000, 1);  // spans three blocks, unaligned
  image.write(4090, a);
  EXPECT_EQ(image.read(4090, a.size()), a);
  // Around it: zeros.
  const std::vector<std::byte> before = image.read(0, 4090);
  EXPECT_EQ(before, std::vector<std::byte>(4090));
  const std::vector<std::byte> after = image.read(4090 + a.size(), 5000);
  EXPECT_EQ(after, std::vector<std::byte>(5000));
  // An overwrite of the middle changes only those bytes.
  const std::vector<std::byte> b = pattern(100, 2);
  image.write(5000, b);
  std::vector<std::byte> want = a;
  std::copy(b.begin(), b.end(), want.begin() + (5000 - 4090));
  EXPECT_EQ(image.read(4090, a.size()), want);
  EXPECT_EQ(image.blocks(), 4u);  // [4090, 14090) touches blocks 0..3
}

TEST(DeviceImage, ZerosOnBlocksNeverWrittenTakeNoMemoryButOverwriteHeldOnes) {
  DeviceImage image;
  image.write(1 << 20, std::vector<std::byte>(1 << 20));  // 256 blocks of zeros
  EXPECT_TRUE(image.empty());
  EXPECT_EQ(image.read(1 << 20, 8192), std::vector<std::byte>(8192));
  const std::vector<std::byte> a = pattern(4096, 3);
  image.write(0, a);
  EXPECT_EQ(image.blocks(), 1u);
  image.write(100, std::vector<std::byte>(10));  // zeros into a held block are written
  std::vector<std::byte> want = a;
  std::fill(want.begin() + 100, want.begin() + 110, std::byte{0});
  EXPECT_EQ(image.read(0, 4096), want);
}

}  // namespace
}  // namespace granary::store

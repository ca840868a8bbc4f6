#include "engine/buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace granary {
namespace {

TEST(Buffer, NewMemoryIsZeroedAlignedAndFrozenWithoutACopy) {
  MutableBuffer m(10'000);
  ASSERT_EQ(m.size(), 10'000u);
  for (std::byte b : m) ASSERT_EQ(b, std::byte{0});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % kBufferAlignment, 0u);
  m[17] = std::byte{42};
  const std::byte* at = m.data();
  Buffer b = std::move(m).freeze();
  EXPECT_EQ(b.data(), at);  // the same memory
  EXPECT_EQ(b[17], std::byte{42});
  EXPECT_TRUE(b.aligned());
  EXPECT_EQ(m.size(), 0u);
}

TEST(Buffer, SlicesShareTheMemoryAndOutliveTheOriginal) {
  Buffer slice;
  {
    Buffer whole = Buffer::copy_of(std::string_view("0123456789abcdef"));
    slice = whole.slice(4, 6);
    EXPECT_TRUE(slice.shares_memory_with(whole));
    EXPECT_EQ(slice.data(), whole.data() + 4);
    EXPECT_FALSE(slice.aligned());
    EXPECT_TRUE(whole.slice(0, 3).aligned());
  }
  ASSERT_EQ(slice.size(), 6u);
  EXPECT_EQ(std::memcmp(slice.data(), "456789", 6), 0);
  EXPECT_EQ(slice.slice(6, 0).size(), 0u);  // the empty slice at the end fits
}

TEST(Buffer, EqualityComparesContentsAndNoBytesIsNotEmptyBytes) {
  const Buffer a = Buffer::copy_of(std::string_view("same"));
  const Buffer b = Buffer::copy_of(std::string_view("same"));
  const Buffer c = Buffer::copy_of(std::string_view("diff"));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a == a.slice(0, 3));
  const Buffer none;
  EXPECT_FALSE(static_cast<bool>(none));
  EXPECT_TRUE(static_cast<bool>(Buffer::zeros(0)));  // zero bytes, but bytes
  EXPECT_FALSE(none == Buffer::zeros(0));
  EXPECT_TRUE(none == Buffer());
}

TEST(Buffer, AnEnvsMemoryKeepsItsRegistrationThroughFreezeAndSlice) {
  int registration = 0;  // stands for a fabric's memory region
  std::shared_ptr<std::byte[]> memory(
      static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, 2 * kBufferAlignment)),
      [](std::byte* p) { std::free(p); });
  MutableBuffer m(memory, 8000, &registration);
  m.write_at(7990, Buffer::copy_of(std::string_view("0123456789")).span());
  const Buffer b = std::move(m).freeze();
  EXPECT_EQ(b.region(), &registration);
  EXPECT_EQ(b.slice(7990, 10).region(), &registration);
  EXPECT_EQ(Buffer::copy_of(b.span()).region(), nullptr);  // a copy is plain heap memory
}

TEST(BufferDeathTest, AnOutOfRangeSliceIsABug) {
  const Buffer b = Buffer::zeros(10);
  EXPECT_DEATH((void)b.slice(5, 6), "length <= size_ - offset");
  EXPECT_DEATH((void)b.slice(11, 0), "offset <= size_");
}

}  // namespace
}  // namespace granary

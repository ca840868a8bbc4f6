// BufferPool: chunks come back to their size class and are handed out again, zeroed when
// asked; the cache is bounded; a buffer released after the pool is gone frees its memory.
#include "realmode/buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace granary::realmode {
namespace {

TEST(BufferPool, AReleasedChunkIsReusedAndZeroedWhenAsked) {
  auto pool = BufferPool::create();
  const std::byte* first = nullptr;
  {
    MutableBuffer a = pool->take(1 << 20);
    EXPECT_EQ(a.size(), 1u << 20);
    EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](std::byte b) { return b == std::byte{0}; }));
    std::fill(a.begin(), a.end(), std::byte{7});
    first = a.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kBufferAlignment, 0u);
  }
  EXPECT_EQ(pool->stats().cached_bytes, 1u << 20);
  {
    MutableBuffer b = pool->take(700'000);  // the same class: the same chunk, zeroed
    EXPECT_EQ(b.data(), first);
    EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; }));
    Buffer frozen = std::move(b).freeze();  // a frozen view keeps the chunk until it goes
    EXPECT_EQ(pool->stats().cached_bytes, 0u);
  }
  MutableBuffer c = pool->take(1 << 20, /*zeroed=*/false);
  EXPECT_EQ(c.data(), first);
  EXPECT_EQ(pool->stats().taken, 3u);
  EXPECT_EQ(pool->stats().reused, 2u);
}

TEST(BufferPool, TheCacheIsBoundedAndBuffersMayOutliveThePool) {
  auto pool = BufferPool::create(3 << 20);
  {
    std::vector<MutableBuffer> held;
    for (int i = 0; i < 5; ++i) held.push_back(pool->take(1 << 20));
  }
  EXPECT_EQ(pool->stats().cached_bytes, 3u << 20);  // two of the five went back to the system
  MutableBuffer survivor = pool->take(100);
  pool.reset();
  survivor.data()[0] = std::byte{1};  // still valid; freed when it goes (ASan checks the rest)
}

}  // namespace
}  // namespace granary::realmode

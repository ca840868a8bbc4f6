#include "engine/store/allocator.h"

#include <algorithm>
#include <iterator>

#include "engine/status.h"

namespace granary::store {

ExtentAllocator::ExtentAllocator(uint64_t first, uint64_t count) : first_(first), count_(count) {
  if (count > 0) free_.emplace(first, count);
  free_blocks_ = count;
}

std::vector<BlockExtent> ExtentAllocator::allocate(uint64_t count) {
  std::vector<BlockExtent> out;
  if (count == 0 || count > free_blocks_) return out;
  uint64_t left = count;
  auto it = free_.begin();
  while (left > 0) {
    GRANARY_CHECK(it != free_.end());
    const uint64_t n = std::min(left, it->second);
    out.push_back(BlockExtent{it->first, n});
    left -= n;
    if (n == it->second) {
      it = free_.erase(it);
    } else {
      const uint64_t start = it->first + n;
      const uint64_t len = it->second - n;
      it = free_.erase(it);
      free_.emplace(start, len);
    }
  }
  free_blocks_ -= count;
  return out;
}

void ExtentAllocator::release(BlockExtent extent) {
  if (extent.blocks == 0) return;
  GRANARY_CHECK(extent.start >= first_ && extent.start + extent.blocks <= first_ + count_);
  uint64_t start = extent.start;
  uint64_t len = extent.blocks;
  auto next = free_.lower_bound(start);
  GRANARY_CHECK(next == free_.end() || next->first >= start + len);  // not free already
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    GRANARY_CHECK(prev->first + prev->second <= start);
    if (prev->first + prev->second == start) {
      start = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && next->first == extent.start + extent.blocks) {
    len += next->second;
    free_.erase(next);
  }
  free_.emplace(start, len);
  free_blocks_ += extent.blocks;
}

void ExtentAllocator::take(uint64_t block) {
  auto it = free_.upper_bound(block);
  GRANARY_CHECK(it != free_.begin());
  --it;
  GRANARY_CHECK(block < it->first + it->second);
  const uint64_t start = it->first;
  const uint64_t len = it->second;
  free_.erase(it);
  if (block > start) free_.emplace(start, block - start);
  if (block + 1 < start + len) free_.emplace(block + 1, start + len - block - 1);
  --free_blocks_;
}

bool ExtentAllocator::is_free(uint64_t block) const {
  auto it = free_.upper_bound(block);
  if (it == free_.begin()) return false;
  --it;
  return block < it->first + it->second;
}

}  // namespace granary::store

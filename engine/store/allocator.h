// ExtentAllocator: the free space of a store's data region, in blocks, as a set of free
// extents (start, length) kept sorted and merged. First fit: an allocation takes free extents
// in address order until it has enough, so it may return several extents. Free-space
// accounting is exact: free_blocks() is the sum of the free extents. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace granary::store {

struct BlockExtent {
  uint64_t start = 0;   // first block
  uint64_t blocks = 0;  // length
};

class ExtentAllocator {
 public:
  // Blocks [first, first + count), all free.
  ExtentAllocator(uint64_t first, uint64_t count);

  // `count` blocks, or an empty vector (nothing taken) when fewer are free.
  std::vector<BlockExtent> allocate(uint64_t count);
  // Returns blocks that are allocated (checked: freeing a free block is a bug).
  void release(BlockExtent extent);
  // Takes one block that must be free (rebuilding the free space from an index).
  void take(uint64_t block);

  bool is_free(uint64_t block) const;
  uint64_t free_blocks() const { return free_blocks_; }
  uint64_t first() const { return first_; }
  uint64_t count() const { return count_; }
  const std::map<uint64_t, uint64_t>& free_extents() const { return free_; }

 private:
  uint64_t first_;
  uint64_t count_;
  uint64_t free_blocks_ = 0;
  std::map<uint64_t, uint64_t> free_;  // start -> length, disjoint, never adjacent
};

}  // namespace granary::store

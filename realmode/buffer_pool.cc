// BufferPool (buffer_pool.h).
#include "realmode/buffer_pool.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace granary::realmode {

namespace {

constexpr size_t kSmallest = 4096;

size_t class_bytes(int cls) {
  return kSmallest << cls;
}

}  // namespace

std::shared_ptr<BufferPool> BufferPool::create(size_t max_cached_bytes) {
  return std::shared_ptr<BufferPool>(new BufferPool(max_cached_bytes));
}

BufferPool::~BufferPool() {
  for (auto& list : free_) {
    for (std::byte* p : list) std::free(p);
  }
}

MutableBuffer BufferPool::take(size_t bytes, bool zeroed) {
  int cls = 0;
  while (cls < kClasses && class_bytes(cls) < bytes) ++cls;
  if (cls == kClasses) return MutableBuffer(bytes);  // larger than any class: not pooled
  std::byte* chunk = nullptr;
  {
    std::lock_guard lock(mu_);
    ++stats_.taken;
    if (!free_[cls].empty()) {
      chunk = free_[cls].back();
      free_[cls].pop_back();
      stats_.cached_bytes -= class_bytes(cls);
      ++stats_.reused;
    }
  }
  if (chunk == nullptr) {
    chunk = static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, class_bytes(cls)));
    if (chunk == nullptr) throw std::bad_alloc();
  }
  if (zeroed) std::memset(chunk, 0, bytes);
  std::weak_ptr<BufferPool> pool = weak_from_this();
  std::shared_ptr<std::byte[]> memory(chunk, [pool, cls](std::byte* p) {
    if (auto alive = pool.lock()) {
      alive->give_back(cls, p);
    } else {
      std::free(p);
    }
  });
  return MutableBuffer(std::move(memory), bytes, nullptr);
}

void BufferPool::give_back(int cls, std::byte* chunk) {
  {
    std::lock_guard lock(mu_);
    if (stats_.cached_bytes + class_bytes(cls) <= max_cached_) {
      free_[cls].push_back(chunk);
      stats_.cached_bytes += class_bytes(cls);
      return;
    }
  }
  std::free(chunk);
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace granary::realmode

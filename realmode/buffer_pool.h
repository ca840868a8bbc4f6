// BufferPool: aligned memory for payloads, reused instead of returned to the system.
//
// Why: a payload of a megabyte or more that is allocated fresh (aligned_alloc maps new pages
// for it) and freed after each message pays a page fault per 4 KiB page when it is first
// written. On the virtual machines measured here that made a 1 MiB RMA receive cost ~4 ms of
// faults against ~0.2 ms of transfer (perf: exc_page_fault under memset). The transport's
// bulk receives and RealEnv::allocate take their memory here: chunks in power-of-two size
// classes (4 KiB to 1 GiB), handed out as MutableBuffers whose release puts the chunk back on
// its class's free list, up to max_cached_bytes of free chunks in all (beyond, freed).
//
// Thread-safety: take() from any thread; buffers may be released on any thread, also after the
// pool's owner dropped it (a released chunk then goes back to the system).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/buffer.h"

namespace granary::realmode {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  struct Stats {
    uint64_t taken = 0, reused = 0, cached_bytes = 0;
  };
  static std::shared_ptr<BufferPool> create(size_t max_cached_bytes = size_t{256} << 20);
  ~BufferPool();

  // `bytes` bytes of memory aligned to kBufferAlignment (zeroed when asked; otherwise what a
  // previous user left there).
  MutableBuffer take(size_t bytes, bool zeroed = true);
  Stats stats() const;

 private:
  static constexpr int kClasses = 19;  // 4 KiB << 0 .. 4 KiB << 18 (1 GiB)
  explicit BufferPool(size_t max_cached_bytes) : max_cached_(max_cached_bytes) {}
  void give_back(int cls, std::byte* chunk);

  const size_t max_cached_;
  mutable std::mutex mu_;
  std::array<std::vector<std::byte*>, kClasses> free_;
  Stats stats_;
};

}  // namespace granary::realmode

#include "engine/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/status.h"

namespace granary {

namespace {

// Aligned, zeroed heap memory of at least `size` bytes (one alignment unit for size 0, so that
// an empty buffer still holds memory and tests true).
std::shared_ptr<std::byte[]> aligned_zeroed(size_t size) {
  const size_t rounded = size == 0
                             ? kBufferAlignment
                             : (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  void* p = std::aligned_alloc(kBufferAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, size);
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p),
                                      [](std::byte* q) { std::free(q); });
}

}  // namespace

MutableBuffer::MutableBuffer(size_t size) : memory_(aligned_zeroed(size)), size_(size) {}

MutableBuffer::MutableBuffer(std::shared_ptr<std::byte[]> memory, size_t size, const void* region)
    : memory_(std::move(memory)), size_(size), region_(region) {
  GRANARY_CHECK(memory_ != nullptr);
  GRANARY_CHECK(reinterpret_cast<uintptr_t>(memory_.get()) % kBufferAlignment == 0);
}

void MutableBuffer::write_at(size_t offset, std::span<const std::byte> bytes) {
  GRANARY_CHECK(offset <= size_ && bytes.size() <= size_ - offset);
  if (!bytes.empty()) std::memcpy(data() + offset, bytes.data(), bytes.size());
}

Buffer MutableBuffer::freeze() && {
  GRANARY_CHECK(memory_ != nullptr);
  const std::byte* d = memory_.get();
  Buffer b(std::move(memory_), d, size_, region_);
  size_ = 0;
  region_ = nullptr;
  return b;
}

Buffer Buffer::copy_of(std::span<const std::byte> bytes) {
  MutableBuffer m(bytes.size());
  m.write_at(0, bytes);
  return std::move(m).freeze();
}

Buffer Buffer::zeros(size_t size) {
  return MutableBuffer(size).freeze();
}

Buffer Buffer::slice(size_t offset, size_t length) const {
  GRANARY_CHECK(offset <= size_ && length <= size_ - offset);
  return Buffer(memory_, data_ + offset, length, region_);
}

bool operator==(const Buffer& a, const Buffer& b) {
  if (!a || !b) return !a && !b;
  return a.size_ == b.size_ && (a.data_ == b.data_ || std::memcmp(a.data_, b.data_, a.size_) == 0);
}

}  // namespace granary

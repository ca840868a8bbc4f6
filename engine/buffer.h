// Buffers: the bytes a payload carries.
//
// A Buffer is an immutable view of shared, reference-counted memory: copies and slices share
// the memory (no byte is copied), and the memory lives while any view of it does. New memory is
// a MutableBuffer, the one owner while it is filled; freeze() turns it into a Buffer. Memory is
// aligned to kBufferAlignment (4 KiB), the alignment O_DIRECT needs for the buffers of device
// reads and writes and RDMA prefers for registered memory; a slice is aligned when its offset is.
//
// Registration. A real fabric sends and receives only from memory registered with the NIC
// (libfabric fi_mr_reg), and a real device reads with O_DIRECT into aligned memory only. The Env
// that owns such memory hands it out (Env::allocate) as MutableBuffers that carry its
// registration: an opaque handle (region()) that every view of that memory keeps, so that the
// Env recognises its own memory when a payload travels and sends it without a copy. Memory
// from elsewhere (MutableBuffer(n), Buffer::copy_of) has no region; a real Env copies it into
// registered memory (or registers it) when it travels. The simulated and in-memory Envs hand
// out plain aligned heap memory.
//
// Thread-safety: a Buffer is a value; its memory is never written once frozen, so views on
// several threads are safe (the reference count is atomic). A MutableBuffer belongs to one task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace granary {

inline constexpr size_t kBufferAlignment = 4096;

class Buffer;

// Bytes being filled: `size` bytes of aligned memory, zeroed when it is new.
class MutableBuffer {
 public:
  MutableBuffer() = default;
  // New aligned heap memory of `size` bytes, zeroed (no region).
  explicit MutableBuffer(size_t size);
  // Memory an Env owns: `memory` (aligned to kBufferAlignment, at least `size` bytes, released
  // by its deleter) with the Env's registration `region` (opaque; null: none).
  MutableBuffer(std::shared_ptr<std::byte[]> memory, size_t size, const void* region);

  MutableBuffer(MutableBuffer&&) = default;
  MutableBuffer& operator=(MutableBuffer&&) = default;
  MutableBuffer(const MutableBuffer&) = delete;
  MutableBuffer& operator=(const MutableBuffer&) = delete;

  std::byte* data() { return memory_.get(); }
  const std::byte* data() const { return memory_.get(); }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data(), size_}; }
  std::byte* begin() { return data(); }
  std::byte* end() { return data() + size_; }
  std::byte& operator[](size_t i) { return memory_[i]; }
  // Copies `bytes` in at `offset` (which must fit: offset + bytes.size() <= size()).
  void write_at(size_t offset, std::span<const std::byte> bytes);
  // The Buffer of these bytes; this MutableBuffer is empty afterwards.
  Buffer freeze() &&;

 private:
  std::shared_ptr<std::byte[]> memory_;
  size_t size_ = 0;
  const void* region_ = nullptr;
};

class Buffer {
 public:
  // No bytes at all (false in a boolean context): a size-only payload's.
  Buffer() = default;
  // A new aligned copy of `bytes`.
  static Buffer copy_of(std::span<const std::byte> bytes);
  static Buffer copy_of(std::string_view text) {
    return copy_of(std::as_bytes(std::span(text.data(), text.size())));
  }
  // `size` zero bytes.
  static Buffer zeros(size_t size);

  // Holds bytes (possibly zero of them); false for a default-constructed Buffer.
  explicit operator bool() const { return memory_ != nullptr; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<const std::byte> span() const { return {data_, size_}; }
  const std::byte* begin() const { return data_; }
  const std::byte* end() const { return data_ + size_; }
  std::byte operator[](size_t i) const { return data_[i]; }
  // The bytes [offset, offset + length) of this view, sharing its memory. The range must fit
  // (checked: a programming error aborts).
  Buffer slice(size_t offset, size_t length) const;
  // The start is aligned to kBufferAlignment.
  bool aligned() const { return reinterpret_cast<uintptr_t>(data_) % kBufferAlignment == 0; }
  // The registration of the memory (MutableBuffer's region), null for plain memory.
  const void* region() const { return region_; }
  // Views of the same memory (a zero-copy slice of the same allocation).
  bool shares_memory_with(const Buffer& other) const { return memory_ == other.memory_; }
  std::vector<std::byte> to_vector() const { return {begin(), end()}; }

  // Same bytes (contents; a Buffer without bytes equals only another without bytes).
  friend bool operator==(const Buffer& a, const Buffer& b);

 private:
  friend class MutableBuffer;
  Buffer(std::shared_ptr<std::byte[]> memory, const std::byte* data, size_t size,
         const void* region)
      : memory_(std::move(memory)), data_(data), size_(size), region_(region) {}

  std::shared_ptr<std::byte[]> memory_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  const void* region_ = nullptr;
};

}  // namespace granary

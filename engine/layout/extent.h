// ByteRange: a half-open byte range [offset_bytes, offset_bytes + length_bytes) of an image, a
// file or an object. Shared by the striping layouts of engine/layout/ (rbd.h, lustre.h).
//
// A plain value; safe to copy and to share between threads.
#pragma once

#include <cstdint>

namespace granary::layout {

struct ByteRange {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;

  // One past the last byte. Layouts never produce a range whose end overflows 64 bits.
  uint64_t end_bytes() const { return offset_bytes + length_bytes; }
  bool operator==(const ByteRange&) const = default;
};

}  // namespace granary::layout

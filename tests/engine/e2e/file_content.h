// Known content for a test file: bytes from an xorshift stream seeded by the path's hash, so a
// file read back can be compared with what its writer wrote without keeping a copy. Test-only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "engine/messages.h"

namespace granary::test {

inline Payload file_content(const std::string& path, uint64_t size) {
  std::vector<std::byte> b(size);
  uint64_t x = std::hash<std::string>{}(path) | 1;
  for (uint64_t i = 0; i < size; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b[i] = static_cast<std::byte>(x);
  }
  return Payload::of(Buffer::copy_of(b));
}

}  // namespace granary::test

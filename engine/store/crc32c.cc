#include "engine/store/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <limits>

namespace granary::store {

uint32_t crc32c_extend(uint32_t crc, std::span<const std::byte> data) {
  // ISA-L works on the raw register (no final inversion) and takes an int length.
  unsigned int reg = ~crc;
  const auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(data.data()));
  size_t left = data.size();
  constexpr size_t kChunk = static_cast<size_t>(std::numeric_limits<int>::max()) & ~size_t{4095};
  while (left > 0) {
    const size_t n = std::min(left, kChunk);
    reg = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(n), reg);
    p += n;
    left -= n;
  }
  return ~reg;
}

uint32_t crc32c(std::span<const std::byte> data) {
  return crc32c_extend(0, data);
}

}  // namespace granary::store

#include "engine/store/device_image.h"

#include <algorithm>
#include <cstring>

namespace granary::store {

void DeviceImage::write(uint64_t offset, std::span<const std::byte> data) {
  uint64_t done = 0;
  while (done < data.size()) {
    const uint64_t at = offset + done;
    const uint64_t in_block = at % kBlockBytes;
    const uint64_t n = std::min<uint64_t>(data.size() - done, kBlockBytes - in_block);
    auto it = blocks_.find(at / kBlockBytes);
    if (it == blocks_.end()) {
      // Zeros on a block never written change nothing it reads: no memory for them (a store
      // zeroing its journal and checkpoint regions).
      const std::byte* p = data.data() + done;
      if (std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; })) {
        done += n;
        continue;
      }
      it = blocks_.emplace(at / kBlockBytes, std::vector<std::byte>(kBlockBytes)).first;
    }
    std::vector<std::byte>& block = it->second;
    std::memcpy(block.data() + in_block, data.data() + done, n);
    done += n;
  }
}

void DeviceImage::read(uint64_t offset, std::span<std::byte> out) const {
  uint64_t done = 0;
  while (done < out.size()) {
    const uint64_t at = offset + done;
    const uint64_t in_block = at % kBlockBytes;
    const uint64_t n = std::min<uint64_t>(out.size() - done, kBlockBytes - in_block);
    auto it = blocks_.find(at / kBlockBytes);
    if (it != blocks_.end()) {
      std::memcpy(out.data() + done, it->second.data() + in_block, n);
    } else {
      std::memset(out.data() + done, 0, n);
    }
    done += n;
  }
}

std::vector<std::byte> DeviceImage::read(uint64_t offset, uint64_t length) const {
  std::vector<std::byte> out(length);
  read(offset, out);
  return out;
}

}  // namespace granary::store

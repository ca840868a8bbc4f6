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
    std::vector<std::byte>& block = blocks_[at / kBlockBytes];
    if (block.empty()) block.resize(kBlockBytes);
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

// DeviceImage: the bytes of a device that keeps data in memory, sparse: 4 KiB blocks in a map,
// allocated on first write; a range never written reads as zeros. The contents of an Env's
// in-memory devices: MemoryEnv's (engine/testing; a current and a durable image for its crash
// model) and the simulator's when it carries data (sim/sim_env.h). Memory: one 4 KiB block
// (plus the map's node) per block ever written with something other than zeros.
//
// Thread-safety: none; the owner serialises use (both Envs run one task at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace granary::store {

class DeviceImage {
 public:
  static constexpr uint64_t kBlockBytes = 4096;

  // Copies `data` to [offset, offset + data.size()).
  void write(uint64_t offset, std::span<const std::byte> data);
  // Fills `out` with [offset, offset + out.size()); unwritten bytes are zeros.
  void read(uint64_t offset, std::span<std::byte> out) const;
  // The bytes [offset, offset + length).
  std::vector<std::byte> read(uint64_t offset, uint64_t length) const;

  // Blocks held (each kBlockBytes of memory): those written with a non-zero byte.
  uint64_t blocks() const { return blocks_.size(); }
  bool empty() const { return blocks_.empty(); }

 private:
  std::unordered_map<uint64_t, std::vector<std::byte>> blocks_;  // block number -> 4 KiB
};

}  // namespace granary::store

// A one-host MemoryEnv world with one data-keeping device, for the tests of engine/store/.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/random.h"
#include "engine/store/disk_store.h"
#include "engine/testing/memory_env.h"

namespace granary::store::testing {

inline Payload payload_of(std::vector<std::byte> b) {
  return Payload::of(Buffer::copy_of(b));
}

inline std::vector<std::byte> random_bytes(Random& rng, size_t n) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = static_cast<std::byte>(rng.next_u64());
  return b;
}

struct StoreWorld {
  explicit StoreWorld(uint64_t capacity_bytes, uint64_t seed = 1) : env(seed) {
    host = env.add_host("osd-host", 1, 1e9, 0);
    dev = env.add_device(host, capacity_bytes, 2e9, 1e-5);
  }
  // Runs `body` as one task of the world, to completion.
  Status run(std::function<void(Device&)> body) {
    env.spawn(host, "store", [this, body] { body(env.device(dev)); });
    return env.run();
  }
  granary::testing::MemoryEnv env;
  HostId host = 0;
  DeviceId dev = 0;
};

}  // namespace granary::store::testing

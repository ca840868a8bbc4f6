// Loopback hosts tables for the real-mode tests: "127.0.0.1:PORT" with ports nobody listens on
// now (free_loopback_port: below the ephemeral range; another process could take one before the
// test binds it, which a test then reports as a failed open). Test-only.
#pragma once

#include <string>
#include <vector>

#include "realmode/cluster_config.h"

namespace granary::realmode::test {

inline int free_port() {
  return free_loopback_port();
}

inline std::vector<std::string> loopback_table(int hosts) {
  std::vector<std::string> t;
  for (int i = 0; i < hosts; ++i) t.push_back("127.0.0.1:" + std::to_string(free_port()));
  return t;
}

}  // namespace granary::realmode::test

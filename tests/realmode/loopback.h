// Loopback hosts tables for the real-mode tests: "127.0.0.1:PORT" with ports nobody listens on
// now (the kernel's choice for port 0; another process could take one before the test binds it,
// which a test then reports as a failed open). Test-only.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace granary::realmode::test {

inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  close(fd);
  return ntohs(sa.sin_port);
}

inline std::vector<std::string> loopback_table(int hosts) {
  std::vector<std::string> t;
  for (int i = 0; i < hosts; ++i) t.push_back("127.0.0.1:" + std::to_string(free_port()));
  return t;
}

}  // namespace granary::realmode::test

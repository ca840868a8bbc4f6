#include "engine/store/crc32c.h"

#include <gtest/gtest.h>

#include <vector>

namespace granary::store {
namespace {

std::vector<std::byte> bytes(const char* s) {
  std::vector<std::byte> b;
  for (const char* p = s; *p != 0; ++p) b.push_back(static_cast<std::byte>(*p));
  return b;
}

TEST(Crc32c, KnownAnswers) {
  EXPECT_EQ(crc32c(bytes("123456789")), 0xE3069283u);  // the CRC catalogue's check value
  EXPECT_EQ(crc32c(bytes("")), 0u);
  // RFC 3720 B.4: 32 bytes of zeros, and of 0xff.
  EXPECT_EQ(crc32c(std::vector<std::byte>(32)), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::vector<std::byte>(32, std::byte{0xff})), 0x62A8AB43u);
}

TEST(Crc32c, ExtendEqualsTheWhole) {
  const std::vector<std::byte> all = bytes("123456789");
  const uint32_t first = crc32c(std::span(all.data(), 4));
  EXPECT_EQ(crc32c_extend(first, std::span(all.data() + 4, 5)), 0xE3069283u);
}

}  // namespace
}  // namespace granary::store

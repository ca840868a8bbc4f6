// libFuzzer target: real-mode message bodies (realmode/codec.h). The first two bytes choose the
// type, the rest is the body: decode_body refuses it with a Status or decodes it, and a decoded
// body encodes again to bytes that decode to the same encoding (the codec is its own inverse on
// everything it accepts).
#include <cstddef>
#include <cstdint>

#include "realmode/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace granary::realmode;
  if (size < 2) return 0;
  const auto type = static_cast<uint16_t>((data[0] | (data[1] << 8)) % (kBodyTypes + 1));
  const std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data) + 2, size - 2);
  auto decoded = decode_body(type, body);
  if (!decoded.ok()) return 0;
  const auto again = encode_body(*decoded);
  auto back = decode_body(type, again);
  if (!back.ok() || encode_body(*back) != again) __builtin_trap();
  return 0;
}

// libFuzzer target: real-mode frames (realmode/frame.h). Any byte string given to decode_frame
// is refused with a Status or decodes to views inside it; and the input split into a body and a
// payload, framed, decodes back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "realmode/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using granary::realmode::decode_frame;
  using granary::realmode::encode_frame;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  if (auto f = decode_frame(in); f.ok()) {
    if (f->header.frame_bytes() > size) __builtin_trap();
  }
  const size_t split = size == 0 ? 0 : data[0] % (size + 1);
  const auto frame =
      encode_frame(static_cast<uint16_t>(size), size, in.first(split), in.subspan(split));
  auto back = decode_frame(frame);
  if (!back.ok() || back->body.size() != split || back->payload.size() != size - split ||
      (split > 0 && std::memcmp(back->body.data(), data, split) != 0) ||
      (size > split && std::memcmp(back->payload.data(), data + split, size - split) != 0)) {
    __builtin_trap();
  }
  return 0;
}

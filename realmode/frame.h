// The frame every real-mode message travels in (issue 13): a fixed 40-byte header, then the
// serialised message body, then the bulk payload. Little-endian, versioned, checksummed:
//
//   offset size field
//        0    4 magic "GRNF"
//        4    2 version (kFrameVersion)
//        6    2 type (the message body's kind; the codec of realmode/ assigns them)
//        8    4 body_bytes
//       12    4 data_crc: crc32c of body then payload
//       16    8 payload_bytes
//       24    8 sequence (per connection, from 1)
//       32    4 reserved, 0
//       36    4 header_crc: crc32c of bytes 0..35
//
// A receiver reads the header, checks it (magic, version, reserved, header crc, lengths within
// its limits) before it allocates anything for the body, then checks the data crc once the body
// and payload arrived. Every refusal is a Status naming what was wrong and what was expected;
// nothing here trusts a length it has not bounded.
//
// Thread-safety: pure functions on their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

inline constexpr uint32_t kFrameMagic = 0x464E5247;  // "GRNF" little-endian
// 2: Heartbeat carries the OSD process's incarnation. 3: reads, writes and scan listings
// carry an erasure-coded shard's index.
inline constexpr uint16_t kFrameVersion = 5;
inline constexpr size_t kFrameHeaderBytes = 40;

// What a receiver accepts; larger frames are refused before anything is allocated.
struct FrameLimits {
  uint32_t max_body_bytes = 1u << 20;               // 1 MiB of serialised body
  uint64_t max_payload_bytes = uint64_t{64} << 20;  // 64 MiB of bulk data
};

struct FrameHeader {
  uint16_t type = 0;
  uint32_t body_bytes = 0;
  uint32_t data_crc = 0;
  uint64_t payload_bytes = 0;
  uint64_t sequence = 0;
  size_t frame_bytes() const { return kFrameHeaderBytes + body_bytes + payload_bytes; }
};

// The frame of `body` and `payload` (header, body, payload in one buffer).
std::vector<std::byte> encode_frame(uint16_t type, uint64_t sequence,
                                    std::span<const std::byte> body,
                                    std::span<const std::byte> payload);

// The header at the start of `bytes` (at least kFrameHeaderBytes of them), checked: Corruption
// for a bad magic, header crc or reserved field; NotSupported for another version;
// InvalidArgument for a body or payload over `limits` or fewer bytes than a header.
Result<FrameHeader> decode_frame_header(std::span<const std::byte> bytes,
                                        const FrameLimits& limits = {});

// Checks the data crc of a frame's body and payload against its header (Corruption on a
// mismatch, InvalidArgument when their sizes are not the header's).
Status verify_frame_data(const FrameHeader& header, std::span<const std::byte> body,
                         std::span<const std::byte> payload);

// A whole frame in `bytes`: the header checked, the body and payload (views into `bytes`)
// checked against the data crc. InvalidArgument "truncated" when `bytes` holds less than the
// frame; the bytes after the frame (from header.frame_bytes()) are not looked at.
struct Frame {
  FrameHeader header;
  std::span<const std::byte> body;
  std::span<const std::byte> payload;
};
Result<Frame> decode_frame(std::span<const std::byte> bytes, const FrameLimits& limits = {});

}  // namespace granary::realmode

// Real-mode frames (frame.h).
#include "realmode/frame.h"

#include <cstring>
#include <string>

#include "engine/store/crc32c.h"

namespace granary::realmode {

namespace {

template <typename T>
void put(std::byte* at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}

template <typename T>
T get(const std::byte* at) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(at[i]) << (8 * i));
  return v;
}

constexpr size_t kHeaderCrcAt = 36;

uint32_t data_crc(std::span<const std::byte> body, std::span<const std::byte> payload) {
  return store::crc32c_extend(store::crc32c(body), payload);
}

}  // namespace

std::vector<std::byte> encode_frame(uint16_t type, uint64_t sequence,
                                    std::span<const std::byte> body,
                                    std::span<const std::byte> payload) {
  std::vector<std::byte> out(kFrameHeaderBytes + body.size() + payload.size());
  std::byte* h = out.data();
  put<uint32_t>(h, kFrameMagic);
  put<uint16_t>(h + 4, kFrameVersion);
  put<uint16_t>(h + 6, type);
  put<uint32_t>(h + 8, static_cast<uint32_t>(body.size()));
  put<uint32_t>(h + 12, data_crc(body, payload));
  put<uint64_t>(h + 16, payload.size());
  put<uint64_t>(h + 24, sequence);
  put<uint32_t>(h + 32, 0);
  put<uint32_t>(h + kHeaderCrcAt, store::crc32c({h, kHeaderCrcAt}));
  if (!body.empty()) std::memcpy(h + kFrameHeaderBytes, body.data(), body.size());
  if (!payload.empty()) {
    std::memcpy(h + kFrameHeaderBytes + body.size(), payload.data(), payload.size());
  }
  return out;
}

Result<FrameHeader> decode_frame_header(std::span<const std::byte> bytes,
                                        const FrameLimits& limits) {
  if (bytes.size() < kFrameHeaderBytes) {
    return Status::invalid_argument("frame header truncated: expected " +
                                    std::to_string(kFrameHeaderBytes) + " bytes, found " +
                                    std::to_string(bytes.size()));
  }
  const std::byte* h = bytes.data();
  if (const uint32_t magic = get<uint32_t>(h); magic != kFrameMagic) {
    return Status::corruption("frame: bad magic " + std::to_string(magic) +
                              ", expected \"GRNF\" (not a Granary peer, or a stream out of step)");
  }
  const uint32_t want = get<uint32_t>(h + kHeaderCrcAt);
  if (const uint32_t crc = store::crc32c({h, kHeaderCrcAt}); crc != want) {
    return Status::corruption("frame header crc32c " + std::to_string(crc) +
                              " does not match the stored " + std::to_string(want));
  }
  if (const uint16_t version = get<uint16_t>(h + 4); version != kFrameVersion) {
    return Status::not_supported("frame version " + std::to_string(version) + ", expected " +
                                 std::to_string(kFrameVersion));
  }
  if (get<uint32_t>(h + 32) != 0) {
    return Status::corruption("frame: reserved field is not 0");
  }
  FrameHeader f;
  f.type = get<uint16_t>(h + 6);
  f.body_bytes = get<uint32_t>(h + 8);
  f.data_crc = get<uint32_t>(h + 12);
  f.payload_bytes = get<uint64_t>(h + 16);
  f.sequence = get<uint64_t>(h + 24);
  if (f.body_bytes > limits.max_body_bytes) {
    return Status::invalid_argument("frame body of " + std::to_string(f.body_bytes) +
                                    " bytes, more than the limit of " +
                                    std::to_string(limits.max_body_bytes));
  }
  if (f.payload_bytes > limits.max_payload_bytes) {
    return Status::invalid_argument("frame payload of " + std::to_string(f.payload_bytes) +
                                    " bytes, more than the limit of " +
                                    std::to_string(limits.max_payload_bytes));
  }
  return f;
}

Status verify_frame_data(const FrameHeader& header, std::span<const std::byte> body,
                         std::span<const std::byte> payload) {
  if (body.size() != header.body_bytes || payload.size() != header.payload_bytes) {
    return Status::invalid_argument("frame data of " + std::to_string(body.size()) + " + " +
                                    std::to_string(payload.size()) + " bytes, the header says " +
                                    std::to_string(header.body_bytes) + " + " +
                                    std::to_string(header.payload_bytes));
  }
  if (const uint32_t crc = data_crc(body, payload); crc != header.data_crc) {
    return Status::corruption("frame " + std::to_string(header.sequence) + " data crc32c " +
                              std::to_string(crc) + " does not match the header's " +
                              std::to_string(header.data_crc));
  }
  return Status();
}

Result<Frame> decode_frame(std::span<const std::byte> bytes, const FrameLimits& limits) {
  auto header = decode_frame_header(bytes, limits);
  if (!header.ok()) return header.status();
  // Both lengths are bounded by the limits, so the sum cannot overflow.
  if (bytes.size() < header->frame_bytes()) {
    return Status::invalid_argument("frame truncated: expected " +
                                    std::to_string(header->frame_bytes()) + " bytes, found " +
                                    std::to_string(bytes.size()));
  }
  Frame f;
  f.header = *header;
  f.body = bytes.subspan(kFrameHeaderBytes, header->body_bytes);
  f.payload = bytes.subspan(kFrameHeaderBytes + header->body_bytes, header->payload_bytes);
  if (Status s = verify_frame_data(f.header, f.body, f.payload); !s.ok()) return s;
  return f;
}

}  // namespace granary::realmode

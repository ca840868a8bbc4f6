// The body codec of real mode (issue 13): every engine/messages.h body to bytes and back, and a
// whole Message to one frame (frame.h) and back.
//
// A body's type number on the wire is its index in MessageBody (ReadRequest 0 ... OsdDeviceReport
// 21): new types are appended, and removing or reordering one, or changing a body's fields,
// changes kFrameVersion. Fields are
// written in declaration order with wire.h's primitives; enums as one byte, checked against
// their values; ints as 32-bit two's complement. Maps (MapUpdate's incrementals and full map)
// carry their CRUSH map in Ceph's text form (engine/crush/text_format.h, the form crushtool
// compiles), so a map decodes through the same parser and checks as a map file; the OSD states,
// pools and pg_temps follow as fields, and a full map is rebuilt with OsdMap::restore (checked
// as the monitor's own maps are).
//
// Decoding trusts nothing: every count is bounded before anything is reserved, an enum value or
// a map that does not check is refused, bytes left over are refused, and the error names the
// type and field ("ReadRequest.object: a string of 5000 bytes, more than the limit of 4096").
//
// Thread-safety: pure functions on their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/messages.h"
#include "engine/status.h"
#include "realmode/frame.h"
#include "realmode/wire.h"

namespace granary::realmode {

inline constexpr uint16_t kBodyTypes = std::variant_size_v<MessageBody>;

// What a decoder accepts beyond a frame's own limits.
struct CodecLimits {
  WireReader::Limits wire;                  // names, endpoints, lists
  uint32_t max_crush_map_bytes = 4u << 20;  // a CRUSH map's text
  uint32_t max_osds = 65536;                // an OSD map's max_osd (and its state lists)
  uint32_t max_incrementals = 1024;         // epochs in one MapUpdate
};

// The type number of `body` (its variant index), and its name ("ReadRequest"; "type N" for a
// number no body has).
uint16_t body_type(const MessageBody& body);
std::string body_type_name(uint16_t type);

// The serialised body (the payload travels apart, in the frame).
std::vector<std::byte> encode_body(const MessageBody& body);

// The body of type `type` from `bytes`: InvalidArgument naming the type and field of the first
// problem (an unknown type, a truncated or oversized field, an enum value out of range, a map
// that does not check, bytes left over).
Result<MessageBody> decode_body(uint16_t type, std::span<const std::byte> bytes,
                                const CodecLimits& limits = {});

// A message as one frame: header, body, then the payload's bytes (a payload without bytes, the
// size-only simulator's, cannot travel: InvalidArgument).
Result<std::vector<std::byte>> encode_message(const Message& message, uint64_t sequence);

// The message of a checked frame (decode_frame); the payload is copied into a Buffer.
// header_bytes is the body's encoded size.
Result<Message> decode_message(const Frame& frame, const CodecLimits& limits = {});

}  // namespace granary::realmode

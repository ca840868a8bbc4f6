// The messages Granary's services exchange, and payloads.
//
// A Message is a typed body (one of the protocol structs below) plus a payload. What crosses
// the network is wire_bytes(): a fixed header for the body plus the payload's size. In
// simulation a payload is only a size; in real mode it also holds the bytes (and bodies are
// serialised by realmode/). Plain values; safe to copy between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace granary {

// Bytes that travel, and in real mode the data itself.
struct Payload {
  uint64_t size_bytes = 0;
  std::shared_ptr<const std::vector<std::byte>> bytes;  // null in simulation

  static Payload of_size(uint64_t n) { return Payload{n, nullptr}; }
};

// Why a request failed, so that a client can turn a reply into the right Status code
// (kNotFound -> not_found, kOutOfRange and kInvalid -> invalid_argument).
enum class ReplyError : uint8_t {
  kNone,        // ok
  kNotFound,    // no such object or file
  kOutOfRange,  // the range goes past the end of the object
  kInvalid,     // a request that makes no sense in the server's state (close of a closed file)
};

// ---- object reads (client -> OSD -> client)

struct ReadRequest {
  uint64_t request_id = 0;
  std::string object;   // object name (placement already chose this OSD)
  uint64_t offset = 0;  // within the object
  uint64_t length = 0;
  std::string reply_to;  // endpoint of the client
  double sent_at_s = 0;  // for latency accounting
};

struct ReadReply {
  uint64_t request_id = 0;
  bool ok = true;
  std::string error;  // when !ok
  ReplyError error_code = ReplyError::kNone;
  uint64_t length = 0;   // bytes returned (the payload)
  double sent_at_s = 0;  // copied from the request
};

// ---- metadata (client -> metadata server -> client)

enum class MetadataOp : uint8_t { kOpen, kStat, kClose };

struct MetadataRequest {
  uint64_t request_id = 0;
  MetadataOp op = MetadataOp::kOpen;
  std::string path;
  std::string reply_to;
  double sent_at_s = 0;
};

struct MetadataReply {
  uint64_t request_id = 0;
  bool ok = true;
  std::string error;
  ReplyError error_code = ReplyError::kNone;
  uint64_t size_bytes = 0;  // the file's size (open, stat)
  double sent_at_s = 0;
};

// ---- control

// Asks a service loop to stop (used at the end of a run and in tests).
struct Shutdown {};

// ==== cluster map and recovery (engine/cluster/monitor.h, engine/recovery/recovery_service.h)

// An OSD's heartbeat agent to the monitor: "osd.<osd> is alive" (one way, no reply).
struct Heartbeat {
  int32_t osd = 0;
  double sent_at_s = 0;
};

// Recovery data to an OSD's recovery daemon ("recovery.<osd>"): write the payload (`length`
// bytes) at `offset` of the OSD's device, then answer `reply_to` with a RecoveryPushReply.
struct RecoveryPush {
  uint64_t op_id = 0;  // the op's index in its plan
  uint32_t pg = 0;
  int32_t shard = -1;  // erasure chunk position, -1 for a replica
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string reply_to;
};

struct RecoveryPushReply {
  uint64_t op_id = 0;
  bool ok = true;
  std::string error;  // when !ok
  uint64_t length = 0;
};

// A recovery read from an OSD's recovery daemon: `length` bytes at `offset` of its device,
// streamed to `reply_to` as the payload of a RecoveryReadReply (an erasure rebuild gathers k).
struct RecoveryRead {
  uint64_t op_id = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string reply_to;
};

struct RecoveryReadReply {
  uint64_t op_id = 0;
  bool ok = true;
  std::string error;
  uint64_t length = 0;  // the payload
};

using MessageBody =
    std::variant<ReadRequest, ReadReply, MetadataRequest, MetadataReply, Shutdown,
                 // cluster map and recovery
                 Heartbeat, RecoveryPush, RecoveryPushReply, RecoveryRead, RecoveryReadReply>;

struct Message {
  MessageBody body;
  Payload payload;
  // The body's size on the wire (RPC header, object name, ...).
  uint64_t header_bytes = kDefaultHeaderBytes;

  static constexpr uint64_t kDefaultHeaderBytes = 256;
  uint64_t wire_bytes() const { return header_bytes + payload.size_bytes; }
};

}  // namespace granary

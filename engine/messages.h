// The messages Granary's services exchange, and payloads.
//
// A Message is a typed body (one of the protocol structs below) plus a payload. What crosses
// the network is wire_bytes(): a fixed header for the body plus the payload's size. In a large
// simulation a payload is only a size; in real mode, in the in-memory Env and in a simulation
// that carries data it also holds the bytes, as a Buffer (engine/buffer.h: aligned, shared,
// sliceable without a copy); bodies are serialised by realmode/. Plain values; safe to copy between
// threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "engine/buffer.h"

namespace granary {

namespace cluster {
class OsdMap;
struct Incremental;
}  // namespace cluster

// Bytes that travel, and where the world keeps data the data itself (engine/buffer.h).
struct Payload {
  uint64_t size_bytes = 0;
  // The bytes (size_bytes of them), or none (a size-only payload: the simulator's, unless it
  // carries data).
  Buffer bytes;

  static Payload of_size(uint64_t n) { return Payload{n, Buffer()}; }
  static Payload of(Buffer b) {
    const uint64_t n = b.size();
    return Payload{n, std::move(b)};
  }
};

// Why a request failed, so that a client can turn a reply into the right Status code
// (kNotFound -> not_found, kOutOfRange and kInvalid -> invalid_argument).
enum class ReplyError : uint8_t {
  kNone,        // ok
  kNotFound,    // no such object or file
  kOutOfRange,  // the range goes past the end of the object
  kInvalid,     // a request that makes no sense in the server's state (close of a closed file)
  kIoError,     // the server could not make the change durable (its store failed)
};

// The erasure code of an object's pool, as far as a request needs it (k = 0: not coded).
struct ErasureCoding {
  int k = 0;
  int m = 0;
  uint64_t stripe_unit_bytes = 4096;
};

// ---- object reads (client -> OSD -> client)

struct ReadRequest {
  uint64_t request_id = 0;
  std::string object;   // object name (placement already chose this OSD)
  uint64_t offset = 0;  // within the object
  uint64_t length = 0;
  std::string reply_to;  // endpoint of the client
  double sent_at_s = 0;  // for latency accounting
  // Erasure-coded pools: when ec.k > 0 the receiver is the object's primary and gathers the
  // data from the shard OSDs `shards` (k + m endpoints in shard order, "" for a shard that is
  // missing), rebuilding what a missing shard held (erasure.h), then replies with the whole
  // range. Shard reads among OSDs leave ec.k at 0 and address shard offsets.
  ErasureCoding ec;
  std::vector<std::string> shards;
  // A shard read: the shard (position) the reader wants. An OSD whose copy is another shard
  // of the object (CRUSH moved it to another position since) refuses it as kNotFound; -1:
  // whatever it holds.
  int32_t shard = -1;
};

struct ReadReply {
  uint64_t request_id = 0;
  bool ok = true;
  std::string error;  // when !ok
  ReplyError error_code = ReplyError::kNone;
  uint64_t length = 0;   // bytes returned (the payload)
  double sent_at_s = 0;  // copied from the request
  // The version of the object (or shard) the bytes come from (WriteRequest::version; 0 where
  // objects are not versioned: the size-only simulation).
  uint64_t version = 0;
};

// ---- metadata (client -> metadata server -> client)

// kCreate opens a file, creating it (empty) when it does not exist.
enum class MetadataOp : uint8_t { kOpen, kStat, kClose, kCreate };

struct MetadataRequest {
  uint64_t request_id = 0;
  MetadataOp op = MetadataOp::kOpen;
  std::string path;
  int64_t size_bytes = -1;  // kClose of a written file: its new size (-1: unchanged)
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
  // The file's layout (open, create, stat) from an MDS that allocates layouts (Lustre's LOV
  // EA): the stripe size and the OST of each stripe index. stripe_size_bytes 0: this MDS
  // serves no layouts (the client knows them: services::PfsBackend::layouts).
  uint64_t stripe_size_bytes = 0;
  std::vector<uint32_t> ost_indices;
};

// ---- object writes (client -> primary OSD [-> replicas or shards] -> client)

// Writes `length` bytes (the payload) at `offset` of `object`, creating or extending it. The
// receiver acknowledges (WriteReply) once the write is durable everywhere it must be:
//  - replicated pools (primary copy): the receiver is the primary; it forwards the write to
//    every endpoint of `replicas` (the other OSDs of the group) and writes its own copy; it
//    replies when its copy and every replica's are durable. Replicas get `replicas` empty.
//  - erasure-coded pools (ec.k > 0): the receiver is the primary of a k+m object whose shard
//    OSDs are `shards`; it reads what a partial-stripe write needs, encodes, writes its own
//    shard and sends each other shard its chunks (shard writes: ec.k = 0, shard offsets, and
//    `logical_end_bytes` so every shard knows the object's size).
//  - `durable` false is an NFS unstable WRITE: acknowledged once the data is in the server's
//    memory; a CommitRequest makes it durable.
struct WriteRequest {
  uint64_t request_id = 0;
  std::string object;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string reply_to;
  double sent_at_s = 0;
  std::vector<std::string> replicas;
  ErasureCoding ec;
  std::vector<std::string> shards;
  uint64_t logical_end_bytes = 0;  // the object's size after the write (0: offset + length)
  bool durable = true;
  // The interval of the object's group (placement::Placement::interval_of) that `replicas` or
  // `shards` were taken from. An OSD that knows the placement discards a write whose group has
  // moved on to another interval, unanswered (Ceph drops ops from before a PG's
  // same_interval_since; the client resends to the group's OSDs now).
  uint64_t interval = 0;
  // A recovery push (peering.h): written whatever the interval (it restores a member's copy
  // for the PG's peering, not a client's op planned against one interval).
  bool recovery_push = false;
  // The version the write gives the object (> 0 where objects are versioned: a client that
  // carries data numbers its writes of an object increasingly; 0: unversioned). Stored with
  // the object's bytes, atomically (object_backend.h); peering compares versions to find
  // stale copies. A recovery push carries the version of the copy it restores.
  uint64_t version = 0;
  // A shard write (and a push of a shard): the shard it stores, recorded with the bytes
  // (ObjectInfo::shard). An OSD refuses a client's shard write onto another shard of the
  // object (peering must replace that first); a recovery push replaces it. -1: not a shard.
  int32_t shard = -1;
};

struct WriteReply {
  uint64_t request_id = 0;
  bool ok = true;
  std::string error;
  ReplyError error_code = ReplyError::kNone;
  uint64_t length = 0;  // bytes written
  double sent_at_s = 0;
};

// NFS COMMIT: makes the unstable writes the server holds for `object` durable; answered with
// a WriteReply (length 0) once they are.
struct CommitRequest {
  uint64_t request_id = 0;
  std::string object;
  std::string reply_to;
  double sent_at_s = 0;
};

// ---- peering and scrub (OSD <-> OSD, engine/recovery/peering.h)

// What an OSD holds of an object.
struct ObjectInfo {
  uint64_t size_bytes = 0;     // bytes this OSD holds (a shard: its shard bytes)
  uint64_t logical_bytes = 0;  // the object's size as clients see it (0: size_bytes)
  uint64_t version = 0;        // WriteRequest::version of its content (0: unversioned)
  // An erasure-coded shard: which one (its position in the acting set when it was written;
  // Ceph keeps it in the object's id, ghobject_t's shard_id). -1: a whole object, or not
  // recorded (the size-only backend).
  int32_t shard = -1;

  uint64_t client_bytes() const { return logical_bytes > 0 ? logical_bytes : size_bytes; }
};

struct ObjectListing {
  std::string name;
  ObjectInfo info;
};

// Lists the objects an OSD holds of placement group `pg` (every object when the OSD has no
// placement), answered with a ScanReply.
struct ScanRequest {
  uint64_t request_id = 0;
  // The PG whose objects to list; every object the OSD holds with all_pgs (a peering of many
  // PGs scans each member once), or from an OSD that places no objects.
  uint32_t pg = 0;
  bool all_pgs = false;
  std::string reply_to;
  // The scanning primary's map epoch: the member lists once its own map has reached it, so
  // that a write of an older interval it has not applied yet is refused as stale rather than
  // applied after the listing (0: at once).
  uint32_t epoch = 0;
};

struct ScanReply {
  uint64_t request_id = 0;
  bool ok = true;
  std::string error;
  std::vector<ObjectListing> objects;  // in name order
};

// Removes `object` from an OSD (a peering rollback of a write no copy can complete);
// answered with a WriteReply (kNotFound when absent).
struct RemoveRequest {
  uint64_t request_id = 0;
  std::string object;
  std::string reply_to;
};

// ---- control

// Asks a service loop to stop (used at the end of a run and in tests).
struct Shutdown {};

// ==== cluster map and recovery (engine/cluster/monitor.h, engine/recovery/recovery_service.h)

// An OSD's heartbeat agent to the monitor: "osd.<osd> is alive" (one way, no reply).
struct Heartbeat {
  int32_t osd = 0;
  double sent_at_s = 0;
  // The OSD process's incarnation (real mode: a number drawn at each start; 0: not told). A
  // heartbeat from an up OSD with an incarnation the monitor has not seen from it before is a
  // restart the monitor missed (monitor.h).
  uint64_t incarnation = 0;
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

// ---- recovery reservations (engine/recovery/reserver.h; Ceph's AsyncReserver and
// MBackfillReserve / MRecoveryReserve)

// Asks a reserver for one of its slots (kRequest: answered with a ReserveGrant once granted,
// highest priority first, then in arrival order) or gives one back (kRelease: no answer).
// `holder` names the reservation (one per recovery op) so that a release matches it.
enum class ReserveOp : uint8_t { kRequest, kRelease };
struct ReserveRequest {
  uint64_t request_id = 0;
  ReserveOp op = ReserveOp::kRequest;
  int32_t priority = 0;
  std::string holder;
  std::string reply_to;
};

struct ReserveGrant {
  uint64_t request_id = 0;
};

// ---- cluster maps (engine/cluster/monitor.h, engine/cluster/map_client.h; Ceph's
// MMonSubscribe, MOSDMap, MOSDPGTemp)
//
// Maps travel by value inside the body: an Incremental or an OsdMap shared read-only
// (shared_ptr<const>) between the sender and every receiver, as the CRUSH map already is between
// epochs. Real mode serialises them (realmode/), and header_bytes stands for their encoded size.

// Subscribes the map client at endpoint `reply_to` to every new epoch, and asks for each epoch
// after `have_epoch` (0: a full map). Repeating it is harmless: it is how a client that saw a gap
// asks again. With `confirm` the monitor answers a client that is current too (an update of no
// epochs), so that it knows its map is the monitor's.
struct MapSubscribe {
  std::string reply_to;
  uint32_t have_epoch = 0;
  bool confirm = false;
};

// Epochs for a map client: `full`, when set, is the whole map at full->epoch() (a subscriber
// further behind than the history the monitor keeps); then each of `incrementals` makes the next
// epoch, the first one making `first_epoch` (full->epoch() + 1 after a full map).
struct MapUpdate {
  uint32_t first_epoch = 0;
  std::vector<std::shared_ptr<const cluster::Incremental>> incrementals;
  std::shared_ptr<const cluster::OsdMap> full;
};

// One pg_temp change (Ceph's pg_temp, OSDMap::Incremental::new_pg_temp): for placement group
// `pg` of pool `pool`, the OSDs that serve it in place of its up set (`osds`, primary first;
// erasure pools positional, placement::kNoDevice for a position nobody serves), or, with `clear`,
// back to its up set. Granary's extension: `osds` empty without `clear` says the PG has no
// devices at all (no copy can be read: I/O to it blocks) where Ceph would clear.
struct PgTempEntry {
  int64_t pool = 0;
  uint32_t pg = 0;
  bool clear = false;
  std::vector<int32_t> osds;

  bool operator==(const PgTempEntry&) const = default;
};

// Asks the monitor for pg_temp changes (Ceph's MOSDPGTemp, sent by a PG's primary while it
// backfills; in Granary by the recovery manager): those that change the map become one new
// epoch. One way, no reply: the sender sees the result in the maps it follows.
struct PgTempRequest {
  std::string from;  // the sender's endpoint, for logs
  std::vector<PgTempEntry> entries;
};

// What only an OSD's host knows about its drive, reported to the recovery manager
// (engine/recovery/recovery_manager.h): the drive failed and its data is gone, or the OSD booted
// on a new, empty drive. One way, no reply.
enum class DeviceEvent : uint8_t { kFailed, kReplacedEmpty };
struct OsdDeviceReport {
  int32_t osd = 0;
  DeviceEvent event = DeviceEvent::kFailed;
};

using MessageBody =
    std::variant<ReadRequest, ReadReply, MetadataRequest, MetadataReply, WriteRequest, WriteReply,
                 CommitRequest, Shutdown, ScanRequest, ScanReply, RemoveRequest,
                 // cluster map and recovery
                 Heartbeat, RecoveryPush, RecoveryPushReply, RecoveryRead, RecoveryReadReply,
                 ReserveRequest, ReserveGrant,
                 // cluster maps
                 MapSubscribe, MapUpdate, PgTempRequest, OsdDeviceReport>;

struct Message {
  MessageBody body;
  Payload payload;
  // The body's size on the wire (RPC header, object name, ...).
  uint64_t header_bytes = kDefaultHeaderBytes;

  static constexpr uint64_t kDefaultHeaderBytes = 256;
  uint64_t wire_bytes() const { return header_bytes + payload.size_bytes; }
};

}  // namespace granary

// Peering and object recovery of placement groups whose OSDs keep real bytes
// (services::StoreBackend), by messages only: what Ceph's primary does after an OSD of a PG
// came back from a crash (PeeringState: GetInfo/GetLog/GetMissing, then recovery ops).
//
// For each PG, the peer asks every member OSD for the objects it holds (ScanRequest: name,
// size, client-visible size, version), and decides object by object from the versions
// (WriteRequest::version), as Ceph's authoritative log does:
//  - the newest version of an object is authoritative; a member that lacks the object or holds
//    an older version is stale and gets exactly that object pushed (a WriteRequest to its
//    sub-op endpoint carrying the bytes and the version);
//  - replicated pools: the bytes come from a member holding the newest version (a ReadRequest);
//  - erasure-coded pools: each copy is the shard it recorded when written (ObjectInfo::shard),
//    which need not be its OSD's position now: marking an OSD out can move other OSDs of an
//    indep rule to other positions (Ceph keeps the shard in the object's id for this). A
//    position whose OSD does not hold its own shard of the newest version is stale. With at
//    least k distinct shards of the newest version, wherever they are, each stale position
//    gets its shard pushed, read from where it is or decoded from k of them (ISA-L, codec.h);
//    a push replaces the other shard an OSD held. With fewer than k, the
//    newest version cannot be rebuilt, so it was never acknowledged (an acknowledgement needs
//    every shard durable): when no member holds an older version either, the write created
//    the object and the object is removed from every member (a rollback: RemoveRequest); when
//    an older version exists the object is reported unrecoverable — rolling a partial
//    overwrite back needs the old chunks, which Ceph keeps in its PG log's rollback info and
//    Granary does not keep yet.
// Scrub (deep scrub) is the same pass with `deep`: every member's copy or shard is read in
// full (the store verifies the crc32c of every block), replicas of one version are compared
// byte for byte (a majority decides), erasure-coded shards are checked by re-encoding the data
// shards; a copy that fails is repaired from the good ones and counted.
//
// Runs on one task (the caller's), sends to the members' sub-op endpoints
// (OsdService::sub_op_endpoint) and receives on `reply_endpoint`. A member that does not
// answer within timeout_s makes the PG's peering fail with an error naming it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/env.h"
#include "engine/placement/placement.h"

namespace granary::recovery {

struct PgMembers {
  uint32_t pg = 0;
  // The OSD endpoints of the PG's positions, primary first (erasure-coded: shard order); ""
  // for a position no OSD fills.
  std::vector<std::string> osds;
};

// Every placement group of `placement`, its positions filled by the OSDs
// services::osd_endpoint_name(device) ("osd.<id>"), "" where no device fills one.
std::vector<PgMembers> pg_members(placement::Placement& placement);

// The order in which an erasure-coded PG's peering writes its targets (positions, each given
// its own shard, overwriting whatever shard the position's OSD holds) so that, stopped after any
// prefix (a new epoch, a member that dies), the positions hold as many distinct shards as can
// be: `held[p]` is the shard position p holds of the newest version (-1: none). Each step takes
// the target whose write leaves the most distinct shards, the first of `targets` on a tie; so a
// shard held once is overwritten only after it, or a shard it can be rebuilt from, is written
// elsewhere, where the targets allow.
std::vector<int> order_shard_pushes(std::vector<int> held, std::vector<int> targets);

struct PeeringOptions {
  ErasureCoding ec;            // the pool's code (k = 0: replicated)
  std::string reply_endpoint;  // on the calling task's host, used by nobody else
  double timeout_s = 30;       // a member's reply (> 0)
  bool deep = false;           // scrub: read and compare every copy (see above)
  // Which PG an object belongs to (the pool's placement); objects of other PGs that a member
  // lists are ignored.
  std::function<uint32_t(const std::string& object)> pg_of;
  // The map epoch the PGs are peered under: each member lists its objects once its own map
  // has reached it (ScanRequest::epoch; 0: at once).
  uint32_t epoch = 0;
};

struct PeeringReport {
  uint64_t pgs = 0;
  uint64_t objects = 0;       // distinct objects seen
  uint64_t stale_copies = 0;  // copies or shards missing or older than the newest
  uint64_t pushes = 0;        // copies or shards written back
  uint64_t bytes_pushed = 0;
  uint64_t rolled_back = 0;      // objects removed: their creation reached fewer than k shards
  uint64_t scrubbed_copies = 0;  // deep: copies or shards read and checked
  uint64_t scrub_errors = 0;     // deep: copies or shards found bad (crc, content, parity)
  std::vector<std::string> unrecoverable;  // objects left as they are (see above)
};

// Peers `pgs` (each member scanned once: for its PG, or for all it holds when many PGs are peered)
// and recovers what they need. An error when a member does not answer or a read, push or remove
// fails; the report counts what was done.
Result<PeeringReport> peer(Env& env, HostId host, const std::vector<PgMembers>& pgs,
                           const PeeringOptions& options);

}  // namespace granary::recovery

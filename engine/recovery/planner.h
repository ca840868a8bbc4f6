// The recovery planner: after a change of the cluster map, what data must be written where, read
// from where, so that every PG's up set holds complete copies (chunks) again.
//
// Input: where each PG's data was (the old acting sets: replicated, OSDs holding a copy, primary
// first; erasure, the holder of chunk i at position i), where it must be (the new up sets from
// CRUSH), the PG's logical bytes, the redundancy, which OSDs can be read (up) and which copies
// missed writes while their OSD was down. Output: one RecoveryOp per (PG, up-set member or
// position) that lacks current data, in PG order, then up-set order.
//
// Rules (Ceph's: the primary pushes for replicated pools; ECBackend reads the minimum set of
// chunks that decodes the wanted one, ErasureCode::minimum_to_decode):
//  - replicated, a member without a copy: backfill of the whole PG from one readable current
//    copy, the first in the old acting order (the primary when it survives).
//  - replicated, a member whose copy is stale: recovery of the missed bytes from that source.
//  - erasure, position i on a new OSD while chunk i's old holder is readable: backfill by copying
//    that one chunk (read = write = chunk bytes).
//  - erasure, chunk i lost (holder gone or stale): rebuild from the first k readable current
//    chunks by position: read k chunk bytes for every chunk byte written (EC's read
//    amplification); backfill for the whole chunk, recovery for the missed writes only.
//  - a PG with fewer than `need` (1, or k) readable current copies cannot be recovered now
//    (pgs_unrecoverable); an up-set position CRUSH could not fill stays degraded (unplaced).
// Bytes: replicated copies are the PG's bytes; chunks ceil(bytes / k).
//
// Moved vs minimum: every op's bytes_to_write is moved; the minimum counts only the ops that
// restore redundancy (a copy or chunk that no longer exists anywhere readable, and missed
// writes). CRUSH moves more when a remap shuffles positions that did not lose anything (an
// erasure chunk moving between two live OSDs, a replica set whose membership changed beyond
// the lost OSD); those are counted as moved, as Ceph's backfill moves them. Several lost chunks
// of one erasure PG are charged one k-chunk read each (Ceph decodes them from one read; with a
// host failure domain and one failed host a PG loses at most one chunk).
//
// Thread-safety: pure functions on plain values.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/cluster/pg_states.h"
#include "engine/cluster/redundancy.h"
#include "engine/status.h"

namespace granary::recovery {

enum class RecoveryKind : uint8_t {
  kRecovery,  // bring a member's copy up to date (log-based: only what it missed)
  kBackfill,  // give a member the PG's whole copy (chunk)
};

struct RecoveryOp {
  uint32_t pg = 0;
  RecoveryKind kind = RecoveryKind::kBackfill;
  int shard = -1;  // erasure: the chunk position written; replicated: -1
  // OSDs read: one copy (replicated), chunk i's holder (erasure copy) or k chunk holders
  // (erasure rebuild); each reads bytes_to_read / sources.size(). sources[0] drives the op
  // (plays the primary).
  std::vector<int32_t> sources;
  int32_t target = 0;
  uint64_t bytes_to_write = 0;
  uint64_t bytes_to_read = 0;  // over all sources
  // Recreates data that exists nowhere readable (degraded), rather than moving an existing
  // copy (misplaced).
  bool restores_redundancy = false;
};

struct RecoveryPlan {
  std::vector<RecoveryOp> ops;
  uint64_t bytes_to_write = 0;  // moved
  uint64_t bytes_to_read = 0;
  uint64_t minimum_bytes = 0;      // the restoring ops' writes
  uint32_t pgs_to_move = 0;        // PGs with at least one op
  uint32_t pgs_unrecoverable = 0;  // PGs needing data but without `need` readable copies
  uint32_t unplaced = 0;  // up-set positions (replicated: missing members) CRUSH left empty
};

struct PlanOptions {
  // [osd]: its copies can be read (it is up). Empty: every OSD id in the sets is readable.
  std::vector<bool> readable{};
  // Copies that missed writes while their OSD was down.
  std::vector<cluster::StaleCopy> stale{};
};

// Errors: old/new/bytes of different lengths, erasure sets longer than k + m.
Result<RecoveryPlan> plan_recovery(const std::vector<std::vector<int32_t>>& old_acting,
                                   const std::vector<std::vector<int32_t>>& new_up,
                                   const std::vector<uint64_t>& pg_bytes,
                                   const cluster::Redundancy& redundancy,
                                   const PlanOptions& options = {});

// The same from a cluster map: old acting sets = `data` (PgData), new up sets = `map`'s,
// readable = up in `map`, stale copies = data.stale.
Result<RecoveryPlan> plan_recovery(const cluster::PgData& data, const cluster::OsdMap& map,
                                   int64_t pool_id, const cluster::PgSizes& sizes);

// Records a finished op in `data`: the target holds the copy (chunk) and is up to date.
void apply_completed(const RecoveryOp& op, const cluster::Redundancy& redundancy,
                     cluster::PgData& data);

}  // namespace granary::recovery

// PG states: what each placement group of a pool looks like in an epoch of the cluster map, with
// Ceph's names (docs.ceph.com/en/latest/rados/operations/pg-states/), and how many objects and
// bytes are below full redundancy.
//
// Two things decide a PG's state: where its data must be (the up set CRUSH gives in the current
// OsdMap) and where its data is (PgData: the OSDs holding a copy, or chunk i for erasure pools,
// plus copies that missed writes while their OSD was down). Right after a failure the data is
// where the previous clean epoch put it; recovery (engine/recovery/) then moves it to the up set,
// and PgData follows. The rules, for a pool of size S whose reads need `need` copies (1, or k):
//   acting    = holders on up OSDs (stale ones included: they take part and get log recovery)
//   current   = acting holders without missed writes
//   down      : acting < need                 (no copy left to serve or rebuild from; no I/O)
//   peering   : the up set changed less than peering_s ago (no I/O meanwhile)
//   peered    : not down or peering, acting < min_size (recovery may run; no client I/O)
//   active    : not down or peering, acting >= min_size
//   undersized: acting < S;  degraded: current < S or a stale copy is in the acting set
//   remapped  : the acting set differs from the up set (Ceph's pg_temp while backfilling)
//   backfilling / backfill_wait: an up-set OSD (position) has no copy yet and `need` exist
//   recovering  / recovery_wait: a stale copy is in the acting set
//   (…ing while the PG's data is moving, …_wait before; without that information: moving)
//   clean     : active and none of undersized, degraded, remapped, backfill, recovery
//
// Simplifications: a stale copy counts for the acting set but the objects it misses are not
// tracked individually (no "unfound"); peering is one duration for every PG.
//
// Thread-safety: pure functions on plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/status.h"

namespace granary::cluster {

// State bits; a PG has several at once ("active+undersized+degraded").
enum PgStateBit : uint32_t {
  kPgActive = 1u << 0,
  kPgClean = 1u << 1,
  kPgRecoveryWait = 1u << 2,
  kPgRecovering = 1u << 3,
  kPgDown = 1u << 4,
  kPgUndersized = 1u << 5,
  kPgDegraded = 1u << 6,
  kPgRemapped = 1u << 7,
  kPgPeering = 1u << 8,
  kPgBackfillWait = 1u << 9,
  kPgBackfilling = 1u << 10,
  kPgPeered = 1u << 11,
};
// Ceph's pg_state_string(): the names joined with '+' in Ceph's order
// ("active+undersized+degraded+remapped+backfilling"); "inactive" for no bits.
std::string pg_state_name(uint32_t state);

// A copy (chunk) on `osd` that misses `objects` objects (`bytes` logical bytes) written while
// the OSD was down; log-based recovery brings it up to date.
struct StaleCopy {
  uint32_t pg = 0;
  int32_t osd = 0;
  uint64_t objects = 0;
  uint64_t bytes = 0;
};

// Objects and logical bytes per PG (replicated: one copy's bytes; erasure: before coding).
struct PgSizes {
  std::vector<uint64_t> objects;  // [pg]
  std::vector<uint64_t> bytes;    // [pg]

  // `total_objects` and `total_bytes` spread evenly over `pg_num` PGs, the remainder one by
  // one to the first PGs (a dataset hashed over PGs, on average).
  static PgSizes spread(uint32_t pg_num, uint64_t total_objects, uint64_t total_bytes);
};

// Where a pool's data is.
struct PgData {
  // [pg]: replicated, the OSDs holding a copy (any order, primary first by convention);
  // erasure, the holder of chunk i at position i (placement::kNoDevice: nobody).
  std::vector<std::vector<int32_t>> holders;
  std::vector<StaleCopy> stale;

  // The data of a clean epoch: every PG's up set holds complete copies.
  static Result<PgData> of_map(const OsdMap& map, int64_t pool_id);
  // Records that `osd` missed writes while it was down: for every PG it holds, the objects
  // and bytes written to that PG meanwhile (PGs with none are skipped).
  void add_stale(int32_t osd, const PgSizes& written_while_down);
  // Once a PG's recovery is done: its data is exactly `up` (strays deleted, as Ceph does once
  // the PG is clean) and its stale copies are up to date.
  void settle(uint32_t pg, std::vector<int32_t> up);
};

struct PgStatesInput {
  const OsdMap* map = nullptr;  // the current epoch; required
  int64_t pool_id = 0;
  // The epoch before `map` (for peering, and for where the data is when `data` is null).
  const OsdMap* previous = nullptr;
  // Where the data is. Null: as `previous` (else `map`) placed it, complete and current.
  const PgData* data = nullptr;
  const PgSizes* sizes = nullptr;  // null: object and byte counts stay 0
  // [pg]: its data is moving now (recovering/backfilling) rather than waiting for a slot
  // (recovery_wait/backfill_wait). Null: every PG that needs it is moving.
  const std::vector<bool>* moving = nullptr;
  // Seconds since `map` became current; PGs whose up set differs from `previous`'s are
  // peering while this is below peering_s.
  double since_change_s = std::numeric_limits<double>::infinity();
  // Ceph peers in well under a second to a few seconds; an estimate to calibrate.
  double peering_s = 1.0;
};

struct PgStatus {
  uint32_t state = 0;
  int up_size = 0;      // OSDs in the up set
  int acting_size = 0;  // copies (chunks) on up OSDs, stale ones included
  int current = 0;      // of which complete
  int misplaced = 0;    // acting copies outside the up set (or at the wrong position)
  int to_create = 0;    // up-set members (positions) without a copy: backfill targets
};

struct PgStatesReport {
  std::vector<PgStatus> pgs;                // [pg]
  std::map<std::string, uint32_t> by_name;  // "active+clean" -> number of PGs
  uint64_t objects = 0, bytes = 0;          // the pool's, logical
  uint64_t degraded_objects = 0;            // objects with fewer than S complete copies
  uint64_t degraded_bytes = 0;              // their logical bytes
  uint64_t unavailable_objects = 0;         // objects of PGs that are not active (no I/O)
  uint64_t unavailable_bytes = 0;
  uint64_t object_copies = 0;            // objects x S (Ceph's denominator)
  uint64_t degraded_object_copies = 0;   // copies missing ("N/M objects degraded")
  uint64_t misplaced_object_copies = 0;  // copies on the wrong OSD ("objects misplaced")

  // PGs having every bit of `bits`.
  uint32_t count(uint32_t bits) const;
  // PGs without kPgActive.
  uint32_t inactive() const { return static_cast<uint32_t>(pgs.size()) - count(kPgActive); }
};

// Errors: no map, unknown pool, PgData/PgSizes/moving of the wrong number of PGs.
Result<PgStatesReport> pg_states(const PgStatesInput& input);

}  // namespace granary::cluster

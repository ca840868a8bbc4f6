// The acting set a PG's peering asks for (what the recovery manager requests as pg_temp,
// recovery_manager.h): which OSDs should serve a PG's I/O given where its data is.
//
// Ceph's primary chooses the acting set during peering (PeeringState::choose_acting): the up
// set when every member holds current data, otherwise the members that do plus other OSDs that
// hold current copies (pg_temp) while backfill fills the rest. Granary's rule, for one PG:
//  - a copy is current when its OSD is up in the map, its drive still has its data, and it did
//    not miss writes while down (no stale copy);
//  - an up-set member whose drive died but that the map still has up stays in the set (clients
//    send to it, and wait, until the monitor marks it down: nobody knows yet);
//  - replicated: the up-set members holding a current copy, in up order; while some member
//    lacks one, the other current holders follow, in holder order;
//  - erasure (positional): position i is the up-set member when it holds chunk i currently (or
//    is the dead-but-up case), else the current holder of chunk i, else kNoDevice;
//  - fewer current copies than a read needs (1, or k): no OSD at all (empty: the PG is down and
//    I/O to it blocks).
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/cluster/redundancy.h"

namespace granary::cluster {

struct ActingInput {
  const std::vector<int32_t>* up = nullptr;       // the PG's up set (required)
  const std::vector<int32_t>* holders = nullptr;  // PgData::holders[pg] (required)
  Redundancy redundancy;
  std::function<bool(int32_t osd)> is_up;     // in the current map
  std::function<bool(int32_t osd)> intact;    // its drive still holds its data
  std::function<bool(int32_t osd)> is_stale;  // its copy of this PG missed writes
};

std::vector<int32_t> choose_acting(const ActingInput& in);

// Whether two acting sets serve a PG the same: the same OSDs at the same positions for an
// erasure pool; the same primary and the same members for a replicated one (the order of the
// other replicas changes nothing a client or an OSD does).
bool same_acting(const std::vector<int32_t>& a, const std::vector<int32_t>& b, bool erasure);

}  // namespace granary::cluster

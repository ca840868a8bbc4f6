// Reserver: Ceph's AsyncReserver as a service of its own, reached by messages only. Every OSD
// has two, as Ceph's OSD has a local_reserver and a remote_reserver: a recovery op reserves a
// slot of its driving OSD's local reserver, then one of its target's remote reserver
// (MBackfillReserve REQUEST / GRANT), copies, and releases both (RELEASE). Each reserver has
// `slots` slots (osd_max_backfills). Requests wait in priority order (higher first; equal
// priorities in arrival order), as AsyncReserver's queues do; Ceph's priorities are
// kRecoveryPriority (180, OSD_RECOVERY_PRIORITY_BASE) for log-based recovery,
// kDegradedBackfillPriority (140) for backfill that restores redundancy and
// kBackfillPriority (100) for the rest. Preemption of a granted reservation by a higher
// priority (Ceph's preemptible remote reservations) is not modelled.
//
// The reserver is one task on its OSD's host, receiving on its endpoint; the OSDs involved in
// a recovery talk to it only through ReserveRequest and ReserveGrant (messages.h), so it runs
// unchanged in simulation, in tests and in real mode. A release of a holder that holds nothing
// (a duplicate) is ignored.
#pragma once

#include <cstdint>
#include <string>

#include "engine/env.h"

namespace granary::recovery {

inline constexpr int32_t kRecoveryPriority = 180;
inline constexpr int32_t kDegradedBackfillPriority = 140;
inline constexpr int32_t kBackfillPriority = 100;

// "reserver.<osd>.local" and "reserver.<osd>.remote".
std::string local_reserver_name(int32_t osd);
std::string remote_reserver_name(int32_t osd);

// Runs a reserver with `slots` slots on the calling task, receiving on `endpoint` (on the
// task's host), until Shutdown or until the endpoint fails.
void run_reserver(Env& env, HostId host, const std::string& endpoint, int slots);

// From a task on `host`: asks `reserver` for a slot for `holder` and blocks until it is
// granted; replies come to `reply` (an endpoint of the task's host that no other task waits
// on at the same time); `request_id` tells this request's grant from a stale one.
// An error when the reserver's host went down (the reply endpoint failed).
Status reserve(Env& env, HostId host, const std::string& reserver, const std::string& holder,
               int32_t priority, uint64_t request_id, Endpoint& reply);
// Gives `holder`'s slot back.
void release(Env& env, HostId host, const std::string& reserver, const std::string& holder);

}  // namespace granary::recovery

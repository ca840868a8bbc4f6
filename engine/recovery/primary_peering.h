// PrimaryPeering: an OSD's peering of the placement groups it is the primary of, each time one
// starts a new interval (Ceph's PeeringState on the primary: GetInfo, GetLog, GetMissing, then
// recovery; docs.ceph.com dev/peering), as real mode's OSD daemons run it.
//
// It follows the OSD's MapPlacement (map_placement.h). A PG whose acting set puts this OSD
// first (the first position that is not empty: an erasure-coded PG may have lost shard 0's
// OSD, and Ceph then makes the first OSD present its primary) is *inactive* here until this OSD has
// peered it in its current interval (Placement::interval_of): recovery::peer (peering.h) scans
// every member of the acting set, pushes the newest version of each object to the members that lack
// it or hold an older one (this OSD included: a primary that restarted, or that the map just made
// primary, pulls what it missed first). Then the PG is active. A peering that fails (a member that
// died and is not yet marked down does not answer) is tried again every retry_s with the map of
// then.
//
// await_active() is the OsdService's hook (OsdServiceOptions::await_active): a client's read or
// write of a PG waits while the PG is inactive here, so no client ever reads a copy that missed
// writes, and no write lands while the PG's copies are being compared (Ceph queues such ops:
// waiting_for_active). A request for a PG this OSD is not the primary of (the client's map is
// older or newer than the OSD's) is refused at once; the client resends under its next map.
//
// What this covers: an OSD marked down (its PGs peer among the others), back up (the returning
// copies are brought current), marked out (the PGs CRUSH moves to another OSD are copied there
// object by object: a backfill by pushes). What it does not: pg_temp (while a new member is
// filled, the PG is inactive, where Ceph keeps serving from the old acting set), throttles
// and priorities between recovery and client I/O (the simulator's RecoveryService has them).
//
// Thread-safety: its state is guarded by an EnvMutex; await_active() may be called from any
// task of the OSD's host while the peering task runs. The placement must be the thread-safe
// MapPlacement of the OSD's host; it and the map client outlive this object.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/cluster/map_placement.h"
#include "engine/env.h"
#include "engine/recovery/peering.h"
#include "engine/services/env_mutex.h"

namespace granary::recovery {

struct PrimaryPeeringOptions {
  int32_t osd = -1;             // this OSD's id (its endpoint is osd_endpoint_name(osd))
  std::string reply_endpoint;   // its peering's replies, on its host, used by nobody else
  ErasureCoding ec;             // the pool's code (k = 0: replicated)
  double member_timeout_s = 5;  // a member's reply to a scan, a read or a push
  double retry_s = 1;           // a failed peering is tried again after this long
  double poll_s = 0.05;         // how often the peering task looks for a new epoch
  double active_wait_s = 5;     // await_active's bound
  // Peers only while this says so (null: always). Real mode's OSDs peer once the monitor has
  // confirmed their map and it has them up: a restarted OSD holds the initial map (epoch 1,
  // every OSD up) until its map client hears from the monitor, and peering with it would act
  // as the primary of PGs another OSD serves now — rolling back that primary's writes in
  // flight (a creation found on fewer than k shards) that it then acknowledges. Ceph's OSD
  // likewise activates PGs only from a map in which the monitor has marked it up.
  std::function<bool()> ready;
  // Each peering's outcome, one line (null: silent).
  std::function<void(const std::string&)> log;
};

struct PrimaryPeeringStats {
  uint64_t peerings = 0;      // successful recovery::peer calls
  uint64_t failures = 0;      // failed ones (each retried)
  uint64_t pgs_peered = 0;    // PG activations
  uint64_t stale_copies = 0;  // copies found missing or older than the newest
  uint64_t pushes = 0;        // copies pushed
  uint64_t bytes_pushed = 0;
  uint32_t last_epoch = 0;  // the epoch of the last successful peering
};

class PrimaryPeering {
 public:
  PrimaryPeering(Env& env, HostId host, cluster::MapPlacement& placement,
                 PrimaryPeeringOptions options);
  PrimaryPeering(const PrimaryPeering&) = delete;
  PrimaryPeering& operator=(const PrimaryPeering&) = delete;

  // Spawns the peering task on the host (a daemon by default). Every PG is inactive until
  // peered.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // OsdServiceOptions::await_active: true once PG `pg` is active here (at once when it is);
  // false when this OSD is not its primary, or it stayed inactive for active_wait_s.
  bool await_active(uint32_t pg);
  // Whether `pg` is active here now, this OSD its primary: await_active's answer without
  // waiting (OsdServiceOptions::active_now).
  bool active_now(uint32_t pg) const {
    return pg < peered_interval_.size() && is_primary(pg) && is_active(pg);
  }
  // How many PGs this OSD is the primary of, and how many of them are active (for logs, tests).
  std::pair<uint32_t, uint32_t> primary_and_active() const;
  PrimaryPeeringStats stats() const;

 private:
  // The PGs it is the primary of whose interval it has not peered, and their members.
  std::vector<PgMembers> inactive_pgs(std::vector<uint64_t>& intervals) const;
  bool is_primary(uint32_t pg) const;
  bool is_active(uint32_t pg) const;
  void loop();
  // Peers every inactive PG once; false when it failed.
  bool peer_inactive();

  Env& env_;
  HostId host_;
  cluster::MapPlacement& placement_;
  PrimaryPeeringOptions options_;
  std::string self_;  // "osd.<id>"
  mutable services::EnvMutex mu_;
  std::vector<uint64_t> peered_interval_;  // [pg], guarded by mu_: 0 = never peered
  PrimaryPeeringStats stats_;              // guarded by mu_
};

}  // namespace granary::recovery

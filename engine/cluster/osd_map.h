// OsdMap: the cluster map of a Ceph-style cluster, one epoch of it: which OSDs exist, which are
// up (running and reachable) and in (holding data: reweight > 0), the CRUSH map and the pools.
// Like Ceph's OSDMap, it changes only by applying an Incremental, which bumps the epoch by one;
// the monitor (monitor.h) is the one place that does so in a running cluster, and every other
// party works on a copy of some epoch.
//
// Placement for the current states comes from pool_placement() (a placement::CrushPool) and
// up_sets(): CRUSH is run with the OSD reweights (out OSDs get no data) and down or absent OSDs
// are dropped from the result (erasure pools keep the position with placement::kNoDevice).
// The acting set (the OSDs that serve a PG's I/O) is the up set unless the map holds a pg_temp
// for the PG (Ceph's pg_temp: set by the monitor at the request of whoever peers the PG, while a
// backfill target lacks the data): then it is the pg_temp's OSDs that are up (erasure pools:
// positions of OSDs not up become placement::kNoDevice); a pg_temp none of whose OSDs is up gives
// the up set again, as in Ceph. Granary's extension: a pg_temp set to no OSD at all says the PG
// has no copy to serve (acting set empty: I/O blocks). See acting_sets() and prime_pg_temp().
// Where the data actually is stays apart (pg_states.h PgData).
//
// Copies are cheap: the CRUSH map is shared (immutable, shared_ptr) between the epochs.
//
// Thread-safety: a plain value. Const methods may be called from any number of threads on a
// map nobody mutates; apply() needs exclusive access. A CrushPool returned by pool_placement()
// points into the CRUSH map, which lives as long as any OsdMap epoch that shares it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/cluster/redundancy.h"
#include "engine/crush/crush_map.h"
#include "engine/messages.h"
#include "engine/placement/crush_pool.h"
#include "engine/status.h"

namespace granary::cluster {

struct Pool {
  placement::PoolSpec spec;  // spec.size and spec.erasure must agree with `redundancy`
  Redundancy redundancy;
  int min_size = 0;  // copies (chunks) a PG needs to accept I/O; 0: Ceph's default
};

// A change of the map (Ceph's OSDMap::Incremental, reduced to what failure handling needs).
// Applied in this order: new_crush, new_max_osd, remove, mark_down, mark_up, mark_out, mark_in,
// reweight, pg_temp.
struct Incremental {
  std::shared_ptr<const crush::CrushMap> new_crush;  // replaces the CRUSH map (a new host, ...)
  // Grows max_osd: the new ids exist, down and out (Ceph's `osd create`); mark them up and in
  // in the same or a later incremental (boot, mon_osd_auto_mark_new_in).
  int32_t new_max_osd = -1;
  std::vector<int32_t> remove;     // `osd rm`: the OSD must be down; it is also marked out
  std::vector<int32_t> mark_down;  // failure detected (or `osd down`)
  std::vector<int32_t> mark_up;    // boot
  std::vector<int32_t> mark_out;   // reweight 0: CRUSH moves its data elsewhere
  std::vector<int32_t> mark_in;    // reweight 1.0
  std::vector<std::pair<int32_t, uint32_t>> reweight;  // (osd, 16.16 reweight), `osd reweight`
  // pg_temp set or cleared per pool and PG (messages.h PgTempEntry), in order.
  std::vector<PgTempEntry> pg_temp;

  bool empty() const {
    return !new_crush && new_max_osd < 0 && remove.empty() && mark_down.empty() &&
           mark_up.empty() && mark_out.empty() && mark_in.empty() && reweight.empty() &&
           pg_temp.empty();
  }
  // True when it changes OSD states or the CRUSH map (what moves up sets), not only pg_temp.
  bool changes_osds() const {
    return new_crush || new_max_osd >= 0 || !remove.empty() || !mark_down.empty() ||
           !mark_up.empty() || !mark_out.empty() || !mark_in.empty() || !reweight.empty();
  }
  // One line for logs and test messages, e.g. "down osd.3; out osd.3".
  std::string describe() const;
};

class OsdMap {
 public:
  // Epoch 1 with OSDs 0..max_osd-1 existing, up and in. Pools are checked: unique ids, a rule
  // of the CRUSH map, spec agreeing with the redundancy, min_size within [k, size]
  // (replication: [1, size]); min_size 0 becomes Ceph's default.
  static Result<OsdMap> create(std::shared_ptr<const crush::CrushMap> crush, int32_t max_osd,
                               std::vector<Pool> pools);
  // The map at `epoch` from its parts (real mode decodes a full map from the wire: realmode/
  // codec.h; `pg_temp` as pg_temps() lists them, by pool then PG), checked as create() and apply()
  // check them, and the OSD states: one entry per OSD id, reweights at most 1.0 (0x10000), an OSD
  // that does not exist down and out. InvalidArgument naming the first problem.
  static Result<OsdMap> restore(uint32_t epoch, std::shared_ptr<const crush::CrushMap> crush,
                                placement::OsdStates states, std::vector<Pool> pools,
                                const std::vector<PgTempEntry>& pg_temp);

  uint32_t epoch() const { return epoch_; }
  int32_t max_osd() const { return states_.max_osd; }
  bool exists(int32_t osd) const { return valid(osd) && states_.exists[osd]; }
  bool is_up(int32_t osd) const { return exists(osd) && states_.up[osd]; }
  bool is_in(int32_t osd) const { return exists(osd) && states_.reweight[osd] > 0; }
  uint32_t reweight(int32_t osd) const { return valid(osd) ? states_.reweight[osd] : 0; }
  int32_t num_up() const;
  int32_t num_in() const;
  const placement::OsdStates& osd_states() const { return states_; }

  const crush::CrushMap& crush() const { return *crush_; }
  const std::shared_ptr<const crush::CrushMap>& crush_ptr() const { return crush_; }
  const std::vector<Pool>& pools() const { return pools_; }
  const Pool* pool(int64_t pool_id) const;

  // Applies `inc` and bumps the epoch; on error the map is unchanged. Errors: ids out of range
  // or not existing, removing an OSD that is up, a CRUSH map without the pools' rules,
  // shrinking max_osd, a pg_temp for an unknown pool or PG, or with OSDs not existing (or, for
  // an erasure pool, not one per position).
  Status apply(const Incremental& inc);

  // CRUSH placement of a pool under the current OSD states.
  Result<placement::CrushPool> pool_placement(int64_t pool_id) const;
  // The up set of every PG of a pool, primary first; erasure pools are positional, with
  // placement::kNoDevice where no up OSD holds the position.
  Result<std::vector<std::vector<int32_t>>> up_sets(int64_t pool_id) const;
  // True when `other` places every PG's up set as this map does (the same CRUSH map and OSD
  // states: only pg_temp may differ), so up sets computed for one hold for the other.
  bool same_up_sets(const OsdMap& other) const {
    return crush_ == other.crush_ && states_.max_osd == other.states_.max_osd &&
           states_.reweight == other.states_.reweight && states_.up == other.states_.up &&
           states_.exists == other.states_.exists;
  }
  // The pg_temp of a PG (null: none).
  const std::vector<int32_t>* pg_temp(int64_t pool_id, uint32_t pg) const;
  const std::map<std::pair<int64_t, uint32_t>, std::vector<int32_t>>& pg_temps() const {
    return pg_temp_;
  }
  // The acting set of a PG given its up set `up` (see the top of this file).
  std::vector<int32_t> acting_of(int64_t pool_id, uint32_t pg,
                                 const std::vector<int32_t>& up) const;
  // The acting set of every PG of a pool.
  Result<std::vector<std::vector<int32_t>>> acting_sets(int64_t pool_id) const;

 private:
  OsdMap() = default;
  bool valid(int32_t osd) const { return osd >= 0 && osd < states_.max_osd; }
  static Status check_pools(const crush::CrushMap& crush, std::vector<Pool>& pools);

  uint32_t epoch_ = 1;
  std::shared_ptr<const crush::CrushMap> crush_;
  placement::OsdStates states_;
  std::vector<Pool> pools_;
  std::map<std::pair<int64_t, uint32_t>, std::vector<int32_t>> pg_temp_;  // (pool, pg) -> OSDs
};

// The monitor's priming of pg_temp (Ceph's mon_osd_prime_pg_temp, OSDMonitor::prime_pg_temp):
// for the change from `before` to `after` (an epoch that moves OSD states), the pg_temp entries
// that keep each PG whose up set moves on the OSDs that served it, so that its I/O does not go to
// OSDs that lack the data while its peering decides: for such a PG, its acting set in `before`
// less the OSDs not up in `after` (erasure: those positions kNoDevice) becomes its pg_temp, or
// its pg_temp is cleared when that is the new up set. PGs that had no OSD serving them keep what
// they had. Simplified from Ceph: every pool and PG is checked, and min_size is not consulted.
std::vector<PgTempEntry> prime_pg_temp(const OsdMap& before, const OsdMap& after);

}  // namespace granary::cluster

// RecoveryManager: Ceph-style peering and recovery of one pool, as a service on the monitor's
// host that exchanges only messages with the cluster (docs/recovery.md).
//
// It follows the cluster map through its own MapClient (map_client.h). For each epoch it keeps
// where the pool's data is (cluster::PgData: the holders of each PG's copies or chunks, and the
// copies that missed writes while their OSD was down), chooses each PG's acting set
// (cluster::choose_acting, acting.h) and, where that differs from the acting set the map gives,
// asks the monitor for pg_temp (a PgTempRequest: set, clear, or no OSD at all for a PG with no
// readable copy); the monitor makes it an epoch, and every host's placement
// (map_placement.h) follows. An epoch that moves OSDs in or out, or up or down, wakes its
// planner: recovery::plan_recovery moves the data to the new up sets, run by a RecoveryService
// with Ceph's throttles; as each op finishes the PG's holders follow, and a PG whose up set is
// complete gets its pg_temp cleared. An epoch that arrives while a plan runs makes it plan
// again when that plan ends (Ceph restarts recovery on a new interval).
//
// Facts only an OSD's host knows reach it as messages on its endpoint (OsdDeviceReport): a
// drive that failed (its copies leave the holders) and an OSD that booted on a new, empty drive
// (it may hold copies again; a plan is made). A copy's staleness is measured when its OSD comes
// back up, against another current copy, by the pg_contents hook (see Options).
//
// One manager per pool: the pg_temp the monitor primes for a pool that nobody manages stays
// (its I/O keeps going to the OSDs that served it). The simulator's runs have one pool.
//
// Thread-safety: its tasks (the map client's callbacks, its endpoint's loop, the planner, the
// recovery ops' completions) share its state under an EnvMutex; stats(), busy() and the
// measurement accessors may be called from any task or after the run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/cluster/map_client.h"
#include "engine/cluster/osd_map.h"
#include "engine/cluster/pg_states.h"
#include "engine/env.h"
#include "engine/recovery/recovery_service.h"
#include "engine/services/env_mutex.h"

namespace granary::recovery {

struct RecoveryManagerOptions {
  std::string endpoint_name = "recmgr.0";  // its own; its map client's is this + ".map"
  std::string monitor_endpoint = "mon.0";
  RecoveryOptions recovery;  // the RecoveryService's (its on_op_done is the manager's)
  cluster::PgSizes sizes;    // the pool's objects and bytes per PG besides what is written
  // The data a run writes (null: a read-only pool whose data is `sizes`). These stand for the
  // OSDs' answers to a PG scan (peering.h ScanRequest) and for the objects a recovery push
  // carries, which the size-only simulation does not send:
  //  - pg_contents(osd): the objects and logical bytes per PG that OSD `osd`'s drive holds;
  //  - copy_pg(pg, from, to): recovery gave `to` the copy (chunk) of PG `pg` that `from` holds.
  std::function<cluster::PgSizes(int32_t osd)> pg_contents;
  std::function<void(uint32_t pg, int32_t from, int32_t to)> copy_pg;
  // Carried data (the OSDs keep real bytes, services::StoreBackend): set, each recovery op
  // moves its PG's objects by peering (peering.h) the op's members — replicated: its source and
  // its target; erasure-coded: every readable holder at its shard position and the target at
  // the op's — on the op's task, which pushes exactly the objects or shards the target lacks
  // (and any a stale member lacks) with their bytes; copy_pg is then not called.
  struct Carried {
    ErasureCoding ec;  // the pool's code (k = 0: replicated)
    // Which PG an object belongs to (the pool's placement).
    std::function<uint32_t(const std::string& object)> pg_of;
    double timeout_s = 30;  // a member's reply to the peering (> 0)
  };
  std::optional<Carried> carried;
  // Called on the planner's task each time recovery has nothing left to do for the map it
  // holds (after a plan, or when an epoch needed none): for the measurements of a report.
  std::function<void()> on_idle;
};

struct RecoveryManagerStats {
  double recovery_started_at_s = -1;   // the first plan's start
  double recovery_finished_at_s = -1;  // the last plan's end
  uint64_t bytes_moved = 0;            // planned writes, over every plan
  uint64_t bytes_minimum = 0;          // of which restoring redundancy
  uint64_t bytes_read = 0;             // read by finished plans
  uint64_t bytes_recovered = 0;        // written so far, the running plan's included
  uint32_t pgs_moved = 0;
  uint32_t plans = 0;
  uint64_t pg_temp_requests = 0;  // PgTempRequests sent
  // [osd]: bytes recovery read from it and wrote to it so far, the running plan's included
  // (empty before the first plan).
  std::vector<uint64_t> bytes_read_per_osd, bytes_written_per_osd;
};

class RecoveryManager {
 public:
  // `map` is the epoch the cluster starts from; errors: no pool `pool_id`.
  static Result<std::unique_ptr<RecoveryManager>> create(Env& env, HostId host, cluster::OsdMap map,
                                                         int64_t pool_id,
                                                         RecoveryManagerOptions options);
  RecoveryManager(const RecoveryManager&) = delete;
  RecoveryManager& operator=(const RecoveryManager&) = delete;

  // Starts its map client, its endpoint's loop and its planner (daemons), from a task.
  void start();

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  // A plan runs, or one is due.
  bool busy() const;
  RecoveryManagerStats stats() const;
  // For measurements: where the data is, which drives still hold theirs, the sizes now.
  cluster::PgData data() const;
  bool intact(int32_t osd) const;
  cluster::PgSizes sizes_now() const;
  // The epoch of the map it follows.
  uint32_t epoch() const { return maps_->epoch(); }

 private:
  RecoveryManager(Env& env, HostId host, cluster::OsdMap map, int64_t pool_id,
                  RecoveryManagerOptions options, cluster::PgData data);
  void on_map(const cluster::OsdMap& map);
  void serve();
  void planner();
  void plan_and_run();
  // The next plan is due: wakes the planner, or has the running plan followed by another.
  void want_plan();                       // requires mu_
  void lose_data(int32_t osd);            // requires mu_
  void mark_stale(int32_t osd);           // requires mu_
  cluster::PgSizes sizes_locked() const;  // requires mu_
  // Asks for the pg_temp the PGs need now (all of them, or one).
  void refresh_all();                                        // requires mu_
  void refresh(uint32_t pg, std::vector<PgTempEntry>& out);  // requires mu_
  void send_pg_temp(std::vector<PgTempEntry> entries);
  // options_.carried: op's objects moved by peering its members (see Options).
  Result<CarriedMove> move_objects(const RecoveryOp& op, HostId host);

  Env& env_;
  HostId host_;
  int64_t pool_id_;
  cluster::Redundancy redundancy_;
  RecoveryManagerOptions options_;
  Endpoint& endpoint_;
  std::unique_ptr<cluster::MapClient> maps_;
  mutable services::EnvMutex mu_;
  cluster::OsdMap map_;                   // guarded by mu_: the last epoch it took
  cluster::PgData data_;                  // guarded by mu_
  std::vector<std::vector<int32_t>> up_;  // guarded by mu_: [pg], the map's up sets
  std::vector<bool> intact_;              // guarded by mu_: [osd]
  std::unique_ptr<RecoveryService> recovery_;
  std::unique_ptr<Semaphore> wake_;
  bool recovering_ = false;        // guarded by mu_
  bool replan_ = false;            // guarded by mu_
  RecoveryManagerStats stats_;     // guarded by mu_ (bytes_recovered: see stats())
  uint64_t recovered_before_ = 0;  // guarded by mu_: bytes of the plans finished
  uint64_t peerings_ = 0;          // guarded by mu_: carried moves started (reply endpoints)
};

}  // namespace granary::recovery

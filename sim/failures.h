// FailureDriver: a scenario's failure timeline on a simulated rados cluster, with Ceph's
// failure handling from engine/ (docs/recovery.md): one HeartbeatAgent per OSD and the
// MonitorService (engine/cluster/monitor.h) detect crashes and mark OSDs down, then out; every
// new map epoch re-points the clients (a SwitchingPlacement the clients read through, and the
// map epoch they watch to resend stuck requests); each mark-out plans what must move
// (engine/recovery/planner.h) and runs it with Ceph's throttles (recovery_service.h), competing
// with the clients for drives and links.
//
// Events: osd_crash (the OSD stops answering and heartbeating; its data survives), drive_failure
// (the same, and its data is gone: a PG whose surviving copies fall below what a read needs has
// lost objects, and I/O to it blocks), host_down (every OSD of the host crashes), partition
// (the OSDs of the listed hosts are unreachable, data intact), nic_down (the same for one
// host), link_down (some of a fabric link's parallel cables fail: less capacity; the last one
// cuts off the storage hosts beyond it, unreachable like a partition), osd_restart /
// host_restart / heal / nic_up / link_up (back; data of a failed drive stays gone),
// drive_replace (a failed drive replaced by an empty one: the OSD boots up and in, backfill
// fills it), slow_drive, nic_degraded and link_degraded (a drive, a host's NICs or a fabric
// link run `factor` times slower; nothing is marked down — the monitor does not see
// slowness). An OSD runs when none of the causes that stopped it (process, drive, partition,
// NIC, link) remains, so overlapping events undo each other only in part.
//
// The driver keeps the world alive (a non-daemon task) until every event has happened and, once
// OSDs are out, their recovery has finished, so the report can say when redundancy came back.
//
// Thread-safety: simulation only (tasks never run concurrently); report() after the run.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/cluster/monitor.h"
#include "engine/cluster/osd_map.h"
#include "engine/cluster/pg_states.h"
#include "engine/placement/crush_pool.h"
#include "engine/recovery/recovery_service.h"
#include "engine/services/osd.h"
#include "models/scenario.h"

namespace granary::sim {

// What the clients and OSDs place objects with during a failure run: the current epoch's CRUSH
// pool hashes names to PGs, and each PG's devices are set by the FailureDriver — its up set, or,
// while some up-set member lacks the data (a backfill target, a copy that missed writes), the
// OSDs that hold it (Ceph's acting set through pg_temp); none while no copy can be read (the
// PG is down: I/O to it blocks). Each change of a PG's devices moves it to a new interval
// (Placement::interval_of), by which OSDs discard and clients resend the writes of a past one.
class SwitchingPlacement final : public placement::Placement {
 public:
  // Every PG's devices are its up set in `initial`, interval 1.
  explicit SwitchingPlacement(placement::CrushPool initial);
  // The new epoch's pool (names to PGs, descriptions); the PGs' devices stay as set.
  void swap(placement::CrushPool next) {
    pool_ = std::make_unique<placement::CrushPool>(std::move(next));
  }
  // Sets a PG's devices; a change starts a new interval. True when they changed.
  bool set_devices(uint32_t group, const std::vector<int32_t>& devices);
  std::string describe() const override { return pool_->describe(); }
  uint32_t num_groups() const override { return pool_->num_groups(); }
  uint32_t group_of(std::string_view name) const override { return pool_->group_of(name); }
  void devices_of(uint32_t group, std::vector<int32_t>& out) override { out = devices_[group]; }
  int replicas() const override { return pool_->replicas(); }
  int32_t device_id_bound() const override { return pool_->device_id_bound(); }
  std::vector<double> target_shares() const override { return pool_->target_shares(); }
  int64_t failure_domain(int32_t d) const override { return pool_->failure_domain(d); }
  uint64_t interval_of(uint32_t group) const override { return intervals_[group]; }

 private:
  std::unique_ptr<placement::CrushPool> pool_;
  std::vector<std::vector<int32_t>> devices_;  // [pg]
  std::vector<uint64_t> intervals_;            // [pg]
  uint64_t next_interval_ = 2;
};

struct FailureDriverOptions {
  std::vector<models::FailureEvent> events;
  models::RecoverySpec recovery;
  // The OSDs' op queues ([osd]; empty: recovery.op_queue none) and the op-thread CPU of a
  // recovery item (the protocol's server CPU per op).
  std::vector<services::OsdOpQueue*> op_queues;
  double op_cpu_s = 0;
  int drives_per_host = 1;
  HostId monitor_host = 0;
  std::vector<HostId> osd_hosts;  // [osd]
  cluster::PgSizes sizes;         // the pool's objects and bytes per PG
  double sample_interval_s = 1;   // degraded-PG series
  // slow_drive: makes OSD `osd`'s drive `factor` times slower (1: its own speed).
  std::function<void(int32_t osd, double factor)> set_drive_slowdown;
  // nic_degraded: makes storage host `host`'s NICs `factor` times slower (1: their own speed).
  std::function<void(int32_t host, double factor)> set_nic_slowdown;
  // The data the run writes (checkpoints), so that recovery moves it (null: a read-only run,
  // whose data is the dataset the stores already index):
  //  - pg_contents(osd): the objects and logical bytes per PG that OSD `osd`'s drive holds;
  //  - copy_pg(pg, from, to): recovery gave `to` the copy (chunk) of PG `pg` that `from` holds
  //    (or that `from`'s group rebuilds).
  // The PGs' sizes recovery moves are then `sizes` (the pool's other data) plus what was written.
  std::function<cluster::PgSizes(int32_t osd)> pg_contents;
  std::function<void(uint32_t pg, int32_t from, int32_t to)> copy_pg;
  // link_*: the fabric links the events name; the simulator sets each such event's target to
  // its link's index here (-1: a link no simulated traffic crosses, which changes nothing).
  struct Link {
    std::string name;                    // "leaf3-spine"
    int cables = 1;                      // the parallel cables aggregated in it (>= 1)
    std::vector<int32_t> cut_off_hosts;  // storage hosts beyond it (unreachable once cut)
  };
  std::vector<Link> links;
  // Sets link `link`'s capacity to `fraction` of its own (1: full speed), both directions.
  std::function<void(int32_t link, double fraction)> set_link_capacity;
  // drive_replace: OSD `osd`'s drive is new and empty (its store forgets what it held).
  std::function<void(int32_t osd)> replace_drive;
};

class FailureDriver {
 public:
  // `map` is epoch 1 (every OSD up and in) with the pool (id `pool_id`); `services[osd]` are the
  // OSD services; `placement` is what the clients read through; `epoch` what they watch.
  static Result<std::unique_ptr<FailureDriver>> create(
      Env& env, cluster::OsdMap map, int64_t pool_id, std::vector<services::OsdService*> services,
      SwitchingPlacement& placement, std::atomic<uint32_t>& epoch, FailureDriverOptions options);

  // Spawns the heartbeat agents, the monitor, the timeline and the sampler.
  void start();
  // The report's "recovery" section (docs/report-format.md), after the run.
  nlohmann::json report() const;
  // When the first failure happened (-1: none yet).
  double first_failure_s() const { return first_failure_s_; }
  // When full redundancy came back after the last change (-1: not yet).
  double clean_at_s() const { return clean_at_s_; }
  // When the first failed OSD was marked out (-1: never).
  double out_at_s() const {
    double t = -1;
    for (const auto& r : records_) {
      if (r.out_at_s >= 0 && (t < 0 || r.out_at_s < t)) t = r.out_at_s;
    }
    return t;
  }

 private:
  FailureDriver(Env& env, cluster::OsdMap map, int64_t pool_id,
                std::vector<services::OsdService*> services, SwitchingPlacement& placement,
                std::atomic<uint32_t>& epoch, FailureDriverOptions options, cluster::PgData data);
  void start_on_task();
  void on_map(const cluster::OsdMap& map);
  void apply(const models::FailureEvent& e);
  // Why an OSD is not running (a bit set: it runs again when every cause has gone).
  enum Cause : uint32_t { kProcess = 1, kDrive = 2, kPartition = 4, kNic = 8, kLink = 16 };
  void add_cause(int32_t osd, uint32_t cause);
  void remove_cause(int32_t osd, uint32_t cause);
  // The OSDs beyond a cut link (every cable down) are unreachable; the others are not.
  void apply_cuts();
  // The drive's data is gone: its copies leave the PGs' holders.
  void lose_data(int32_t osd);
  // Records the writes a returning OSD missed (PgData::add_stale), against a current copy.
  void mark_stale(int32_t osd);
  // The devices clients and OSDs use for `pg` now (see SwitchingPlacement); sets them in the
  // placement and returns true when they changed.
  bool refresh(uint32_t pg);
  // refresh() for every PG, then a new epoch for the clients to notice.
  void refresh_all();
  // Objects and bytes per PG now: options.sizes plus what was written.
  cluster::PgSizes sizes_now() const;
  void plan_and_run();
  void count_pgs(int& degraded, int& inactive, int& lost, uint64_t& lost_objects,
                 uint64_t& lost_bytes, uint64_t& degraded_objects) const;
  void timeline();
  void sampler();

  Env& env_;
  cluster::OsdMap map_;
  int64_t pool_id_;
  cluster::Redundancy redundancy_;
  int min_size_;
  std::vector<services::OsdService*> services_;
  SwitchingPlacement& placement_;
  std::atomic<uint32_t>& epoch_;
  FailureDriverOptions options_;
  cluster::PgData data_;
  std::vector<std::vector<int32_t>> up_;  // [pg]: the current epoch's up sets
  std::vector<bool> intact_;              // [osd]: its data exists
  std::vector<uint32_t> causes_;          // [osd]: why it is not running (0: running)
  struct LinkState {
    FailureDriverOptions::Link spec;
    int cables_down = 0;
    double factor = 1;
  };
  std::vector<LinkState> links_;  // [options.links]
  std::unique_ptr<cluster::MonitorService> monitor_;
  std::vector<std::unique_ptr<cluster::HeartbeatAgent>> agents_;
  std::unique_ptr<recovery::RecoveryService> recovery_;
  std::unique_ptr<Semaphore> wake_;  // a map change that needs a plan
  bool recovering_ = false;
  bool replan_ = false;

  // Measurements.
  struct EventRecord {
    models::FailureEvent event;
    std::vector<int32_t> osds;
    double down_at_s = -1, out_at_s = -1, up_at_s = -1;
    // Events that bring OSDs back: when, once all of them were up, recovery had nothing left
    // to do (every PG's up set holding current copies).
    double recovered_at_s = -1;
  };
  std::vector<EventRecord> records_;
  std::vector<cluster::MapChange> history_;  // the monitor's, copied when the timeline ends
  double first_failure_s_ = -1;
  double recovery_started_s_ = -1, recovery_finished_s_ = -1, clean_at_s_ = -1;
  uint64_t bytes_moved_ = 0, bytes_minimum_ = 0, bytes_read_ = 0;
  uint32_t pgs_moved_ = 0, plans_ = 0;
  int max_inactive_ = 0, max_degraded_ = 0;
  uint64_t max_degraded_objects_ = 0;
  std::vector<double> degraded_series_, recovery_gibps_series_;
  uint64_t last_recovered_bytes_ = 0;
  uint64_t recovered_before_ = 0;  // bytes of plans finished before the current one
};

}  // namespace granary::sim

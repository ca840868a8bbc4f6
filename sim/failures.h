// FailureDriver: a scenario's failure timeline on a simulated rados cluster. It builds the
// world's side of failure handling and injects the faults; the storage logic is engine/'s
// (docs/recovery.md): one HeartbeatAgent per OSD and the MonitorService
// (engine/cluster/monitor.h) detect crashes and mark OSDs down, then out, and send each epoch
// to the hosts' map clients (the clients and OSDs place through a cluster::MapPlacement of
// their host, sim/world.cc); the RecoveryManager (engine/recovery/recovery_manager.h) on the
// monitor's host follows the maps, asks for pg_temp, and plans and runs recovery with Ceph's
// throttles, competing with the clients for drives and links. A drive failure or replacement
// reaches it as a message from the OSD's host (OsdDeviceReport).
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
// It measures for the report: the epochs (from a map client of its own, timed by the monitor's
// history), the PGs' redundancy each sample (the manager's PgData against which drives and
// OSDs really run), and the manager's counters.
//
// Thread-safety: simulation only (tasks never run concurrently); report() after the run.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/cluster/map_client.h"
#include "engine/cluster/monitor.h"
#include "engine/cluster/osd_map.h"
#include "engine/cluster/pg_states.h"
#include "engine/placement/crush_pool.h"
#include "engine/recovery/recovery_manager.h"
#include "engine/services/osd.h"
#include "models/scenario.h"

namespace granary::sim {

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
  // A run that carries data (sim/carry_data.h): recovery moves the OSDs' objects with their
  // bytes by peering (RecoveryManagerOptions::carried); copy_pg is not called.
  std::optional<recovery::RecoveryManagerOptions::Carried> carried;
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
  // OSD services. The hosts' map clients subscribe to the monitor ("mon.0") themselves.
  static Result<std::unique_ptr<FailureDriver>> create(Env& env, cluster::OsdMap map,
                                                       int64_t pool_id,
                                                       std::vector<services::OsdService*> services,
                                                       FailureDriverOptions options);

  // Spawns the heartbeat agents, the monitor, the recovery manager, the timeline and the
  // sampler.
  void start();
  // The report's "recovery" section (docs/report-format.md), after the run.
  nlohmann::json report() const;
  // Every event has happened and the cluster has settled (the timeline's end: report()'s
  // figures are final).
  bool settled() const { return settled_; }
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
                std::vector<services::OsdService*> services, FailureDriverOptions options);
  void start_on_task();
  // An epoch, as the driver's map client gets it: the events' marks.
  void on_map(const cluster::OsdMap& map);
  // Recovery has nothing left to do for the map: when redundancy came back, which events that
  // brought OSDs back are done.
  void on_idle();
  // From OSD `osd`'s host to the recovery manager.
  void report_device(int32_t osd, DeviceEvent event);
  void apply(const models::FailureEvent& e);
  // Why an OSD is not running (a bit set: it runs again when every cause has gone).
  enum Cause : uint32_t { kProcess = 1, kDrive = 2, kPartition = 4, kNic = 8, kLink = 16 };
  void add_cause(int32_t osd, uint32_t cause);
  void remove_cause(int32_t osd, uint32_t cause);
  // The OSDs beyond a cut link (every cable down) are unreachable; the others are not.
  void apply_cuts();
  void count_pgs(const cluster::PgData& data, const cluster::PgSizes& sizes, int& degraded,
                 int& inactive, int& lost, uint64_t& lost_objects, uint64_t& lost_bytes,
                 uint64_t& degraded_objects) const;
  void timeline();
  void sampler();

  Env& env_;
  cluster::OsdMap initial_;
  cluster::OsdMap map_;  // the last epoch the driver's map client took
  int64_t pool_id_;
  cluster::Redundancy redundancy_;
  int min_size_;
  std::vector<services::OsdService*> services_;
  FailureDriverOptions options_;
  std::vector<bool> intact_;      // [osd]: its drive's data exists (the world's truth)
  std::vector<uint32_t> causes_;  // [osd]: why it is not running (0: running)
  struct LinkState {
    FailureDriverOptions::Link spec;
    int cables_down = 0;
    double factor = 1;
  };
  std::vector<LinkState> links_;  // [options.links]
  std::unique_ptr<cluster::MonitorService> monitor_;
  std::vector<std::unique_ptr<cluster::HeartbeatAgent>> agents_;
  std::unique_ptr<recovery::RecoveryManager> manager_;
  std::unique_ptr<cluster::MapClient> maps_;  // the driver's, for its measurements

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
  bool settled_ = false;
  double clean_at_s_ = -1;
  // The manager's counters and data when the timeline ended (its lock works only on a task).
  // Copies the monitor's history and the manager's state for report() (on a task).
  void capture_final();
  struct Counts {
    int degraded = 0, inactive = 0, lost = 0;
    uint64_t lost_objects = 0, lost_bytes = 0, degraded_objects = 0;
    double at_s = -1;  // when counted (-1: never)
  };
  Counts final_, last_sample_;  // the timeline's last look, the sampler's last sample
  recovery::RecoveryManagerStats final_stats_, last_sample_stats_;
  int max_inactive_ = 0, max_degraded_ = 0;
  uint64_t max_degraded_objects_ = 0;
  std::vector<double> degraded_series_, recovery_gibps_series_;
  std::vector<double> inactive_series_, misplaced_series_, remaining_series_;
  uint64_t last_recovered_bytes_ = 0;
};

}  // namespace granary::sim

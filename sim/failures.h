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
// (the OSDs of the listed hosts are unreachable, data intact), osd_restart / host_restart /
// heal (back; data of a failed drive stays gone), slow_drive and nic_degraded (a drive, or a
// host's NICs, run `factor` times slower; nothing is marked down — the monitor does not see
// slowness).
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

// A Placement that forwards to the current epoch's CRUSH pool, swapped on every map change.
class SwitchingPlacement final : public placement::Placement {
 public:
  explicit SwitchingPlacement(placement::CrushPool initial)
      : pool_(std::make_unique<placement::CrushPool>(std::move(initial))) {}
  void swap(placement::CrushPool next) {
    pool_ = std::make_unique<placement::CrushPool>(std::move(next));
  }
  std::string describe() const override { return pool_->describe(); }
  uint32_t num_groups() const override { return pool_->num_groups(); }
  uint32_t group_of(std::string_view name) const override { return pool_->group_of(name); }
  void devices_of(uint32_t group, std::vector<int32_t>& out) override {
    pool_->devices_of(group, out);
    // A PG whose data is gone is down: it has no OSD to serve it (I/O to it blocks).
    if (group < lost_.size() && lost_[group]) out.clear();
  }
  // PGs that lost their data ([pg]).
  void set_lost(std::vector<bool> lost) { lost_ = std::move(lost); }
  int replicas() const override { return pool_->replicas(); }
  int32_t device_id_bound() const override { return pool_->device_id_bound(); }
  std::vector<double> target_shares() const override { return pool_->target_shares(); }
  int64_t failure_domain(int32_t d) const override { return pool_->failure_domain(d); }

 private:
  std::unique_ptr<placement::CrushPool> pool_;
  std::vector<bool> lost_;
};

struct FailureDriverOptions {
  std::vector<models::FailureEvent> events;
  models::RecoverySpec recovery;
  int drives_per_host = 1;
  HostId monitor_host = 0;
  std::vector<HostId> osd_hosts;  // [osd]
  cluster::PgSizes sizes;         // the pool's objects and bytes per PG
  double sample_interval_s = 1;   // degraded-PG series
  // slow_drive: makes OSD `osd`'s drive `factor` times slower (1: its own speed).
  std::function<void(int32_t osd, double factor)> set_drive_slowdown;
  // nic_degraded: makes storage host `host`'s NICs `factor` times slower (1: their own speed).
  std::function<void(int32_t host, double factor)> set_nic_slowdown;
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
  void crash(int32_t osd, bool data_lost);
  void restart(int32_t osd);
  // Tells the placement which PGs lost their data (after a drive failure).
  void mark_lost_pgs();
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
  std::vector<bool> intact_;   // [osd]: its data exists
  std::vector<bool> crashed_;  // [osd]: not running
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

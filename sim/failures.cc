#include "sim/failures.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/catalog.h"

namespace granary::sim {

namespace {

double round6(double x) {
  return std::round(x * 1e6) / 1e6;
}

nlohmann::json time_or_null(double t) {
  return t < 0 ? nlohmann::json() : nlohmann::json(round6(t));
}

}  // namespace

Result<std::unique_ptr<FailureDriver>> FailureDriver::create(
    Env& env, cluster::OsdMap map, int64_t pool_id, std::vector<services::OsdService*> services,
    FailureDriverOptions options) {
  if (map.pool(pool_id) == nullptr)
    return Status::invalid_argument("no pool " + std::to_string(pool_id));
  if (static_cast<int32_t>(services.size()) != map.max_osd() ||
      static_cast<int32_t>(options.osd_hosts.size()) != map.max_osd()) {
    return Status::invalid_argument("failure driver: one service and host per OSD expected");
  }
  return std::unique_ptr<FailureDriver>(
      new FailureDriver(env, std::move(map), pool_id, std::move(services), std::move(options)));
}

FailureDriver::FailureDriver(Env& env, cluster::OsdMap map, int64_t pool_id,
                             std::vector<services::OsdService*> services,
                             FailureDriverOptions options)
    : env_(env),
      initial_(map),
      map_(std::move(map)),
      pool_id_(pool_id),
      redundancy_(map_.pool(pool_id)->redundancy),
      min_size_(map_.pool(pool_id)->min_size > 0
                    ? map_.pool(pool_id)->min_size
                    : map_.pool(pool_id)->redundancy.default_min_size()),
      services_(std::move(services)),
      options_(std::move(options)),
      intact_(map_.max_osd(), true),
      causes_(map_.max_osd(), 0) {
  for (const auto& l : options_.links) links_.push_back(LinkState{l, 0, 1.0});
}

void FailureDriver::start() {
  // The services' locks are Env semaphores, usable only from a task: set up from one.
  env_.spawn(options_.monitor_host, "failure-setup", [this] { start_on_task(); });
}

void FailureDriver::start_on_task() {
  const auto& rc = options_.recovery;
  cluster::MonitorOptions mo;
  mo.heartbeat_interval_s = rc.heartbeat_interval_s;
  mo.heartbeat_grace_s = rc.heartbeat_grace_s;
  mo.down_out_interval_s = rc.down_out_interval_s;
  monitor_ = std::make_unique<cluster::MonitorService>(env_, options_.monitor_host, map_, mo);
  monitor_->start();
  maps_ = std::make_unique<cluster::MapClient>(
      env_, options_.monitor_host, initial_,
      cluster::MapClientOptions{.endpoint_name = "failures.0.map"});
  maps_->subscribe([this](const cluster::OsdMap& m) { on_map(m); });
  maps_->start();
  for (int32_t osd = 0; osd < map_.max_osd(); ++osd) {
    cluster::HeartbeatOptions ho;
    ho.monitor_endpoint = mo.endpoint_name;
    ho.interval_s = rc.heartbeat_interval_s;
    // Agents start spread over one interval, as OSDs booted at different times.
    ho.first_at_s = rc.heartbeat_interval_s * env_.random().uniform01();
    agents_.push_back(
        std::make_unique<cluster::HeartbeatAgent>(env_, options_.osd_hosts[osd], osd, ho));
    agents_.back()->start();
  }
  recovery::RecoveryOptions ro;
  ro.max_backfills = rc.max_backfills;
  ro.recovery_max_active = rc.recovery_max_active;
  ro.recovery_sleep_s = rc.recovery_sleep_s;
  ro.osd_recovery_bytes_per_s = rc.recovery_bytes_per_s_per_osd;
  ro.op_queues = options_.op_queues;
  ro.cpu_s_per_op = options_.op_cpu_s;
  ro.recovery_max_single_start = rc.recovery_max_single_start;
  // A PGRecovery item's cost: osd_recovery_cost under WPQ and before the 2023 mClock rework
  // (allocations quincy-17.0.0-dev); its objects' bytes after it, where backfill that restores
  // no redundancy is best effort (ceph/ceph PR #49975).
  const bool reef =
      rc.op_queue == models::RecoverySpec::OpQueue::kMclock && rc.mclock_allocations == "reef";
  ro.recovery_item_cost_bytes = reef ? 0 : services::kOsdRecoveryCostBytes;
  ro.misplaced_is_best_effort = reef;
  recovery::RecoveryManagerOptions rm;
  rm.recovery = ro;
  rm.sizes = options_.sizes;
  rm.pg_contents = options_.pg_contents;
  rm.copy_pg = options_.copy_pg;
  rm.carried = options_.carried;
  rm.on_idle = [this] { on_idle(); };
  auto manager =
      recovery::RecoveryManager::create(env_, options_.monitor_host, initial_, pool_id_, rm);
  GRANARY_CHECK(manager.ok());  // create() checked the pool
  manager_ = std::move(*manager);
  manager_->start();
  env_.spawn(options_.monitor_host, "failure-timeline", [this] { timeline(); });
  env_.spawn(
      options_.monitor_host, "pg-sampler", [this] { sampler(); }, TaskOptions{.daemon = true});
}

void FailureDriver::on_map(const cluster::OsdMap& m) {
  // The epoch's time is the monitor's (the map reaches this client a message later).
  const std::vector<cluster::MapChange> history = monitor_->history();
  double at_s = env_.now_s();
  for (const cluster::MapChange& c : history) {
    if (c.epoch == m.epoch()) at_s = c.at_s;
  }
  for (int32_t osd = 0; osd < m.max_osd(); ++osd) {
    const bool was_up = map_.is_up(osd), is_up = m.is_up(osd);
    const bool was_in = map_.is_in(osd), is_in = m.is_in(osd);
    for (auto& r : records_) {
      if (std::find(r.osds.begin(), r.osds.end(), osd) == r.osds.end()) continue;
      if (was_up && !is_up && r.down_at_s < 0) r.down_at_s = at_s;
      if (was_in && !is_in && r.out_at_s < 0) r.out_at_s = at_s;
      if (!was_up && is_up && r.up_at_s < 0) r.up_at_s = at_s;
    }
  }
  map_ = m;
}

void FailureDriver::on_idle() {
  int degraded = 0, inactive = 0, lost = 0;
  uint64_t lo = 0, lb = 0, dobj = 0;
  count_pgs(manager_->data(), manager_->sizes_now(), degraded, inactive, lost, lo, lb, dobj);
  // (The first time since the last failure: a later rebalance, such as PGs moving back to a
  // returning OSD, does not move it.)
  if (degraded == 0 && clean_at_s_ < 0) clean_at_s_ = env_.now_s();
  // Nothing left to recover for the current map: the events that brought OSDs back, once all
  // of them are up, are done.
  using K = models::FailureKind;
  for (auto& r : records_) {
    const K k = r.event.kind;
    const bool restores = k == K::kOsdRestart || k == K::kHostRestart || k == K::kHeal ||
                          k == K::kNicUp || k == K::kLinkUp || k == K::kDriveReplace;
    if (!restores || r.recovered_at_s >= 0 || r.osds.empty()) continue;
    if (std::all_of(r.osds.begin(), r.osds.end(), [&](int32_t o) { return map_.is_up(o); })) {
      r.recovered_at_s = env_.now_s();
    }
  }
}

void FailureDriver::report_device(int32_t osd, DeviceEvent event) {
  // (Sent from the OSD's host, which stays reachable: a drive event is not a host's.)
  (void)env_.send(options_.osd_hosts[osd], manager_->endpoint_name(),
                  Message{OsdDeviceReport{osd, event}, {}, /*header_bytes=*/64});
}

void FailureDriver::add_cause(int32_t osd, uint32_t cause) {
  if (causes_[osd] == 0) {
    services_[osd]->set_available(false);
    agents_[osd]->stop();
  }
  causes_[osd] |= cause;
}

void FailureDriver::remove_cause(int32_t osd, uint32_t cause) {
  if (causes_[osd] == 0 || (causes_[osd] &= ~cause) != 0) return;
  services_[osd]->set_available(true);
  agents_[osd]->restart();
}

void FailureDriver::apply(const models::FailureEvent& e) {
  EventRecord r;
  r.event = e;
  using K = models::FailureKind;
  auto osds_of_host = [&](int32_t host) {
    std::vector<int32_t> osds;
    for (int d = 0; d < options_.drives_per_host; ++d) {
      osds.push_back(host * options_.drives_per_host + d);
    }
    return osds;
  };
  auto add_host = [&](int32_t host) {
    for (int32_t osd : osds_of_host(host)) r.osds.push_back(osd);
  };
  bool failure = false;  // OSDs became unreachable
  switch (e.kind) {
    case K::kHostDown:
    case K::kHostRestart:
    case K::kNicDown:
    case K::kNicUp:
      add_host(e.target);
      break;
    case K::kPartition:
    case K::kHeal:
      for (int32_t h : e.hosts) add_host(h);
      break;
    case K::kNicDegraded:
      add_host(e.target);
      if (options_.set_nic_slowdown) options_.set_nic_slowdown(e.target, e.factor);
      break;
    case K::kLinkDown:
    case K::kLinkDegraded:
    case K::kLinkUp: {
      if (e.target < 0 || e.target >= static_cast<int32_t>(links_.size())) break;  // idle link
      LinkState& l = links_[e.target];
      const bool was_cut = l.cables_down >= l.spec.cables;
      if (e.kind == K::kLinkDown) l.cables_down = std::min(l.spec.cables, l.cables_down + e.cables);
      if (e.kind == K::kLinkDegraded) l.factor = e.factor;
      if (e.kind == K::kLinkUp) l.cables_down = 0, l.factor = 1;
      const bool cut = l.cables_down >= l.spec.cables;
      // Cut, the link keeps its last capacity (what is in flight finishes; nothing new is
      // answered beyond it); otherwise the cables still up, at 1/factor of their speed.
      if (!cut && options_.set_link_capacity) {
        options_.set_link_capacity(e.target, static_cast<double>(l.spec.cables - l.cables_down) /
                                                 l.spec.cables / l.factor);
      }
      if (cut != was_cut) {
        for (int32_t h : l.spec.cut_off_hosts) add_host(h);
        failure = cut;
        apply_cuts();
      }
      break;
    }
    default:
      r.osds.push_back(e.target);
  }
  for (int32_t osd : r.osds) {
    switch (e.kind) {
      case K::kOsdCrash:
      case K::kHostDown:
        add_cause(osd, kProcess);
        failure = true;
        break;
      case K::kPartition:  // unreachable: to its peers and the monitor, as good as crashed
        add_cause(osd, kPartition);
        failure = true;
        break;
      case K::kNicDown:
        add_cause(osd, kNic);
        failure = true;
        break;
      case K::kDriveFailure:
        add_cause(osd, kDrive);
        if (intact_[osd]) {
          intact_[osd] = false;
          report_device(osd, DeviceEvent::kFailed);
        }
        failure = true;
        break;
      case K::kOsdRestart:
      case K::kHostRestart:
        remove_cause(osd, kProcess);  // a dead drive does not come back
        break;
      case K::kHeal:
        remove_cause(osd, kPartition);
        break;
      case K::kNicUp:
        remove_cause(osd, kNic);
        break;
      case K::kDriveReplace:
        // A new, empty drive: nothing of the old one's data (its copies left the PGs when it
        // failed); the OSD boots up and in, and backfill fills it.
        if (intact_[osd]) break;
        if (options_.replace_drive) options_.replace_drive(osd);
        intact_[osd] = true;
        report_device(osd, DeviceEvent::kReplacedEmpty);
        remove_cause(osd, kDrive);
        break;
      case K::kSlowDrive:
        if (options_.set_drive_slowdown) options_.set_drive_slowdown(osd, e.factor);
        break;
      case K::kNicDegraded:
      case K::kLinkDown:
      case K::kLinkDegraded:
      case K::kLinkUp:
        break;  // the host's NICs, or the link's cut, above
    }
  }
  if (failure && first_failure_s_ < 0) first_failure_s_ = env_.now_s();
  if (failure) clean_at_s_ = -1;
  records_.push_back(std::move(r));
}

void FailureDriver::apply_cuts() {
  std::vector<bool> cut(causes_.size(), false);
  for (const LinkState& l : links_) {
    if (l.cables_down < l.spec.cables) continue;
    for (int32_t h : l.spec.cut_off_hosts) {
      for (int d = 0; d < options_.drives_per_host; ++d) {
        const size_t osd = static_cast<size_t>(h) * options_.drives_per_host + d;
        if (osd < cut.size()) cut[osd] = true;
      }
    }
  }
  for (size_t osd = 0; osd < cut.size(); ++osd) {
    const bool now = (causes_[osd] & kLink) != 0;
    if (cut[osd] && !now) add_cause(static_cast<int32_t>(osd), kLink);
    if (!cut[osd] && now) remove_cause(static_cast<int32_t>(osd), kLink);
  }
}

void FailureDriver::timeline() {
  for (const auto& e : options_.events) {
    if (e.at_s > env_.now_s()) env_.sleep_s(e.at_s - env_.now_s());
    apply(e);
  }
  // Stay until the cluster has settled: every crashed OSD marked down (and out, when the
  // monitor marks out) and no recovery running or due.
  for (;;) {
    bool settled = !manager_->busy();
    for (int32_t osd = 0; osd < map_.max_osd() && settled; ++osd) {
      if (causes_[osd] == 0) {
        settled = map_.is_up(osd) || !map_.is_in(osd);
        continue;
      }
      settled =
          !map_.is_up(osd) && (options_.recovery.down_out_interval_s <= 0 || !map_.is_in(osd));
    }
    if (settled) {
      env_.sleep_s(options_.sample_interval_s);  // let the manager take the last change
      if (!manager_->busy()) {
        capture_final();
        settled_ = true;
        return;
      }
    }
    env_.sleep_s(options_.sample_interval_s);
  }
}

void FailureDriver::count_pgs(const cluster::PgData& data, const cluster::PgSizes& sizes,
                              int& degraded, int& inactive, int& lost, uint64_t& lost_objects,
                              uint64_t& lost_bytes, uint64_t& degraded_objects) const {
  degraded = inactive = lost = 0;
  lost_objects = lost_bytes = degraded_objects = 0;
  for (size_t pg = 0; pg < data.holders.size(); ++pg) {
    int surviving = 0, available = 0;
    for (int32_t h : data.holders[pg]) {
      if (h == placement::kNoDevice || !intact_[h]) continue;
      ++surviving;
      if (causes_[h] == 0) ++available;
    }
    const uint64_t objects = pg < sizes.objects.size() ? sizes.objects[pg] : 0;
    if (available < redundancy_.size) {
      ++degraded;
      degraded_objects += objects;
    }
    if (available < min_size_) ++inactive;
    if (surviving < redundancy_.needed_to_read()) {
      ++lost;
      lost_objects += objects;
      lost_bytes += pg < sizes.bytes.size() ? sizes.bytes[pg] : 0;
    }
  }
}

void FailureDriver::sampler() {
  for (;;) {
    env_.sleep_s(options_.sample_interval_s);
    int degraded = 0, inactive = 0, lost = 0;
    uint64_t lo = 0, lb = 0, dobj = 0;
    const cluster::PgData data = manager_->data();
    const cluster::PgSizes sizes = manager_->sizes_now();
    count_pgs(data, sizes, degraded, inactive, lost, lo, lb, dobj);
    max_degraded_ = std::max(max_degraded_, degraded);
    max_inactive_ = std::max(max_inactive_, inactive);
    max_degraded_objects_ = std::max(max_degraded_objects_, dobj);
    degraded_series_.push_back(degraded);
    inactive_series_.push_back(inactive);
    cluster::PgStatesInput in;
    in.map = &map_;
    in.pool_id = pool_id_;
    in.data = &data;
    in.sizes = &sizes;
    int misplaced = 0;
    if (Result<cluster::PgStatesReport> states = cluster::pg_states(in); states.ok()) {
      for (const cluster::PgStatus& pg : states->pgs) misplaced += pg.misplaced > 0;
    }
    misplaced_series_.push_back(misplaced);
    const recovery::RecoveryManagerStats stats = manager_->stats();
    remaining_series_.push_back(static_cast<double>(
        stats.bytes_moved > stats.bytes_recovered ? stats.bytes_moved - stats.bytes_recovered : 0));
    const uint64_t recovered = stats.bytes_recovered;
    recovery_gibps_series_.push_back(static_cast<double>(recovered - last_recovered_bytes_) /
                                     options_.sample_interval_s / std::ldexp(1.0, 30));
    last_recovered_bytes_ = recovered;
    // What the report gives "at end" when the world ends after this sample: the world may end
    // before the timeline settles (a down OSD waiting for its mark-out) or go on after it; the
    // locks of the manager work only on a task, so the report cannot ask it after the run.
    last_sample_ = Counts{degraded, inactive, lost, lo, lb, dobj, env_.now_s()};
    last_sample_stats_ = stats;
  }
}

void FailureDriver::capture_final() {
  history_ = monitor_->history();
  final_stats_ = manager_->stats();
  const cluster::PgData data = manager_->data();
  final_ = Counts{};
  count_pgs(data, manager_->sizes_now(), final_.degraded, final_.inactive, final_.lost,
            final_.lost_objects, final_.lost_bytes, final_.degraded_objects);
  final_.at_s = env_.now_s();
}

nlohmann::json FailureDriver::report() const {
  nlohmann::json events = nlohmann::json::array();
  double detect = -1;
  for (const auto& r : records_) {
    nlohmann::json e = {{"at_s", round6(r.event.at_s)},
                        {"factor", r.event.factor},
                        {"kind", std::string(models::failure_kind_name(r.event.kind))},
                        {"osds", r.osds},
                        {"marked_down_at_s", time_or_null(r.down_at_s)},
                        {"marked_out_at_s", time_or_null(r.out_at_s)},
                        {"marked_up_at_s", time_or_null(r.up_at_s)},
                        {"recovered_at_s", time_or_null(r.recovered_at_s)}};
    if (r.recovered_at_s >= 0) e["time_to_recover_s"] = round6(r.recovered_at_s - r.event.at_s);
    if (!r.event.link.empty()) {
      e["link"] = r.event.link;
      if (r.event.kind == models::FailureKind::kLinkDown) e["cables"] = r.event.cables;
    }
    if (r.event.random) {
      e["generated_by"] = {{"kind", "random_drive_failures"},
                           {"entry", "failures[" + std::to_string(r.event.entry) + "]"},
                           {"seed", r.event.seed}};
    }
    if (r.down_at_s >= 0) {
      e["time_to_detect_s"] = round6(r.down_at_s - r.event.at_s);
      if (detect < 0) detect = r.down_at_s - r.event.at_s;
    }
    events.push_back(e);
  }
  // At end: the later of the timeline's last look and the sampler's.
  const bool sampled_later = last_sample_.at_s > final_.at_s;
  const Counts& end = sampled_later ? last_sample_ : final_;
  const int degraded = end.degraded, lost = end.lost;
  const uint64_t lost_objects = end.lost_objects, lost_bytes = end.lost_bytes;
  // The epochs that moved OSDs; those that only set or cleared pg_temp (the recovery manager's
  // requests, one per finished backfill) are counted.
  nlohmann::json changes = nlohmann::json::array();
  uint64_t pg_temp_epochs = 0;
  for (const auto& c : history_) {
    if (c.pg_temp_only) {
      ++pg_temp_epochs;
      continue;
    }
    changes.push_back({{"epoch", c.epoch}, {"at_s", round6(c.at_s)}, {"what", c.what}});
  }
  nlohmann::json r;
  r["events"] = events;
  r["map_changes"] = changes;
  r["pg_temp_epochs"] = pg_temp_epochs;
  r["time_to_detect_s"] = time_or_null(detect);
  const recovery::RecoveryManagerStats& st = sampled_later ? last_sample_stats_ : final_stats_;
  r["recovery_started_at_s"] = time_or_null(st.recovery_started_at_s);
  r["recovery_finished_at_s"] = time_or_null(st.recovery_finished_at_s);
  r["redundancy_restored_at_s"] = time_or_null(clean_at_s_);
  r["time_to_full_redundancy_s"] = clean_at_s_ >= 0 && first_failure_s_ >= 0
                                       ? nlohmann::json(round6(clean_at_s_ - first_failure_s_))
                                       : nlohmann::json();
  r["bytes_moved"] = st.bytes_moved;
  r["bytes_minimum"] = st.bytes_minimum;
  r["moved_over_minimum"] =
      st.bytes_minimum > 0 ? round6(static_cast<double>(st.bytes_moved) / st.bytes_minimum) : 0.0;
  r["bytes_read"] = st.bytes_read;
  r["pgs_moved"] = st.pgs_moved;
  r["plans"] = st.plans;
  r["degraded_pgs_max"] = max_degraded_;
  r["degraded_objects_max"] = max_degraded_objects_;
  r["inactive_pgs_max"] = max_inactive_;
  r["degraded_pgs_at_end"] = degraded;
  r["pgs_lost"] = lost;
  r["objects_lost"] = lost_objects;
  r["bytes_lost"] = lost_bytes;
  // Per OSD: what recovery read from and wrote to each (OSDs that moved nothing left out).
  nlohmann::json per_osd = nlohmann::json::array();
  for (size_t osd = 0;
       osd < std::max(st.bytes_read_per_osd.size(), st.bytes_written_per_osd.size()); ++osd) {
    const uint64_t rd = osd < st.bytes_read_per_osd.size() ? st.bytes_read_per_osd[osd] : 0;
    const uint64_t wr = osd < st.bytes_written_per_osd.size() ? st.bytes_written_per_osd[osd] : 0;
    if (rd + wr > 0) per_osd.push_back({{"osd", osd}, {"bytes_read", rd}, {"bytes_written", wr}});
  }
  r["per_osd"] = per_osd;
  auto series = [](const std::vector<double>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(round6(x));
    return a;
  };
  auto counts = [](const std::vector<double>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(static_cast<int64_t>(std::llround(x)));
    return a;
  };
  nlohmann::json t = nlohmann::json::array();
  for (size_t i = 0; i < degraded_series_.size(); ++i) {
    t.push_back(round6(static_cast<double>(i + 1) * options_.sample_interval_s));
  }
  r["series"] = {{"interval_s", options_.sample_interval_s},
                 {"t_s", t},
                 {"degraded_pgs", counts(degraded_series_)},
                 {"inactive_pgs", counts(inactive_series_)},
                 {"misplaced_pgs", counts(misplaced_series_)},
                 {"bytes_remaining", counts(remaining_series_)},
                 {"recovery_gibps", series(recovery_gibps_series_)}};
  return r;
}

}  // namespace granary::sim

#include "engine/cluster/monitor.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>
#include <variant>

namespace granary::cluster {

namespace {

// Deadlines are compared with this slack: a timeout scheduled for a deadline may wake a hair
// before it in floating point.
constexpr double kDeadlineSlackS = 1e-9;

// Wakes the monitor's loop so that it recomputes its deadline (after an operator's change).
constexpr int32_t kWakeUp = -1;

}  // namespace

MonitorService::MonitorService(Env& env, HostId host, OsdMap initial, MonitorOptions options)
    : env_(env),
      host_(host),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      mu_(env),
      map_(std::move(initial)) {
  GRANARY_CHECK(!options_.endpoint_name.empty());
  GRANARY_CHECK(options_.heartbeat_interval_s > 0 && options_.heartbeat_grace_s >= 0);
  first_kept_epoch_ = map_.epoch() + 1;
  track_size();
}

void MonitorService::track_size() {
  osds_.resize(static_cast<size_t>(map_.max_osd()), OsdTrack{env_.now_s(), -1, false});
}

void MonitorService::add_subscriber(const std::string& endpoint) {
  std::lock_guard<services::EnvMutex> lock(mu_);
  if (subscriber_set_.insert(endpoint).second) subscribers_.push_back(endpoint);
}

void MonitorService::start(TaskOptions task_options) {
  env_.spawn(
      host_, options_.endpoint_name, [this] { serve(); }, task_options);
}

OsdMap MonitorService::map() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return map_;
}

std::vector<MapChange> MonitorService::history() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return history_;
}

Result<MonitorService::Published> MonitorService::apply_locked(Incremental change, bool auto_out) {
  if (options_.prime_pg_temp && change.changes_osds()) {
    OsdMap next = map_;
    if (Status s = next.apply(change); !s.ok()) return s;
    for (PgTempEntry& e : prime_pg_temp(map_, next)) change.pg_temp.push_back(std::move(e));
  }
  if (Status s = map_.apply(change); !s.ok()) return s;
  const double now = env_.now_s();
  track_size();
  for (int32_t osd : change.mark_down) osds_[static_cast<size_t>(osd)].down_at_s = now;
  for (int32_t osd : change.remove) osds_[static_cast<size_t>(osd)].down_at_s = -1;
  for (int32_t osd : change.mark_up) {
    OsdTrack& t = osds_[static_cast<size_t>(osd)];
    t.down_at_s = -1;
    t.last_heard_s = now;  // a grace period from the boot on
  }
  for (int32_t osd : change.mark_out) osds_[static_cast<size_t>(osd)].auto_out = auto_out;
  for (int32_t osd : change.mark_in) osds_[static_cast<size_t>(osd)].auto_out = false;
  history_.push_back(MapChange{map_.epoch(), now, change.describe(), !change.changes_osds()});
  auto kept = std::make_shared<const Incremental>(std::move(change));
  kept_.push_back(kept);
  while (kept_.size() > std::max<size_t>(1, options_.map_history)) {
    kept_.pop_front();
    ++first_kept_epoch_;
  }
  return Published{map_.epoch(), std::move(kept), subscribers_};
}

void MonitorService::publish(const Published& p) {
  for (const std::string& to : p.to) {
    MapUpdate u;
    u.first_epoch = p.epoch;
    u.incrementals.push_back(p.change);
    // (A subscriber whose host is down misses it, and asks again when it sees the gap.)
    (void)env_.send(host_, to, Message{std::move(u), {}});
  }
}

Status MonitorService::apply(const Incremental& change) {
  Result<Published> published = [&]() -> Result<Published> {
    std::lock_guard<services::EnvMutex> lock(mu_);
    return apply_locked(change, false);
  }();
  if (!published.ok()) return published.status();
  publish(*published);
  // The change may move the monitor's next deadline (an OSD marked up or down).
  env_.send(host_, options_.endpoint_name, Message{Heartbeat{kWakeUp, env_.now_s()}, {}});
  return Status::ok_status();
}

void MonitorService::on_subscribe(const MapSubscribe& sub) {
  MapUpdate u;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    if (subscriber_set_.insert(sub.reply_to).second) subscribers_.push_back(sub.reply_to);
    const uint32_t epoch = map_.epoch();
    if (sub.have_epoch >= epoch) {
      if (!sub.confirm) return;            // up to date: the next epochs will follow
      u.first_epoch = sub.have_epoch + 1;  // no epochs: "yours is current"
    } else if (sub.have_epoch + 1 >= first_kept_epoch_ && sub.have_epoch > 0) {
      u.first_epoch = sub.have_epoch + 1;
      for (uint32_t e = u.first_epoch; e <= epoch; ++e) {
        u.incrementals.push_back(kept_[e - first_kept_epoch_]);
      }
    } else {
      u.full = std::make_shared<const OsdMap>(map_);
      u.first_epoch = epoch + 1;
    }
  }
  // A full map or a run of incrementals: larger than one epoch's, still a small message.
  (void)env_.send(host_, sub.reply_to, Message{std::move(u), {}, /*header_bytes=*/4096});
}

void MonitorService::on_pg_temp(const PgTempRequest& r) {
  Result<Published> published = Status::not_found("nothing to publish");
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    Incremental change;
    for (const PgTempEntry& e : r.entries) {
      const std::vector<int32_t>* now = map_.pg_temp(e.pool, e.pg);
      const bool same = e.clear ? now == nullptr : now != nullptr && *now == e.osds;
      if (!same) change.pg_temp.push_back(e);
    }
    if (change.empty()) return;
    published = apply_locked(std::move(change), false);
  }
  if (published.ok()) publish(*published);
}

double MonitorService::next_deadline_s() const {
  double next = std::numeric_limits<double>::infinity();
  const double silence_s = options_.heartbeat_interval_s + options_.heartbeat_grace_s;
  for (int32_t osd = 0; osd < map_.max_osd(); ++osd) {
    const OsdTrack& t = osds_[static_cast<size_t>(osd)];
    if (map_.is_up(osd)) {
      next = std::min(next, t.last_heard_s + silence_s);
    } else if (map_.is_in(osd) && t.down_at_s >= 0 && options_.down_out_interval_s > 0) {
      next = std::min(next, t.down_at_s + options_.down_out_interval_s);
    }
  }
  return next;
}

void MonitorService::on_heartbeat(const Heartbeat& hb) {
  const int32_t osd = hb.osd;
  std::vector<Published> published;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    if (!map_.exists(osd)) return;  // unknown or removed: ignored
    OsdTrack& track = osds_[static_cast<size_t>(osd)];
    track.last_heard_s = env_.now_s();
    const bool restarted =
        hb.incarnation != 0 && track.incarnation != 0 && hb.incarnation != track.incarnation;
    if (hb.incarnation != 0) track.incarnation = hb.incarnation;
    if (map_.is_up(osd) && !restarted) return;
    if (map_.is_up(osd)) {
      // A new process of an OSD still marked up: the old one died unnoticed. Down first.
      Incremental down;
      down.mark_down.push_back(osd);
      Result<Published> d = apply_locked(down, false);
      GRANARY_CHECK(d.ok());
      published.push_back(std::move(d).value());
    }
    // A heartbeat from a down OSD: it booted.
    Incremental boot;
    boot.mark_up.push_back(osd);
    if (!map_.is_in(osd) && osds_[static_cast<size_t>(osd)].auto_out &&
        options_.auto_mark_auto_out_in) {
      boot.mark_in.push_back(osd);
    }
    Result<Published> up = apply_locked(boot, false);
    if (up.ok()) published.push_back(std::move(up).value());
  }
  for (const Published& p : published) publish(p);
}

void MonitorService::check_deadlines() {
  std::vector<Published> to_publish;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    const double now = env_.now_s() + kDeadlineSlackS;
    const double silence_s = options_.heartbeat_interval_s + options_.heartbeat_grace_s;
    Incremental down;
    for (int32_t osd = 0; osd < map_.max_osd(); ++osd) {
      if (map_.is_up(osd) && osds_[static_cast<size_t>(osd)].last_heard_s + silence_s <= now) {
        down.mark_down.push_back(osd);
      }
    }
    if (!down.empty()) {
      Result<Published> m = apply_locked(down, false);
      GRANARY_CHECK(m.ok());
      to_publish.push_back(std::move(m).value());
    }
    Incremental out;
    if (options_.down_out_interval_s > 0) {
      for (int32_t osd = 0; osd < map_.max_osd(); ++osd) {
        const OsdTrack& t = osds_[static_cast<size_t>(osd)];
        if (map_.exists(osd) && !map_.is_up(osd) && map_.is_in(osd) && t.down_at_s >= 0 &&
            t.down_at_s + options_.down_out_interval_s <= now) {
          out.mark_out.push_back(osd);
        }
      }
    }
    if (!out.empty()) {
      Result<Published> m = apply_locked(out, true);
      GRANARY_CHECK(m.ok());
      to_publish.push_back(std::move(m).value());
    }
  }
  for (const Published& p : to_publish) publish(p);
}

void MonitorService::serve() {
  {
    // Heard from every up OSD as the service starts.
    std::lock_guard<services::EnvMutex> lock(mu_);
    for (OsdTrack& t : osds_) t.last_heard_s = std::max(t.last_heard_s, env_.now_s());
  }
  for (;;) {
    double wait_s = 0;
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      wait_s = next_deadline_s() - env_.now_s();
    }
    Result<Message> m = wait_s == std::numeric_limits<double>::infinity()
                            ? endpoint_.recv()
                            : endpoint_.recv(std::max(0.0, wait_s));
    if (m.ok()) {
      if (std::holds_alternative<Shutdown>(m->body)) return;
      if (const auto* hb = std::get_if<Heartbeat>(&m->body); hb != nullptr && hb->osd != kWakeUp) {
        on_heartbeat(*hb);
      } else if (const auto* sub = std::get_if<MapSubscribe>(&m->body)) {
        on_subscribe(*sub);
      } else if (const auto* temp = std::get_if<PgTempRequest>(&m->body)) {
        on_pg_temp(*temp);
      }
    } else if (m.status().code() != Status::Code::kNotFound) {
      return;  // the endpoint failed (the monitor's host went down)
    }
    check_deadlines();
  }
}

// ---------------------------------------------------------------------------------------------

HeartbeatAgent::HeartbeatAgent(Env& env, HostId host, int32_t osd, HeartbeatOptions options)
    : env_(env), host_(host), osd_(osd), options_(std::move(options)), mu_(env) {
  GRANARY_CHECK(osd >= 0);
  GRANARY_CHECK(options_.interval_s > 0 && options_.first_at_s >= 0);
}

void HeartbeatAgent::start(TaskOptions task_options) {
  task_options_ = task_options;
  uint64_t generation = 0;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    running_ = true;
    generation = ++generation_;
  }
  env_.spawn(
      host_, "heartbeat.osd." + std::to_string(osd_),
      [this, generation] { loop(generation, options_.first_at_s); }, task_options_);
}

void HeartbeatAgent::stop() {
  std::lock_guard<services::EnvMutex> lock(mu_);
  running_ = false;
  ++generation_;
}

void HeartbeatAgent::restart() {
  uint64_t generation = 0;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    running_ = true;
    generation = ++generation_;
  }
  env_.spawn(
      host_, "heartbeat.osd." + std::to_string(osd_), [this, generation] { loop(generation, 0); },
      task_options_);
}

bool HeartbeatAgent::running() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return running_;
}

void HeartbeatAgent::loop(uint64_t generation, double first_delay_s) {
  if (first_delay_s > 0) env_.sleep_s(first_delay_s);
  for (;;) {
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      if (!running_ || generation_ != generation) return;
    }
    env_.send(
        host_, options_.monitor_endpoint,
        Message{Heartbeat{osd_, env_.now_s(), options_.incarnation}, {}, /*header_bytes=*/64});
    env_.sleep_s(options_.interval_s);
  }
}

}  // namespace granary::cluster

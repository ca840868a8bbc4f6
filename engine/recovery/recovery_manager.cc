#include "engine/recovery/recovery_manager.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <variant>

#include "engine/cluster/acting.h"
#include "engine/recovery/peering.h"
#include "engine/recovery/planner.h"
#include "engine/services/file_mapping.h"

namespace granary::recovery {

Result<std::unique_ptr<RecoveryManager>> RecoveryManager::create(Env& env, HostId host,
                                                                 cluster::OsdMap map,
                                                                 int64_t pool_id,
                                                                 RecoveryManagerOptions options) {
  if (map.pool(pool_id) == nullptr) {
    return Status::invalid_argument("recovery manager: no pool " + std::to_string(pool_id));
  }
  auto data = cluster::PgData::of_map(map, pool_id);
  if (!data.ok()) return data.status();
  return std::unique_ptr<RecoveryManager>(new RecoveryManager(
      env, host, std::move(map), pool_id, std::move(options), std::move(*data)));
}

RecoveryManager::RecoveryManager(Env& env, HostId host, cluster::OsdMap map, int64_t pool_id,
                                 RecoveryManagerOptions options, cluster::PgData data)
    : env_(env),
      host_(host),
      pool_id_(pool_id),
      redundancy_(map.pool(pool_id)->redundancy),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      maps_(std::make_unique<cluster::MapClient>(
          env, host, map,
          cluster::MapClientOptions{.endpoint_name = options_.endpoint_name + ".map",
                                    .monitor_endpoint = options_.monitor_endpoint})),
      mu_(env),
      map_(std::move(map)),
      data_(std::move(data)),
      intact_(static_cast<size_t>(map_.max_osd()), true) {
  if (auto up = map_.up_sets(pool_id_); up.ok()) up_ = std::move(*up);
}

void RecoveryManager::start() {
  RecoveryOptions ro = options_.recovery;
  ro.on_op_done = [this](const RecoveryOp& op, size_t, double) {
    // The target holds the copy now: the written objects go with it, and the PG's clients
    // move to its up set if that was the last member missing (pg_temp cleared: a new interval).
    if (options_.copy_pg && !options_.carried && !op.sources.empty())
      options_.copy_pg(op.pg, op.sources[0], op.target);
    std::vector<PgTempEntry> entries;
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      apply_completed(op, redundancy_, data_);
      refresh(op.pg, entries);
    }
    send_pg_temp(std::move(entries));
  };
  if (options_.carried) {
    ro.move_objects = [this](const RecoveryOp& op, HostId host) { return move_objects(op, host); };
  }
  recovery_ = std::make_unique<RecoveryService>(env_, ro);
  wake_ = env_.make_semaphore(0);
  maps_->subscribe([this](const cluster::OsdMap& m) { on_map(m); });
  maps_->start();
  env_.spawn(
      host_, options_.endpoint_name, [this] { serve(); }, TaskOptions{.daemon = true});
  env_.spawn(
      host_, options_.endpoint_name + ".planner", [this] { planner(); },
      TaskOptions{.daemon = true});
}

namespace {
// Adds a plan's per-OSD bytes to `s`'s.
void add_per_osd(RecoveryManagerStats& s, const RecoveryStats& plan) {
  auto add = [](std::vector<uint64_t>& to, const std::vector<uint64_t>& from) {
    if (to.size() < from.size()) to.resize(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) to[i] += from[i];
  };
  add(s.bytes_read_per_osd, plan.bytes_read_per_osd);
  add(s.bytes_written_per_osd, plan.bytes_written_per_osd);
}
}  // namespace

bool RecoveryManager::busy() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return recovering_ || replan_;
}

RecoveryManagerStats RecoveryManager::stats() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  RecoveryManagerStats s = stats_;
  s.bytes_recovered = recovered_before_;
  if (recovering_) {
    const RecoveryStats running = recovery_->stats();
    s.bytes_recovered += running.bytes_written;
    add_per_osd(s, running);
  }
  return s;
}

cluster::PgData RecoveryManager::data() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return data_;
}

bool RecoveryManager::intact(int32_t osd) const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return osd >= 0 && static_cast<size_t>(osd) < intact_.size() && intact_[osd];
}

cluster::PgSizes RecoveryManager::sizes_now() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return sizes_locked();
}

cluster::PgSizes RecoveryManager::sizes_locked() const {
  cluster::PgSizes sizes = options_.sizes;
  if (!options_.pg_contents) return sizes;
  const size_t pgs = data_.holders.size();
  sizes.objects.resize(pgs, 0);
  sizes.bytes.resize(pgs, 0);
  // A PG's written data: the most any OSD holds of it (every copy, every chunk's object
  // counts the same objects and logical bytes).
  std::vector<uint64_t> objects(pgs, 0), bytes(pgs, 0);
  for (int32_t osd = 0; osd < map_.max_osd(); ++osd) {
    if (!intact_[osd]) continue;
    const cluster::PgSizes c = options_.pg_contents(osd);
    for (size_t pg = 0; pg < pgs && pg < c.objects.size(); ++pg) {
      objects[pg] = std::max(objects[pg], c.objects[pg]);
      bytes[pg] = std::max(bytes[pg], c.bytes[pg]);
    }
  }
  for (size_t pg = 0; pg < pgs; ++pg) {
    sizes.objects[pg] += objects[pg];
    sizes.bytes[pg] += bytes[pg];
  }
  return sizes;
}

void RecoveryManager::want_plan() {
  if (recovering_) {
    replan_ = true;
  } else {
    wake_->release();
  }
}

void RecoveryManager::on_map(const cluster::OsdMap& m) {
  std::vector<PgTempEntry> entries;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    bool changed = false;
    std::vector<int32_t> returned;
    for (int32_t osd = 0; osd < m.max_osd(); ++osd) {
      const bool was_up = map_.is_up(osd), is_up = m.is_up(osd);
      changed = changed || map_.is_in(osd) != m.is_in(osd) || was_up != is_up;
      if (!was_up && is_up) returned.push_back(osd);
    }
    const bool same_up = map_.same_up_sets(m);
    map_ = m;
    if (intact_.size() < static_cast<size_t>(map_.max_osd())) intact_.resize(map_.max_osd(), true);
    if (!same_up) {
      if (auto up = map_.up_sets(pool_id_); up.ok()) up_ = std::move(*up);
    }
    for (int32_t osd : returned) mark_stale(osd);
    for (uint32_t pg = 0; pg < up_.size(); ++pg) refresh(pg, entries);
    if (changed) want_plan();
  }
  send_pg_temp(std::move(entries));
}

void RecoveryManager::serve() {
  for (;;) {
    Result<Message> m = endpoint_.recv();
    if (!m.ok() || std::holds_alternative<Shutdown>(m->body)) return;
    const auto* report = std::get_if<OsdDeviceReport>(&m->body);
    if (report == nullptr || report->osd < 0) continue;
    std::vector<PgTempEntry> entries;
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      const size_t osd = static_cast<size_t>(report->osd);
      if (osd >= intact_.size()) intact_.resize(osd + 1, true);
      if (report->event == DeviceEvent::kFailed) {
        if (!intact_[osd]) continue;
        lose_data(report->osd);
        for (uint32_t pg = 0; pg < up_.size(); ++pg) refresh(pg, entries);
      } else {
        // A new, empty drive: nothing of the old one's data (its copies left the PGs when it
        // failed); the OSD boots up and in, and backfill fills it. (Replaced before the monitor
        // noticed: no map change will plan the refill.)
        if (intact_[osd]) continue;
        intact_[osd] = true;
        want_plan();
      }
    }
    send_pg_temp(std::move(entries));
  }
}

void RecoveryManager::planner() {
  for (;;) {
    wake_->acquire();
    plan_and_run();
  }
}

void RecoveryManager::plan_and_run() {
  for (;;) {
    Result<RecoveryPlan> plan = Status::not_found("no plan");
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      replan_ = false;
      plan = plan_recovery(data_, map_, pool_id_, sizes_locked());
      if (!plan.ok() || plan->ops.empty()) break;
      ++stats_.plans;
      stats_.bytes_moved += plan->bytes_to_write;
      stats_.bytes_minimum += plan->minimum_bytes;
      stats_.pgs_moved += plan->pgs_to_move;
      if (stats_.recovery_started_at_s < 0) stats_.recovery_started_at_s = env_.now_s();
      recovering_ = true;
    }
    recovery_->execute(std::move(*plan));
    recovery_->wait();
    const RecoveryStats st = recovery_->stats();
    std::lock_guard<services::EnvMutex> lock(mu_);
    stats_.bytes_read += st.bytes_read;
    recovered_before_ += st.bytes_written;
    add_per_osd(stats_, st);
    recovering_ = false;
    stats_.recovery_finished_at_s = env_.now_s();
    if (!replan_) break;
  }
  if (options_.on_idle) options_.on_idle();
}

Result<CarriedMove> RecoveryManager::move_objects(const RecoveryOp& op, HostId host) {
  PgMembers members{op.pg, {}};
  PeeringOptions po;
  po.ec = options_.carried->ec;
  po.timeout_s = options_.carried->timeout_s;
  po.pg_of = options_.carried->pg_of;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    po.reply_endpoint = options_.endpoint_name + ".peer." + std::to_string(++peerings_);
    auto readable = [this](int32_t o) {
      return o >= 0 && static_cast<size_t>(o) < intact_.size() && intact_[o] && map_.is_up(o);
    };
    if (redundancy_.erasure) {
      // Positions matter: every readable holder at its shard, the target at the op's.
      const std::vector<int32_t>& h = data_.holders[op.pg];
      members.osds.assign(static_cast<size_t>(po.ec.k + po.ec.m), "");
      for (size_t i = 0; i < h.size() && i < members.osds.size(); ++i) {
        if (readable(h[i])) members.osds[i] = services::osd_endpoint_name(h[i]);
      }
      if (op.shard < 0 || static_cast<size_t>(op.shard) >= members.osds.size()) {
        return Status::invalid_argument("recovery of PG " + std::to_string(op.pg) +
                                        ": an erasure op without a shard position");
      }
      members.osds[static_cast<size_t>(op.shard)] = services::osd_endpoint_name(op.target);
    } else {
      for (int32_t s : op.sources) {
        if (readable(s)) members.osds.push_back(services::osd_endpoint_name(s));
      }
      members.osds.push_back(services::osd_endpoint_name(op.target));
    }
  }
  Result<PeeringReport> r = peer(env_, host, {members}, po);
  if (!r.ok()) return r.status();
  if (!r->unrecoverable.empty()) {
    return Status::corruption("recovery of PG " + std::to_string(op.pg) + ": " +
                              std::to_string(r->unrecoverable.size()) +
                              " object(s) cannot be rebuilt, the first " + r->unrecoverable[0]);
  }
  CarriedMove m;
  m.objects_pushed = r->pushes;
  m.bytes_written = r->bytes_pushed;
  m.bytes_read = r->bytes_pushed * static_cast<uint64_t>(po.ec.k > 0 ? po.ec.k : 1);
  return m;
}

void RecoveryManager::lose_data(int32_t osd) {
  intact_[osd] = false;
  for (auto& holders : data_.holders) {
    for (auto it = holders.begin(); it != holders.end();) {
      if (*it != osd) {
        ++it;
      } else if (redundancy_.erasure) {
        *it++ = placement::kNoDevice;  // positions stay
      } else {
        it = holders.erase(it);
      }
    }
  }
  std::erase_if(data_.stale, [&](const cluster::StaleCopy& c) { return c.osd == osd; });
}

void RecoveryManager::mark_stale(int32_t osd) {
  if (!options_.pg_contents || !intact_[osd]) return;
  // Against the first other current copy of each PG it holds: what it lacks.
  std::map<int32_t, cluster::PgSizes> contents;
  auto contents_of = [&](int32_t o) -> const cluster::PgSizes& {
    auto it = contents.find(o);
    if (it == contents.end()) it = contents.emplace(o, options_.pg_contents(o)).first;
    return it->second;
  };
  auto is_stale = [&](uint32_t pg, int32_t o) {
    return std::any_of(data_.stale.begin(), data_.stale.end(),
                       [&](const cluster::StaleCopy& c) { return c.pg == pg && c.osd == o; });
  };
  cluster::PgSizes missed;
  missed.objects.assign(data_.holders.size(), 0);
  missed.bytes.assign(data_.holders.size(), 0);
  for (uint32_t pg = 0; pg < data_.holders.size(); ++pg) {
    const auto& h = data_.holders[pg];
    if (std::find(h.begin(), h.end(), osd) == h.end() || is_stale(pg, osd)) continue;
    for (int32_t ref : h) {
      if (ref == osd || ref == placement::kNoDevice || !intact_[ref] || !map_.is_up(ref) ||
          is_stale(pg, ref)) {
        continue;
      }
      const auto& mine = contents_of(osd);
      const auto& theirs = contents_of(ref);
      auto at = [pg](const std::vector<uint64_t>& v) { return pg < v.size() ? v[pg] : 0; };
      missed.objects[pg] =
          at(theirs.objects) > at(mine.objects) ? at(theirs.objects) - at(mine.objects) : 0;
      missed.bytes[pg] = at(theirs.bytes) > at(mine.bytes) ? at(theirs.bytes) - at(mine.bytes) : 0;
      break;
    }
  }
  data_.add_stale(osd, missed);
}

void RecoveryManager::refresh(uint32_t pg, std::vector<PgTempEntry>& out) {
  if (pg >= up_.size() || pg >= data_.holders.size()) return;
  cluster::ActingInput in;
  in.up = &up_[pg];
  in.holders = &data_.holders[pg];
  in.redundancy = redundancy_;
  in.is_up = [this](int32_t o) { return map_.is_up(o); };
  in.intact = [this](int32_t o) {
    return o >= 0 && static_cast<size_t>(o) < intact_.size() && intact_[o];
  };
  in.is_stale = [this, pg](int32_t o) {
    return std::any_of(data_.stale.begin(), data_.stale.end(),
                       [&](const cluster::StaleCopy& c) { return c.pg == pg && c.osd == o; });
  };
  const std::vector<int32_t> want = cluster::choose_acting(in);
  if (cluster::same_acting(want, map_.acting_of(pool_id_, pg, up_[pg]), redundancy_.erasure)) {
    return;
  }
  if (want == up_[pg] && !want.empty()) {
    out.push_back(PgTempEntry{pool_id_, pg, true, {}});
  } else {
    out.push_back(PgTempEntry{pool_id_, pg, false, want});
  }
}

void RecoveryManager::send_pg_temp(std::vector<PgTempEntry> entries) {
  if (entries.empty()) return;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    ++stats_.pg_temp_requests;
  }
  PgTempRequest r;
  r.from = options_.endpoint_name;
  r.entries = std::move(entries);
  (void)env_.send(host_, options_.monitor_endpoint, Message{std::move(r), {}});
}

}  // namespace granary::recovery

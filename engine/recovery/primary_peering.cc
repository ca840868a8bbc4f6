#include "engine/recovery/primary_peering.h"

#include <mutex>

#include "engine/services/file_mapping.h"

namespace granary::recovery {

PrimaryPeering::PrimaryPeering(Env& env, HostId host, cluster::MapPlacement& placement,
                               PrimaryPeeringOptions options)
    : env_(env),
      host_(host),
      placement_(placement),
      options_(std::move(options)),
      self_(services::osd_endpoint_name(options_.osd)),
      mu_(env),
      peered_interval_(placement.num_groups(), 0) {
  GRANARY_CHECK(options_.osd >= 0 && !options_.reply_endpoint.empty());
  GRANARY_CHECK(options_.member_timeout_s > 0 && options_.retry_s > 0 && options_.poll_s > 0 &&
                options_.active_wait_s >= 0);
}

void PrimaryPeering::start(TaskOptions task_options) {
  env_.spawn(
      host_, self_ + ".peering", [this] { loop(); }, task_options);
}

namespace {

// The PG's primary: the first OSD of its acting set (an erasure-coded PG's positions may be
// empty, shard 0's included: Ceph makes the first OSD present the primary); -1 when none.
int32_t primary_of(const std::vector<int32_t>& acting) {
  for (int32_t d : acting) {
    if (d != placement::kNoDevice) return d;
  }
  return -1;
}

}  // namespace

bool PrimaryPeering::is_primary(uint32_t pg) const {
  std::vector<int32_t> acting;
  placement_.devices_of(pg, acting);
  return primary_of(acting) == options_.osd;
}

bool PrimaryPeering::is_active(uint32_t pg) const {
  const uint64_t interval = placement_.interval_of(pg);
  std::lock_guard<services::EnvMutex> lock(mu_);
  return peered_interval_[pg] == interval;
}

bool PrimaryPeering::await_active(uint32_t pg) {
  if (pg >= peered_interval_.size()) return false;
  const double deadline = env_.now_s() + options_.active_wait_s;
  for (;;) {
    if (!is_primary(pg)) return false;
    if (is_active(pg)) return true;
    if (env_.now_s() >= deadline) return false;
    env_.sleep_s(options_.poll_s);
  }
}

std::pair<uint32_t, uint32_t> PrimaryPeering::primary_and_active() const {
  uint32_t primary = 0, active = 0;
  for (uint32_t pg = 0; pg < peered_interval_.size(); ++pg) {
    if (!is_primary(pg)) continue;
    ++primary;
    if (is_active(pg)) ++active;
  }
  return {primary, active};
}

PrimaryPeeringStats PrimaryPeering::stats() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return stats_;
}

std::vector<PgMembers> PrimaryPeering::inactive_pgs(std::vector<uint64_t>& intervals) const {
  std::vector<PgMembers> out;
  std::vector<int32_t> acting;
  intervals.clear();
  for (uint32_t pg = 0; pg < peered_interval_.size(); ++pg) {
    acting.clear();
    placement_.devices_of(pg, acting);
    if (primary_of(acting) != options_.osd) continue;
    const uint64_t interval = placement_.interval_of(pg);
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      if (peered_interval_[pg] == interval) continue;
    }
    PgMembers m{pg, {}};
    for (int32_t d : acting) {
      m.osds.push_back(d == placement::kNoDevice ? "" : services::osd_endpoint_name(d));
    }
    out.push_back(std::move(m));
    intervals.push_back(interval);
  }
  return out;
}

bool PrimaryPeering::peer_inactive() {
  const uint32_t epoch = placement_.epoch();
  std::vector<uint64_t> intervals;
  const std::vector<PgMembers> pgs = inactive_pgs(intervals);
  if (pgs.empty()) return true;
  PeeringOptions o;
  o.ec = options_.ec;
  o.reply_endpoint = options_.reply_endpoint;
  o.timeout_s = options_.member_timeout_s;
  o.epoch = epoch;
  cluster::MapPlacement* placement = &placement_;
  o.pg_of = [placement](const std::string& object) { return placement->group_of(object); };
  Result<PeeringReport> r = peer(env_, host_, pgs, o);
  if (!r.ok()) {
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      ++stats_.failures;
    }
    if (options_.log) {
      options_.log(self_ + ": peering " + std::to_string(pgs.size()) + " PGs of epoch " +
                   std::to_string(epoch) + " failed (" + r.status().message() + "); again in " +
                   std::to_string(options_.retry_s) + " s");
    }
    return false;
  }
  uint64_t activated = 0;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    // A PG whose interval moved on meanwhile stays inactive: the next round peers it again.
    for (size_t i = 0; i < pgs.size(); ++i) {
      if (placement_.interval_of(pgs[i].pg) != intervals[i]) continue;
      peered_interval_[pgs[i].pg] = intervals[i];
      ++activated;
    }
    ++stats_.peerings;
    stats_.pgs_peered += activated;
    stats_.stale_copies += r->stale_copies;
    stats_.pushes += r->pushes;
    stats_.bytes_pushed += r->bytes_pushed;
    stats_.last_epoch = epoch;
  }
  if (options_.log) {
    options_.log(
        self_ + ": epoch " + std::to_string(epoch) + ": peered " + std::to_string(pgs.size()) +
        " PGs (" + std::to_string(activated) + " active), " + std::to_string(r->objects) +
        " objects, " + std::to_string(r->stale_copies) + " stale copies, " +
        std::to_string(r->pushes) + " pushed (" + std::to_string(r->bytes_pushed) + " bytes)" +
        (r->rolled_back > 0 ? ", " + std::to_string(r->rolled_back) + " rolled back"
                            : std::string()) +
        (r->unrecoverable.empty() ? std::string()
                                  : ", " + std::to_string(r->unrecoverable.size()) +
                                        " unrecoverable (the first: " + r->unrecoverable[0] + ")"));
  }
  return activated == pgs.size();
}

void PrimaryPeering::loop() {
  uint32_t seen_epoch = 0;
  bool settled = false;
  double retry_at = 0;
  for (;;) {
    const uint32_t epoch = placement_.epoch();
    const bool ready = !options_.ready || options_.ready();
    if (ready && (epoch != seen_epoch || (!settled && env_.now_s() >= retry_at))) {
      seen_epoch = epoch;
      settled = peer_inactive();
      if (!settled) retry_at = env_.now_s() + options_.retry_s;
    }
    env_.sleep_s(options_.poll_s);
  }
}

}  // namespace granary::recovery

#include "engine/cluster/map_placement.h"

#include <utility>

namespace granary::cluster {

Result<std::unique_ptr<MapPlacement>> MapPlacement::create(MapClient& client, int64_t pool_id) {
  const OsdMap map = client.map_on_task();  // before start(): nothing changes it
  if (map.pool(pool_id) == nullptr) {
    return Status::invalid_argument("map placement: no pool " + std::to_string(pool_id) +
                                    " in epoch " + std::to_string(map.epoch()));
  }
  std::unique_ptr<MapPlacement> p(new MapPlacement(client, pool_id));
  if (!p->follow(map)) return Status::invalid_argument("map placement: pool has no placement");
  MapPlacement* raw = p.get();
  client.subscribe([raw](const OsdMap& m) { raw->follow(m); });
  return p;
}

std::string MapPlacement::describe() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->describe();
}
uint32_t MapPlacement::num_groups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->num_groups();
}
uint32_t MapPlacement::group_of(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->group_of(name);
}
void MapPlacement::devices_of(uint32_t group, std::vector<int32_t>& out) {
  std::lock_guard<std::mutex> lock(mu_);
  out = acting_[group];
}
int MapPlacement::replicas() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->replicas();
}
int32_t MapPlacement::device_id_bound() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->device_id_bound();
}
std::vector<double> MapPlacement::target_shares() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->target_shares();
}
int64_t MapPlacement::failure_domain(int32_t d) const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_->failure_domain(d);
}
uint64_t MapPlacement::interval_of(uint32_t group) const {
  std::lock_guard<std::mutex> lock(mu_);
  return interval_[group];
}

bool MapPlacement::follow(const OsdMap& map) {
  std::lock_guard<std::mutex> lock(mu_);
  // An epoch that changed only pg_temp (most of a recovery's) keeps the up sets: no CRUSH.
  if (last_ && last_->same_up_sets(map)) {
    for (uint32_t pg = 0; pg < acting_.size(); ++pg) {
      std::vector<int32_t> acting = map.acting_of(pool_id_, pg, up_[pg]);
      if (acting != acting_[pg]) {
        interval_[pg] = map.epoch();  // a new interval begins
        acting_[pg] = std::move(acting);
      }
    }
    *last_ = map;
    return true;
  }
  auto pool = map.pool_placement(pool_id_);
  auto up = map.up_sets(pool_id_);
  if (!pool.ok() || !up.ok()) return false;
  pool_ = std::make_unique<placement::CrushPool>(std::move(*pool));
  crush_ = map.crush_ptr();
  last_ = std::make_unique<OsdMap>(map);
  const bool first = acting_.empty();
  const size_t pgs = up->size();
  acting_.resize(pgs);
  interval_.resize(pgs, map.epoch());
  for (uint32_t pg = 0; pg < pgs; ++pg) {
    std::vector<int32_t> acting = map.acting_of(pool_id_, pg, (*up)[pg]);
    if (first) {
      interval_[pg] = map.epoch();
    } else if (acting != acting_[pg]) {
      interval_[pg] = map.epoch();  // a new interval begins
    }
    acting_[pg] = std::move(acting);
  }
  up_ = std::move(*up);
  return true;
}

}  // namespace granary::cluster

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

bool MapPlacement::follow(const OsdMap& map) {
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

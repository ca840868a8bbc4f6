// MapPlacement: the placement of one pool as a host's copy of the cluster map gives it (Ceph's
// OSDMap::pg_to_up_acting_osds on the map a daemon or client holds), replacing a placement
// object shared between hosts.
//
// It follows a MapClient (map_client.h) of its host: after each epoch the client applies, it
// recomputes every PG's acting set (osd_map.h: the pg_temp when the map has one, else the up
// set; empty when the map says the PG has no copy to serve) and its interval. devices_of() is the
// acting set: where clients send a PG's I/O and OSDs forward it. interval_of() is the epoch the
// PG's current interval began (Ceph's same_interval_since, simplified as Ceph's PastIntervals
// rule restricted to the acting set): it changes exactly when an epoch changes the PG's acting
// set, so two hosts that applied the same epochs agree on it, and an OSD can discard a write of
// a past interval. A host that skipped epochs (a full map after a long gap) counts the change
// from the map it had to the full one as one interval: it may disagree with the others about a
// PG that changed back and forth meanwhile, which costs one discarded write and its resend.
//
// Names hash to PGs by the pool's pg_num, which no epoch changes.
//
// Thread-safety: its own calls are safe from any task while the map client's task follows a new
// epoch (a short std::mutex, never held across a blocking call, so uncontended in simulation
// where tasks never run concurrently): in real mode an OSD's workers, its peering and its map
// client's task use one placement at once. up_of() returns a reference into the state and is
// for the map client's own callbacks and single-task worlds. Its epoch() may be read from any
// task.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/cluster/map_client.h"
#include "engine/placement/crush_pool.h"
#include "engine/placement/placement.h"

namespace granary::cluster {

class MapPlacement final : public placement::Placement {
 public:
  // The placement of pool `pool_id` on `client`'s map; subscribes to `client` (before its
  // start()). Errors: no such pool in the client's map.
  static Result<std::unique_ptr<MapPlacement>> create(MapClient& client, int64_t pool_id);

  std::string describe() const override;
  uint32_t num_groups() const override;
  uint32_t group_of(std::string_view name) const override;
  void devices_of(uint32_t group, std::vector<int32_t>& out) override;
  int replicas() const override;
  int32_t device_id_bound() const override;
  std::vector<double> target_shares() const override;
  int64_t failure_domain(int32_t d) const override;
  uint64_t interval_of(uint32_t group) const override;

  // The epoch of the map behind it (its MapClient's).
  uint32_t epoch() const { return client_.epoch(); }
  const MapClient& map_client() const { return client_; }
  // The up set of a PG in that epoch (the acting set is devices_of).
  const std::vector<int32_t>& up_of(uint32_t group) const { return up_[group]; }

 private:
  MapPlacement(MapClient& client, int64_t pool_id) : client_(client), pool_id_(pool_id) {}
  // Takes `map`'s epoch; false when the pool is missing from it (the placement stays).
  bool follow(const OsdMap& map);

  MapClient& client_;
  int64_t pool_id_;
  mutable std::mutex mu_;                         // guards what follows
  std::shared_ptr<const crush::CrushMap> crush_;  // what pool_ points into
  std::unique_ptr<placement::CrushPool> pool_;
  std::vector<std::vector<int32_t>> up_;      // [pg]
  std::vector<std::vector<int32_t>> acting_;  // [pg]
  std::vector<uint64_t> interval_;            // [pg]: same_interval_since
  std::unique_ptr<OsdMap> last_;              // the epoch it follows (for same_up_sets)
};

}  // namespace granary::cluster

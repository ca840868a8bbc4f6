// Test clusters for the cluster map, PG state and recovery tests: a generated CRUSH map of
// hosts x OSDs (crush::generate_host_map: rule 0 replicated by host, rule 1 erasure indep by
// host) with a replicated pool and a 4+2 erasure pool. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/crush/edit.h"

namespace granary::cluster::test {

constexpr int64_t kReplicatedPool = 1;
constexpr int64_t kErasurePool = 2;

inline std::shared_ptr<const crush::CrushMap> make_crush(int hosts, int osds_per_host) {
  crush::GeneratedMapSpec spec;
  spec.hosts = hosts;
  spec.devices_per_host = osds_per_host;
  Result<crush::CrushMap> map = crush::generate_host_map(spec);
  EXPECT_TRUE(map.ok()) << map.status().to_string();
  return std::make_shared<const crush::CrushMap>(std::move(map).value());
}

// Pool 1: 3 replicas (rule 0); pool 2: erasure 4+2 (rule 1); `pg_num` PGs each.
inline std::vector<Pool> make_pools(uint32_t pg_num = 256) {
  Pool rep;
  rep.spec.id = kReplicatedPool;
  rep.spec.pg_num = pg_num;
  rep.spec.size = 3;
  rep.spec.crush_rule = 0;
  rep.redundancy = Redundancy::replicated(3);
  Pool ec;
  ec.spec.id = kErasurePool;
  ec.spec.pg_num = pg_num;
  ec.spec.size = 6;
  ec.spec.crush_rule = 1;
  ec.spec.erasure = true;
  ec.redundancy = Redundancy::erasure_coded(4, 2);
  return {rep, ec};
}

inline OsdMap make_map(int hosts = 8, int osds_per_host = 4, uint32_t pg_num = 256) {
  Result<OsdMap> m =
      OsdMap::create(make_crush(hosts, osds_per_host), hosts * osds_per_host, make_pools(pg_num));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(m).value();
}

inline std::vector<std::vector<int32_t>> up_sets(const OsdMap& map, int64_t pool) {
  Result<std::vector<std::vector<int32_t>>> sets = map.up_sets(pool);
  EXPECT_TRUE(sets.ok()) << sets.status().to_string();
  return std::move(sets).value();
}

inline bool contains(const std::vector<int32_t>& v, int32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// `map` with `osds` marked down (and out when `out`).
inline OsdMap without(const OsdMap& map, const std::vector<int32_t>& osds, bool out) {
  OsdMap next = map;
  Incremental inc;
  inc.mark_down = osds;
  if (out) inc.mark_out = osds;
  EXPECT_TRUE(next.apply(inc).ok());
  return next;
}

}  // namespace granary::cluster::test

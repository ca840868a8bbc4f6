#include "engine/placement/analysis.h"

#include <gtest/gtest.h>

#include "engine/crush/edit.h"
#include "engine/crush/text_format.h"
#include "engine/placement/crush_pool.h"
#include "tests/test_util.h"

namespace granary::placement {
namespace {

crush::CrushMap load(const std::string& rel) {
  auto m = crush::load_text_map(testing::testdata(rel));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(*m);
}

CrushPool make_pool(const crush::CrushMap& map, int32_t rule, int size, uint32_t pgs, OsdStates st,
                    bool erasure = false) {
  PoolSpec spec;
  spec.pg_num = pgs;
  spec.size = size;
  spec.crush_rule = rule;
  spec.erasure = erasure;
  auto p = CrushPool::create(map, spec, std::move(st));
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return std::move(*p);
}

TEST(Utilization, CountsEveryShardAndFindsExtremes) {
  const auto map = load("crush/ceph/rep3-host-uniform/map.txt");
  CrushPool pool = make_pool(map, 0, 3, 4096, OsdStates::all_up_in(map.max_devices()));
  const UtilizationReport u = analyze_utilization(pool);
  EXPECT_EQ(u.shards, 4096u * 3);
  EXPECT_EQ(u.short_groups, 0u);
  EXPECT_EQ(u.domain_violations, 0u);
  EXPECT_EQ(u.devices_with_target, 16);
  uint64_t sum = 0;
  for (uint64_t c : u.per_device) sum += c;
  EXPECT_EQ(sum, u.shards);
  // 768 shards per OSD on average: Poisson-like spread of a few percent.
  EXPECT_LT(u.deviation_stddev, 0.08);
  EXPECT_GT(u.deviation_max, 0.0);
  EXPECT_LT(u.deviation_min, 0.0);
  EXPECT_EQ(u.per_device[u.most_loaded],
            *std::max_element(u.per_device.begin(), u.per_device.end()));
}

TEST(Movement, OsdOutMovesAboutItsShareOnly) {
  const auto map = load("crush/ceph/rep3-host-uniform/map.txt");
  const int32_t n = map.max_devices();
  CrushPool before = make_pool(map, 0, 3, 4096, OsdStates::all_up_in(n));
  OsdStates st = OsdStates::all_up_in(n);
  st.mark_out(5);
  CrushPool after = make_pool(map, 0, 3, 4096, st);
  const UtilizationReport u = analyze_utilization(before);
  const MovementReport m = compare_placements(before, after, MovementOptions{});
  // Every shard that was on osd.5 must move; straw2 with stable chooseleaf moves little else.
  EXPECT_GE(m.shards_moved, u.per_device[5]);
  EXPECT_LE(m.shards_moved, u.per_device[5] * 12 / 10);
  EXPECT_NEAR(m.minimum_moved, 4096.0 * 3 / 16, 1e-6);
  EXPECT_LT(m.ratio(), 1.3);
}

TEST(Movement, NothingChangedMovesNothing) {
  const auto map = load("crush/ceph/ec42-indep-host-holes/map.txt");
  CrushPool a = make_pool(map, 1, 6, 512, OsdStates::all_up_in(map.max_devices()), true);
  CrushPool b = make_pool(map, 1, 6, 512, OsdStates::all_up_in(map.max_devices()), true);
  const MovementReport m = compare_placements(a, b, MovementOptions{true});
  EXPECT_EQ(m.shards_moved, 0u);
  EXPECT_EQ(m.groups_changed, 0u);
  EXPECT_EQ(m.minimum_moved, 0.0);
}

TEST(Movement, AddedHostReceivesItsShare) {
  const auto map = load("crush/ceph/rep3-host-uniform/map.txt");
  crush::CrushMap grown = map;
  auto id = crush::add_bucket_like(grown, *map.item_name(-2), "node5");
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  const int32_t n = grown.max_devices();
  CrushPool before = make_pool(map, 0, 3, 4096, OsdStates::all_up_in(n));
  CrushPool after = make_pool(grown, 0, 3, 4096, OsdStates::all_up_in(n));
  const MovementReport m = compare_placements(before, after, MovementOptions{});
  // 4 equal hosts become 5: a fifth of the shards should land on the new host.
  EXPECT_NEAR(m.minimum_moved, 4096.0 * 3 / 5, 1e-6);
  EXPECT_GE(static_cast<double>(m.shards_moved), m.minimum_moved * 0.9);
  EXPECT_LT(m.ratio(), 1.5);
  // Whatever moved went to the new host's OSDs.
  const UtilizationReport u = analyze_utilization(after);
  uint64_t on_new = 0;
  for (int32_t osd : grown.bucket(*id)->items) on_new += u.per_device[osd];
  EXPECT_NEAR(static_cast<double>(on_new), 4096.0 * 3 / 5, 4096.0 * 3 / 5 * 0.1);
}

}  // namespace
}  // namespace granary::placement

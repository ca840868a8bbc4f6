#include "engine/placement/crush_pool.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "engine/crush/text_format.h"
#include "tests/test_util.h"

namespace granary::placement {
namespace {

std::vector<int32_t> parse_set(const std::string& s) {  // "[21,15,5]"
  std::vector<int32_t> out;
  std::string inner = s.substr(1, s.size() - 2);
  std::istringstream in(inner);
  for (std::string v; std::getline(in, v, ',');) out.push_back(std::stoi(v));
  return out;
}

class CephObjectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = crush::load_text_map(testing::testdata("crush/ceph/objects-public/map.txt"));
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    map_ = std::move(*m);
  }
  CrushPool pool(int32_t max_osd = 25) {
    PoolSpec spec;
    spec.id = 1;
    spec.pg_num = 100;
    spec.size = 3;
    auto p = CrushPool::create(map_, spec, OsdStates::all_up_in(max_osd));
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  crush::CrushMap map_;
};

// Every object of objects.tsv: PG seed, up set and primary as osdmaptool printed them.
TEST_F(CephObjectsTest, ObjectToPgToOsdsMatchesOsdmaptool) {
  CrushPool p = pool();
  const auto lines =
      testing::read_lines(testing::testdata("crush/ceph/objects-public/objects.tsv"));
  std::vector<int32_t> osds;
  int checked = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::istringstream row(lines[i]);
    std::vector<std::string> c;
    for (std::string v; std::getline(row, v, '\t');) c.push_back(v);
    const uint32_t pg = p.group_of(c[0]);
    EXPECT_EQ(pg, std::stoul(c[2], nullptr, 16)) << c[0];
    p.devices_of(pg, osds);
    EXPECT_EQ(osds, parse_set(c[3])) << c[0];
    EXPECT_EQ(osds.at(0), std::stoi(c[4])) << c[0];
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

// Every placement group's raw CRUSH set (osdmaptool --test-map-pgs-dump-all).
TEST_F(CephObjectsTest, EveryPgMatchesOsdmaptoolDump) {
  CrushPool p = pool();
  const std::regex line_re(R"(^1\.([0-9a-f]+)\s+raw \((\[[0-9,]*\]), p(-?\d+)\))");
  std::vector<int32_t> raw;
  int checked = 0;
  for (const std::string& line :
       testing::read_lines(testing::testdata("crush/ceph/objects-public/pgs_dump_all.txt"))) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    const uint32_t pg = std::stoul(m[1].str(), nullptr, 16);
    p.raw_devices_of(pg, raw);
    EXPECT_EQ(raw, parse_set(m[2].str())) << line;
    ++checked;
  }
  EXPECT_EQ(checked, 100);
}

TEST(StableMod, FollowsCephDefinition) {
  EXPECT_EQ(pg_mask(100), 127u);
  EXPECT_EQ(pg_mask(128), 127u);
  EXPECT_EQ(pg_mask(129), 255u);
  EXPECT_EQ(pg_mask(1), 0u);
  // 100 groups, mask 127: values with (x & 127) >= 100 fold into the lower half.
  EXPECT_EQ(stable_mod(99, 100, 127), 99u);
  EXPECT_EQ(stable_mod(100, 100, 127), 100u & 63u);
  EXPECT_EQ(stable_mod(127 + 128 * 5, 100, 127), 127u & 63u);
  for (uint32_t x = 0; x < 100000; x += 13) EXPECT_LT(stable_mod(x, 100, 127), 100u);
}

TEST_F(CephObjectsTest, OutAndDownOsdsLeaveTheUpSet) {
  PoolSpec spec;
  spec.pg_num = 64;
  OsdStates st = OsdStates::all_up_in(25);
  st.mark_out(3);
  st.mark_down(7);
  auto p = CrushPool::create(map_, spec, st);
  ASSERT_TRUE(p.ok());
  std::vector<int32_t> up;
  for (uint32_t pg = 0; pg < 64; ++pg) {
    p->devices_of(pg, up);
    for (int32_t osd : up) {
      EXPECT_NE(osd, 3);
      EXPECT_NE(osd, 7);
    }
  }
}

TEST_F(CephObjectsTest, OsdsBeyondMaxOsdDoNotExist) {
  // An osdmap with max_osd 20: OSDs 20..24 are in the CRUSH map but do not exist.
  CrushPool p = pool(20);
  std::vector<int32_t> raw, up;
  int dropped = 0;
  for (uint32_t pg = 0; pg < 100; ++pg) {
    p.raw_devices_of(pg, raw);
    p.devices_of(pg, up);
    for (int32_t osd : raw)
      EXPECT_LT(osd, 20) << "CRUSH treats OSDs beyond the weight vector as out";
    for (int32_t osd : up) EXPECT_LT(osd, 20);
    dropped += static_cast<int>(raw.size() - up.size());
  }
  EXPECT_EQ(dropped, 0);
}

TEST_F(CephObjectsTest, ErasurePoolsKeepPositions) {
  PoolSpec spec;
  spec.pg_num = 64;
  spec.erasure = true;
  OsdStates st = OsdStates::all_up_in(25);
  for (int32_t osd = 0; osd < 25; ++osd) st.mark_down(osd);  // every OSD down: only holes
  auto p = CrushPool::create(map_, spec, st);
  ASSERT_TRUE(p.ok());
  std::vector<int32_t> up;
  p->devices_of(5, up);
  EXPECT_EQ(up, std::vector<int32_t>(3, kNoDevice));
}

TEST_F(CephObjectsTest, BadSpecsAreRejected) {
  PoolSpec spec;
  spec.pg_num = 0;
  EXPECT_FALSE(CrushPool::create(map_, spec, OsdStates::all_up_in(25)).ok());
  spec.pg_num = 64;
  spec.pgp_num = 65;
  EXPECT_FALSE(CrushPool::create(map_, spec, OsdStates::all_up_in(25)).ok());
  spec.pgp_num = 0;
  spec.crush_rule = 9;
  auto r = CrushPool::create(map_, spec, OsdStates::all_up_in(25));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no rule 9"), std::string::npos);
}

TEST_F(CephObjectsTest, TargetSharesFollowCrushWeights) {
  CrushPool p = pool();
  const auto shares = p.target_shares();
  double total = 0;
  for (double s : shares) total += s;
  EXPECT_NEAR(total, 1.0, 1e-9);
  // Hosts of this map mix 1.819 and 3.638 OSDs: a 3.638 OSD's share is twice a 1.819's.
  const crush::Bucket* host = p.map().bucket(*p.map().parent_of(0));
  ASSERT_NE(host, nullptr);
  EXPECT_GT(shares[0], 0.0);
}

}  // namespace
}  // namespace granary::placement

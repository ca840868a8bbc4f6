#include "engine/crush/hash.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "engine/crush/ln.h"
#include "tests/test_util.h"

namespace granary::crush {
namespace {

// objects.tsv (Ceph 16.2.15 osdmaptool) gives the low 30 bits of Ceph's object-name hash for
// 200 names, lengths 1..40 and beyond, odd bytes included.
TEST(CrushHash, ObjectNameHashMatchesCeph) {
  const auto lines =
      testing::read_lines(testing::testdata("crush/ceph/objects-public/objects.tsv"));
  ASSERT_GT(lines.size(), 100u);
  int checked = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::istringstream row(lines[i]);
    std::vector<std::string> cols;
    for (std::string c; std::getline(row, c, '\t');) cols.push_back(c);
    ASSERT_EQ(cols.size(), 9u) << lines[i];
    const uint32_t expected = static_cast<uint32_t>(std::stoul(cols[8], nullptr, 16));
    EXPECT_EQ(str_hash_rjenkins(cols[0]) & 0x3fffffffu, expected) << "object '" << cols[0] << "'";
    ++checked;
  }
  EXPECT_EQ(checked, 200);
}

TEST(CrushHash, EmptyNameHashesToLookup2OfNothing) {
  // lookup2 of the empty string with initval 0 is the mix of (golden, golden, 0).
  EXPECT_EQ(str_hash_rjenkins(""), str_hash_rjenkins(std::string_view("", 0)));
  EXPECT_NE(str_hash_rjenkins("a"), str_hash_rjenkins("b"));
}

TEST(CrushHash, Hash32FamilyDependsOnEveryArgument) {
  EXPECT_NE(crush_hash32_2(1, 2), crush_hash32_2(2, 1));
  EXPECT_NE(crush_hash32_3(1, 2, 3), crush_hash32_3(1, 2, 4));
  EXPECT_NE(crush_hash32_4(1, 2, 3, 4), crush_hash32_4(1, 2, 3, 5));
  EXPECT_NE(crush_hash32_5(1, 2, 3, 4, 5), crush_hash32_5(1, 2, 3, 4, 6));
  EXPECT_NE(crush_hash32(1), crush_hash32(2));
}

TEST(CrushLn, ApproximatesLog2WithinTableError) {
  // crush_ln(u) ~ 2^44 * log2(u + 1); Ceph's tables carry errors of up to ~2^-10 relative.
  for (uint32_t u = 0; u <= 0xffff; u += 7) {
    const double exact = std::ldexp(std::log2(static_cast<double>(u) + 1.0), 44);
    const double got = static_cast<double>(crush_ln(u));
    EXPECT_NEAR(got, exact, std::ldexp(1.0, 36)) << "u=" << u;
  }
  EXPECT_EQ(crush_ln(0), 0u);
  EXPECT_EQ(crush_ln(0xffff), 0xfffff0000000ull);
}

// The table in ln_table.inc must be exactly the one Ceph ships; re-extract it from the
// installed library when there is one.
TEST(CrushLn, TableMatchesInstalledCeph) {
  const std::string script = std::string(GRANARY_SOURCE_DIR) + "/scripts/extract-crush-ln-table.py";
  auto r = testing::run_command("python3 " + script);
  if (r.exit_code != 0) GTEST_SKIP() << "no libceph-common installed (package ceph-base)";
  std::string table = r.out;
  std::string ours =
      testing::read_file(std::string(GRANARY_SOURCE_DIR) + "/engine/crush/ln_table.inc");
  // Skip the first comment line, which names the library file.
  table = table.substr(table.find('\n'));
  ours = ours.substr(ours.find('\n'));
  EXPECT_EQ(table, ours);
}

}  // namespace
}  // namespace granary::crush

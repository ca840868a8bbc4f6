// The granary binary as a user runs it: outputs, exit codes and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

TEST(CrushCli, TestMatchesCrushtoolByteForByte) {
  const std::string dir = testing::testdata("crush/ceph/ec42-indep-host-holes");
  auto r = granary("crush test --map " + dir +
                   "/map.txt --rule 1 --num-rep 6 --min-x 0 --max-x 1023 "
                   "--weight 15 0 --weight 16 0 --weight 17 0.5 --weight 3 0 --show-mappings");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, testing::read_file(dir + "/expected.txt"));
}

TEST(CrushCli, MapObjectMatchesOsdmaptoolByteForByte) {
  const std::string dir = testing::testdata("crush/ceph/objects-public");
  auto r = granary("crush map-object --map " + dir + "/map.txt --pg-num 100 --objects " + dir +
                   "/objects.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (const std::string& line : testing::read_lines(dir + "/test_map_object.raw.txt")) {
    if (line != "marking all OSDs up and in") want += line + "\n";
  }
  EXPECT_EQ(r.out, want);
}

TEST(CrushCli, MapObjectTakesNamesAndOutOsds) {
  const std::string map = testing::testdata("crush/ceph/objects-public/map.txt");
  auto r = granary("crush map-object --map " + map +
                   " --pg-num 100 --out 21 rbd_data.283f.0000000000000e62");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(" object 'rbd_data.283f.0000000000000e62' -> 1.15 -> [", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("21,"), std::string::npos) << r.out;  // osd.21 (the primary) is out
}

TEST(CrushCli, PrintRoundTripsCanonicalMaps) {
  const std::string map = testing::testdata("crush/generated/device-classes/map.txt");
  auto r = granary("crush print --map " + map);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, testing::read_file(map));
}

TEST(CrushCli, AnalyzeReportsUtilisationAndMovement) {
  const std::string map =
      std::string(GRANARY_SOURCE_DIR) + "/scenarios/crush/gpu-storage-16x24.txt";
  auto r = granary("crush analyze --map " + map +
                   " --rule 1 --pool-size 11 --pg-num 1024 --out-osd 17 "
                   "--add-host-like server16 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pool"]["erasure"], true);
  EXPECT_EQ(j["crush"]["utilization"]["shards"], 1024 * 11);
  EXPECT_EQ(j["crush"]["utilization"]["failure_domain_violations"], 0);
  EXPECT_GT(j["crush"]["osd_out"]["shards_moved"].get<int>(), 0);
  EXPECT_GT(j["crush"]["host_added"]["minimum_shards_moved"].get<double>(), 0.0);
  EXPECT_FALSE(j.contains("ring"));
  auto ring = granary("crush analyze --map " + map +
                      " --rule 0 --pg-num 1024 --out-osd 3 "
                      "--add-host-like server02 --compare-ring --json");
  ASSERT_EQ(ring.exit_code, 0) << ring.err;
  const auto rj = nlohmann::json::parse(ring.out);
  EXPECT_EQ(rj["ring"]["utilization"]["shards"], 1024 * 3);
  EXPECT_EQ(rj["ring"]["utilization"]["failure_domain_violations"], 0);
  // The ring balances exactly and moves close to the minimum.
  EXPECT_LT(rj["ring"]["utilization"]["deviation_stddev"].get<double>(), 0.02);
  EXPECT_LE(rj["ring"]["osd_out"]["moved_over_minimum"].get<double>(),
            1.25);  // 8 shards: one extra move is 1.125
  EXPECT_LT(rj["ring"]["host_added"]["moved_over_minimum"].get<double>(), 1.1);
  auto text = granary("crush analyze --map " + map + " --rule 0 --pg-num 256");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("standard deviation"), std::string::npos);
}

struct BadRun {
  std::string args;
  std::string message;
};

TEST(CrushCli, BadInputExitsTwoWithOneLine) {
  const std::string tmp = testing::make_temp_dir();
  { std::ofstream(tmp + "/bad.txt") << "device 0 osd.0\ntype 0 osd\nhost h {\n"; }
  const std::string good = testing::testdata("crush/ceph/rep3-host-uniform/map.txt");
  const BadRun runs[] = {
      {"crush test --map " + tmp + "/bad.txt --show-mappings",
       tmp + "/bad.txt:4:1: expected 'id', 'alg', 'hash', 'item' or '}' in bucket 'h', found end "
             "of input"},
      {"crush test --map " + good + " --rule 7 --show-mappings",
       "--rule 7: the map has no such rule"},
      {"crush test --map " + good + " --weight 99 0.5",
       "--weight 99 0.5: expected a device id 0..15"},
      {"crush test --map " + good + " --weight 1 half", "expected a weight (0..1), found 'half'"},
      {"crush test --map " + tmp + "/missing.txt", "--map: File does not exist"},
      {"crush test --map " + good + " --min-x 10 --max-x 5", "--min-x 10 is above --max-x 5"},
      {"crush map-object --map " + good + " --pg-num 0 x", "--pg-num"},
      {"crush map-object --map " + good + " --pg-num 8 --rule 3 x", "the CRUSH map has no rule 3"},
      {"crush analyze --map " + good + " --add-host-like nowhere",
       "--add-host-like nowhere: no bucket named 'nowhere'"},
      {"crush bogus",
       "granary crush: expected a subcommand (test, map-object, print, analyze), found 'bogus'"},
  };
  for (const BadRun& b : runs) {
    auto r = granary(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.args;
    EXPECT_NE(r.err.find(b.message), std::string::npos) << b.args << "\nstderr: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << b.args << "\nstderr: " << r.err;
    EXPECT_TRUE(r.out.empty()) << b.args;
  }
}

}  // namespace
}  // namespace granary

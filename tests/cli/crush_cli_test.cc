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

// Issue 9: a pasted crushtool command line works and prints what crushtool prints.
TEST(CrushCli, PastedCrushtoolCommandMatchesCrushtoolByteForByte) {
  if (!testing::have_program("crushtool"))
    GTEST_SKIP() << "crushtool not installed (package ceph-base)";
  const std::string tmp = testing::make_temp_dir();
  for (const char* c : {"crush/ceph/rep3-host-uniform", "crush/ceph/ec42-indep-host-holes",
                        "crush/generated/choose-args"}) {
    SCOPED_TRACE(c);
    const std::string text = testing::testdata(std::string(c) + "/map.txt");
    const std::string bin = tmp + "/map.bin";
    auto compiled = testing::run_command("crushtool -c " + text + " -o " + bin);
    ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
    for (const char* args :
         {"--test --rule 0 --num-rep 3 --min-x 0 --max-x 1023 --show-mappings",
          "--test --show-statistics --show-utilization --min-x 5 --max-x 300",
          "--test --rule 0 --x 17 --show-mappings --show-bad-mappings",
          "--test --rule 0 --num_rep 2 --min_x 0 --max_x 99 --weight 1 0 --weight 2 0.5 "
          "--show-utilization-all",
          "--test --pool-id 3 --min-x 0 --max-x 63 --show-mappings"}) {
      SCOPED_TRACE(args);
      auto want = testing::run_command("crushtool -i " + bin + " " + args);
      auto got = granary("crush test -i " + text + " " + args);
      ASSERT_EQ(want.exit_code, 0) << want.err;
      EXPECT_EQ(got.exit_code, 0) << got.err;
      EXPECT_EQ(got.out, want.out);
    }
    // The compiled map itself is refused with the command that turns it into text.
    auto r = granary("crush test -i " + bin + " --test --show-mappings");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "granary: CRUSH map '" + bin +
                         "': expected a text map, found a compiled (binary) one; decompile it "
                         "with `crushtool -d " +
                         bin + " -o map.txt` and pass map.txt\n");
  }
}

// Issue 9: inputs that aborted or grew without bound now give one line and exit 2.
TEST(CrushCli, HostileInputsGiveOneExactLine) {
  const std::string tmp = testing::make_temp_dir();
  std::string gpu = testing::read_file(std::string(GRANARY_SOURCE_DIR) +
                                       "/scenarios/crush/gpu-storage-16x24.txt");
  gpu.replace(gpu.find("\tid -3\t"), 7, "\tid -2147483648\t");
  { std::ofstream(tmp + "/bigid.txt") << gpu; }
  { std::ofstream(tmp + "/nul.txt") << std::string("device 0 os\0d.0 class ssd\n", 26); }
  { std::ofstream(tmp + "/compiled.bin") << std::string("\x00\x00\x01\x00\x05\x00", 6); }
  const std::string good = testing::testdata("crush/ceph/rep3-host-uniform/map.txt");
  const std::string kUnsupported =
      ": crushtool's option is not implemented by granary crush test (it implements -i/--map, "
      "--test, --rule, --num-rep, --min-x, --max-x, --x, --weight, --pool-id, --choose-args and "
      "the --show-mappings/-bad-mappings/-statistics/-utilization(-all) outputs)";
  const BadRun runs[] = {
      {"crush print --map " + tmp + "/bigid.txt",
       tmp + "/bigid.txt:477:5: expected a bucket id -262144..-1, found '-2147483648'"},
      {"crush test -i " + tmp + "/bigid.txt --test --show-mappings",
       tmp + "/bigid.txt:477:5: expected a bucket id -262144..-1, found '-2147483648'"},
      {"crush print --map " + tmp + "/nul.txt",
       tmp + "/nul.txt:1:12: expected printable text, found the byte \\x00"},
      {"crush print --map /dev/zero",
       "CRUSH map '/dev/zero': expected a text map of at most 16777216 bytes, found more"},
      {"crush test -i " + tmp + "/compiled.bin --test",
       "CRUSH map '" + tmp +
           "/compiled.bin': expected a text map, found a compiled (binary) "
           "one; decompile it with `crushtool -d " +
           tmp +
           "/compiled.bin -o map.txt` and pass "
           "map.txt"},
      {"crush test -i " + good + " --test --simulate", "--simulate" + kUnsupported},
      {"crush test -i " + good + " --test --min-rule 0 --max-rule 1", "--max-rule" + kUnsupported},
      {"crush test -i " + good + " --test --max-x 4611686018427387904",
       "--max-x: Value 4611686018427387904 not in range 0 to 2147483646"},
      {"crush test -i " + good + " --test --num-rep 1000000000",
       "--num-rep: Value 1000000000 not in range 1 to 255"},
      {"crush test -i " + good + " --test --weight 3 nan",
       "--weight 3 nan: expected a weight (0..1), found 'nan'"},
      {"crush test -i " + good + " --test --max-x 2147483646 --num-rep 3 --show-statistics",
       "--min-x 0 --max-x 2147483646: expected at most 2147483647 inputs x replicas with "
       "--show-statistics/--show-utilization (crushtool's counters are 32-bit), found "
       "2147483647 x 3"},
      {"crush map-object --map " + good + " --pg-num 8 --max-osd 2147483647 x",
       "--max-osd: Value 2147483647 not in range 0 to 1048576"},
      {"crush map-object --map " + good + " --pg-num 2147483648 x",
       "--pg-num: Value 2147483648 not in range 1 to 1073741824"},
      {"crush map-object --map " + good + " --pg-num 8 " + std::string(3000, 'o'),
       "expected an object name of at most 2048 bytes, found '" + std::string(60, 'o') +
           "\u2026' (3000 bytes)"},
  };
  for (const BadRun& b : runs) {
    auto r = granary(b.args);
    EXPECT_EQ(r.exit_code, 2) << b.args;
    EXPECT_EQ(r.err, "granary: " + b.message + "\n") << b.args;
    EXPECT_TRUE(r.out.empty()) << b.args;
  }
}

// A pipe works as the map (`-i <(...)`): read once, the compiled-map check included.
TEST(CrushCli, TestReadsTheMapFromAPipe) {
  const std::string good = testing::testdata("crush/ceph/rep3-host-uniform/map.txt");
  const std::string args = " --test --rule 0 --num-rep 3 --min-x 0 --max-x 99 --show-mappings";
  auto file = granary("crush test -i " + good + args);
  auto pipe = testing::run_command("bash -c '" + kGranary + " crush test -i <(cat " + good + ")" +
                                   args + "'");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_EQ(pipe.out, file.out);
}

// Output streams: a huge input range with --show-mappings starts printing at once and its
// memory does not grow with --max-x (crushtool prints the same lines).
TEST(CrushCli, HugeMappingRangesStreamInsteadOfBuffering) {
  const std::string good = testing::testdata("crush/ceph/rep3-host-uniform/map.txt");
  auto r = testing::run_command("bash -c 'set -o pipefail; " + kGranary + " crush test -i " + good +
                                " --test --rule 0 --num-rep 3 --min-x 0 --max-x 2147483646 "
                                "--show-mappings | head -n 300000 | tail -n 1'");
  // head closes the pipe after 300000 lines: granary dies of SIGPIPE (141) rather than running on.
  EXPECT_EQ(r.out.rfind("CRUSH rule 0 x ", 0), 0u) << r.out << r.err;
}

}  // namespace
}  // namespace granary

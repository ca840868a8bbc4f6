// The CRUSH text format's guards: every id, weight, count and size is range-checked before
// anything is allocated for it, and every refusal is one line naming source:line:col, what was
// expected and what was found (long tokens shortened, control bytes escaped).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "engine/crush/edit.h"
#include "engine/crush/text_format.h"
#include "tests/test_util.h"

namespace granary::crush {
namespace {

const char kHead[] = "device 0 osd.0\ntype 0 osd\ntype 1 host\n";

std::string host(const std::string& body) {
  return std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\thash 0\n\titem osd.0\n" + body +
         "}\n";
}

std::string rule_with(const std::string& body) {
  return host("") + "rule r {\n\tid 0\n\ttype replicated\n" + body + "}\n";
}

// The exact message parse_text_map gives for `text` (source "m.txt"); "" when it parses.
std::string error_of(const std::string& text) {
  auto r = parse_text_map(text, "m.txt");
  return r.ok() ? std::string() : r.status().message();
}

TEST(TextFormatGuard, BucketIdOfMinInt32IsRefusedNotAborted) {
  // Issue 9: a shipped map with one bucket id changed to -2^31 aborted with std::length_error.
  std::string text = testing::read_file(std::string(GRANARY_SOURCE_DIR) +
                                        "/scenarios/crush/gpu-storage-16x24.txt");
  const size_t at = text.find("\tid -3\t");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, "\tid -2147483648\t");
  EXPECT_EQ(error_of(text), "m.txt:477:5: expected a bucket id -262144..-1, found '-2147483648'");
}

TEST(TextFormatGuard, NulByteInADeviceLineIsRefusedNotLoopedOn) {
  // Issue 9: a NUL made the lexer push empty tokens forever.
  const std::string text("device 0 os\0d.0 class ssd\n", 26);
  EXPECT_EQ(error_of(text), "m.txt:1:12: expected printable text, found the byte \\x00");
  EXPECT_EQ(error_of("# a comment\x01\n"),
            "m.txt:1:12: expected printable text, found the byte \\x01");
  EXPECT_EQ(error_of("device 0 osd.0\ntype 0 osd\x7f\n"),
            "m.txt:2:11: expected printable text, found the byte \\x7f");
}

struct Edge {
  std::string text;
  std::string message;  // exact; "" = parses
};

// Found by the fuzzer at 20,000 cases: a weight_set weight of 65535 printed back as -1.000.
TEST(TextFormatGuard, WeightSetWeightsPrintBack) {
  const std::string map = std::string(kHead) +
                          "host h {\n\tid -1\n\talg straw2\n\titem osd.0\n}\n"
                          "choose_args 0 {\n  {\n    bucket_id -1\n    weight_set [\n"
                          "      [ 65535 ]\n    ]\n  }\n}\n";
  auto r = parse_text_map(map, "m.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "m.txt:13:9: expected a weight 0..32767 or ']', found '65535'");
  auto ok = parse_text_map(std::string(map).replace(map.find("65535"), 5, "32767"), "m.txt");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(parse_text_map(write_text_map(*ok), "again").ok());
}

TEST(TextFormatGuard, EveryRangeAcceptsItsEdgeAndRefusesPastIt) {
  const Edge cases[] = {
      {"device 1048575 osd.0\n", ""},
      {"device 1048576 osd.0\n", "m.txt:1:8: expected a device id 0..1048575, found '1048576'"},
      {"device -1 osd.0\n", "m.txt:1:8: expected a device id 0..1048575, found '-1'"},
      {"device 99999999999999999999 osd.0\n",
       "m.txt:1:8: expected a device id 0..1048575, found '99999999999999999999'"},
      {"type 2147483648 x\n", "m.txt:1:6: expected a type id 0..2147483647, found '2147483648'"},
      {std::string(kHead) + "host h {\n\tid -262144\n\talg straw2\n\titem osd.0\n}\n", ""},
      {std::string(kHead) + "host h {\n\tid -262145\n\talg straw2\n\titem osd.0\n}\n",
       "m.txt:5:5: expected a bucket id -262144..-1, found '-262145'"},
      {std::string(kHead) + "host h {\n\tid 0\n\talg straw2\n\titem osd.0\n}\n",
       "m.txt:5:5: expected a bucket id -262144..-1, found '0'"},
      {std::string("device 0 osd.0 class ssd\ntype 0 osd\ntype 1 host\n") +
           "host h {\n\tid -1\n\tid -262145 class ssd\n\talg straw2\n\titem osd.0\n}\n",
       "m.txt:6:5: expected a bucket id -262144..-1, found '-262145'"},
      {host("\titem osd.1 weight 1\n"), "m.txt:9:2: item 'osd.1' in bucket 'h' is not defined"},
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0 weight 100\n}\n", ""},
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0 weight 100.001\n}\n",
       "m.txt:7:20: expected a device weight 0..100 for item 'osd.0', found '100.001'"},
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0 weight inf\n}\n",
       "m.txt:7:20: expected a weight 0..65535 for item 'osd.0', found 'inf'"},
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0 weight nan\n}\n",
       "m.txt:7:20: expected a weight 0..65535 for item 'osd.0', found 'nan'"},
      // (Found by the fuzzer: a bucket item of 48171 printed back as -17365.000.)
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0\n}\n" +
           "host g {\n\tid -2\n\talg straw2\n\titem h weight 32767.99\n}\n",
       ""},
      {std::string(kHead) + "host h {\n\tid -1\n\talg straw2\n\titem osd.0\n}\n" +
           "host g {\n\tid -2\n\talg straw2\n\titem h weight 48171\n}\n",
       "m.txt:12:16: expected a weight below 32768 for item 'h' (crushtool prints heavier weights "
       "as negative numbers), found 48171.000"},
      {rule_with("\tmin_size 255\n\tmax_size 255\n"), ""},
      {rule_with("\tmax_size 256\n"), "m.txt:13:11: expected a max_size 0..255, found '256'"},
      {rule_with("\ttype 256\n"),
       "m.txt:13:7: expected a rule type (replicated, erasure or a number) 0..255, found '256'"},
      {host("") + "rule r {\n\tid 256\n}\n", "m.txt:11:5: expected a rule id 0..255, found '256'"},
      {rule_with("\tstep take h\n\tstep choose firstn -255 type osd\n\tstep emit\n"), ""},
      {rule_with("\tstep take h\n\tstep choose firstn 256 type osd\n\tstep emit\n"),
       "m.txt:14:21: expected a count (0 = as many as replicas, -N = replicas - N) -255..255, "
       "found '256'"},
      {rule_with("\tstep set_choose_tries 1000\n"), ""},
      {rule_with("\tstep set_choose_tries 1001\n"),
       "m.txt:13:24: expected a value for set_choose_tries 0..1000, found '1001'"},
      {rule_with("\tstep set_choose_local_tries 101\n"),
       "m.txt:13:30: expected a value for set_choose_local_tries 0..100, found '101'"},
      {rule_with("\tstep set_chooseleaf_vary_r 32\n"),
       "m.txt:13:29: expected a value for set_chooseleaf_vary_r 0..31, found '32'"},
      {rule_with("\tstep set_chooseleaf_stable 2\n"),
       "m.txt:13:29: expected a value for set_chooseleaf_stable 0..1, found '2'"},
      {"tunable choose_total_tries 1000\n", ""},
      {"tunable choose_total_tries 1001\n",
       "m.txt:1:28: expected a value for tunable choose_total_tries 0..1000, found '1001'"},
      {"tunable chooseleaf_vary_r 32\n",
       "m.txt:1:27: expected a value for tunable chooseleaf_vary_r 0..31, found '32'"},
      {"tunable allowed_bucket_algs 4294967295\n", ""},
      {"tunable allowed_bucket_algs -1\n",
       "m.txt:1:29: expected a value for tunable allowed_bucket_algs 0..4294967295, found '-1'"},
      {"tunable straw_calc_version 256\n",
       "m.txt:1:28: expected a value for tunable straw_calc_version 0..255, found '256'"},
      {"device 0 os\xc3\xa9\n",
       "m.txt:1:10: expected a device name (letters, digits, '-', '_', '.'; at most 256 bytes), "
       "found 'os\\xc3\\xa9'"},
  };
  for (const Edge& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(error_of(c.text), c.message);
  }
}

TEST(TextFormatGuard, LongTokensAreShortenedWithTheirLength) {
  const std::string name(1 << 20, 'a');
  EXPECT_EQ(error_of("device 0 " + name + "\n"),
            "m.txt:1:10: expected a device name (letters, digits, '-', '_', '.'; at most 256 "
            "bytes), found '" +
                std::string(60, 'a') + "\u2026' (1048576 bytes)");
  EXPECT_EQ(error_of("device " + name + " osd.0\n"),
            "m.txt:1:8: expected a device id 0..1048575, found '" + std::string(60, 'a') +
                "\u2026' (1048576 bytes)");
  EXPECT_EQ(error_of("device 0 " + std::string(256, 'b') + "\n"), "");
}

TEST(TextFormatGuard, HierarchyDepthIsBounded) {
  auto chain = [](int levels) {
    std::string t = "device 0 osd.0\ntype 0 osd\ntype 1 b\n";
    for (int i = 1; i <= levels; ++i) {
      t += "b b" + std::to_string(i) + " {\n\tid -" + std::to_string(i) +
           "\n\talg straw2\n\titem " +
           (i == 1 ? std::string("osd.0") : "b" + std::to_string(i - 1)) + "\n}\n";
    }
    return t;
  };
  EXPECT_EQ(error_of(chain(64)), "");
  EXPECT_EQ(error_of(chain(65)),
            "m.txt:325:2: bucket 'b65': expected a hierarchy at most 64 levels deep, found 65");
  // Declared top-down, the parser recurses into children: bounded as well.
  std::string top_down = "device 0 osd.0\ntype 0 osd\ntype 1 b\n";
  for (int i = 1; i <= 100000; ++i) {
    top_down += "b b" + std::to_string(i) + " {\n\talg straw2\n\titem " +
                (i == 100000 ? std::string("osd.0") : "b" + std::to_string(i + 1)) + "\n}\n";
  }
  EXPECT_EQ(error_of(top_down),
            "m.txt:260:1: expected a hierarchy at most 64 levels deep, found bucket 'b65' deeper");
}

TEST(TextFormatGuard, SharedSubtreesCannotExpandExponentially) {
  // Two buckets per level, each holding both buckets of the level below: 2^26 paths.
  std::string t = "device 0 osd.0\ntype 0 osd\ntype 1 b\n";
  int id = 0;
  for (int level = 1; level <= 26; ++level) {
    for (const char* side : {"x", "y"}) {
      t += "b " + std::string(side) + std::to_string(level) + " {\n\tid " + std::to_string(--id) +
           "\n\talg straw2\n";
      if (level == 1) {
        t += "\titem osd.0\n";
      } else {
        t += "\titem x" + std::to_string(level - 1) + " weight 1\n\titem y" +
             std::to_string(level - 1) + " weight 1\n";
      }
      t += "}\n";
    }
  }
  EXPECT_EQ(error_of(t),
            "m.txt: expected at most 16777216 items along all paths below a root (buckets "
            "listed under several parents repeat their subtrees), found more below 'y26'");
}

TEST(TextFormatGuard, DeviceClassesAndChooseArgsAreBounded) {
  std::string classes;
  for (int i = 0; i <= 256; ++i) {
    classes += "device " + std::to_string(i) + " osd." + std::to_string(i) + " class c" +
               std::to_string(i) + "\n";
  }
  EXPECT_EQ(error_of(classes),
            "m.txt:257:1: expected at most 256 device classes, found one more: 'c256'");

  std::string sets = host("");
  for (int i = 0; i <= 1024; ++i) sets += "choose_args " + std::to_string(i) + " {\n}\n";
  EXPECT_EQ(error_of(sets),
            "m.txt:2058:1: expected at most 1024 choose_args sets and 2097152 set x bucket "
            "slots, found 1025 sets x 1 buckets");

  std::string positions = host("") + "choose_args 0 {\n  {\n    bucket_id -1\n    weight_set [\n";
  for (int i = 0; i <= 255; ++i) positions += "      [ 1.0 ]\n";
  positions += "    ]\n  }\n}\n";
  EXPECT_EQ(error_of(positions),
            "m.txt:269:7: expected at most 255 weight_set positions for bucket -1, found more");
  EXPECT_EQ(error_of(host("") + "choose_args 0 {\n  {\n    bucket_id -1\n    weight_set [\n"
                                "      [ 1.0 2.0 ]\n    ]\n  }\n}\n"),
            "m.txt:14:13: expected 1 weights for bucket -1 then ']', found '2.0'");
}

TEST(TextFormatGuard, MapsAtTheLimitsRoundTrip) {
  const std::string text = std::string("device 1048575 osd.big class ssd\n") +
                           "tunable choose_total_tries 1000\ntunable chooseleaf_vary_r 31\n" +
                           "type 0 osd\ntype 2147483647 top\n" +
                           "top t {\n\tid -262144\n\tid -262143 class ssd\n\talg straw2\n\thash "
                           "0\n\titem osd.big weight 100\n}\n" +
                           "rule r {\n\tid 255\n\ttype 255\n\tmin_size 0\n\tmax_size 255\n"
                           "\tstep set_choose_tries 1000\n\tstep take t class ssd\n"
                           "\tstep chooseleaf indep -255 type osd\n\tstep emit\n}\n";
  auto m = parse_text_map(text, "edge.txt");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const std::string printed = write_text_map(*m);
  auto again = parse_text_map(printed, "printed");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(write_text_map(*again), printed);
}

TEST(TextFormatGuard, OversizedTextAndFilesAreRefusedBeforeReading) {
  const std::string big(kMaxTextMapBytes + 1, ' ');
  EXPECT_EQ(error_of(big),
            "m.txt: expected a text map of at most 16777216 bytes, found 16777217 bytes");

  const std::string dir = testing::make_temp_dir();
  auto load_error = [](const std::string& path) {
    auto r = load_text_map(path);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(load_error(dir),
            "CRUSH map '" + dir + "': expected a text map file, found a directory");
  const std::string sparse = dir + "/huge.txt";
  { std::ofstream(sparse) << "x"; }
  ASSERT_EQ(::truncate(sparse.c_str(), off_t{1} << 40), 0);  // 1 TiB, sparse: never read
  EXPECT_EQ(load_error(sparse), "CRUSH map '" + sparse +
                                    "': expected a text map of at most 16777216 bytes, found "
                                    "1099511627776 bytes");
  EXPECT_EQ(load_error("/dev/zero"),
            "CRUSH map '/dev/zero': expected a text map of at most 16777216 bytes, found more");
  // A pipe is read like a file (process substitution: --map <(...)).
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string text = testing::read_file(testing::testdata("crush/ceph/rep3-host-uniform/map.txt"));
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    const ssize_t n = ::write(fd, text.data(), text.size());
    ::_exit(n == static_cast<ssize_t>(text.size()) ? 0 : 1);
  }
  auto m = load_text_map(fifo);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(write_text_map(*m), text);
}

TEST(CrushEditGuard, GeneratedMapSizesAreCheckedBeforeBuilding) {
  // Issue 9: 10^5 storage servers were refused only after building a huge map.
  GeneratedMapSpec spec;
  spec.hosts = 100000;
  spec.devices_per_host = 24;
  spec.device_weight = 1;
  auto r = generate_host_map(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "expected a generated CRUSH map of at most 1048576 devices, found 100000 hosts x 24 "
            "devices = 2400000");
  spec.hosts = 2147483647;
  spec.devices_per_host = 2147483647;
  r = generate_host_map(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "expected a generated CRUSH map of at most 1048576 devices, found 2147483647 hosts x "
            "2147483647 devices = 4611686014132420609");
  spec.hosts = 131072;
  spec.devices_per_host = 1;
  spec.device_class = "nvme";
  r = generate_host_map(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "expected a generated CRUSH map of at most 262144 buckets (hosts + root, twice with a "
            "device class), found 262146");
  spec.hosts = 16;
  spec.devices_per_host = 128;
  spec.device_weight = kWeightOne;
  EXPECT_TRUE(generate_host_map(spec).ok());
}

// Hosts of different sizes and devices of different weights (a real-mode cluster file): the
// same map as generate_host_map where they agree, the weights summed up the tree, and one line
// for each kind of bad input.
TEST(CrushEditGuard, MapsOfUnevenHostsAreBuiltAndChecked) {
  GeneratedMapSpec spec;
  spec.hosts = 2;
  spec.devices_per_host = 2;
  auto uniform = generate_host_map(spec);
  auto same = generate_map_of_hosts({{"storage0", {{0, kWeightOne}, {1, kWeightOne}}},
                                     {"storage1", {{2, kWeightOne}, {3, kWeightOne}}}});
  ASSERT_TRUE(uniform.ok() && same.ok());
  EXPECT_EQ(write_text_map(*same), write_text_map(*uniform));
  auto uneven = generate_map_of_hosts(
      {{"a", {{0, 2 * kWeightOne}}}, {"b", {{2, kWeightOne / 2}, {1, kWeightOne / 4}}}});
  ASSERT_TRUE(uneven.ok()) << uneven.status().message();
  EXPECT_EQ(uneven->max_devices(), 3);
  const std::string text = write_text_map(*uneven);
  EXPECT_NE(text.find("item a weight 2.000"), std::string::npos) << text;
  EXPECT_NE(text.find("item b weight 0.750"), std::string::npos) << text;
  EXPECT_NE(text.find("# weight 2.750"), std::string::npos) << text;  // the root
  struct Case {
    std::vector<GeneratedHost> hosts;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{}, "a generated CRUSH map needs a host"},
      {{{"a", {}}}, "host a has no device"},
      {{{"a", {{0, 1}}}, {"a", {{1, 1}}}}, "host name \"a\" is empty or repeated"},
      {{{"a", {{0, 1}}}, {"b", {{0, 1}}}}, "host b: device id 0 is repeated or outside 0..1048575"},
      {{{"a", {{-1, 1}}}}, "host a: device id -1 is repeated or outside 0..1048575"},
      {{{"a", {{0, 0}}}}, "host a: osd.0 has weight 0"},
  };
  for (const Case& c : cases) {
    auto r = generate_map_of_hosts(c.hosts);
    ASSERT_FALSE(r.ok()) << c.error;
    EXPECT_EQ(r.status().message(), c.error);
  }
}

}  // namespace
}  // namespace granary::crush

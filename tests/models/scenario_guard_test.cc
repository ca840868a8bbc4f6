// Issue 9's guards on scenario files: the range of every key that Granary can simulate, the
// cross-key limits (OSDs, dataset bytes, CRUSH weight, simulated time), valid UTF-8 with the
// JSON path, one-line messages that shorten long values, deep nesting, and the files a scenario
// reads (its own size, the CRUSH map's kind and size). Each issue example is here with the
// exact message it now gives.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "models/json_diagnostics.h"
#include "models/scenario_json.h"
#include "tests/test_util.h"

namespace granary::models {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

json shipped(const std::string& name) {
  std::ifstream in(kScenarios + "/" + name);
  return json::parse(in);
}

// The message for the shipped unet3d scenario with one change, as if it were scenarios/s.json
// (so that relative paths resolve), with the directory left out.
std::string error_with(const std::function<void(json&)>& change,
                       const std::string& base = "mlperf-unet3d-a100-rados.json") {
  json j = shipped(base);
  change(j);
  auto r = parse_scenario(j.dump(), kScenarios + "/s.json");
  if (r.ok()) return "(no error)";
  std::string m = r.status().message();
  const std::string prefix = kScenarios + "/";
  if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
  return m;
}

std::string error_of(const Result<Scenario>& r) {
  return r.ok() ? std::string("(no error)") : r.status().message();
}

TEST(ScenarioGuard, IssueExamplesAreRangesWithExactMessages) {
  // files = 2^63-1: SimGrid aborted (exit 134) on granary run.
  EXPECT_EQ(error_with([](json& j) { j["workloads"][0]["files"] = INT64_MAX; }),
            "s.json: workloads[0].files: expected an integer in 1..1099511627776, found "
            "9223372036854775807");
  // 10^12 files is within the range, but not 10^12 unet3d samples of 140 MiB.
  EXPECT_EQ(error_with([](json& j) {
              j["workloads"][0]["files"] = 1000000000000;
              j["workloads"][0]["epochs"] = 1000000;
            }),
            "s.json: workloads[0].files: expected files x samples_per_file x "
            "sample_size_mib.mean <= 2^60 bytes (1 EiB), found 1000000000000 x 1 x "
            "139.809253692627 MiB = 1.46600628e+20 bytes");
  // 10^6 storage servers were killed for memory, 10^5 refused after building a huge map.
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["count"] = 1000000; }),
            "s.json: cluster.storage.count: expected an integer in 1..65536, found 1000000");
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["count"] = 100000; }),
            "s.json: cluster.storage.count: expected an integer in 1..65536, found 100000");
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["count"] = 10000; }),
            "s.json: cluster.storage.drive.count: expected storage.count x drive.count <= 65536 "
            "drives (OSDs) in all, found 10000 x 8 = 80000");
  // Within the OSD limit, a generated CRUSH map would overflow its 32-bit root weight.
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["count"] = 2000; }),
            "s.json: storage.rados.crush_map: expected a CRUSH map for a pool of more than 65535 "
            "TiB (a generated map weighs each OSD its TiB, and a CRUSH bucket weighs at most "
            "65535), found none for 2000 storage nodes x 8 drives x 6.98491930961609 TiB = "
            "111759 TiB");
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["clients"]["count"] = 100000; }),
            "s.json: cluster.clients.count: expected an integer in 1..65536, found 100000");
  // A failure the run would never reach (it stops at max_simulated_s) is refused ...
  EXPECT_EQ(error_with([](json& j) {
              j["failures"] = json::parse(R"([{"at_s": 1e9, "kind": "osd_crash", "osd": 0}])");
            }),
            "s.json: failures[0].at_s: expected a time before the run stops "
            "(simulation.max_simulated_s, 3600), found 1000000000");
  EXPECT_EQ(error_with([](json& j) {
              j["failures"] = json::parse(R"([{"at_s": 1e9 , "kind": "osd_crash", "osd": 0}])");
              j["failures"][0]["at_s"] = 1e10;
            }),
            "s.json: failures[0].at_s: expected a number >= 0 and <= 1000000000, found "
            "10000000000.0");
}

// What is inside the ranges stays valid: how long it runs is the cost estimate's question
// (models/cost_estimate.h), not the parser's.
TEST(ScenarioGuard, ExpensiveButSimulableValuesAreLeftToTheCostEstimate) {
  EXPECT_EQ(error_with([](json& j) {
              j["failures"] = json::parse(R"([{"at_s": 9e8, "kind": "osd_crash", "osd": 0}])");
              j["simulation"]["max_simulated_s"] = 1e9;
            }),
            "(no error)");
  EXPECT_EQ(error_with([](json& j) { j["workloads"][0]["files"] = 10000000; }), "(no error)");
  // A file's batches are simulated one by one and the steady state waits for the first file:
  // more than 10^5 samples per file is refused as a range (issue 9: 10^8 ran for hours).
  EXPECT_NE(error_with([](json& j) { j["workloads"][0]["samples_per_file"] = 100000000; },
                       "mlperf-resnet50-h100-pfs.json")
                .find("workloads[0].samples_per_file: expected an integer in 1..100000, found "
                      "100000000"),
            std::string::npos);
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["count"] = 1000; }), "(no error)");
  EXPECT_EQ(error_with([](json& j) {
              j["workloads"] = json::parse(
                  R"([{"type": "checkpoint", "mlperf": "llama3-8b", "checkpoints": 1000}])");
            }),
            "(no error)");
  EXPECT_EQ(error_with([](json& j) {
              j["workloads"] = json::parse(
                  R"([{"type": "checkpoint", "mlperf": "llama3-8b", "checkpoints": 1001}])");
            }),
            "s.json: workloads[0].checkpoints: expected an integer in 1..1000, found 1001");
}

TEST(ScenarioGuard, CrossKeyProductsDoNotOverflow) {
  // tensor x pipeline x data parallel in 64 bits (int ranks() would overflow).
  EXPECT_EQ(error_with([](json& j) {
              j["workloads"] = json::parse(
                  R"([{"type": "checkpoint", "name": "c", "model_gb": 1, "optimizer_gb": 1,
                       "tensor_parallel": 1000000, "pipeline_parallel": 1000000,
                       "data_parallel": 1000000}])");
            }),
            "s.json: workloads[0].data_parallel: expected tensor_parallel x pipeline_parallel x "
            "data_parallel <= 32 accelerators (one rank each), found 1000000 x 1000000 x "
            "1000000 = 1000000000000000000");
  EXPECT_EQ(error_with([](json& j) {
              j["workloads"][0]["sample_size_mib"] = json::parse(R"({"mean": 1e6})");
            }),
            "s.json: workloads[0].sample_size_mib.mean: expected a number > 0 and <= 65536, "
            "found 1000000.0");
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["storage"]["drive"]["capacity_tb"] = 1e-9; }),
            "s.json: cluster.storage.drive.capacity_tb: expected a number >= 0.001 and <= 1000, "
            "found 1e-09");
  EXPECT_EQ(error_with([](json& j) { j["cluster"]["clients"]["nic"]["price_usd"] = 1e300; }),
            "s.json: cluster.clients.nic.price_usd: expected a number >= 0 and <= 1000000000, "
            "found 1e+300");
  // 2,048 volumes of 2^20 GiB each would overflow 64-bit byte counts; 1,024 fill 2^60 bytes.
  EXPECT_EQ(error_with(
                [](json& j) {
                  j["cluster"]["clients"]["count"] = 2048;
                  j["workloads"][0]["volume"]["size_gib"] = 1048576;
                },
                "block-4k-random-rados.json"),
            "s.json: workloads[0].volume.size_gib: expected volumes x volume.size_gib <= 2^60 "
            "bytes (1 EiB) in all, found 2048 volumes x 1048576 GiB");
  EXPECT_EQ(error_with(
                [](json& j) {
                  j["cluster"]["clients"]["count"] = 1024;
                  j["workloads"][0]["volume"]["size_gib"] = 1048576;
                },
                "block-4k-random-rados.json"),
            "(no error)");
  // A block workload whose window outlasts the run could only fail at its end.
  EXPECT_EQ(error_with(
                [](json& j) {
                  j["workloads"][0]["duration_s"] = 3000;
                  j["workloads"][0]["ramp_s"] = 1000;
                },
                "block-4k-random-rados.json"),
            "s.json: workloads[0].duration_s: expected ramp_s + duration_s within the run "
            "(simulation.max_simulated_s, 3600), found 1000 + 3000 s");
}

// Found by the fuzzer's runs: a denormal recovery rate made a chunk's duration infinite (SimGrid
// aborted), and a 4096 MiB stripe passed the parser and failed in the layout without a file name.
TEST(ScenarioGuard, RatesAreZeroOrUsableAndStripesFitLustre) {
  // (A recovery rate needs a failure to act on: the CI scenario of an OSD failure.)
  EXPECT_EQ(error_with(
                [](json& j) {
                  j["storage"]["rados"]["recovery"]["recovery_mib_per_s_per_osd"] =
                      4.9406564584124654e-324;
                },
                "ci/osd-failure-read-storm.json"),
            "s.json: storage.rados.recovery.recovery_mib_per_s_per_osd: expected 0 (no limit) or a "
            "number >= 0.001 and <= 10000000, found 5e-324");
  EXPECT_EQ(
      error_with(
          [](json& j) { j["storage"]["rados"]["recovery"]["recovery_mib_per_s_per_osd"] = 0; },
          "ci/osd-failure-read-storm.json"),
      "(no error)");
  EXPECT_NE(error_with([](json& j) { j["storage"]["pfs"]["stripe_size_mib"] = 4096; },
                       "mlperf-resnet50-h100-pfs.json")
                .find("storage.pfs.stripe_size_mib: expected "),
            std::string::npos);
  EXPECT_EQ(error_with([](json& j) { j["storage"]["pfs"]["stripe_size_mib"] = 4095.9375; },
                       "mlperf-resnet50-h100-pfs.json"),
            "(no error)");
}

// Found by the run fuzzer's soak: 4.25 MiB objects passed the parser and failed in the RBD
// layout without the file's name.
TEST(ScenarioGuard, RadosObjectsArePowersOfTwo) {
  EXPECT_EQ(error_with([](json& j) { j["storage"]["rados"]["object_size_mib"] = 4.25; }),
            "s.json: storage.rados.object_size_mib: expected a power of two (4 KiB .. 128 MiB), "
            "found 4.25 MiB");
}

// Issue 10: prefetch_batches 0 was accepted, refused by the loader inside the run, and the run
// reported success with nothing read.
TEST(ScenarioGuard, PrefetchNeedsOneBatch) {
  EXPECT_EQ(error_with([](json& j) { j["workloads"][0]["prefetch_batches"] = 0; }),
            "s.json: workloads[0].prefetch_batches: expected an integer in 1..1024, found 0");
}

// Found by the fuzzer: nlohmann echoes a DEL byte raw in "last read".
TEST(ScenarioGuard, SyntaxErrorsEscapeDel) {
  const std::string e =
      error_of(parse_scenario("{\"granary\": 1,\n  \"seed\": 60\n  },\n  \x7f}", "s.json"));
  EXPECT_EQ(e.find('\x7f'), std::string::npos) << e;
  EXPECT_EQ(e.rfind("s.json:", 0), 0u) << e;
  // (Also when the token is followed by more of nlohmann's text.)
  const std::string f =
      error_of(parse_scenario("{\"granary\": 1,\n  \"a\": \"b\",\n  \x7f: 1}", "s.json"));
  EXPECT_EQ(f.find('\x7f'), std::string::npos) << f;
  EXPECT_NE(f.find("expected string literal"), std::string::npos) << f;
}

TEST(ScenarioGuard, InvalidUtf8IsNamedByItsJsonPath) {
  std::string text = shipped("mlperf-unet3d-a100-rados.json").dump();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return error_of(parse_scenario(t.replace(at, from.size(), to), "s.json"));
  };
  EXPECT_EQ(with("\"name\":\"unet3d\"",
                 "\"name\":\"un\xff"
                 "et3d\""),
            "s.json: workloads[0].name: expected valid UTF-8 text, found invalid byte 0xff at "
            "offset 2");
  // Overlong, a surrogate in UTF-8, a sequence cut short.
  EXPECT_EQ(with("\"name\":\"unet3d\"", "\"name\":\"\xc0\x80\""),
            "s.json: workloads[0].name: expected valid UTF-8 text, found invalid byte 0xc0 at "
            "offset 0");
  EXPECT_EQ(with("\"name\":\"unet3d\"", "\"name\":\"ab\xed\xa0\x80\""),
            "s.json: workloads[0].name: expected valid UTF-8 text, found invalid byte 0xed at "
            "offset 2");
  EXPECT_EQ(with("\"description\":", "\"description\":\"x\xe2\x28\", \"d\":"),
            "s.json: description: expected valid UTF-8 text, found invalid byte 0xe2 at offset 1");
  // Escapes of half a surrogate pair.
  EXPECT_EQ(with("\"name\":\"unet3d\"", "\"name\":\"un\\udc00\""),
            "s.json: workloads[0].name: expected valid UTF-8 text, found an unpaired surrogate "
            "escape \\udc00 at offset 2");
  EXPECT_EQ(with("\"name\":\"unet3d\"", "\"name\":\"\\ud83d\\ude00\\ud800x\""),
            "s.json: workloads[0].name: expected valid UTF-8 text, found an unpaired surrogate "
            "escape \\ud800 at offset 12");
  // Keys, and strings inside arrays.
  EXPECT_EQ(with("\"count\":4", "\"co\xffunt\":4"),
            "s.json: cluster.clients: expected a key of valid UTF-8 text, found invalid byte 0xff "
            "at offset 2");
  EXPECT_EQ(with("\"workloads\":[", "\"x\": [\"a\", \"b\\udfff\"], \"workloads\":["),
            "s.json: x[1]: expected valid UTF-8 text, found an unpaired surrogate escape "
            "\\udfff at offset 1");
  // A name that would break the line it is shown on.
  EXPECT_EQ(with("\"name\":\"unet3d\"", "\"name\":\"un\\net3d\""),
            "s.json: workloads[0].name: expected a name without control characters (newlines, "
            "tabs, NUL), found \"un\\net3d\"");
  // The scenario's own path names it in messages and reports.
  auto r = parse_scenario(text, "dir/s\xff.json");
  EXPECT_EQ(error_of(r),
            "dir/s\\xff.json: expected a file path of valid UTF-8 text, found invalid byte 0xff "
            "at offset 5");
  EXPECT_EQ(error_of(load_scenario("dir/s\xff.json")), error_of(r));
  // Every message is valid UTF-8 itself.
  EXPECT_FALSE(json_diag::invalid_utf8_offset(with("\"granary\":1", "\"granary\":\xff")));
}

TEST(ScenarioGuard, LongValuesAreShortenedWithTheirLength) {
  const std::string big(1 << 20, 'a');
  auto parse = [](const json& j) { return error_of(parse_scenario(j.dump(), "s.json")); };
  json j = shipped("mlperf-unet3d-a100-rados.json");
  j["cluster"][big] = 1;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse(j),
            "s.json: cluster[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\" (a string of 1048576 bytes)]: "
            "unknown key (expected one of: clients, storage, fabric)");
  // No edit distance over the 1 MiB key (that took seconds and 1 GiB of table).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  j = shipped("mlperf-unet3d-a100-rados.json");
  j["cluster"]["clients"]["count"] = big;
  EXPECT_EQ(parse(j),
            "s.json: cluster.clients.count: expected an integer in 1..65536, found "
            "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\" (a string of 1048576 bytes)");
  j = shipped("mlperf-unet3d-a100-rados.json");
  j["workloads"][0]["name"] = "x\n" + big;
  EXPECT_EQ(parse(j),
            "s.json: workloads[0].name: expected a name without control characters (newlines, "
            "tabs, NUL), found \"x\\naaaaaaaaaaaaaaaaaaaaaaaaaaaa…\" (a string of 1048578 bytes)");
  j = shipped("mlperf-unet3d-a100-rados.json");
  j["cluster"]["storage"]["drive"]["profile"] = big;
  EXPECT_EQ(parse(j),
            "s.json: cluster.storage.drive.profile: unknown drive profile "
            "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…' (a string of 1048576 bytes) (known: "
            "kioxia-cm7r-7.68tb, samsung-pm9a3-7.68tb, micron-5400pro-7.68tb, "
            "seagate-exos-x20-20tb)");
  // nlohmann's own messages echo the whole token.
  EXPECT_EQ(error_of(parse_scenario("{\"granary\": 1, \"name\": \"" + big, "s.json")),
            "s.json:1:1048601: invalid JSON: syntax error while parsing value - invalid string: "
            "missing closing quote; last read: '\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa…' (1048577 "
            "bytes)");
  EXPECT_EQ(error_of(parse_scenario("{\"granary\": " + std::string(1 << 20, '1') + "}", "s.json")),
            "s.json:1:13: invalid JSON: number overflow parsing '111111111111111111111111111111…' "
            "(1048576 characters)");
  EXPECT_EQ(error_of(parse_scenario("{\"granary\": 1, \"x\": \xff}", "s.json")),
            "s.json:1:21: invalid JSON: syntax error while parsing value - invalid literal; last "
            "read: '\"x\": \\xff'");
}

// Expectations echo their metric, name and strings in PASS/FAIL lines, reports and JUnit.
TEST(ScenarioGuard, ExpectationTextsAreOneBoundedLine) {
  auto with_expect = [](const json& e) {
    return error_with([&](json& j) { j["expect"] = json::array({e}); });
  };
  EXPECT_EQ(with_expect({{"metric", std::string(300, 'm')}, {"at_least", 1}}),
            "s.json: expect[0].metric: expected at most 256 bytes, found "
            "\"mmmmmmmmmmmmmmmmmmmmmmmmmmmmmm…\" (a string of 300 bytes)");
  EXPECT_EQ(with_expect({{"metric", "summary.x"}, {"at_least", 1}, {"name", "two\nlines"}}),
            "s.json: expect[0].name: expected text without control characters (newlines, tabs, "
            "NUL), found \"two\\nlines\"");
  EXPECT_EQ(with_expect({{"metric", "fidelity.mode"}, {"equals", std::string(1 << 20, 's')}}),
            "s.json: expect[0].equals: expected at most 256 bytes, found "
            "\"ssssssssssssssssssssssssssssss…\" (a string of 1048576 bytes)");
  EXPECT_EQ(with_expect({{"metric", "bounds.bottleneck"}, {"contains", "storage NICs"}}),
            "(no error)");
}

TEST(ScenarioGuard, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(error_of(parse_scenario(deep, "s.json")),
            "s.json:1:65: invalid JSON: arrays and objects nested more than 64 deep (a scenario "
            "file needs fewer than 10)");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_EQ(error_of(parse_scenario(objects + "1" + std::string(100000, '}'), "s.json")),
            "s.json:1:321: invalid JSON: arrays and objects nested more than 64 deep (a scenario "
            "file needs fewer than 10)");
  // Brackets in strings and comments are not nesting.
  json j = shipped("mlperf-unet3d-a100-rados.json");
  j["description"] = std::string(1000, '[');
  EXPECT_TRUE(parse_scenario("// [[[[\n/* {{{{ */" + j.dump(), "s.json").ok());
  // 64 levels are read (and refused for what they are).
  EXPECT_EQ(error_of(parse_scenario(std::string(64, '[') + std::string(64, ']'), "s.json")),
            "s.json: expected a JSON object at the top level, found an array");
}

TEST(ScenarioGuard, ScenarioFilesAreCappedAt64Mib) {
  const std::string dir = testing::make_temp_dir();
  const std::string path = dir + "/huge.json";
  { std::ofstream(path) << "{}"; }
  fs::resize_file(path, (64u << 20) + 1);  // sparse
  EXPECT_EQ(error_of(load_scenario(path)),
            path + ": expected a scenario file of at most 64 MiB, found 67108865 bytes");
  fs::resize_file(path, 1ull << 30);
  EXPECT_EQ(error_of(load_scenario(path)),
            path + ": expected a scenario file of at most 64 MiB, found 1073741824 bytes");
}

TEST(ScenarioGuard, CrushMapsMustBeRegularFilesOfBoundedSize) {
  const std::string dir = testing::make_temp_dir();
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_directory(dir + "/maps");
  { std::ofstream(dir + "/big.txt") << "# a map\n"; }
  fs::resize_file(dir + "/big.txt", 10ull << 30);  // 10 GiB, sparse
  auto error_for = [&](const std::string& map) {
    json j = shipped("mlperf-unet3d-a100-rados.json");
    j["storage"]["rados"]["crush_map"] = map;
    std::string m = error_of(parse_scenario(j.dump(), dir + "/s.json"));
    if (m.rfind(dir, 0) == 0) m = "DIR" + m.substr(dir.size());
    return m;
  };
  const std::string prefix = "DIR/s.json: storage.rados.crush_map: ";
  EXPECT_EQ(error_for("/dev/zero"), prefix +
                                        "expected a CRUSH map file, found a special file at "
                                        "'/dev/zero'");
  EXPECT_EQ(error_for("fifo"),
            prefix + "expected a CRUSH map file, found a special file at '" + dir + "/fifo'");
  EXPECT_EQ(error_for("maps"),
            prefix + "expected a CRUSH map file, found a directory at '" + dir + "/maps'");
  EXPECT_EQ(error_for("big.txt"), prefix +
                                      "expected a CRUSH map file of at most 64 MiB, found "
                                      "10737418240 bytes at '" +
                                      dir + "/big.txt'");
  EXPECT_EQ(
      error_for(std::string("map.txt\0x", 9)),
      prefix + "expected a file path, found \"map.txt\\u0000x\", which holds a NUL character");
}

TEST(JsonDiagnostics, Utf8AndPrintableText) {
  using json_diag::invalid_utf8_offset;
  EXPECT_EQ(invalid_utf8_offset("plain"), std::nullopt);
  EXPECT_EQ(invalid_utf8_offset("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(invalid_utf8_offset("ab\x80"), 2u);            // a lone continuation byte
  EXPECT_EQ(invalid_utf8_offset("\xc1\xbf"), 0u);          // overlong
  EXPECT_EQ(invalid_utf8_offset("\xe0\x80\xaf"), 0u);      // overlong
  EXPECT_EQ(invalid_utf8_offset("x\xed\xbf\xbf"), 1u);     // a surrogate
  EXPECT_EQ(invalid_utf8_offset("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_offset("ok\xe2\x82"), 2u);        // cut short
  EXPECT_EQ(json_diag::printable("a\tb\x01\xff\"\\"), "a\\tb\\u0001\\xff\"\\");
  EXPECT_EQ(json_diag::quote("a\"b\\"), "\"a\\\"b\\\\\"");
  EXPECT_EQ(json_diag::quote("it's", '\''), "'it\\'s'");
  EXPECT_EQ(json_diag::quote(std::string(31, 'x')),
            "\"" + std::string(30, 'x') + "…\" (a string of 31 bytes)");
  EXPECT_EQ(json_diag::quote(std::string(30, 'x')), "\"" + std::string(30, 'x') + "\"");
  // Characters, not bytes, are counted: a shortened text never ends inside one.
  EXPECT_EQ(json_diag::printable("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xc3\xa9…");
  EXPECT_EQ(json_diag::utf8_problem("abc\xff"),
            "expected valid UTF-8 text, found invalid byte 0xff at offset 3");
  EXPECT_EQ(json_diag::join("a", std::string(40, 'k')),
            "a[\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…\" (a string of 40 bytes)]");
  // Suggestions still work for typos; huge names are never close.
  EXPECT_EQ(json_diag::closest("acelerator", {"accelerator", "count"}), "accelerator");
  EXPECT_EQ(json_diag::closest(std::string(1 << 20, 'c'), {"accelerator", "count"}), std::nullopt);
}

}  // namespace
}  // namespace granary::models

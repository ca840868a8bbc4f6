// granary validate as a user runs it: a summary line per valid file, one-line errors and exit
// status 2 for invalid ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

TEST(ValidateCli, SummarisesValidScenarios) {
  const std::string rados = kScenarios + "/mlperf-unet3d-a100-rados.json";
  const std::string pfs = kScenarios + "/mlperf-resnet50-h100-pfs.json";
  const std::string nfs = kScenarios + "/mlperf-cosmoflow-a100-nfs.json";
  auto r = granary("validate " + rados + " " + pfs + " " + nfs);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Each summary line is followed by the run's cost estimate (tested in cost_cli_test.cc).
  std::string summaries;
  size_t estimates = 0;
  for (size_t start = 0; start < r.out.size();) {
    const size_t end = r.out.find('\n', start);
    const std::string line = r.out.substr(start, end - start);
    if (line.rfind("  estimate: about ", 0) == 0) {
      ++estimates;
    } else {
      summaries += line + "\n";
    }
    start = end == std::string::npos ? r.out.size() : end + 1;
  }
  EXPECT_EQ(estimates, 3u) << r.out;
  EXPECT_EQ(summaries,
            rados +
                ": ok (4 clients x 8 a100, 4 storage nodes x 8 samsung-pm9a3-7.68tb, rados 3x "
                "replicated over rdma, workloads: unet3d)\n" +
                pfs +
                ": ok (2 clients x 8 h100, 4 storage nodes x 8 samsung-pm9a3-7.68tb, pfs (1 MDS, "
                "stripe count 4) over lnet-rdma, workloads: resnet50)\n" +
                nfs +
                ": ok (2 clients x 8 a100, 2 storage nodes x 8 samsung-pm9a3-7.68tb, nfs over "
                "nfs-rdma, workloads: cosmoflow)\n");
}

TEST(ValidateCli, BadInputExitsTwoWithOneLine) {
  const std::string tmp = testing::make_temp_dir();
  {
    std::ofstream(tmp + "/s.json") << R"({"granary": 1, "cluster": {"clients": {"count": -3}}})";
    std::ofstream(tmp + "/typo.json") << R"({"granary": 1, "clusterr": {}})";
    std::ofstream(tmp + "/syntax.json") << "{\n  \"granary\": 1\n  \"name\": \"x\"\n}\n";
    std::ofstream(tmp + "/v2.json") << R"({"granary": 2})";
  }
  const std::pair<std::string, std::string> runs[] = {
      {"validate " + tmp + "/s.json",
       "granary: " + tmp +
           "/s.json: cluster.clients.count: expected an integer in 1..65536, found -3"},
      {"validate " + tmp + "/typo.json",
       "granary: " + tmp + "/typo.json: clusterr: unknown key (did you mean 'cluster'?)"},
      {"validate " + tmp + "/syntax.json",
       "granary: " + tmp +
           "/syntax.json:3:3: invalid JSON: syntax error while parsing object - unexpected "
           "string literal; expected '}'"},
      {"validate " + tmp + "/v2.json",
       "granary: " + tmp +
           "/v2.json: granary: unsupported format version 2 (this granary reads "
           "version 1)"},
      {"validate " + tmp + "/missing.json", "granary: " + tmp + "/missing.json: no such file"},
  };
  for (const auto& [args, message] : runs) {
    auto r = granary(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message + "\n") << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  // Good and bad files together: every file is reported, the status is 2.
  const std::string good = kScenarios + "/mlperf-resnet50-h100-pfs.json";
  auto mixed = granary("validate " + tmp + "/s.json " + good + " " + tmp + "/v2.json");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(std::count(mixed.err.begin(), mixed.err.end(), '\n'), 2) << mixed.err;
  EXPECT_EQ(mixed.out.rfind(good + ": ok (", 0), 0u) << mixed.out;
  // No file at all is a usage error.
  auto none = granary("validate");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}

// Issue 11: training_read shapes that `granary validate` passed and `granary run` refused. For
// each, validate and run now give the same one-line error and status 2 (each from the shipped
// cosmoflow scenario: 2 nodes x 8 accelerators, batch 1, 1 sample per file).
TEST(ValidateCli, ValidateAndRunAgreeOnTrainingReadShapes) {
  const std::string tmp = testing::make_temp_dir();
  const nlohmann::json shipped =
      nlohmann::json::parse(testing::read_file(kScenarios + "/mlperf-cosmoflow-a100-nfs.json"));
  auto write = [&](const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = shipped;
    change(j);
    std::ofstream(tmp + "/" + name) << j.dump(2);
    return tmp + "/" + name;
  };
  const std::pair<std::string, std::string> cases[] = {
      // Fewer files than one batch for each accelerator: an epoch of no steps.
      {write("few-files.json", [](auto& j) { j["workloads"][0]["files"] = 15; }),
       "workloads[0].files: expected at least 16 (one batch of 1 samples, 1 file(s) of 1, for "
       "each of the 16 accelerators), found 15"},
      {write("big-batch.json",
             [](auto& j) {
               j["workloads"][0]["batch_size"] = 1002;
               j["workloads"][0]["samples_per_file"] = 2;
             }),
       "workloads[0].files: expected at least 8016 (one batch of 1002 samples, 501 file(s) of 2, "
       "for each of the 16 accelerators), found 8000"},
      // A second training read: format 1 runs one.
      {write("two-reads.json",
             [](auto& j) {
               nlohmann::json second = j["workloads"][0];
               second["name"] = "second";
               j["workloads"].push_back(second);
             }),
       "workloads[1].type: format 1 runs one workload, or a training_read or checkpoint workload "
       "followed by at most one block or boot_storm workload beside it and, after a "
       "training_read, at most one checkpoint; found a training_read workload here, after a "
       "training_read workload"},
  };
  for (const auto& [path, message] : cases) {
    const std::string line = "granary: " + path + ": " + message + "\n";
    auto v = granary("validate " + path);
    EXPECT_EQ(v.exit_code, 2) << path;
    EXPECT_EQ(v.err, line);
    auto r = granary("run " + path + " --quiet --out " + tmp + "/r.json");
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_EQ(r.err, line);
  }
}

// Issue 11: what run refuses while it builds the cluster plan (here carried data over its
// 1 GiB limit), validate refuses with the same line.
TEST(ValidateCli, ValidateRefusesWhatTheClusterPlanRefuses) {
  const std::string tmp = testing::make_temp_dir();
  nlohmann::json j =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/carry-data-ec-4-2.json"));
  j["workloads"][0]["files"] = 1024;  // 1.5 GiB held with the coding shards
  const std::string path = tmp + "/big.json";
  std::ofstream(path) << j.dump(2);
  const std::string line =
      "granary: " + path +
      ": simulation.carry_data: expected a run that holds at most 1 GiB of carried data "
      "(1073741824 bytes: the dataset times the pool's copies, as simulated), found 1610612736 "
      "bytes; set it to false or leave it out\n";
  auto v = granary("validate " + path);
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.err, line);
  auto r = granary("run " + path + " --quiet --out " + tmp + "/r.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, line);
}

// Issue 9: inputs Granary cannot simulate get one line and status 2 from validate, before
// anything is built (each from a shipped scenario with one value changed).
TEST(ValidateCli, GuardsRefuseWhatCannotBeSimulatedInOneLine) {
  const std::string tmp = testing::make_temp_dir();
  std::ifstream in(kScenarios + "/mlperf-unet3d-a100-rados.json");
  std::stringstream shipped;
  shipped << in.rdbuf();
  auto write = [&](const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = nlohmann::json::parse(shipped.str());
    change(j);
    std::ofstream(tmp + "/" + name) << j.dump(2);
    return tmp + "/" + name;
  };
  const std::string big(1 << 20, 'a');
  const std::pair<std::string, std::string> runs[] = {
      {write("files.json", [](auto& j) { j["workloads"][0]["files"] = INT64_MAX; }),
       "workloads[0].files: expected an integer in 1..1099511627776, found "
       "9223372036854775807"},
      {write("servers.json", [](auto& j) { j["cluster"]["storage"]["count"] = 1000000; }),
       "cluster.storage.count: expected an integer in 1..65536, found 1000000"},
      {write("key.json", [&](auto& j) { j["cluster"][big] = 1; }),
       "cluster[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\" (a string of 1048576 bytes)]: unknown key "
       "(expected one of: clients, storage, fabric)"},
      {write("map.json", [](auto& j) { j["storage"]["rados"]["crush_map"] = "/dev/zero"; }),
       "storage.rados.crush_map: expected a CRUSH map file, found a special file at "
       "'/dev/zero'"},
  };
  for (const auto& [path, message] : runs) {
    auto r = granary("validate " + path);
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_EQ(r.err, "granary: " + path + ": " + message + "\n");
  }
  // Invalid UTF-8 in a name, deep nesting, and a scenario path that is a device.
  {
    std::string text = shipped.str();
    const size_t at = text.find("\"unet3d\"");
    ASSERT_NE(at, std::string::npos);
    text.insert(at + 3, "\xff");
    std::ofstream(tmp + "/utf8.json") << text;
    std::ofstream(tmp + "/deep.json") << std::string(100000, '[') << std::string(100000, ']');
  }
  auto utf8 = granary("validate " + tmp + "/utf8.json");
  EXPECT_EQ(utf8.exit_code, 2);
  EXPECT_EQ(utf8.err, "granary: " + tmp +
                          "/utf8.json: workloads[0].name: expected valid UTF-8 text, found "
                          "invalid byte 0xff at offset 2\n");
  auto deep = granary("validate " + tmp + "/deep.json");
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_EQ(deep.err, "granary: " + tmp +
                          "/deep.json:1:65: invalid JSON: arrays and objects nested more than 64 "
                          "deep (a scenario file needs fewer than 10)\n");
  auto device = granary("validate /dev/zero");
  EXPECT_EQ(device.exit_code, 2);
  EXPECT_EQ(device.err, "granary: /dev/zero: not a regular file\n");
}

}  // namespace
}  // namespace granary

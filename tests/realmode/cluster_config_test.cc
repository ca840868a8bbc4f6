// The cluster configuration every real-mode process reads (realmode/cluster_config.h): a file
// round-trips through cluster_config_json, every field is checked where it is read, and a bad
// file or flag gets one line naming the file, the JSON path (or the flag), what was expected and
// what was found. granary-osd refuses bad flags and files with such a line and exit status 2.
#include "realmode/cluster_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/placement/ring.h"

namespace granary::realmode {
namespace {

ClusterConfig sample() {
  ClusterConfig c;
  c.key_file = "/tmp/key";
  c.hosts = {{"storage0", "127.0.0.1:40001", 4},
             {"storage1", "127.0.0.1:40002", 4},
             {"client", "127.0.0.1:40003", 8}};
  c.osds = {{0, 0, "/tmp/osd.0.img", 64ull << 20, 32}, {1, 1, "/tmp/osd.1.img", 64ull << 20, 16}};
  c.names = {{"c2", 2}};
  c.replicas = 2;
  c.part_power = 4;
  c.op_timeout_s = 3;
  c.sub_op_timeout_s = 1.5;
  c.handshake_timeout_s = 2;
  return c;
}

TEST(ClusterConfig, RoundTripsThroughItsJson) {
  const ClusterConfig c = sample();
  auto back = parse_cluster_config(cluster_config_json(c), "cluster.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(cluster_config_json(*back), cluster_config_json(c));
  EXPECT_EQ(back->addresses(), c.addresses());
  EXPECT_EQ(back->osds[1].queue_depth, 16u);
  EXPECT_EQ(back->sub_op_timeout_s, 1.5);
  // Every process builds the same ring from it.
  auto r1 = back->ring(), r2 = c.ring();
  ASSERT_TRUE(r1.ok() && r2.ok());
  for (const char* name : {"a", "b/c", "checkpoint.17"}) {
    EXPECT_EQ(r1->group_of(name), r2->group_of(name));
  }
}

// Each case: a change to the sample's JSON, and the one line it must give.
TEST(ClusterConfig, BadFilesGetOneLineNamingTheJsonPath) {
  const std::string good = cluster_config_json(sample());
  struct Case {
    std::string from, to, error;
  };
  const std::vector<Case> cases = {
      {"\"version\": 1", "\"version\": 2",
       "cluster.json: /version: expected an integer in 1..1, found 2"},
      {"\"host\": 1", "\"host\": 7",
       "cluster.json: /osds/1/host: expected an integer in 0..2, "
       "found 7"},
      {"\"address\": \"127.0.0.1:40002\"", "\"address\": \"127.0.0.1:40001\"",
       "cluster.json: /hosts/1/address: '127.0.0.1:40001' is another host's address too"},
      {"\"drive_bytes\": 67108864,\n      \"host\": 1",
       "\"drive_bytes\": 67108865,\n      \"host\": 1",
       "cluster.json: /osds/1/drive_bytes: expected a multiple of 4096, found 67108865"},
      {"\"replicas\": 2", "\"replicas\": 3",
       "cluster.json: /pool/replicas: expected an integer in 1..2, found 3"},
      {"\"sub_op_s\": 1.5", "\"sub_op_s\": -1",
       "cluster.json: /timeouts/sub_op_s: expected a number in 0.01..3600, found -1"},
      {"\"c2\": 2", "\"c2\": \"client\"",
       "cluster.json: /names/c2: expected a host in 0..2, found \"client\""},
      {"\"pool\"", "\"pools\"", "cluster.json: /pools: unknown key"},
      {"\"key_file\": \"/tmp/key\",", "", "cluster.json: /key_file: missing"},
  };
  for (const Case& c : cases) {
    std::string text = good;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    auto parsed = parse_cluster_config(text, "cluster.json");
    ASSERT_FALSE(parsed.ok()) << c.to;
    EXPECT_EQ(parsed.status().message(), c.error);
  }
  auto not_json = parse_cluster_config("{\"version\": ", "cluster.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().message().rfind("cluster.json: not JSON: ", 0), 0u);
  auto missing = load_cluster_config("/nonexistent/cluster.json");
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/cluster.json: cannot open the cluster configuration");
}

// Runs granary-osd with `args`: its exit status and what it said.
std::pair<int, std::string> run_osd(const std::string& args) {
  const std::string cmd = std::string(GRANARY_OSD_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (p != nullptr && fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = p != nullptr ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(GranaryOsd, RefusesBadFlagsAndFilesWithOneLine) {
  auto [code, out] = run_osd("--osd 0");
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("--config is required"), std::string::npos) << out;
  std::tie(code, out) = run_osd("--config /nonexistent/cluster.json --osd 0");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(out, "granary-osd: /nonexistent/cluster.json: cannot open the cluster configuration\n");
  const std::string dir = std::filesystem::temp_directory_path() / "granary-osd-cfg-test";
  std::filesystem::create_directories(dir);
  ClusterConfig c = sample();
  c.key_file = dir + "/no-key";
  std::ofstream(dir + "/cluster.json") << cluster_config_json(c);
  std::tie(code, out) = run_osd("--config " + dir + "/cluster.json --osd 5");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(out, "granary-osd: osd.5: --osd 5: the configuration has 2 OSDs\n");
  std::tie(code, out) = run_osd("--config " + dir + "/cluster.json --osd 0");
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find(dir + "/no-key"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace granary::realmode

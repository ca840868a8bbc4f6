// The cluster configuration every real-mode process reads (realmode/cluster_config.h): a file
// round-trips through cluster_config_json, every field is checked where it is read, and a bad
// file or flag gets one line naming the file, the JSON path (or the flag), what was expected and
// what was found. granary-osd and granary-mon refuse bad flags and files with such a line and
// exit status 2 (a file that cannot be read) or 1 (what the file says cannot be served).
#include "realmode/cluster_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "engine/placement/crush_pool.h"
#include "realmode/auth.h"
#include "realmode/cluster_process.h"

namespace granary::realmode {
namespace {

ClusterConfig sample() {
  ClusterConfig c;
  c.key_file = "/tmp/key";
  c.hosts = {{"storage0", "127.0.0.1:40001", 4, "", 0},
             {"storage1", "127.0.0.1:40002", 4, "", 0},
             {"client", "127.0.0.1:40003", 8, "", 0}};
  c.osds = {{0, 0, "/tmp/osd.0.img", 64ull << 20, 32}, {1, 1, "/tmp/osd.1.img", 64ull << 20, 16}};
  c.names = {{"c2", 2}};
  c.replicas = 2;
  c.pg_num = 16;
  c.monitor = ClusterMonitor{2, 0.5, 2, 10};
  c.op_timeout_s = 3;
  c.sub_op_timeout_s = 1.5;
  c.handshake_timeout_s = 2;
  return c;
}

// An edit of a good cluster file (the first `from` replaced by `to`) and the one-line error it
// must get.
struct Refusal {
  std::string from, to, error;
};

void expect_refusals(const std::string& good, const std::vector<Refusal>& refusals) {
  for (const Refusal& r : refusals) {
    std::string text = good;
    const size_t at = text.find(r.from);
    ASSERT_NE(at, std::string::npos) << r.from;
    text.replace(at, r.from.size(), r.to);
    auto parsed = parse_cluster_config(text, "cluster.json");
    ASSERT_FALSE(parsed.ok()) << r.to;
    EXPECT_EQ(parsed.status().message(), r.error);
  }
}

TEST(ClusterConfig, RoundTripsThroughItsJson) {
  const ClusterConfig c = sample();
  auto back = parse_cluster_config(cluster_config_json(c), "cluster.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(cluster_config_json(*back), cluster_config_json(c));
  EXPECT_EQ(back->addresses(), c.addresses());
  EXPECT_EQ(back->osds[1].queue_depth, 16u);
  EXPECT_EQ(back->sub_op_timeout_s, 1.5);
  EXPECT_EQ(back->monitor->heartbeat_grace_s, 2);
  // Every process builds the same map from it: CRUSH over the two storage hosts, copies on
  // both, the same PG and OSDs for every name.
  auto m1 = back->osd_map(), m2 = c.osd_map();
  ASSERT_TRUE(m1.ok() && m2.ok()) << m1.status().to_string();
  EXPECT_EQ(m1->epoch(), 1u);
  auto p1 = m1->pool_placement(kClusterPoolId), p2 = m2->pool_placement(kClusterPoolId);
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(p1->num_groups(), 16u);
  std::vector<int32_t> d1, d2;
  for (const char* name : {"a", "b/c", "checkpoint.17"}) {
    EXPECT_EQ(p1->group_of(name), p2->group_of(name));
    p1->devices_of(p1->group_of(name), d1);
    p2->devices_of(p2->group_of(name), d2);
    EXPECT_EQ(d1, d2);
    ASSERT_EQ(d1.size(), 2u);
    EXPECT_NE(d1[0], d1[1]);  // one copy per host
  }
}

// Each case: a change to the sample's JSON, and the one line it must give.
TEST(ClusterConfig, BadFilesGetOneLineNamingTheJsonPath) {
  const std::string good = cluster_config_json(sample());
  const std::vector<Refusal> cases = {
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
      {"\"pg_num\": 16", "\"pg_num\": 0",
       "cluster.json: /pool/pg_num: expected an integer in 1..65536, found 0"},
      {"\"heartbeat_interval_s\": 0.5,\n    \"host\": 2",
       "\"heartbeat_interval_s\": 0.5,\n    \"host\": 3",
       "cluster.json: /monitor/host: expected an integer in 0..2, found 3"},
      {"\"heartbeat_grace_s\": 2.0", "\"heartbeat_grace_s\": \"2\"",
       "cluster.json: /monitor/heartbeat_grace_s: expected a number in 0.01..3600, found \"2\""},
  };
  expect_refusals(good, cases);
  auto not_json = parse_cluster_config("{\"version\": ", "cluster.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().message().rfind("cluster.json: not JSON: ", 0), 0u);
  auto missing = load_cluster_config("/nonexistent/cluster.json");
  EXPECT_EQ(missing.status().message(),
            "/nonexistent/cluster.json: cannot open the cluster configuration");
}

// An erasure-coded pool: round-trips; its map places k + m shards positionally on distinct
// hosts (rule erasure_host); bad codes get one line naming the path.
TEST(ClusterConfig, ErasureCodedPool) {
  ClusterConfig c = sample();
  c.hosts.insert(c.hosts.begin() + 2, {{"storage2", "127.0.0.1:40004", 4, "", 0},
                                       {"storage3", "127.0.0.1:40005", 4, "", 0}});
  c.osds.push_back({2, 2, "/tmp/osd.2.img", 64ull << 20, 32});
  c.osds.push_back({3, 3, "/tmp/osd.3.img", 64ull << 20, 32});
  c.names = {{"c2", 4}};
  c.monitor->host = 4;
  c.replicas = 0;
  c.ec = {2, 1, 8192};
  const std::string text = cluster_config_json(c);
  auto back = parse_cluster_config(text, "cluster.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(cluster_config_json(*back), text);
  EXPECT_EQ(back->ec.k, 2);
  EXPECT_EQ(back->ec.m, 1);
  EXPECT_EQ(back->ec.stripe_unit_bytes, 8192u);
  EXPECT_EQ(back->replicas, 0);
  auto map = back->osd_map();
  ASSERT_TRUE(map.ok()) << map.status().to_string();
  const cluster::Pool* pool = map->pool(kClusterPoolId);
  ASSERT_NE(pool, nullptr);
  EXPECT_TRUE(pool->spec.erasure);
  EXPECT_EQ(pool->spec.size, 3);
  EXPECT_EQ(pool->redundancy.data_chunks, 2);
  auto placement = map->pool_placement(kClusterPoolId);
  ASSERT_TRUE(placement.ok());
  std::vector<int32_t> d;
  for (const char* name : {"a", "b/c", "checkpoint.17"}) {
    placement->devices_of(placement->group_of(name), d);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_TRUE(d[0] != d[1] && d[1] != d[2] && d[0] != d[2]);  // one shard per host
  }
  // One OSD down: its position stays, empty (indep), the others keep theirs.
  cluster::Incremental down;
  down.mark_down = {d[0]};
  ASSERT_TRUE(map->apply(down).ok());
  auto degraded = map->pool_placement(kClusterPoolId);
  ASSERT_TRUE(degraded.ok());
  std::vector<int32_t> after;
  degraded->devices_of(degraded->group_of("checkpoint.17"), after);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0], placement::kNoDevice);
  EXPECT_EQ(after[1], d[1]);
  EXPECT_EQ(after[2], d[2]);

  const std::vector<Refusal> cases = {
      {"\"k\": 2", "\"k\": 4",
       "cluster.json: /pool/erasure: k + m = 5 shards go to as many distinct servers, found 4 "
       "servers with OSDs"},
      {"\"m\": 1", "\"m\": 0",
       "cluster.json: /pool/erasure/m: expected an integer in 1..32, found 0"},
      {"\"stripe_unit_bytes\": 8192", "\"stripe_unit_bytes\": 6000",
       "cluster.json: /pool/erasure/stripe_unit_bytes: expected a multiple of 4096, found 6000"},
      {"\"pg_num\"", "\"replicas\": 2,\n    \"pg_num\"",
       "cluster.json: /pool: expected \"replicas\" or \"erasure\", found both"},
      {"\"stripe_unit_bytes\"", "\"w\"", "cluster.json: /pool/erasure/w: unknown key"},
  };
  expect_refusals(text, cases);
}

// A storage server with several OSDs is several hosts (an address, so a process, each) naming
// the same server: CRUSH has one bucket per server, copies go to distinct servers, and the pool
// may not ask for more copies than there are servers.
TEST(ClusterConfig, OsdsOfOneServerShareItsBucket) {
  ClusterConfig c = sample();
  c.hosts = {{"storage0.0", "127.0.0.1:40001", 4, "storage0", 0},
             {"storage0.1", "127.0.0.1:40002", 4, "storage0", 0},
             {"storage1.0", "127.0.0.1:40003", 4, "storage1", 0.002},
             {"storage1.1", "127.0.0.1:40004", 4, "storage1", 0.002},
             {"client", "127.0.0.1:40005", 8, "", 0}};
  c.osds.clear();
  for (int32_t o = 0; o < 4; ++o) {
    c.osds.push_back({o, o, "/tmp/osd." + std::to_string(o) + ".img", 64ull << 20, 32});
  }
  c.names = {{"c4", 4}};
  c.monitor->host = 4;
  c.replicas = 2;
  c.pg_num = 64;
  const std::string text = cluster_config_json(c);
  auto back = parse_cluster_config(text, "cluster.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(cluster_config_json(*back), text);
  EXPECT_EQ(back->hosts[1].server, "storage0");
  EXPECT_EQ(back->hosts[4].domain(), "client");
  EXPECT_EQ(back->hosts[2].added_latency_s, 0.002);
  EXPECT_EQ(back->hosts[0].added_latency_s, 0);
  auto map = back->osd_map();
  ASSERT_TRUE(map.ok()) << map.status().to_string();
  auto placement = map->pool_placement(kClusterPoolId);
  ASSERT_TRUE(placement.ok());
  std::set<int32_t> used;
  std::vector<int32_t> d;
  for (uint32_t pg = 0; pg < c.pg_num; ++pg) {
    placement->devices_of(pg, d);
    ASSERT_EQ(d.size(), 2u);
    EXPECT_NE(d[0] / 2, d[1] / 2) << "pg " << pg << ": both copies on one server";
    used.insert(d.begin(), d.end());
  }
  EXPECT_EQ(used.size(), 4u);  // every OSD of both servers holds some

  expect_refusals(text,
                  {{R"("replicas": 2)", R"("replicas": 3)",
                    "cluster.json: /pool/replicas: expected an integer in 1..2, found 3"},
                   {R"("server": "storage0")", R"("server": "")",
                    R"(cluster.json: /hosts/0/server: expected a non-empty string, found "")"},
                   {R"("added_latency_s": 0.002)", R"("added_latency_s": 2)",
                    "cluster.json: /hosts/2/added_latency_s: expected a number in 0..1, found 2"}});
}

// granary-osd --fault-file: absent is no fault, {"slow_factor": F} slows the drive F times,
// {"failed": true} fails its every I/O, "bad_ranges" lists unreadable byte ranges, and
// anything else is refused naming the file (the
// daemon logs it and keeps its faults).
TEST(GranaryOsd, ReadsItsFaultFile) {
  const std::string path = testing::TempDir() + "osd.faults";
  std::filesystem::remove(path);
  ASSERT_TRUE(read_drive_faults(path).ok());
  EXPECT_EQ(read_drive_faults(path)->slow_factor, 1);
  EXPECT_FALSE(read_drive_faults(path)->failed);
  std::ofstream(path) << R"({"slow_factor": 12.5})";
  ASSERT_TRUE(read_drive_faults(path).ok());
  EXPECT_EQ(read_drive_faults(path)->slow_factor, 12.5);
  std::ofstream(path) << R"({"slow_factor": 2, "failed": true})";
  ASSERT_TRUE(read_drive_faults(path).ok());
  EXPECT_TRUE(read_drive_faults(path)->failed);
  EXPECT_EQ(read_drive_faults(path)->slow_factor, 2);
  std::ofstream(path) << R"({"bad_ranges": [[8192, 100], [1048576, 4096]]})";
  ASSERT_TRUE(read_drive_faults(path).ok());
  EXPECT_EQ(read_drive_faults(path)->bad_ranges,
            (std::vector<std::pair<uint64_t, uint64_t>>{{8192, 100}, {1048576, 4096}}));
  for (const char* bad :
       {R"({"slow_factor": 0.5})", R"({"slow": 2})", "{", R"([3])", R"({"slow_factor": 2, "x": 1})",
        R"({"failed": 1})", R"({"bad_ranges": [[0, 0]]})", R"({"bad_ranges": [[-1, 10]]})",
        R"({"bad_ranges": [4096]})", R"({"bad_ranges": {"a": 1}})"}) {
    std::ofstream(path) << bad;
    auto r = read_drive_faults(path);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), path +
                                        ": expected {\"slow_factor\": a number in 1..1e6, "
                                        "\"failed\": a boolean, \"bad_ranges\": [[offset, "
                                        "length > 0], ...]}, found " +
                                        bad);
  }
  std::filesystem::remove(path);
}

// Runs `binary` with `args`: its exit status and what it said.
std::pair<int, std::string> run(const std::string& binary, const std::string& args) {
  const std::string cmd = binary + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (p != nullptr && fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = p != nullptr ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::pair<int, std::string> run_osd(const std::string& args) {
  return run(GRANARY_OSD_BINARY, args);
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

// A drive that returns EIO stops its daemon at once, exit status 3, the error logged (as
// ceph-osd aborts on an I/O error of its device): here the fault file fails the drive before
// the daemon formats it.
TEST(GranaryOsd, ADriveErrorStopsTheDaemon) {
  const std::string dir = std::filesystem::temp_directory_path() / "granary-osd-eio-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ClusterConfig c = sample();
  c.key_file = dir + "/key";
  for (ClusterHost& h : c.hosts) h.address = "127.0.0.1:" + std::to_string(free_loopback_port());
  c.osds[0].drive = dir + "/osd.0.img";
  Result<ClusterKey> key = ClusterKey::generate();
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(key->save(c.key_file).ok());
  std::ofstream(dir + "/cluster.json") << cluster_config_json(c);
  std::ofstream(dir + "/osd.0.faults") << R"({"failed": true})";
  auto [code, out] = run_osd("--config " + dir + "/cluster.json --osd 0 --mkfs --fault-file " +
                             dir + "/osd.0.faults");
  EXPECT_EQ(code, kDriveErrorExitStatus) << out;
  EXPECT_NE(out.find("osd.0: drive failed: every I/O returns EIO"), std::string::npos) << out;
  // mkfs's first write (the journal's region) is the first I/O, and the last.
  const size_t error = out.find("osd.0: drive error: " + dir + "/osd.0.img: write of ");
  ASSERT_NE(error, std::string::npos) << out;
  EXPECT_NE(out.find("Input/output error (injected: the drive failed); stopping", error),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("formatted"), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

TEST(GranaryMon, RefusesAFileWithoutAMonitor) {
  const std::string dir = std::filesystem::temp_directory_path() / "granary-mon-cfg-test";
  std::filesystem::create_directories(dir);
  ClusterConfig c = sample();
  c.monitor.reset();
  std::ofstream(dir + "/cluster.json") << cluster_config_json(c);
  auto [code, out] = run(GRANARY_MON_BINARY, "--config " + dir + "/cluster.json");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(out, "granary-mon: " + dir +
                     "/cluster.json: the cluster configuration has no \"monitor\" section\n");
  std::filesystem::remove_all(dir);
}

// A pfs cluster: its OSDs are OSTs, granary-mds keeps the namespace; no pool, no monitor.
TEST(ClusterConfig, PfsCluster) {
  ClusterConfig c = sample();
  c.monitor.reset();
  c.replicas = 0;
  c.pfs = ClusterPfs{2, "/tmp/mdt.img", 32ull << 20, 128 << 10, -1};
  const std::string text = cluster_config_json(c);
  auto back = parse_cluster_config(text, "cluster.json");
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(cluster_config_json(*back), text);
  ASSERT_TRUE(back->pfs.has_value());
  EXPECT_EQ(back->pfs->mds_host, 2);
  EXPECT_EQ(back->pfs->stripe_count, -1);
  EXPECT_EQ(back->pfs->stripe_size_bytes, 128u << 10);
  EXPECT_EQ(back->osd_map().status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(osd_endpoint(*back, 1), "ost.1");
  EXPECT_EQ(osd_endpoint(sample(), 1), "osd.1");
  expect_refusals(
      text,
      {{"\"pfs\": {", "\"pool\": {\"replicas\": 1},\n  \"pfs\": {",
        "cluster.json: : expected \"pool\" (RADOS) or \"pfs\", found both"},
       {"\"pfs\": {", "\"monitor\": {\"host\": 2},\n  \"pfs\": {",
        "cluster.json: /monitor: a pfs cluster has no monitor (its OSTs do not replicate: nothing "
        "to map)"},
       {"\"stripe_count\": -1", "\"stripe_count\": 0",
        "cluster.json: /pfs/stripe_count: expected 1..2 or -1 (every OST), found 0"},
       {"\"stripe_count\": -1", "\"stripe_count\": 3",
        "cluster.json: /pfs/stripe_count: expected an integer in -1..2, found 3"},
       {"\"stripe_size_bytes\": 131072", "\"stripe_size_bytes\": 100000",
        "cluster.json: /pfs/stripe_size_bytes: expected a multiple of 65536 (Lustre's), found "
        "100000"},
       {"\"host\": 2", "\"host\": 5",
        "cluster.json: /pfs/mds/host: expected an integer in 0..2, found 5"},
       {"\"drive\": \"/tmp/mdt.img\"", "\"disk\": \"/tmp/mdt.img\"",
        "cluster.json: /pfs/mds/disk: unknown key"}});
}

}  // namespace
}  // namespace granary::realmode

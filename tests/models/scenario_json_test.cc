// Scenario format 1: resolution of profiles and presets, overrides, defaults, unit
// conversions, relative paths, and the exact one-line message for each kind of bad input.
#include "models/scenario_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "tests/test_util.h"

namespace granary::models {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kFlagshipMap =
    std::string(GRANARY_SOURCE_DIR) + "/scenarios/crush/gpu-storage-16x24.txt";

// The smallest valid scenario: everything else defaults (but the files: unet3d's 168 are less
// than a batch of 7 for each of the 32 accelerators).
json minimal() {
  return json::parse(R"({
    "granary": 1,
    "cluster": {
      "clients": {"count": 4, "accelerator": "a100", "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 4, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                  "nic": {"profile": "connectx7-400g"}}
    },
    "storage": {"design": "rados"},
    "workloads": [{"mlperf": "unet3d", "files": 224}]
  })");
}

Result<Scenario> parse(const json& j, const std::string& source = "s.json") {
  return parse_scenario(j.dump(2), source);
}

std::string error_of(const Result<Scenario>& r) {
  return r.ok() ? std::string("(no error)") : r.status().message();
}

TEST(ScenarioJson, MinimalScenarioGetsDefaults) {
  auto r = parse(minimal(), "dir/my-cluster.json");
  ASSERT_TRUE(r.ok()) << error_of(r);
  const Scenario& s = *r;
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.name, "my-cluster");  // the file's stem
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.source_path, "dir/my-cluster.json");
  EXPECT_EQ(s.seed, 1u);
  // Cluster: catalog profiles as they are, struct defaults elsewhere.
  const ClientNodesSpec& c = s.cluster.clients;
  EXPECT_EQ(c.count, 4);
  EXPECT_EQ(c.accelerator.name, "a100");
  EXPECT_EQ(c.accelerators_per_node, 8);
  EXPECT_EQ(c.nic.count, 1);
  EXPECT_EQ(c.nic.profile.name, "connectx6-200g");
  EXPECT_DOUBLE_EQ(c.nic.profile.gbps, 200);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth_gbytes_per_s, 200);
  EXPECT_DOUBLE_EQ(c.memory_gib, 1024);
  EXPECT_FALSE(c.gpudirect_storage);
  const StorageNodesSpec& st = s.cluster.storage;
  EXPECT_EQ(st.count, 4);
  EXPECT_EQ(st.drives_per_node, 8);
  EXPECT_EQ(st.cpu_cores, 32);
  EXPECT_EQ(st.drive.name, "samsung-pm9a3-7.68tb");
  EXPECT_DOUBLE_EQ(st.drive.read_gbytes_per_s,
                   drive_profile("samsung-pm9a3-7.68tb")->read_gbytes_per_s);
  const FabricSpec& f = s.cluster.fabric;
  EXPECT_EQ(f.topology, FabricTopology::kLeafSpine);
  EXPECT_DOUBLE_EQ(f.link_gbps, 400);
  EXPECT_EQ(f.hosts_per_leaf, 16);
  EXPECT_TRUE(f.storage_on_own_leaves);
  // Storage: the design's default protocol, RadosSpec's defaults, the generated CRUSH map.
  EXPECT_EQ(s.storage.design, StorageDesign::kRados);
  EXPECT_EQ(s.storage.protocol.name, "rdma");
  EXPECT_EQ(s.storage.rados.pg_num, 4096u);
  EXPECT_EQ(s.storage.rados.replicas, 3);
  EXPECT_EQ(s.storage.rados.ec_k, 0);
  EXPECT_EQ(s.storage.rados.object_size_bytes, 4u << 20);
  EXPECT_EQ(s.storage.rados.crush_map_path, "");
  EXPECT_EQ(s.storage.rados.crush_rule, -1);
  // Workload: the MLPerf preset, compute time from the accelerator.
  ASSERT_EQ(s.workloads.size(), 1u);
  EXPECT_EQ(s.workloads[0].name, "unet3d");
  const TrainingWorkload& t = s.workloads[0].training;
  EXPECT_EQ(t.name, "unet3d");
  EXPECT_DOUBLE_EQ(t.sample_bytes_mean, 146600628);
  EXPECT_EQ(t.batch_size, 7);
  EXPECT_EQ(t.epochs, 5);
  EXPECT_DOUBLE_EQ(t.compute_s_per_step, 0.636);
  // Simulation defaults.
  EXPECT_EQ(s.simulation.fidelity, Fidelity::kAuto);
  EXPECT_EQ(s.simulation.representative_nodes, 8);
  EXPECT_EQ(s.simulation.transfer_unit_bytes, 16u << 20);
  EXPECT_TRUE(s.simulation.stop_at_steady_state);
  EXPECT_DOUBLE_EQ(s.simulation.max_simulated_s, 3600);
  EXPECT_DOUBLE_EQ(s.simulation.steady_state_tolerance, 0.01);
}

// FIPS 180-2's test vectors, and the parsed scenario carries its text's hash.
TEST(ScenarioJson, Sha256OfTheTextFollowsFips180) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string text = minimal().dump();
  auto s = parse_scenario(text, "s.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->source_sha256, sha256_hex(text));
}

TEST(ScenarioJson, DesignDefaults) {
  json j = minimal();
  j["storage"] = {{"design", "pfs"}};
  auto pfs = parse(j);
  ASSERT_TRUE(pfs.ok()) << error_of(pfs);
  EXPECT_EQ(pfs->storage.protocol.name, "lnet-rdma");
  EXPECT_EQ(pfs->storage.pfs.mds_count, 1);
  EXPECT_DOUBLE_EQ(pfs->storage.pfs.mds_ops_per_s, 50000);
  EXPECT_EQ(pfs->storage.pfs.stripe_size_bytes, 1u << 20);
  EXPECT_EQ(pfs->storage.pfs.stripe_count, 1);
  j["storage"] = {{"design", "nfs"}};
  auto nfs = parse(j);
  ASSERT_TRUE(nfs.ok()) << error_of(nfs);
  EXPECT_EQ(nfs->storage.protocol.name, "nfs-rdma");
  EXPECT_EQ(nfs->storage.nfs.rsize_bytes, 1u << 20);
}

// Design local: cluster.storage is each client node's own drives.
json minimal_local() {
  json j = minimal();
  j["cluster"]["storage"] =
      json::parse(R"({"drive": {"profile": "samsung-pm9a3-7.68tb", "count": 2}})");
  j["storage"] = {{"design", "local"}};
  j["workloads"] = json::parse(R"([{"mlperf": "unet3d", "files": 1000}])");
  return j;
}

TEST(ScenarioJson, LocalDesignPutsTheDrivesInTheClientNodes) {
  auto r = parse(minimal_local());
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.design, StorageDesign::kLocal);
  EXPECT_TRUE(r->cluster.storage.in_client_nodes);
  EXPECT_EQ(r->cluster.storage.count, 4);  // one drive set per client node
  EXPECT_EQ(r->cluster.storage.drives_per_node, 2);
  EXPECT_EQ(r->storage.protocol.name, "local-nvme");
  EXPECT_EQ(r->storage.local.io_bytes, 1u << 20);
  EXPECT_EQ(r->storage.local.inflight_ios, 8);
  EXPECT_NE(scenario_summary(*r).find("2 samsung-pm9a3-7.68tb in each, local"), std::string::npos)
      << scenario_summary(*r);
  json j = minimal_local();
  j["storage"]["local"] = {{"io_kib", 256}, {"inflight_ios", 32}};
  auto tuned = parse(j);
  ASSERT_TRUE(tuned.ok()) << error_of(tuned);
  EXPECT_EQ(tuned->storage.local.io_bytes, 256u << 10);
  EXPECT_EQ(tuned->storage.local.inflight_ios, 32);
  // Other designs keep their servers on the fabric.
  EXPECT_FALSE(parse(minimal())->cluster.storage.in_client_nodes);
}

// simulation.carry_data: true, false or absent (automatic); true is refused where data cannot be
// carried (a design other than rados, a workload mix or a block workload; with failures, the
// keys that act on sized recovery chunks only).
TEST(ScenarioJson, CarryDataIsABooleanRefusedWhereDataCannotBeCarried) {
  json j = minimal();
  auto absent = parse(j);
  ASSERT_TRUE(absent.ok()) << error_of(absent);
  EXPECT_FALSE(absent->simulation.carry_data.has_value());
  j["simulation"] = {{"carry_data", true}};
  auto on = parse(j);
  ASSERT_TRUE(on.ok()) << error_of(on);
  EXPECT_EQ(on->simulation.carry_data, std::optional<bool>(true));
  j["simulation"]["carry_data"] = false;
  auto off = parse(j);
  ASSERT_TRUE(off.ok()) << error_of(off);
  EXPECT_EQ(off->simulation.carry_data, std::optional<bool>(false));

  struct Case {
    std::function<void(json&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["simulation"]["carry_data"] = "yes"; },
       "s.json: simulation.carry_data: expected true or false, found \"yes\""},
      {[](json& j) {
         j["storage"] = {{"design", "pfs"}};
       },
       "s.json: simulation.carry_data: expected false or no carry_data with storage design "
       "'pfs' (only rados OSDs keep objects in an object store that carries bytes), found true"},
      {[](json& j) {
         j["failures"] = json::parse(R"([{"at_s": 1, "kind": "osd_crash", "osd": 0}])");
         j["storage"]["rados"]["recovery"] = {{"recovery_max_active", 4}};
       },
       "s.json: storage.rados.recovery.recovery_max_active: expected no recovery_max_active "
       "with simulation.carry_data true (carried recovery moves a PG's objects by peering, not "
       "sized chunks through the OSD op queue: this key acts on those only), found 4"},
      {[](json& j) {
         j["failures"] = json::parse(R"([{"at_s": 1, "kind": "osd_crash", "osd": 0}])");
         j["storage"]["rados"]["recovery"] = {{"op_queue", "wpq"}};
       },
       "s.json: storage.rados.recovery.op_queue: expected no op_queue with simulation.carry_data "
       "true (carried recovery moves a PG's objects by peering, not sized chunks through the OSD "
       "op queue: this key acts on those only), found \"wpq\""},
      {[](json& j) {
         j["failures"] = json::parse(R"([{"at_s": 1, "kind": "osd_crash", "osd": 0}])");
         j["storage"]["rados"]["stored_tib"] = 2;
       },
       "s.json: storage.rados.stored_tib: expected no stored_tib with simulation.carry_data true "
       "(carried recovery moves a PG's objects by peering, and only the objects the run wrote "
       "exist to be moved), found 2"},
      {[](json& j) {
         j["workloads"] = json::parse(
             R"([{"type": "block", "name": "b", "volume": {"size_gib": 1}, "queue_depth": 1}])");
       },
       "s.json: simulation.carry_data: expected false or no carry_data with workloads [block] "
       "(data is carried for one training_read or one checkpoint workload alone), found true"},
  };
  for (const Case& c : cases) {
    json k = minimal();
    k["simulation"] = {{"carry_data", true}};
    c.edit(k);
    auto r = parse(k);
    ASSERT_FALSE(r.ok()) << c.error;
    EXPECT_EQ(error_of(r).substr(0, c.error.size()), c.error);
  }
  // Failures with carried data: recovery by peering, whose throttles stay.
  json f = minimal();
  f["simulation"] = {{"carry_data", true}};
  f["failures"] = json::parse(R"([{"at_s": 1, "kind": "drive_failure", "osd": 0}])");
  f["storage"]["rados"]["recovery"] = {
      {"max_backfills", 2}, {"recovery_sleep_s", 0.1}, {"op_queue", "none"}};
  auto failures = parse(f);
  ASSERT_TRUE(failures.ok()) << error_of(failures);
  EXPECT_EQ(failures->storage.rados.recovery.max_backfills, 2);
}

TEST(ScenarioJson, LocalDesignRefusesWhatItCannotUse) {
  struct Case {
    std::function<void(json&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["cluster"]["storage"]["count"] = 3; },
       "s.json: cluster.storage.count: expected 4 (design 'local': one drive set in each client "
       "node, cluster.clients.count), found 3"},
      {[](json& j) {
         j["cluster"]["storage"]["nic"] = {{"profile", "connectx6-200g"}};
       },
       "s.json: cluster.storage.nic: applies to storage servers on the fabric; design 'local' "
       "has the drives inside the client nodes (their NICs and CPUs are cluster.clients')"},
      {[](json& j) { j["cluster"]["storage"]["cpu_cores"] = 8; },
       "s.json: cluster.storage.cpu_cores: applies to storage servers on the fabric;"},
      {[](json& j) { j["storage"]["protocol"] = "nfs-rdma"; },
       "s.json: storage.protocol: protocol 'nfs-rdma' does not carry design 'local' (expected "
       "one of: local-nvme)"},
      {[](json& j) {
         j["storage"]["protocol"] = {{"profile", "local-nvme"}, {"efficiency", 0.9}};
       },
       "s.json: storage.protocol.efficiency: applies to a protocol over a network to a server;"},
      {[](json& j) { j["storage"]["nfs"] = json::object(); },
       "s.json: storage.nfs: applies to design 'nfs', but storage.design is 'local'"},
      {[](json& j) {
         j["storage"]["local"] = {{"io_kib", 8192}};
       },
       "s.json: storage.local.io_kib:"},
      {[](json& j) { j["workloads"][0]["files"] = 1000000; },
       "s.json: workloads[0].files: expected a dataset that fits on one node's drives (design "
       "'local' keeps a copy on every node): 15.36 TB, found 146.6"},
      {[](json& j) {
         j["workloads"] = json::parse(R"([{"type": "checkpoint", "mlperf": "llama3-8b"}])");
       },
       "s.json: workloads[0].type: checkpoints are simulated to shared storage"},
      {[](json& j) {
         j["failures"] = json::parse(R"([{"at_s": 1, "kind": "osd_crash", "osd": 0}])");
       },
       "s.json: failures: failure injection is simulated for design 'rados'"},
  };
  for (const Case& c : cases) {
    json j = minimal_local();
    c.edit(j);
    const std::string e = error_of(parse(j));
    EXPECT_EQ(e.substr(0, c.error.size()), c.error) << j.dump();
  }
}

TEST(ScenarioJson, AServerProfileGivesDefaultsAndLimits) {
  json j = minimal();
  j["cluster"]["storage"]["profile"] = "nvme-1u-12bay";
  auto s = parse(j);
  ASSERT_TRUE(s.ok()) << error_of(s);
  const StorageNodesSpec& st = s->cluster.storage;
  EXPECT_EQ(st.server.name, "nvme-1u-12bay");
  EXPECT_EQ(st.server.drive_bays, 12);
  EXPECT_EQ(st.cpu_cores, 64);  // the profile's, not the format's 32
  EXPECT_EQ(st.server_gbytes_per_s, 0);
  EXPECT_EQ(scenario_summary(*s).substr(0, 72),
            "4 clients x 8 a100, 4 storage nodes (nvme-1u-12bay) x 8 samsung-pm9a3-7.");
  // The scenario's own figures win over the profile's.
  j["cluster"]["storage"]["cpu_cores"] = 24;
  j["cluster"]["storage"]["server_gbytes_per_s"] = 40;
  s = parse(j);
  ASSERT_TRUE(s.ok()) << error_of(s);
  EXPECT_EQ(s->cluster.storage.cpu_cores, 24);
  EXPECT_EQ(s->cluster.storage.server_gbytes_per_s, 40);
  // Without a profile nothing changes.
  s = parse(minimal());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->cluster.storage.server.name.empty());
  EXPECT_EQ(s->cluster.storage.cpu_cores, 32);
}

TEST(ScenarioJson, ASwitchProfileGivesTheLinkRateAndLatency) {
  json j = minimal();
  j["cluster"]["fabric"] = {{"switch", "quantum2-qm9700"}};
  auto s = parse(j);
  ASSERT_TRUE(s.ok()) << error_of(s);
  const FabricSpec& f = s->cluster.fabric;
  EXPECT_EQ(f.edge_switch.name, "quantum2-qm9700");
  EXPECT_EQ(f.link_gbps, 400);
  EXPECT_DOUBLE_EQ(f.link_latency_us, 0.3 + 0.05);  // the switch's, plus 10 m of fibre
  EXPECT_NE(scenario_summary(*s).find(" over rdma, leaf switch quantum2-qm9700, workloads: "),
            std::string::npos)
      << scenario_summary(*s);
  j["cluster"]["fabric"]["link_gbps"] = 200;  // a split port: allowed
  j["cluster"]["fabric"]["link_latency_us"] = 2;
  s = parse(j);
  ASSERT_TRUE(s.ok()) << error_of(s);
  EXPECT_EQ(s->cluster.fabric.link_gbps, 200);
  EXPECT_EQ(s->cluster.fabric.link_latency_us, 2);
  // Breakout: 128 hosts on one SN5600 leaf at 400 GbE (64 x 800 split in two), none at 800.
  json big = minimal();
  big["cluster"]["clients"]["count"] = 120;
  big["cluster"]["clients"]["nic"] = {{"profile", "connectx7-400g"}};
  big["cluster"]["fabric"] = {
      {"switch", "spectrum4-sn5600"}, {"hosts_per_leaf", 120}, {"uplinks_per_leaf", 4}};
  big["workloads"][0]["files"] = 7000;  // a batch of 7 for each of the 960 accelerators
  s = parse(big);
  ASSERT_TRUE(s.ok()) << error_of(s);  // 120 x 400 + 4 x 800: 60 + 4 ports of 64
  big["cluster"]["fabric"]["uplinks_per_leaf"] = 5;
  EXPECT_EQ(error_of(parse(big)),
            "s.json: cluster.fabric.switch: leaf0 needs 65 ports for its 120 x 400 Gb/s + 5 x "
            "800 Gb/s links (120 hosts and 5 uplinks), switch profile 'spectrum4-sn5600' has "
            "64 x 800 Gb/s: expected fewer hosts_per_leaf or uplinks");
}

TEST(ScenarioJson, ServerAndSwitchProfilesRefuseWhatDoesNotFit) {
  struct Case {
    std::function<void(json&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](json& j) { j["cluster"]["storage"]["profile"] = "nvme-9u"; },
       "s.json: cluster.storage.profile: unknown server profile 'nvme-9u' (known: "
       "nvme-1u-12bay, nvme-2u-24bay, hdd-4u-60bay)"},
      {[](json& j) { j["cluster"]["storage"]["profile"] = 3; },
       "s.json: cluster.storage.profile: expected a profile name (a string), found 3"},
      {[](json& j) {
         j["cluster"]["storage"]["profile"] = "nvme-1u-12bay";
         j["cluster"]["storage"]["drive"]["count"] = 16;
       },
       "s.json: cluster.storage.drive.count: expected at most 12 (the drive bays of server "
       "profile 'nvme-1u-12bay'), found 16"},
      {[](json& j) {
         j["cluster"]["storage"]["profile"] = "nvme-1u-12bay";
         j["cluster"]["storage"]["nic"]["count"] = 3;
       },
       "s.json: cluster.storage.nic.count: expected at most 2 (the NIC slots of server profile "
       "'nvme-1u-12bay'), found 3"},
      {[](json& j) {
         j["cluster"]["fabric"] = {{"switch", "qm9"}};
       },
       "s.json: cluster.fabric.switch: unknown switch profile 'qm9' (known: spectrum3-sn4600c, "
       "quantum-qm8700, quantum2-qm9700, spectrum4-sn5600)"},
      {[](json& j) {
         j["cluster"]["fabric"] = {{"switch", "quantum2-qm9700"}, {"link_gbps", 800}};
       },
       "s.json: cluster.fabric.link_gbps: expected at most 400 (the port rate of switch profile "
       "'quantum2-qm9700'), found 800"},
      {[](json& j) {
         j["cluster"]["clients"]["nic"] = {{"profile", "connectx7-400g"}};
         j["cluster"]["fabric"] = {{"switch", "quantum-qm8700"}};
       },
       "s.json: cluster.clients.nic.gbps: a 400 Gb/s link is faster than the 200 Gb/s ports of "
       "switch profile 'quantum-qm8700' (cluster.fabric.switch)"},
      {[](json& j) {
         j["cluster"]["clients"]["count"] = 48;
         j["cluster"]["clients"]["nic"] = {{"profile", "connectx6-200g"}, {"count", 2}};
         j["cluster"]["fabric"] = {
             {"switch", "quantum-qm8700"}, {"hosts_per_leaf", 16}, {"uplinks_per_leaf", 16}};
       },
       "s.json: cluster.fabric.switch: leaf0 needs 48 ports for its 48 x 200 Gb/s links (16 "
       "hosts and 16 uplinks), switch profile 'quantum-qm8700' has 40 x 200 Gb/s: expected "
       "fewer hosts_per_leaf or uplinks"},
  };
  for (const Case& c : cases) {
    json j = minimal();
    c.edit(j);
    EXPECT_EQ(error_of(parse(j)), c.error) << j.dump();
  }
  // Design 'local' has no storage servers to name.
  json j = minimal_local();
  j["cluster"]["storage"]["profile"] = "nvme-1u-12bay";
  EXPECT_EQ(error_of(parse(j)).substr(0, 90),
            "s.json: cluster.storage.profile: applies to storage servers on the fabric; design "
            "'local' ");
}

TEST(ScenarioJson, FullScenarioResolvesPresetsAndOverrides) {
  const std::string text = R"({
    // Comments are allowed.
    "granary": 1, "name": "full", "description": "every key", "seed": 18446744073709551615,
    "cluster": {
      "clients": {"count": 128,
                  "accelerator": {"profile": "h100", "compute_s_per_step": {"llm": 2.5},
                                  "price_usd": 30000},
                  "accelerators_per_node": 4,
                  "nic": {"profile": "connectx6-200g", "count": 2, "gbps": 100, "ports": 2,
                          "latency_us": 0.9, "price_usd": 1500},
                  "memory_bandwidth_gbytes_per_s": 300, "memory_gib": 2048,
                  "gpudirect_storage": true},
      "storage": {"count": 16,
                  "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 24, "kind": "nvme",
                            "capacity_tb": 15.36, "read_gbytes_per_s": 6.5,
                            "write_gbytes_per_s": 3.5, "read_kiops": 900, "write_kiops": 200,
                            "read_latency_us": 85, "write_latency_us": 25, "queue_depth": 64,
                            "price_usd": 1200},
                  "nic": {"profile": "connectx7-400g", "count": 2}, "cpu_cores": 64},
      "fabric": {"topology": "fat-tree", "link_gbps": 800, "link_latency_us": 0.5,
                 "hosts_per_leaf": 32, "uplinks_per_leaf": 0, "oversubscription": 2,
                 "spines": 4, "pods": 4, "leaves_per_pod": 8, "rails": 0,
                 "storage_on_own_leaves": false}},
    "storage": {"design": "rados",
                "protocol": {"profile": "tcp", "message_latency_us": 30, "client_cpu_us_per_op": 40,
                             "server_cpu_us_per_op": 350, "cpu_us_per_mib": 600,
                             "efficiency": 0.7, "zero_copy": false},
                "rados": {"pg_num": 2048, "erasure": {"k": 8, "m": 3}, "object_size_mib": 0.5,
                          "crush_map": ")" +
                           kFlagshipMap + R"(", "crush_rule": 1}},
    "workloads": [
      {"name": "u", "type": "training_read", "mlperf": "unet3d", "batch_size": 14,
       "sample_size_mib": {"mean": 100}, "epochs": 2, "files": 7168}],
    "simulation": {"fidelity": "slice", "representative_nodes": 4, "transfer_unit_mib": 32,
                   "max_simulated_s": 600, "steady_state_tolerance": 0.05}
  })";
  auto r = parse_scenario(text, "full.json");
  ASSERT_TRUE(r.ok()) << error_of(r);
  const Scenario& s = *r;
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.description, "every key");
  EXPECT_EQ(s.seed, 18446744073709551615ull);

  const ClientNodesSpec& c = s.cluster.clients;
  EXPECT_EQ(c.accelerator.name, "h100");
  EXPECT_DOUBLE_EQ(c.accelerator.compute_s_per_step.at("llm"), 2.5);
  EXPECT_DOUBLE_EQ(c.accelerator.compute_s_per_step.at("unet3d"), 0.323);  // kept
  EXPECT_DOUBLE_EQ(c.accelerator.price_usd, 30000);
  EXPECT_EQ(c.accelerators_per_node, 4);
  EXPECT_EQ(c.nic.profile.name, "connectx6-200g");  // overrides keep the profile's name
  EXPECT_EQ(c.nic.count, 2);
  EXPECT_DOUBLE_EQ(c.nic.profile.gbps, 100);
  EXPECT_EQ(c.nic.profile.ports, 2);
  EXPECT_DOUBLE_EQ(c.nic.profile.latency_us, 0.9);
  EXPECT_DOUBLE_EQ(c.nic.profile.price_usd, 1500);
  EXPECT_DOUBLE_EQ(c.memory_bandwidth_gbytes_per_s, 300);
  EXPECT_DOUBLE_EQ(c.memory_gib, 2048);
  EXPECT_TRUE(c.gpudirect_storage);

  const DriveProfile& d = s.cluster.storage.drive;
  EXPECT_EQ(d.name, "samsung-pm9a3-7.68tb");
  EXPECT_EQ(d.kind, DriveKind::kNvme);
  EXPECT_DOUBLE_EQ(d.capacity_tb, 15.36);
  EXPECT_DOUBLE_EQ(d.read_gbytes_per_s, 6.5);
  EXPECT_DOUBLE_EQ(d.write_gbytes_per_s, 3.5);
  EXPECT_DOUBLE_EQ(d.read_kiops, 900);
  EXPECT_DOUBLE_EQ(d.write_kiops, 200);
  EXPECT_DOUBLE_EQ(d.read_latency_us, 85);
  EXPECT_DOUBLE_EQ(d.write_latency_us, 25);
  EXPECT_EQ(d.queue_depth, 64);
  // 900,000 IOPS at 85 us need 77 commands at once; the drive holds 64.
  EXPECT_EQ(d.littles_law_units(), 77);
  EXPECT_EQ(d.command_units(), 64);
  EXPECT_NEAR(d.read_iops_limit(), 900e3 * 64 / 77, 1e-6);
  EXPECT_DOUBLE_EQ(d.price_usd, 1200);
  EXPECT_EQ(s.cluster.storage.drives_per_node, 24);
  EXPECT_EQ(s.cluster.storage.nic.count, 2);
  EXPECT_EQ(s.cluster.storage.cpu_cores, 64);

  const FabricSpec& f = s.cluster.fabric;
  EXPECT_EQ(f.topology, FabricTopology::kFatTree);
  EXPECT_DOUBLE_EQ(f.link_gbps, 800);
  EXPECT_DOUBLE_EQ(f.link_latency_us, 0.5);
  EXPECT_EQ(f.hosts_per_leaf, 32);
  EXPECT_EQ(f.uplinks_per_leaf, 0);
  EXPECT_DOUBLE_EQ(f.oversubscription, 2);
  EXPECT_EQ(f.spines, 4);
  EXPECT_EQ(f.pods, 4);
  EXPECT_EQ(f.leaves_per_pod, 8);
  EXPECT_EQ(f.rails, 0);
  EXPECT_FALSE(f.storage_on_own_leaves);

  const ProtocolProfile& p = s.storage.protocol;
  EXPECT_EQ(p.name, "tcp");
  EXPECT_DOUBLE_EQ(p.message_latency_us, 30);
  EXPECT_DOUBLE_EQ(p.client_cpu_us_per_op, 40);
  EXPECT_DOUBLE_EQ(p.server_cpu_us_per_op, 350);
  EXPECT_DOUBLE_EQ(p.cpu_us_per_mib, 600);
  EXPECT_DOUBLE_EQ(p.efficiency, 0.7);
  EXPECT_FALSE(p.zero_copy);

  const RadosSpec& rados = s.storage.rados;
  EXPECT_EQ(rados.pg_num, 2048u);
  EXPECT_EQ(rados.replicas, 0);
  EXPECT_EQ(rados.ec_k, 8);
  EXPECT_EQ(rados.ec_m, 3);
  EXPECT_EQ(rados.object_size_bytes, 512u * 1024);  // 0.5 MiB
  EXPECT_EQ(rados.crush_map_path, fs::path(kFlagshipMap).lexically_normal().string());
  EXPECT_EQ(rados.crush_rule, 1);

  ASSERT_EQ(s.workloads.size(), 1u);
  const TrainingWorkload& u = s.workloads[0].training;
  EXPECT_EQ(s.workloads[0].name, "u");
  EXPECT_EQ(u.name, "unet3d");  // the preset names the model
  EXPECT_DOUBLE_EQ(u.sample_bytes_mean, 100.0 * (1 << 20));
  EXPECT_EQ(u.sample_bytes_stddev, 68341808);  // the preset's, not overridden
  EXPECT_EQ(u.batch_size, 14);
  EXPECT_EQ(u.files, 7168);
  EXPECT_EQ(u.read_threads, 4);
  EXPECT_EQ(u.epochs, 2);
  EXPECT_DOUBLE_EQ(u.compute_s_per_step, 0.323);  // the H100's unet3d step

  // Format 1 runs one training read: two more, each alone in the same cluster.
  const json all = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  auto alone = [&](const char* workload) {
    json j = all;
    j["workloads"] = json::array({json::parse(workload)});
    return parse(j, "full.json");
  };
  auto llm_run = alone(R"({"name": "llm", "sample_size_mib": {"mean": 0.5, "stddev": 0.25},
      "samples_per_file": 64, "files": 100000, "batch_size": 32, "read_threads": 16,
      "prefetch_batches": 1, "au_threshold": 0.95, "file_format": "parquet"})");
  ASSERT_TRUE(llm_run.ok()) << error_of(llm_run);
  const TrainingWorkload& llm = llm_run->workloads[0].training;
  EXPECT_EQ(llm.name, "llm");
  EXPECT_DOUBLE_EQ(llm.sample_bytes_mean, 512.0 * 1024);
  EXPECT_DOUBLE_EQ(llm.sample_bytes_stddev, 256.0 * 1024);
  EXPECT_EQ(llm.samples_per_file, 64);
  EXPECT_EQ(llm.files, 100000);
  EXPECT_EQ(llm.batch_size, 32);
  EXPECT_EQ(llm.read_threads, 16);
  EXPECT_EQ(llm.prefetch_batches, 1);
  EXPECT_EQ(llm.epochs, 1);
  EXPECT_DOUBLE_EQ(llm.au_threshold, 0.95);
  EXPECT_EQ(llm.file_format, "parquet");
  EXPECT_DOUBLE_EQ(llm.compute_s_per_step, 2.5);  // from the accelerator override
  auto cosmo =
      alone(R"({"name": "cosmo-fixed", "mlperf": "cosmoflow", "compute_s_per_step": 0.01})");
  ASSERT_TRUE(cosmo.ok()) << error_of(cosmo);
  EXPECT_DOUBLE_EQ(cosmo->workloads[0].training.compute_s_per_step, 0.01);
  EXPECT_DOUBLE_EQ(cosmo->workloads[0].training.au_threshold, 0.70);

  EXPECT_EQ(s.simulation.fidelity, Fidelity::kSlice);
  EXPECT_EQ(s.simulation.representative_nodes, 4);
  EXPECT_EQ(s.simulation.transfer_unit_bytes, 32u << 20);
  EXPECT_DOUBLE_EQ(s.simulation.max_simulated_s, 600);
  EXPECT_DOUBLE_EQ(s.simulation.steady_state_tolerance, 0.05);

  EXPECT_EQ(scenario_summary(s),
            "128 clients x 4 h100, 16 storage nodes x 24 samsung-pm9a3-7.68tb, rados EC 8+3 over "
            "tcp, workloads: u");
}

// zero_copy true means no CPU per byte: it drops the profile's cpu_us_per_mib, and an explicit
// cpu_us_per_mib > 0 beside it is refused (BadInputsGiveExactOneLineMessages).
TEST(ScenarioJson, ZeroCopyMeansNoCpuPerByte) {
  auto protocol = [](json p) {
    json j = minimal();
    j["storage"]["protocol"] = std::move(p);
    auto r = parse(j);
    EXPECT_TRUE(r.ok()) << error_of(r);
    return r.ok() ? r->storage.protocol : ProtocolProfile{};
  };
  // The profile's 200 us per MiB, 2^20 bytes a MiB.
  const ProtocolProfile rdma = protocol({{"profile", "rdma"}});
  EXPECT_DOUBLE_EQ(rdma.cpu_us_per_mib, 200);
  EXPECT_DOUBLE_EQ(rdma.cpu_s_per_byte(), 200e-6 / (1 << 20));
  const ProtocolProfile zc = protocol({{"profile", "rdma"}, {"zero_copy", true}});
  EXPECT_TRUE(zc.zero_copy);
  EXPECT_EQ(zc.cpu_us_per_mib, 0);
  EXPECT_EQ(zc.cpu_s_per_byte(), 0);
  const ProtocolProfile explicit_zero =
      protocol({{"profile", "tcp"}, {"zero_copy", true}, {"cpu_us_per_mib", 0}});
  EXPECT_EQ(explicit_zero.cpu_s_per_byte(), 0);
  // A copying transport with no per-byte cost is allowed; so is one that sets its own.
  const ProtocolProfile free_copy = protocol({{"profile", "tcp"}, {"cpu_us_per_mib", 0}});
  EXPECT_FALSE(free_copy.zero_copy);
  EXPECT_EQ(free_copy.cpu_s_per_byte(), 0);
  const ProtocolProfile costly = protocol({{"profile", "tcp"}, {"cpu_us_per_mib", 1024}});
  EXPECT_DOUBLE_EQ(costly.cpu_s_per_byte(), 1024e-6 / (1 << 20));
}

TEST(ScenarioJson, UnitConversions) {
  json j = minimal();
  j["storage"] = {
      {"design", "pfs"},
      {"pfs", {{"stripe_size_mib", 0.0625}, {"stripe_count", -1}, {"osts_per_server", 8}}}};
  j["simulation"] = {{"transfer_unit_mib", 0.25}};
  j["workloads"][0]["sample_size_mib"] = {{"mean", 1.5}, {"stddev", 0.125}};
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.pfs.stripe_size_bytes, 64u * 1024);
  EXPECT_EQ(r->storage.pfs.stripe_count, -1);
  EXPECT_EQ(r->storage.pfs.osts_per_server, 8);
  EXPECT_EQ(r->simulation.transfer_unit_bytes, 256u * 1024);
  EXPECT_DOUBLE_EQ(r->workloads[0].training.sample_bytes_mean, 1.5 * 1048576);
  EXPECT_DOUBLE_EQ(r->workloads[0].training.sample_bytes_stddev, 131072);
  j["storage"] = {{"design", "nfs"}, {"nfs", {{"rsize_kib", 256}}}};
  r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.nfs.rsize_bytes, 256u * 1024);
  // Integral numbers written as floats are integers.
  j["cluster"]["clients"]["count"] = 64.0;
  j["workloads"][0]["files"] = 4e3;
  r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->cluster.clients.count, 64);
  EXPECT_EQ(r->workloads[0].training.files, 4000);
}

// A scenario next to a CRUSH map, referring to it by a relative path.
TEST(ScenarioJson, CrushMapPathsAreRelativeToTheScenarioFile) {
  const fs::path dir = fs::path(testing::make_temp_dir()) / "site";
  fs::create_directories(dir / "maps");
  fs::copy_file(kFlagshipMap, dir / "maps" / "flagship.txt");
  json j = minimal();
  j["cluster"]["storage"]["count"] = 16;
  j["cluster"]["storage"]["drive"]["count"] = 24;
  j["storage"]["rados"] = {{"crush_map", "maps/flagship.txt"}};
  const fs::path scenario = dir / "scenario.json";
  std::ofstream(scenario) << j.dump(2);
  auto r = load_scenario(scenario.string());
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.rados.crush_map_path, (dir / "maps" / "flagship.txt").string());
  EXPECT_EQ(r->storage.rados.crush_rule, 0);  // the default with a map
  EXPECT_EQ(r->name, "scenario");

  // "../" and a scenario in a subdirectory.
  fs::create_directories(dir / "runs");
  j["storage"]["rados"]["crush_map"] = "../maps/flagship.txt";
  std::ofstream(dir / "runs" / "a.json") << j.dump(2);
  r = load_scenario((dir / "runs" / "a.json").string());
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.rados.crush_map_path, (dir / "maps" / "flagship.txt").string());

  // The same text parsed with a source path in another directory does not find the map.
  r = parse_scenario(j.dump(), (dir / "b.json").string());
  EXPECT_EQ(error_of(r), (dir / "b.json").string() +
                             ": storage.rados.crush_map: expected a CRUSH map file, found no file "
                             "at '" +
                             (dir.parent_path() / "maps" / "flagship.txt").string() + "'");

  // The map must match the cluster and the pool.
  j["storage"]["rados"]["crush_map"] = "maps/flagship.txt";
  j["cluster"]["storage"]["drive"]["count"] = 20;
  r = parse_scenario(j.dump(), scenario.string());
  EXPECT_EQ(error_of(r), scenario.string() +
                             ": storage.rados.crush_map: expected one device per drive (16 storage "
                             "nodes x 20 drives = 320), found 384 devices in the map");
  j["cluster"]["storage"]["drive"]["count"] = 24;
  j["storage"]["rados"]["crush_rule"] = 7;
  r = parse_scenario(j.dump(), scenario.string());
  EXPECT_EQ(error_of(r), scenario.string() +
                             ": storage.rados.crush_rule: expected a rule of the CRUSH map (0, 1, "
                             "2), found 7");
  j["storage"]["rados"]["crush_rule"] = 1;
  r = parse_scenario(j.dump(), scenario.string());
  EXPECT_EQ(error_of(r), scenario.string() +
                             ": storage.rados.crush_rule: expected a replicated rule for a "
                             "replicated pool, found rule 1 ('ec83_host') of the other type");
  j["storage"]["rados"]["crush_rule"] = 2;
  j["storage"]["rados"]["replicas"] = 5;
  r = parse_scenario(j.dump(), scenario.string());
  EXPECT_EQ(error_of(r), scenario.string() +
                             ": storage.rados.crush_rule: expected a rule for pools of 5 shards, "
                             "found rule 2 ('replicated_rack') for 1..4");
  // A broken map: the parser's own line:column message, behind the JSON path.
  std::ofstream(dir / "maps" / "broken.txt") << "device 0 osd.0\nhost h {\n";
  j["storage"]["rados"] = {{"crush_map", "maps/broken.txt"}};
  r = parse_scenario(j.dump(), scenario.string());
  EXPECT_EQ(error_of(r).rfind(scenario.string() + ": storage.rados.crush_map: " +
                                  (dir / "maps" / "broken.txt").string() + ":",
                              0),
            0u)
      << error_of(r);
}

struct BadCase {
  std::function<void(json&)> mutate;
  std::string message;  // after "s.json: "
};

// Each case mutates the minimal scenario and must get exactly this one-line error.
void expect_bad_inputs(const std::vector<BadCase>& cases) {
  for (const BadCase& c : cases) {
    json j = minimal();
    c.mutate(j);
    auto r = parse(j);
    EXPECT_EQ(error_of(r), "s.json: " + c.message) << j.dump();
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    }
  }
}

// The cluster section.
TEST(ScenarioJson, ClusterInputsGiveExactOneLineMessages) {
  expect_bad_inputs({
      {[](json& j) { j["cluster"]["clients"]["count"] = -3; },
       "cluster.clients.count: expected an integer in 1..65536, found -3"},
      {[](json& j) { j["cluster"]["clients"]["count"] = 2.5; },
       "cluster.clients.count: expected an integer in 1..65536, found 2.5"},
      {[](json& j) { j["cluster"]["clients"]["count"] = "4"; },
       "cluster.clients.count: expected an integer in 1..65536, found \"4\""},
      {[](json& j) { j["cluster"]["clients"]["count"] = 3000000000ll; },
       "cluster.clients.count: expected an integer in 1..65536, found 3000000000"},
      {[](json& j) { j["cluster"]["clients"].erase("count"); },
       "cluster.clients.count: expected an integer in 1..65536, found nothing"},
      {[](json& j) {
         auto& c = j["cluster"]["clients"];
         c["acelerator"] = c["accelerator"];
         c.erase("accelerator");
       },
       "cluster.clients.acelerator: unknown key (did you mean 'accelerator'?)"},
      {[](json& j) { j["cluster"]["clients"]["zzzzzzzzzz"] = 1; },
       "cluster.clients.zzzzzzzzzz: unknown key (expected one of: count, accelerator, "
       "accelerators_per_node, nic, memory_bandwidth_gbytes_per_s, memory_gib, "
       "gpudirect_storage)"},
      {[](json& j) { j["simulaton"] = json::object(); },
       "simulaton: unknown key (did you mean 'simulation'?)"},
      {[](json& j) { j["cluster"]["storage"]["drive"]["profile"] = "nvme-gen9"; },
       "cluster.storage.drive.profile: unknown drive profile 'nvme-gen9' (known: "
       "kioxia-cm7r-7.68tb, samsung-pm9a3-7.68tb, micron-5400pro-7.68tb, seagate-exos-x20-20tb)"},
      {[](json& j) { j["cluster"]["storage"]["drive"].erase("profile"); },
       "cluster.storage.drive.profile: expected a profile name (a string), found nothing"},
      {[](json& j) { j["cluster"]["storage"]["drive"]["read_gbytes_per_s"] = -1; },
       "cluster.storage.drive.read_gbytes_per_s: expected a number >= 0.001 and <= 100000, "
       "found -1"},
      {[](json& j) { j["cluster"]["storage"]["drive"]["read_latency_us"] = 0; },
       "cluster.storage.drive.read_latency_us: expected a number > 0 and <= 1000000, found 0"},
      {[](json& j) { j["cluster"]["storage"]["drive"]["kind"] = "tape"; },
       "cluster.storage.drive.kind: expected 'nvme' or 'sata-ssd' or 'hdd', found \"tape\""},
      // A hard disk's positioning curve needs two points and must not rise with the queue.
      {[](json& j) {
         j["cluster"]["storage"]["drive"]["profile"] = "seagate-exos-x20-20tb";
         j["cluster"]["storage"]["drive"]["queue_depth"] = 1;
       },
       "cluster.storage.drive.queue_depth: expected at least 2 for an hdd (its IOPS figures hold "
       "at a deeper queue than read_latency_us's queue depth 1), found 1"},
      {[](json& j) {
         j["cluster"]["storage"]["drive"]["profile"] = "seagate-exos-x20-20tb";
         j["cluster"]["storage"]["drive"]["read_latency_us"] = 4160;
       },
       "cluster.storage.drive.read_latency_us: expected at least 1 / read_kiops = "
       "5952.38095238095 us for an hdd (a 4 KiB operation at queue depth 1 positions at least as "
       "long as at queue_depth 16), found 4160"},
      {[](json& j) {
         j["cluster"]["storage"]["drive"]["profile"] = "seagate-exos-x20-20tb";
         j["cluster"]["storage"]["drive"]["read_kiops"] = 100;
       },
       "cluster.storage.drive.read_kiops: expected fewer 4 KiB operations per second than an "
       "hdd's read_gbytes_per_s alone allows (69.580078125 thousand), found 100"},
      {[](json& j) {
         j["cluster"]["storage"]["drive"]["profile"] = "seagate-exos-x20-20tb";
         j["cluster"]["storage"]["drive"]["write_latency_us"] = 1000;
       },
       "cluster.storage.drive.write_latency_us: expected at least 1 / write_kiops = "
       "1818.18181818182 us for an hdd (a 4 KiB operation at queue depth 1 positions at least as "
       "long as at queue_depth 16), found 1000"},
      {[](json& j) {
         j["cluster"]["storage"]["drive"]["profile"] = "seagate-exos-x20-20tb";
         j["storage"] = {{"design", "nfs"}};
         j["simulation"] = {{"transfer_unit_mib", 16}};
       },
       "simulation.transfer_unit_mib: expected no transfer unit for reads from hdd drives (a "
       "slice reads them in the design's own RPCs, since a disk positions once per request; the "
       "unit applies to checkpoints), found 16 MiB"},
      {[](json& j) { j["cluster"]["storage"]["drive"]["count"] = 0; },
       "cluster.storage.drive.count: expected an integer in 1..1024, found 0"},
      {[](json& j) { j["cluster"]["clients"]["nic"]["gbps"] = 0; },
       "cluster.clients.nic.gbps: expected a number >= 0.001 and <= 100000, found 0"},
      {[](json& j) { j["cluster"]["clients"]["nic"] = "connectx6-200g"; },
       "cluster.clients.nic: expected an object, found \"connectx6-200g\""},
      {[](json& j) { j["cluster"]["clients"].erase("nic"); },
       "cluster.clients.nic: expected an object, found nothing"},
      {[](json& j) { j["cluster"]["clients"]["accelerator"] = "tpu"; },
       "cluster.clients.accelerator: unknown accelerator 'tpu' (known: v100, a100, h100)"},
      {[](json& j) { j["cluster"]["clients"]["accelerator"] = 100; },
       "cluster.clients.accelerator: expected an accelerator name or an object with a 'profile', "
       "found 100"},
      {[](json& j) {
         j["cluster"]["clients"]["accelerator"] = {{"profile", "a100"},
                                                   {"compute_s_per_step", {{"unet3d", -1}}}};
       },
       "cluster.clients.accelerator.compute_s_per_step.unet3d: expected a number > 0 and <= "
       "1000000, "
       "found -1"},
      {[](json& j) { j["cluster"]["clients"]["gpudirect_storage"] = "yes"; },
       "cluster.clients.gpudirect_storage: expected true or false, found \"yes\""},
      {[](json& j) {
         j["cluster"]["fabric"] = {{"topology", "torus"}};
       },
       "cluster.fabric.topology: expected 'leaf-spine' or 'fat-tree' or 'rail-optimized', found "
       "\"torus\""},
      {[](json& j) {
         j["cluster"]["fabric"] = {{"link_gbps", nullptr}};
       },
       "cluster.fabric.link_gbps: expected a number >= 0.001 and <= 100000, found null"},
  });
}

// The file's header, the storage section.
TEST(ScenarioJson, TopLevelAndStorageInputsGiveExactOneLineMessages) {
  expect_bad_inputs({
      {[](json& j) { j["granary"] = 2; },
       "granary: unsupported format version 2 (this granary reads version 1)"},
      {[](json& j) { j.erase("granary"); },
       "granary: expected the format version 1, found nothing"},
      {[](json& j) { j["granary"] = "1"; }, "granary: expected the format version 1, found \"1\""},
      {[](json& j) { j = json::array(); },
       "expected a JSON object at the top level, found an empty array"},
      {[](json& j) { j["seed"] = -1; },
       "seed: expected an integer in 0..18446744073709551615, found -1"},
      {[](json& j) { j["name"] = ""; }, "name: expected a non-empty string, found \"\""},
      {[](json& j) { j["storage"]["design"] = "s3"; },
       "storage.design: expected 'rados' or 'pfs' or 'nfs' or 'local', found \"s3\""},
      {[](json& j) { j["storage"].erase("design"); },
       "storage.design: expected 'rados' or 'pfs' or 'nfs' or 'local', found nothing"},
      {[](json& j) { j["storage"]["protocol"] = "iscsi"; },
       "storage.protocol: protocol 'iscsi' does not carry design 'rados' (expected one of: rdma, "
       "tcp)"},
      {[](json& j) {
         j["storage"]["protocol"] = {{"profile", "nfs-rdma"}};
       },
       "storage.protocol.profile: protocol 'nfs-rdma' does not carry design 'rados' (expected one "
       "of: rdma, tcp)"},
      {[](json& j) {
         j["storage"]["protocol"] = {
             {"profile", "tcp"}, {"zero_copy", true}, {"cpu_us_per_mib", 300}};
       },
       "storage.protocol.cpu_us_per_mib: expected 0 with zero_copy true (a zero-copy transport "
       "spends no CPU per byte), found 300"},
      {[](json& j) {
         j["storage"]["protocol"] = {{"profile", "rdma"}, {"efficiency", 0}};
       },
       "storage.protocol.efficiency: expected a number >= 0.001 and <= 1, found 0"},
      {[](json& j) { j["storage"]["pfs"] = json::object(); },
       "storage.pfs: applies to design 'pfs', but storage.design is 'rados'"},
      {[](json& j) {
         j["storage"]["rados"] = {{"replicas", 3}, {"erasure", {{"k", 2}, {"m", 1}}}};
       },
       "storage.rados.erasure: expected either 'replicas' or 'erasure', found both"},
      {[](json& j) {
         j["storage"]["rados"] = {{"erasure", {{"k", 8}, {"m", 3}}}};
       },
       "storage.rados.erasure: expected at most 4 shards (the generated CRUSH map puts each on its "
       "own storage node), found 8+3 = 11"},
      {[](json& j) {
         j["storage"]["rados"] = {{"erasure", {{"k", 2}}}};
       },
       "storage.rados.erasure.m: expected an integer in 1..32, found nothing"},
      {[](json& j) {
         j["storage"]["rados"] = {{"replicas", 0}};
       },
       "storage.rados.replicas: expected an integer in 1..10, found 0"},
      {[](json& j) {
         j["storage"]["rados"] = {{"pg_num", 0}};
       },
       "storage.rados.pg_num: expected an integer in 1..65536, found 0"},
      {[](json& j) {
         j["storage"]["rados"] = {{"object_size_mib", 0.001}};
       },
       "storage.rados.object_size_mib: expected a number of MiB from 0.00390625 to 128 that is a "
       "whole multiple of 4 KiB, found 0.001"},
      {[](json& j) {
         j["storage"]["rados"] = {{"crush_rule", 0}};
       },
       "storage.rados.crush_rule: applies only together with crush_map (the generated map has "
       "its own rule)"},
      {[](json& j) {
         j["storage"] = {{"design", "pfs"}, {"pfs", {{"stripe_count", 33}}}};
       },
       "storage.pfs.stripe_count: expected -1 (all OSTs) or an integer in 1..32 (the OSTs), found "
       "33"},
      {[](json& j) {
         j["storage"] = {{"design", "pfs"}, {"pfs", {{"stripe_size_mib", 1.01}}}};
       },
       "storage.pfs.stripe_size_mib: expected a number of MiB from 0.0625 to 4095.9375 that is a "
       "whole "
       "multiple of 64 KiB, found 1.01"},
      {[](json& j) {
         j["storage"] = {{"design", "pfs"}, {"pfs", {{"mds", {{"count", 0}}}}}};
       },
       "storage.pfs.mds.count: expected an integer in 1..256, found 0"},
      {[](json& j) {
         j["storage"] = {{"design", "nfs"}, {"nfs", {{"rsize_kib", 2048}}}};
       },
       "storage.nfs.rsize_kib: expected a number of KiB from 4 to 1024 that is a whole multiple of "
       "4 KiB, found 2048"},
  });
}

// The workloads.
TEST(ScenarioJson, WorkloadInputsGiveExactOneLineMessages) {
  expect_bad_inputs({
      {[](json& j) { j["workloads"] = json::array(); },
       "workloads: expected an array of at least one workload, found an empty array"},
      {[](json& j) { j["workloads"] = json::parse(R"([["mlperf", "unet3d"]])"); },
       "workloads[0]: expected an object, found an array"},
      {[](json& j) { j["workloads"][0]["mlperf"] = "bert"; },
       "workloads[0].mlperf: unknown MLPerf Storage workload 'bert' (known: unet3d, resnet50, "
       "cosmoflow)"},
      {[](json& j) { j["workloads"][0]["type"] = "checkpoint_write"; },
       "workloads[0].type: expected 'training_read' or 'checkpoint' or 'block' or "
       "'boot_storm', found \"checkpoint_write\""},
      {[](json& j) {
         j["workloads"].push_back({{"mlperf", "unet3d"}});
       },
       "workloads[1].name: expected a name no other workload has, found 'unet3d' (also "
       "workloads[0])"},
      {[](json& j) {
         j["workloads"][0] = {{"files", 10}};
       },
       "workloads[0].name: expected a non-empty string, found nothing"},
      {[](json& j) {
         j["workloads"][0] = {{"name", "x"}, {"files", 10}};
       },
       "workloads[0].sample_size_mib: expected an object, found nothing"},
      {[](json& j) {
         j["workloads"][0] = {{"name", "x"}, {"sample_size_mib", {{"mean", 1}}}};
       },
       "workloads[0].files: expected an integer in 1..1099511627776, found nothing"},
      {[](json& j) {
         j["workloads"][0] = {{"name", "x"}, {"sample_size_mib", {{"mean", 1}}}, {"files", 10}};
       },
       "workloads[0].compute_s_per_step: expected a number > 0 (accelerator 'a100' has no "
       "compute time for 'x'), found nothing"},
      {[](json& j) {
         j["workloads"][0]["sample_size_mib"] = {{"mean", 0}};
       },
       "workloads[0].sample_size_mib.mean: expected a number > 0 and <= 65536, found 0"},
      {[](json& j) {
         j["workloads"][0]["sample_size_mib"] = {{"stdev", 1}};
       },
       "workloads[0].sample_size_mib.stdev: unknown key (did you mean 'stddev'?)"},
      {[](json& j) { j["workloads"][0]["au_threshold"] = 1.5; },
       "workloads[0].au_threshold: expected a number > 0 and <= 1, found 1.5"},
      {[](json& j) { j["workloads"][0]["read_threads"] = 0; },
       "workloads[0].read_threads: expected an integer in 1..256, found 0"},
      {[](json& j) { j["workloads"][0]["batchsize"] = 4; },
       "workloads[0].batchsize: unknown key (did you mean 'batch_size'?)"},
      {[](json& j) {
         j["simulation"] = {{"fidelity", "exact"}};
       },
       "simulation.fidelity: expected 'auto' or 'request' or 'slice', found \"exact\""},
      {[](json& j) {
         j["simulation"] = {{"steady_state_tolerance", 1}};
       },
       "simulation.steady_state_tolerance: expected a number > 0 and < 1, found 1"},
      {[](json& j) {
         j["simulation"] = {{"max_simulated_s", 0}};
       },
       "simulation.max_simulated_s: expected a number > 0 and <= 1000000000, found 0"},
      {[](json& j) {
         j["simulation"] = {{"representative_nodes", 0}};
       },
       "simulation.representative_nodes: expected an integer in 1..1000000, found 0"},
      // Keys without an effect are refused, saying why.
      {[](json& j) {
         j["cluster"]["clients"]["accelerator"] = {{"profile", "a100"}, {"host_memory_gib", 1}};
       },
       "cluster.clients.accelerator.host_memory_gib: not a scenario key: Granary models no host "
       "memory per accelerator (the report compares the dataset with cluster.clients.memory_gib, "
       "the nodes' memory)"},
      {[](json& j) {
         j["storage"]["rados"] = {{"stored_tib", 5}};
       },
       "storage.rados.stored_tib: applies only to a run with failures (it sizes what recovery "
       "moves after one), and the scenario has no failures"},
      {[](json& j) {
         j["storage"]["rados"] = {{"recovery", {{"drive_afr", 0.02}}}};
         j["failures"] = json::array();
       },
       "storage.rados.recovery.drive_afr: applies only to a run with failures (the durability "
       "estimate from the measured recovery, report recovery.durability), and the scenario has "
       "no failures"},
      {[](json& j) {
         j["storage"]["rados"] = {{"recovery", {{"heartbeat_grace_s", 4}}}};
       },
       "storage.rados.recovery.heartbeat_grace_s: applies only to a run with failures (failure "
       "detection and recovery), and the scenario has no failures"},
      // What `granary run` cannot run is refused here too.
      {[](json& j) { j["workloads"][0]["files"] = 223; },
       "workloads[0].files: expected at least 224 (one batch of 7 samples, 7 file(s) of 1, for "
       "each of the 32 accelerators), found 223"},
      {[](json& j) {
         j["workloads"][0]["samples_per_file"] = 3;
         j["workloads"][0]["files"] = 95;
       },
       "workloads[0].files: expected at least 96 (one batch of 7 samples, 3 file(s) of 3, for "
       "each of the 32 accelerators), found 95"},
      {[](json& j) {
         j["workloads"].push_back({{"name", "second"}, {"mlperf", "unet3d"}, {"files", 224}});
       },
       "workloads[1].type: format 1 runs one workload, or a training_read or checkpoint workload "
       "followed by at most one block or boot_storm workload beside it and, after a "
       "training_read, at most one checkpoint; found a training_read workload here, after a "
       "training_read workload"},
      {[](json& j) {
         j["workloads"] = json::parse(R"([{"type": "block"}, {"mlperf": "unet3d", "files": 224}])");
       },
       "workloads[1].type: format 1 runs one workload, or a training_read or checkpoint workload "
       "followed by at most one block or boot_storm workload beside it and, after a "
       "training_read, at most one checkpoint; found a training_read workload here, after a "
       "block workload"},
      // real (granary real): lab hosts only with hosts "ssh", one per machine (4 storage
      // servers, the monitor, 4 client nodes).
  });
}

// The real section, and keys anywhere.
TEST(ScenarioJson, RealAndOtherInputsGiveExactOneLineMessages) {
  expect_bad_inputs({
      {[](json& j) {
         j["real"] = {{"hosts", "ssh"}};
       },
       "real.lab_hosts: expected an array of 9 lab hosts (the storage servers, the monitor or "
       "MDS, the client nodes, in that order), found nothing"},
      {[](json& j) {
         j["real"] = {{"lab_hosts", json::array()}};
       },
       "real.lab_hosts: only with hosts \"ssh\""},
      {[](json& j) {
         j["real"] = {{"hosts", "namespaces"}, {"ssh_identity", "/k"}};
       },
       "real.ssh_identity: only with hosts \"ssh\""},
      {[](json& j) {
         j["real"] = {{"hosts", "ssh"}, {"lab_hosts", json::array()}};
         for (int i = 0; i < 9; ++i) j["real"]["lab_hosts"].push_back({{"address", "10.0.0.1"}});
         j["real"]["lab_hosts"][3]["ssh_port"] = 0;
       },
       "real.lab_hosts[3].ssh_port: expected an integer in 1..65535, found 0"},
      {[](json& j) {
         j["real"] = {{"hosts", "ssh"}, {"lab_hosts", json::array()}};
         for (int i = 0; i < 9; ++i) j["real"]["lab_hosts"].push_back({{"ssh", "root@h"}});
       },
       "real.lab_hosts[0].address: expected a non-empty string, found nothing"},
      {[](json& j) {
         j["real"] = {{"added_latency_us", -1}};
       },
       "real.added_latency_us: expected a number >= 0 and <= 1000000, found -1"},
      {[](json& j) {
         j["real"] = {{"hosts", "rsh"}};
       },
       "real.hosts: expected 'loopback' or 'namespaces' or 'ssh', found \"rsh\""},
      {[](json& j) { j["cluster"]["storage"]["odd key\n"] = 1; },
       "cluster.storage[\"odd key\\n\"]: unknown key (expected one of: count, profile, drive, "
       "nic, cpu_cores, server_gbytes_per_s)"},
  });
}

TEST(ScenarioJson, SyntaxErrorsNameLineAndColumn) {
  const std::pair<std::string, std::string> cases[] = {
      {"{\n  \"granary\": 1,\n  \"name\" 2\n}",
       "s.json:3:10: invalid JSON: syntax error while parsing object separator - unexpected "
       "number literal; expected ':'"},
      {"",
       "s.json:1:1: invalid JSON: syntax error while parsing value - unexpected end of input; "
       "expected '[', '{', or a literal"},
      {"{\"granary\": 1,}",
       "s.json:1:15: invalid JSON: syntax error while parsing object key - unexpected '}'; "
       "expected string literal"},
      {"{\n\"granary\": 1,\n\"seed\": 1e400}",
       "s.json:3:9: invalid JSON: number overflow parsing '1e400'"},
      {"{\"granary\": 1, \"cluster\": {\"clients\": {\"count\": 1, \"count\": 2}}}",
       "s.json: cluster.clients.count: duplicate key (the object has it earlier)"},
      {"{\"granary\": 1, \"workloads\": [{}, {\"a\": [1, {}], \"a\": 1}]}",
       "s.json: workloads[1].a: duplicate key (the object has it earlier)"},
  };
  for (const auto& [text, message] : cases) {
    auto r = parse_scenario(text, "s.json");
    EXPECT_EQ(error_of(r), message) << text;
  }
  // Positions point at the start of the offending token.
  auto r = parse_scenario("{\"granary\": 1,\n \"name\": tru }", "s.json");
  EXPECT_EQ(error_of(r).rfind("s.json:2:10: invalid JSON: syntax error while parsing value - "
                              "invalid literal",
                              0),
            0u)
      << error_of(r);
  r = parse_scenario("{\"granary\": 1\n  \"name\": \"x\"}", "s.json");
  EXPECT_EQ(error_of(r),
            "s.json:2:3: invalid JSON: syntax error while parsing object - unexpected string "
            "literal; expected '}'");
}

TEST(ScenarioJson, MissingAndUnreadableFiles) {
  const std::string dir = testing::make_temp_dir();
  auto r = load_scenario(dir + "/none.json");
  EXPECT_EQ(error_of(r), dir + "/none.json: no such file");
  EXPECT_EQ(r.status().code(), Status::Code::kNotFound);
  r = load_scenario(dir);
  EXPECT_EQ(error_of(r), dir + ": not a regular file");
}

// Whatever the input, the parser answers with a value or one line; it never crashes.
TEST(ScenarioJson, NeverCrashesOnMangledInput) {
  const std::string text = minimal().dump(1);
  for (size_t n = 0; n < text.size(); ++n) {
    auto r = parse_scenario(text.substr(0, n), "s.json");
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("s.json", 0), 0u);
  }
  // Every value of the document replaced by a value of every other type.
  const json replacements[] = {nullptr,
                               true,
                               -1,
                               0,
                               1e308,
                               -1e-308,
                               "x",
                               json::array(),
                               json::object(),
                               9223372036854775807ll,
                               18446744073709551615ull};
  const json doc = minimal();
  const json flat = doc.flatten();
  for (const auto& [pointer, value] : flat.items()) {
    for (const json& replacement : replacements) {
      json mangled = doc;
      mangled[json::json_pointer(pointer)] = replacement;
      auto r = parse(mangled);
      if (!r.ok()) {
        EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
        EXPECT_EQ(r.status().message().rfind("s.json: ", 0), 0u) << r.status().message();
      }
    }
  }
}

TEST(ScenarioJson, ShippedScenariosAreValid) {
  const fs::path dir = fs::path(GRANARY_SOURCE_DIR) / "scenarios";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    auto r = load_scenario(entry.path().string());
    ASSERT_TRUE(r.ok()) << error_of(r);
    EXPECT_EQ(r->name, entry.path().stem().string());
    EXPECT_FALSE(r->description.empty()) << entry.path();
    // Shipped scenarios are plain JSON (no comments), so any JSON tool can edit them.
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(json::accept(text)) << entry.path();
  }
  EXPECT_GE(count, 3);
}

}  // namespace
}  // namespace granary::models

namespace granary::models {
namespace {

// Each (workloads array, message) pair: the minimal scenario with those workloads is refused
// with an error starting with the message.
void expect_workload_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [workloads, message] : cases) {
    json j = minimal();
    j["workloads"] = json::parse(workloads);
    auto r = parse(j);
    ASSERT_FALSE(r.ok()) << workloads;
    EXPECT_EQ(error_of(r).rfind(message, 0), 0u) << error_of(r) << "\nwanted: " << message;
  }
}

TEST(ScenarioJsonCheckpoint, PresetsResolveAndKeysOverride) {
  json j = minimal();
  j["cluster"]["clients"]["count"] = 8;  // 64 accelerators
  j["workloads"] = json::parse(R"([{"type": "checkpoint", "mlperf": "llama3-70b",
                                     "checkpoints": 2, "fsync": false}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  const WorkloadSpec& w = r->workloads[0];
  EXPECT_EQ(w.kind, WorkloadKind::kCheckpoint);
  EXPECT_EQ(w.name, "llama3-70b");
  EXPECT_EQ(w.checkpoint.ranks(), 64);
  EXPECT_DOUBLE_EQ(w.checkpoint.total_gb(), 911);
  EXPECT_EQ(w.checkpoint.checkpoints, 2);
  EXPECT_FALSE(w.checkpoint.fsync);
  EXPECT_TRUE(w.checkpoint.read_back);
}

TEST(ScenarioJsonCheckpoint, BadCheckpointsGiveClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"type": "checkpoint", "mlperf": "llama3-70b"}])",
       "s.json: workloads[0].data_parallel: expected tensor_parallel x pipeline_parallel x "
       "data_parallel <= 32 accelerators (one rank each), found 8 x 1 x 8 = 64"},
      {R"([{"type": "checkpoint", "name": "c"}])", "s.json: workloads[0].model_gb:"},
      {R"([{"type": "checkpoint", "mlperf": "llama3-8b", "files": 3}])",
       "s.json: workloads[0].files: applies to training_read workloads, not to a checkpoint "
       "workload"},
      {R"([{"mlperf": "unet3d", "fsync": true}])",
       "s.json: workloads[0].fsync: applies to checkpoint workloads, not to a training_read "
       "workload"},
      {R"([{"type": "checkpoint", "mlperf": "llama3-7b"}])",
       "s.json: workloads[0].mlperf: unknown MLPerf Storage checkpoint workload 'llama3-7b'"},
  };
  expect_workload_errors(cases);
}

}  // namespace
}  // namespace granary::models

namespace granary::models {
namespace {

TEST(ScenarioJsonBlock, BlockAndBootStormResolve) {
  json j = minimal();
  j["workloads"] = json::parse(R"([{"type": "block", "volume": {"size_gib": 8,
      "object_size_mib": 1, "stripe_unit_kib": 64, "stripe_count": 4}, "nodes": 2,
      "block_size_kib": 16, "queue_depth": 8, "read_fraction": 0.5, "duration_s": 0.2}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  const WorkloadSpec& w = r->workloads[0];
  EXPECT_EQ(w.kind, WorkloadKind::kBlock);
  EXPECT_EQ(w.name, "block");
  EXPECT_EQ(w.block.volume_bytes, 8ull << 30);
  EXPECT_EQ(w.block.object_size_bytes, 1ull << 20);
  EXPECT_EQ(w.block.stripe_unit_bytes, 64ull << 10);
  EXPECT_EQ(w.block.stripe_count, 4u);
  EXPECT_FALSE(w.block.clone);
  EXPECT_EQ(w.block.nodes, 2);
  EXPECT_EQ(w.block.block_bytes, 16384u);
  EXPECT_EQ(w.block.queue_depth, 8);
  EXPECT_DOUBLE_EQ(w.block.read_fraction, 0.5);
  EXPECT_DOUBLE_EQ(w.block.duration_s, 0.2);
  EXPECT_DOUBLE_EQ(w.block.ramp_s, 0.1);

  j["workloads"] = json::parse(R"([{"type": "boot_storm", "name": "boot",
      "volume": {"clone": true}, "boot_read_mib": 32, "boot_write_mib": 4}])");
  r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  const BlockWorkload& b = r->workloads[0].block;
  EXPECT_EQ(r->workloads[0].kind, WorkloadKind::kBootStorm);
  EXPECT_TRUE(b.clone);
  EXPECT_EQ(b.volume_bytes, 64ull << 30);
  EXPECT_EQ(b.stripe_unit_bytes, 4ull << 20);  // the object size
  EXPECT_EQ(b.boot_read_bytes, 32ull << 20);
  EXPECT_EQ(b.boot_write_bytes, 4ull << 20);
}

TEST(ScenarioJsonCheckpoint, StartTimeOnlyBesideATrainingRead) {
  json j = minimal();
  j["workloads"] = json::parse(R"([{"type": "checkpoint", "mlperf": "llama3-8b", "start_s": 2}])");
  auto r = parse(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(error_of(r),
            "s.json: workloads[0].start_s: applies to a checkpoint beside a training_read "
            "workload, not to a checkpoint run of its own");
  j["workloads"] = json::parse(R"([{"mlperf": "unet3d", "files": 224},
      {"type": "checkpoint", "mlperf": "llama3-8b", "start_s": 2, "read_back": false}])");
  r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_DOUBLE_EQ(r->workloads[1].checkpoint.start_s, 2);
  j["storage"]["design"] = "pfs";
  r = parse(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(error_of(r),
            "s.json: workloads[1].type: a checkpoint beside a training_read workload is "
            "simulated for design 'rados', found 'pfs'");
}

TEST(ScenarioJsonBlock, BadBlockWorkloadsGiveClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"type": "block", "files": 3}])",
       "s.json: workloads[0].files: applies to training_read workloads, not to a block workload"},
      {R"([{"type": "boot_storm", "duration_s": 3}])",
       "s.json: workloads[0].duration_s: applies to block workloads, not to a boot_storm "
       "workload"},
      {R"([{"type": "block", "boot_read_mib": 3}])",
       "s.json: workloads[0].boot_read_mib: applies to boot_storm workloads, not to a block "
       "workload"},
      {R"([{"mlperf": "unet3d", "queue_depth": 3}])",
       "s.json: workloads[0].queue_depth: applies to block, boot_storm workloads, not to a "
       "training_read workload"},
      {R"([{"type": "block", "mlperf": "unet3d"}])",
       "s.json: workloads[0].mlperf: applies to training_read and checkpoint workloads, not to "
       "a block workload"},
      {R"([{"type": "block", "volume": {"object_size_mib": 3}}])",
       "s.json: workloads[0].volume.object_size_mib: expected a power of two"},
      {R"([{"type": "block", "volume": {"stripe_unit_kib": 12}}])",
       "s.json: workloads[0].volume.stripe_unit_kib: expected a divisor of the object size "
       "(4096 KiB), found 12 KiB"},
      {R"([{"type": "block", "volume": {"size_gib": 1}, "block_size_kib": 4096,
            "nodes": 9}])",
       "s.json: workloads[0].nodes: expected an integer in 0..4, found 9"},
      {R"([{"type": "block", "read_fraction": 1.5}])", "s.json: workloads[0].read_fraction:"},
      {R"([{"type": "block", "volume": {"sizegib": 1}}])",
       "s.json: workloads[0].volume.sizegib: unknown key"},
      {R"([{"type": "boot_storm", "boot_read_mib": 0, "boot_write_mib": 0}])",
       "s.json: workloads[0].boot_read_mib: expected boot_read_mib + boot_write_mib of at least "
       "one block (4 KiB)"},
  };
  expect_workload_errors(cases);
  json j = minimal();
  j["storage"]["design"] = "nfs";
  j["workloads"] = json::parse(R"([{"type": "boot_storm"}])");
  auto r = parse(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(error_of(r),
            "s.json: workloads[0].type: block volumes are RBD images: a boot_storm workload "
            "needs storage design 'rados', found 'nfs'");
}

TEST(ScenarioJsonFailures, TimelineAndRecoveryKeysResolve) {
  json j = minimal();
  j["storage"]["rados"] = json::parse(R"({"recovery": {"heartbeat_grace_s": 4,
      "down_out_interval_s": 5, "max_backfills": 2, "recovery_mib_per_s_per_osd": 100,
      "drive_afr": 0.02}, "stored_tib": 2})");
  j["failures"] = json::parse(R"([
      {"at_s": 5, "kind": "osd_crash", "osd": 3},
      {"at_s": 6, "kind": "partition", "hosts": [1, 2]},
      {"at_s": 7, "kind": "slow_drive", "osd": 4, "factor": 10},
      {"at_s": 9, "kind": "heal", "hosts": [1, 2]}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  ASSERT_EQ(r->failures.size(), 4u);
  EXPECT_EQ(r->failures[0].kind, FailureKind::kOsdCrash);
  EXPECT_EQ(r->failures[0].target, 3);
  EXPECT_EQ(r->failures[1].hosts, (std::vector<int32_t>{1, 2}));
  EXPECT_DOUBLE_EQ(r->failures[2].factor, 10);
  const RecoverySpec& rc = r->storage.rados.recovery;
  EXPECT_DOUBLE_EQ(rc.heartbeat_grace_s, 4);
  EXPECT_DOUBLE_EQ(rc.heartbeat_interval_s, 6);  // default
  EXPECT_DOUBLE_EQ(rc.down_out_interval_s, 5);
  EXPECT_EQ(rc.max_backfills, 2);
  EXPECT_DOUBLE_EQ(rc.recovery_bytes_per_s_per_osd, 100.0 * 1024 * 1024);
  // Documented in docs/scenario-format.md, and accepted beside failures.
  EXPECT_DOUBLE_EQ(rc.drive_afr, 0.02);
  EXPECT_DOUBLE_EQ(r->storage.rados.stored_bytes, 2.0 * 1099511627776.0);
}

TEST(ScenarioJsonFailures, OpQueueKeysResolve) {
  json j = minimal();
  j["storage"]["rados"] = json::parse(R"({"recovery": {"op_queue": "mclock_scheduler",
      "mclock_profile": "balanced", "mclock_allocations": "quincy-17.0.0-dev", "op_shards": 4,
      "op_threads_per_shard": 3, "mclock_max_capacity_iops": 340,
      "mclock_max_sequential_bandwidth_mib_per_s": 200, "recovery_max_single_start": 2}})");
  // (recovery_max_single_start acts on recovery only: it needs a failure.)
  j["failures"] = json::parse(R"([{"at_s": 5, "kind": "osd_crash", "osd": 3}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  const RecoverySpec& rc = r->storage.rados.recovery;
  EXPECT_EQ(rc.op_queue, RecoverySpec::OpQueue::kMclock);
  EXPECT_EQ(rc.mclock_profile, "balanced");
  EXPECT_EQ(rc.mclock_allocations, "quincy-17.0.0-dev");
  EXPECT_EQ(rc.op_shards, 4);
  EXPECT_EQ(rc.op_threads_per_shard, 3);
  EXPECT_DOUBLE_EQ(rc.mclock_max_capacity_iops, 340);
  EXPECT_DOUBLE_EQ(rc.mclock_max_sequential_bytes_per_s, 200.0 * 1024 * 1024);
  EXPECT_EQ(rc.recovery_max_single_start, 2);
  // Defaults: no queue; with mClock, today's (Reef) high_client_ops.
  j["storage"]["rados"] = json::parse(R"({"recovery": {}})");
  r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->storage.rados.recovery.op_queue, RecoverySpec::OpQueue::kNone);
  EXPECT_EQ(r->storage.rados.recovery.mclock_profile, "high_client_ops");
  EXPECT_EQ(r->storage.rados.recovery.mclock_allocations, "reef");
}

TEST(ScenarioJsonFailures, OpQueueKeysWithoutTheirSchedulerAreRefused) {
  json j = minimal();
  j["storage"]["rados"] = json::parse(R"({"recovery": {"mclock_profile": "balanced"}})");
  EXPECT_EQ(error_of(parse(j)),
            "s.json: storage.rados.recovery.mclock_profile: applies only with op_queue "
            "'mclock_scheduler'");
  j["storage"]["rados"] =
      json::parse(R"({"recovery": {"op_queue": "wpq", "mclock_allocations": "reef"}})");
  EXPECT_EQ(error_of(parse(j)),
            "s.json: storage.rados.recovery.mclock_allocations: applies only with op_queue "
            "'mclock_scheduler'");
  j["storage"]["rados"] = json::parse(R"({"recovery": {"op_shards": 8}})");
  EXPECT_EQ(error_of(parse(j)),
            "s.json: storage.rados.recovery.op_shards: applies only with op_queue 'wpq' or "
            "'mclock_scheduler'");
  j["storage"]["rados"] = json::parse(R"({"recovery": {"op_queue": "mclock"}})");
  EXPECT_EQ(error_of(parse(j)),
            "s.json: storage.rados.recovery.op_queue: expected 'none' or 'wpq' or "
            "'mclock_scheduler', found \"mclock\"");
  j["storage"]["rados"] = json::parse(
      R"({"recovery": {"op_queue": "mclock_scheduler", "mclock_allocations": "squid"}})");
  EXPECT_EQ(error_of(parse(j)),
            "s.json: storage.rados.recovery.mclock_allocations: expected 'reef' or "
            "'quincy-17.0.0-dev', found \"squid\"");
  j["storage"]["rados"] = json::parse(R"({"recovery": {"op_queue": "wpq", "op_shards": 0}})");
  EXPECT_NE(error_of(parse(j)).find("storage.rados.recovery.op_shards: expected an integer"),
            std::string::npos)
      << error_of(parse(j));
}

TEST(ScenarioJsonFailures, CheckpointsTakeFailures) {
  // Writes follow the map (docs/models.md, "Failures and recovery"): a checkpoint may run
  // through a failure timeline.
  json j = minimal();
  j["workloads"] = json::parse(R"([{"type": "checkpoint", "mlperf": "llama3-8b"}])");
  j["failures"] = json::parse(R"([{"at_s": 1, "kind": "osd_crash", "osd": 3}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  EXPECT_EQ(r->workloads[0].kind, WorkloadKind::kCheckpoint);
  EXPECT_EQ(r->failures.size(), 1u);
}

TEST(ScenarioJsonFailures, NicLinkAndDriveReplaceEventsResolve) {
  // minimal(): 4 clients on leaf0, 4 storage servers on leaf1, 8 uplinks per leaf.
  json j = minimal();
  j["failures"] = json::parse(R"([
      {"at_s": 1, "kind": "nic_down", "host": 2},
      {"at_s": 2, "kind": "link_down", "link": ["spine", "leaf1"], "cables": 3},
      {"at_s": 3, "kind": "link_degraded", "link": ["leaf0", "spine"], "factor": 2},
      {"at_s": 4, "kind": "drive_failure", "osd": 7},
      {"at_s": 5, "kind": "link_up", "link": ["leaf1", "spine"]},
      {"at_s": 6, "kind": "nic_up", "host": 2},
      {"at_s": 7, "kind": "drive_replace", "osd": 7},
      {"at_s": 8, "kind": "link_down", "link": ["leaf1", "spine"], "cables": 8}])");
  auto r = parse(j);
  ASSERT_TRUE(r.ok()) << error_of(r);
  const auto& f = r->failures;
  ASSERT_EQ(f.size(), 8u);
  EXPECT_EQ(f[0].kind, FailureKind::kNicDown);
  EXPECT_EQ(f[0].target, 2);
  EXPECT_EQ(f[1].kind, FailureKind::kLinkDown);
  EXPECT_EQ(f[1].link, (std::vector<std::string>{"spine", "leaf1"}));  // as written
  EXPECT_EQ(f[1].cables, 3);
  EXPECT_EQ(f[2].kind, FailureKind::kLinkDegraded);
  EXPECT_DOUBLE_EQ(f[2].factor, 2);
  EXPECT_EQ(f[4].kind, FailureKind::kLinkUp);
  EXPECT_EQ(f[5].kind, FailureKind::kNicUp);
  EXPECT_EQ(f[6].kind, FailureKind::kDriveReplace);
  EXPECT_EQ(f[6].target, 7);
  EXPECT_EQ(f[7].cables, 8);  // every cable of the storage leaf: its hosts are cut off
  EXPECT_EQ(failure_kind_name(FailureKind::kDriveReplace), "drive_replace");
  EXPECT_EQ(failure_kind_name(FailureKind::kLinkDegraded), "link_degraded");
}

TEST(ScenarioJsonFailures, BadNicLinkAndReplaceEventsGiveClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"at_s": 5, "kind": "link_down", "link": ["leaf3", "spine1"]}])",
       "s.json: failures[0].link: expected the two ends of a fabric (switch-to-switch) link, "
       "one of [\"leaf0\", \"spine\"], [\"leaf1\", \"spine\"]; found [\"leaf3\", \"spine1\"]"},
      {R"([{"at_s": 5, "kind": "link_up", "link": "leaf1-spine"}])",
       "s.json: failures[0].link: expected an array of the two node names a fabric link joins, "
       "e.g. [\"leaf0\", \"spine\"], found \"leaf1-spine\""},
      {R"([{"at_s": 5, "kind": "link_down", "link": ["storage1", "leaf1"]}])",
       "s.json: failures[0].link: expected the two ends of a fabric"},
      {R"([{"at_s": 5, "kind": "link_down", "link": ["leaf1", "spine"], "cables": 9}])",
       "s.json: failures[0].cables: expected an integer in 1..8 (the parallel cables "
       "[\"leaf1\", \"spine\"] aggregates), found 9"},
      {R"([{"at_s": 5, "kind": "link_down", "link": ["leaf0", "spine"], "cables": 5},
           {"at_s": 6, "kind": "link_down", "link": ["leaf0", "spine"], "cables": 3}])",
       "s.json: failures[1].link: taking down the last of the 8 cables of [\"leaf0\", "
       "\"spine\"] would cut off client0, client1, client2, client3 from storage"},
      {R"([{"at_s": 5, "kind": "link_degraded", "link": ["leaf0", "spine"]}])",
       "s.json: failures[0].factor: expected a number >= 1"},
      {R"([{"at_s": 5, "kind": "link_up", "link": ["leaf0", "spine"], "cables": 1}])",
       "s.json: failures[0].cables: applies to kind 'link_down' only"},
      {R"([{"at_s": 5, "kind": "nic_down", "osd": 1}])",
       "s.json: failures[0].osd: does not apply to kind 'nic_down', which takes 'host'"},
      {R"([{"at_s": 5, "kind": "osd_crash", "link": ["leaf0", "spine"]}])",
       "s.json: failures[0].link: does not apply to kind 'osd_crash', which takes 'osd'"},
      {R"([{"at_s": 5, "kind": "drive_replace", "osd": 3}])",
       "s.json: failures[0].osd: expected an OSD whose drive failed earlier (a drive_failure "
       "before it, not yet replaced), found osd 3, whose drive has not failed"},
      {R"([{"at_s": 5, "kind": "drive_failure", "osd": 3}, {"at_s": 6, "kind": "drive_replace", "osd": 3},
           {"at_s": 7, "kind": "drive_replace", "osd": 3}])",
       "s.json: failures[2].osd: expected an OSD whose drive failed earlier"},
  };
  for (const auto& [failures, message] : cases) {
    json j = minimal();
    j["failures"] = json::parse(failures);
    auto r = parse(j);
    ASSERT_FALSE(r.ok()) << failures;
    EXPECT_EQ(error_of(r).rfind(message, 0), 0u) << error_of(r) << "\nwanted: " << message;
  }
}

TEST(ScenarioJsonFailures, BadTimelinesGiveClearErrors) {
  // 4 storage nodes x 8 drives: OSDs 0..31, hosts 0..3.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([{"at_s": 5, "kind": "osd_crash", "osd": 32}])",
       "s.json: failures[0].osd: expected an integer in 0..31, found 32"},
      {R"([{"at_s": 5, "kind": "host_down", "osd": 3}])",
       "s.json: failures[0].osd: does not apply to kind 'host_down', which takes 'host'"},
      {R"([{"at_s": 5, "kind": "partition", "hosts": [1, 9]}])",
       "s.json: failures[0].hosts: expected storage host indexes in 0..3, found 9 at position 1"},
      {R"([{"at_s": 5, "kind": "osd_crash", "osd": 1}, {"at_s": 2, "kind": "osd_restart", "osd": 1}])",
       "s.json: failures[1].at_s: expected events in time order"},
      {R"([{"at_s": 5, "kind": "osd_crash", "osd": 1, "factor": 2}])",
       "s.json: failures[0].factor: applies to kinds 'slow_drive', 'nic_degraded' and "
       "'link_degraded' only"},
      {R"([{"at_s": 5, "kind": "meteor", "osd": 1}])", "s.json: failures[0].kind: expected"},
  };
  for (const auto& [failures, message] : cases) {
    json j = minimal();
    j["failures"] = json::parse(failures);
    auto r = parse(j);
    ASSERT_FALSE(r.ok()) << failures;
    EXPECT_EQ(error_of(r).rfind(message, 0), 0u) << error_of(r) << "\nwanted: " << message;
  }
  json pfs = minimal();
  pfs["storage"] = {{"design", "pfs"}};
  pfs["failures"] = json::parse(R"([{"at_s": 5, "kind": "osd_crash", "osd": 1}])");
  auto r = parse(pfs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(error_of(r).find("failure injection is simulated for design 'rados'"),
            std::string::npos)
      << error_of(r);
}

}  // namespace
}  // namespace granary::models

// The cluster plan (sim/cluster_plan.h): what shipped scenarios make, as plain data, without a
// simulation — the services' options, the slice's cuts, a checkpoint's ranks, the failed links
// located, the workloads beside the main one — and the mixes it refuses.
#include "sim/cluster_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "models/scenario_json.h"

namespace granary::sim {
namespace {

using nlohmann::json;

json shipped(const std::string& rel) {
  std::ifstream f(std::string(GRANARY_SOURCE_DIR) + "/scenarios/" + rel);
  return json::parse(f);
}

ClusterPlan plan_of(const json& j) {
  auto s = models::parse_scenario(j.dump(), "test.json");
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  auto p = build_cluster_plan(*s, s->seed);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : ClusterPlan{};
}

TEST(ClusterPlan, OneOsdPerDriveWithTheFailureSettingsAndNoWorldPointers) {
  const ClusterPlan p = plan_of(shipped("ci/osd-failure-read-storm.json"));
  EXPECT_EQ(p.plan.slice_factor, 1);
  EXPECT_EQ(p.storage.design, models::StorageDesign::kRados);
  ASSERT_EQ(p.storage.drives, static_cast<int>(p.topology.drives.size()));
  ASSERT_EQ(p.storage.osds.size(), p.topology.drives.size());
  EXPECT_TRUE(p.storage.failure_map);
  for (size_t d = 0; d < p.storage.osds.size(); ++d) {
    const auto& o = p.storage.osds[d];
    EXPECT_EQ(o.endpoint_name, "osd." + std::to_string(d));
    EXPECT_EQ(o.shard_timeout_s, 1.0);
    EXPECT_EQ(o.op_queue, nullptr);  // set by the world
    EXPECT_EQ(o.placement, nullptr);
  }
  ASSERT_TRUE(p.failures.has_value());
  EXPECT_EQ(p.failures->events.size(), p.run.failures.size());
  // A loader per accelerator on every client node, one client per node.
  ASSERT_EQ(p.clients.size(), static_cast<size_t>(p.plan.clients));
  ASSERT_EQ(p.loaders.size(), static_cast<size_t>(p.plan.clients));
  EXPECT_EQ(p.loaders[0].size(), static_cast<size_t>(p.sim.cluster.clients.accelerators_per_node));
  EXPECT_EQ(p.loaders[0][1].name, "client0.gpu1");
  EXPECT_EQ(p.dataset.files, p.run.workloads[0].training.files);
  EXPECT_FALSE(p.block_volumes.has_value());
}

TEST(ClusterPlan, ASliceCutsTheClientsTheDatasetAndTheCapacities) {
  const ClusterPlan p = plan_of(shipped("read-storm-128-dgx-a100.json"));
  const int k = p.plan.slice_factor;
  ASSERT_GT(k, 1);
  EXPECT_EQ(p.sim.cluster.clients.count, p.run.cluster.clients.count / k);
  EXPECT_EQ(p.dataset.files, std::max<int64_t>(1, p.run.workloads[0].training.files / k));
  ASSERT_EQ(p.link_scale.size(), p.topology.links.size());
  EXPECT_DOUBLE_EQ(p.storage_share, static_cast<double>(p.plan.storage_factor) / k);
  for (size_t i = 0; i < p.topology.links.size(); ++i) {
    if (p.topology.links[i].role == models::LinkRole::kDrive) {
      EXPECT_DOUBLE_EQ(p.link_scale[i], p.storage_share);
    }
  }
  // The bounds are the whole cluster's.
  EXPECT_GT(p.full_topology.clients.size(), p.topology.clients.size());
}

TEST(ClusterPlan, ACheckpointsRanksAndItsFiles) {
  const ClusterPlan p = plan_of(shipped("ci/checkpoint-during-osd-failure.json"));
  ASSERT_TRUE(p.checkpoint);
  const auto& ck = p.run.workloads[0].checkpoint;
  const int per_node = p.sim.cluster.clients.accelerators_per_node;
  EXPECT_EQ(p.checkpoint_ranks.ranks, ck.ranks());
  EXPECT_EQ(p.checkpoint_ranks.nodes, (ck.ranks() + per_node - 1) / per_node);
  EXPECT_EQ(p.clients.size(), static_cast<size_t>(p.checkpoint_ranks.nodes));
  EXPECT_EQ(p.dataset.files, int64_t{ck.ranks()} * ck.checkpoints);
  EXPECT_FALSE(p.storage.stores_hold_dataset);  // a checkpoint's stores start empty
  EXPECT_TRUE(p.loaders.empty());
  // Writes go in transfer units, and every OSD has Ceph's 16 op threads.
  EXPECT_GE(p.storage.layout.object_size_bytes, p.sim.simulation.transfer_unit_bytes);
  for (const auto& o : p.storage.osds) EXPECT_EQ(o.worker_tasks, 16);
}

TEST(ClusterPlan, AFailedLinkIsLocatedWithTheStorageHostsBeyondIt) {
  // Three storage hosts per leaf: storage3-5 on leaf2; two cables per uplink.
  json s = shipped("ci/osd-failure-read-storm.json");
  s.erase("expect");
  s["failures"] = json::parse(R"([
      {"at_s": 5, "kind": "link_down", "link": ["leaf2", "spine"]},
      {"at_s": 6, "kind": "link_down", "link": ["spine", "leaf2"]},
      {"at_s": 20, "kind": "link_up", "link": ["leaf2", "spine"]}])");
  s["cluster"]["fabric"] = {{"hosts_per_leaf", 3}, {"uplinks_per_leaf", 2}};
  const ClusterPlan p = plan_of(s);
  ASSERT_TRUE(p.failures.has_value());
  ASSERT_EQ(p.failures->links.size(), 1u);  // one link, however its ends are named
  const FailurePlan::Link& l = p.failures->links[0];
  EXPECT_EQ(l.cables, 2);
  EXPECT_EQ(l.cut_off_hosts, (std::vector<int32_t>{3, 4, 5}));
  ASSERT_GE(l.topology_link, 0);
  EXPECT_EQ(p.topology.links[l.topology_link].role, models::LinkRole::kFabric);
  for (const auto& e : p.failures->events) EXPECT_EQ(e.target, 0);
}

TEST(ClusterPlan, ASliceRefusesAFailedLinkOnTheClientsSide) {
  // 128 nodes x 8 GPUs: a slice, each simulated client node standing for 16.
  json s = shipped("read-storm-128-dgx-a100.json");
  s.erase("expect");
  s["failures"] = json::parse(R"([{"at_s": 5, "kind": "link_down", "link": ["leaf0", "spine"]}])");
  auto scenario = models::parse_scenario(s.dump(), "storm.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  auto p = build_cluster_plan(*scenario, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "storm.json: failures[0].link: [\"leaf0\", \"spine\"] has client nodes beyond it, and "
            "this run simulates a slice of the client nodes (each standing for 16); set "
            "simulation.fidelity to \"request\" to fail a link on the clients' side");
}

TEST(ClusterPlan, BlockVolumesBesideATrainingRead) {
  const ClusterPlan p = plan_of(shipped("mixed-unet3d-and-vm-disks-rados.json"));
  EXPECT_FALSE(p.block);
  ASSERT_TRUE(p.block_volumes.has_value());
  const BlockPlan& b = *p.block_volumes;
  EXPECT_EQ(b.spec.kind, p.run.workloads[1].kind);
  EXPECT_GE(b.nodes, 1);
  EXPECT_LE(b.nodes, p.plan.clients);
  EXPECT_EQ(b.images.files, b.spec.block.clone ? 1 : b.nodes);
  EXPECT_EQ(b.layout.object_size_bytes, b.spec.block.object_size_bytes);
  EXPECT_FALSE(p.async_checkpoint.has_value());
}

TEST(ClusterPlan, RefusesAMixFormatOneCannotRun) {
  // The reader refuses such a mix already (decision 79); the plan is the second line.
  auto scenario =
      models::parse_scenario(shipped("mlperf-unet3d-a100-rados.json").dump(), "mix.json");
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  scenario->workloads.push_back(scenario->workloads[0]);
  auto p = build_cluster_plan(*scenario, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("mix.json: workloads[1]: format 1 runs one workload"),
            std::string::npos)
      << p.status().message();
}

// simulation.carry_data (CarryDataPlan): automatic mode carries data only for small runs, and
// keeps every shipped scenario but the carry-data ones size-only, so their predictions stay.
TEST(ClusterPlan, CarryDataIsAutomaticOnlyForSmallRunsAndNoShippedScenarioButItsOwn) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(GRANARY_SOURCE_DIR) / "scenarios";
  int seen = 0;
  for (const char* dir : {"", "ci", "validation"}) {
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() != ".json") continue;
      const std::string rel = (fs::path(dir) / e.path().filename()).string();
      // Parsed from where it lies: its relative paths (CRUSH maps) resolve from there.
      auto s = models::parse_scenario(shipped(rel).dump(), e.path().string());
      ASSERT_TRUE(s.ok()) << s.status().message();
      auto planned = build_cluster_plan(*s, s->seed);
      ASSERT_TRUE(planned.ok()) << planned.status().message();
      const ClusterPlan& p = *planned;
      const bool own = rel.find("carry-data") != std::string::npos;
      EXPECT_EQ(p.carry_data.on, own) << rel << ": " << p.carry_data.reason;
      EXPECT_FALSE(p.carry_data.reason.empty()) << rel;
      ++seen;
    }
  }
  EXPECT_GT(seen, 20);
  const ClusterPlan ck = plan_of(shipped("ci/carry-data-checkpoint-3x.json"));
  EXPECT_TRUE(ck.carry_data.automatic);
  EXPECT_EQ(ck.carry_data.held_bytes, 180000000u);  // 8 shares of 7.5 MB, three copies
  const ClusterPlan ec = plan_of(shipped("ci/carry-data-ec-4-2.json"));
  EXPECT_FALSE(ec.carry_data.automatic);
  EXPECT_EQ(ec.carry_data.held_bytes, 128u * (1 << 20) * 3 / 2);  // 4+2: 1.5 copies
  EXPECT_FALSE(ec.plan.allow_early_stop);  // every read verified: the epoch runs to its end
}

TEST(ClusterPlan, CarryDataTrueOverTheLimitIsRefusedAndAutomaticTurnsOff) {
  json j = shipped("ci/carry-data-ec-4-2.json");
  j["workloads"][0]["files"] = 1024;  // 1 GiB of files, 1.5 GiB with the coding shards
  auto s = models::parse_scenario(j.dump(), "big.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto p = build_cluster_plan(*s, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "big.json: simulation.carry_data: expected a run that holds at most 1 GiB of carried "
            "data (1073741824 bytes: the dataset times the pool's copies, as simulated), found "
            "1610612736 bytes; set it to false or leave it out");
  j["simulation"].erase("carry_data");
  const ClusterPlan automatic = plan_of(j);
  EXPECT_FALSE(automatic.carry_data.on);
  EXPECT_NE(automatic.carry_data.reason.find("over the limit"), std::string::npos)
      << automatic.carry_data.reason;
  j["simulation"]["carry_data"] = false;
  j["workloads"][0]["files"] = 128;
  const ClusterPlan off = plan_of(j);
  EXPECT_FALSE(off.carry_data.on);
  EXPECT_EQ(off.carry_data.reason, "simulation.carry_data is false");
}

}  // namespace
}  // namespace granary::sim

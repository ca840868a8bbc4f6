// The cluster plan (sim/cluster_plan.h): what shipped scenarios make, as plain data, without a
// simulation — the services' options, the slice's cuts, a checkpoint's ranks, the failed links
// located, the workloads beside the main one — and the mixes it refuses.
#include "sim/cluster_plan.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace granary::sim

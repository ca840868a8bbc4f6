#include "models/topology.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace granary::models {
namespace {

// ---- specs ----------------------------------------------------------------------------------

NicSpec nic(double gbps, int count = 1) {
  NicSpec n;
  n.profile.name = "test";
  n.profile.gbps = gbps;
  n.profile.ports = 1;
  n.profile.latency_us = 2;
  n.count = count;
  return n;
}

// 4 clients (1 x 100 Gb/s, 200 GB/s memory) and 2 servers of 4 drives (3 GB/s read,
// 2 GB/s write, 1 x 200 Gb/s) on 4-host leaves with 8 x 400 Gb/s uplinks.
ClusterSpec small_cluster() {
  ClusterSpec c;
  c.fabric.topology = FabricTopology::kLeafSpine;
  c.fabric.link_gbps = 400;
  c.fabric.hosts_per_leaf = 4;
  c.fabric.uplinks_per_leaf = 8;
  c.fabric.oversubscription = 1;
  c.clients.count = 4;
  c.clients.accelerators_per_node = 8;
  c.clients.nic = nic(100);
  c.clients.memory_bandwidth_gbytes_per_s = 200;
  c.storage.count = 2;
  c.storage.drives_per_node = 4;
  c.storage.drive.name = "test-nvme";
  c.storage.drive.read_gbytes_per_s = 3;
  c.storage.drive.write_gbytes_per_s = 2;
  c.storage.drive.read_latency_us = 80;
  c.storage.nic = nic(200);
  return c;
}

// 128 clients on 16-host leaves; 16 servers x 24 drives of 7 GB/s with 2 x 200 Gb/s.
ClusterSpec large_cluster() {
  ClusterSpec c;
  c.fabric.link_gbps = 400;
  c.fabric.hosts_per_leaf = 16;
  c.fabric.uplinks_per_leaf = 8;
  c.clients.count = 128;
  c.clients.accelerators_per_node = 8;
  c.clients.nic = nic(200);
  c.clients.memory_bandwidth_gbytes_per_s = 200;
  c.storage.count = 16;
  c.storage.drives_per_node = 24;
  c.storage.drive.name = "nvme-7gbs";
  c.storage.drive.read_gbytes_per_s = 7;
  c.storage.drive.write_gbytes_per_s = 3.5;
  c.storage.drive.read_latency_us = 80;
  c.storage.nic = nic(200, 2);
  return c;
}

Topology build_ok(const ClusterSpec& c, int mds_count = 0) {
  Result<Topology> t = build_topology(c, mds_count);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(t).value() : Topology{};
}

int count_links(const Topology& t, LinkRole role) {
  int n = 0;
  for (const TopologyLink& l : t.links) n += l.role == role;
  return n;
}

const TopologyLink& link_named(const Topology& t, const std::string& name) {
  for (const TopologyLink& l : t.links) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << "no link " << name;
  static const TopologyLink none;
  return none;
}

int node_named(const Topology& t, const std::string& name) {
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (t.nodes[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

void expect_unique_names(const Topology& t) {
  std::set<std::string> names;
  for (const TopologyNode& n : t.nodes) EXPECT_TRUE(names.insert(n.name).second) << n.name;
  std::set<std::string> link_names;
  for (const TopologyLink& l : t.links) EXPECT_TRUE(link_names.insert(l.name).second) << l.name;
}

// Number of shortest paths from `from` to every node (0 where unreachable).
std::vector<long> shortest_path_counts(const Topology& t, int from) {
  std::vector<std::vector<int>> adj(t.nodes.size());
  for (const TopologyLink& l : t.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  std::vector<int> dist(t.nodes.size(), -1);
  std::vector<long> count(t.nodes.size(), 0);
  dist[from] = 0;
  count[from] = 1;
  std::deque<int> queue = {from};
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (int v : adj[u]) {
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
      if (dist[v] == dist[u] + 1) count[v] += count[u];
    }
  }
  return count;
}

void expect_single_paths(const Topology& t) {
  // Every client sink to every drive.
  for (int sink : t.client_sinks) {
    const std::vector<long> count = shortest_path_counts(t, sink);
    for (int drive : t.drives) {
      ASSERT_EQ(count[drive], 1) << t.nodes[sink].name << " -> " << t.nodes[drive].name;
    }
  }
  // And every pair of nodes.
  for (size_t from = 0; from < t.nodes.size(); ++from) {
    const std::vector<long> count = shortest_path_counts(t, static_cast<int>(from));
    for (size_t to = 0; to < t.nodes.size(); ++to) {
      ASSERT_EQ(count[to], 1) << t.nodes[from].name << " -> " << t.nodes[to].name;
    }
  }
}

void expect_index_lists(const Topology& t) {
  const std::vector<std::pair<NodeKind, const std::vector<int>*>> lists = {
      {NodeKind::kClient, &t.clients},  {NodeKind::kClientSink, &t.client_sinks},
      {NodeKind::kStorage, &t.storage}, {NodeKind::kDrive, &t.drives},
      {NodeKind::kMds, &t.mds},         {NodeKind::kSwitch, &t.switches}};
  size_t total = 0;
  for (const auto& [kind, list] : lists) {
    total += list->size();
    for (int id : *list) EXPECT_EQ(t.nodes[id].kind, kind) << t.nodes[id].name;
  }
  EXPECT_EQ(total, t.nodes.size());
  for (size_t i = 0; i < t.clients.size(); ++i) {
    EXPECT_EQ(t.nodes[t.clients[i]].index, static_cast<int>(i));
    EXPECT_EQ(t.nodes[t.client_sinks[i]].owner, t.clients[i]);
  }
  for (size_t i = 0; i < t.drives.size(); ++i) EXPECT_EQ(t.nodes[t.drives[i]].index, (int)i);
  EXPECT_FALSE(t.description.empty());
  EXPECT_EQ(t.description.find('\n'), std::string::npos);
}

// ---- structure ------------------------------------------------------------------------------

TEST(Topology, SmallLeafSpineCounts) {
  const Topology t = build_ok(small_cluster(), 1);
  // 4 clients + 4 sinks + 2 servers + 8 drives + 1 MDS + client leaf + storage leaf + spine.
  EXPECT_EQ(t.nodes.size(), 22u);
  EXPECT_EQ(t.links.size(), 21u);
  EXPECT_EQ(t.switches.size(), 3u);
  EXPECT_EQ(count_links(t, LinkRole::kFabric), 2);
  EXPECT_EQ(count_links(t, LinkRole::kMdsNic), 1);
  expect_index_lists(t);
  expect_unique_names(t);
  expect_single_paths(t);
  EXPECT_EQ(t.description,
            "leaf-spine: 2 leaves x 4 hosts (1 client, 1 storage), 8 x 400 Gb/s up per leaf to "
            "one spine");

  const TopologyLink& nic = link_named(t, "client2.nic");
  EXPECT_EQ(nic.role, LinkRole::kClientNic);
  EXPECT_EQ(t.nodes[nic.a].name, "client2");
  EXPECT_EQ(t.nodes[nic.b].name, "leaf0");
  EXPECT_EQ(nic.forward_bytes_per_s, 12.5e9);
  EXPECT_DOUBLE_EQ(nic.latency_s, 2e-6);
  const TopologyLink& drive = link_named(t, "storage1.drive3.link");
  EXPECT_EQ(t.nodes[drive.a].name, "storage1.drive3");
  EXPECT_EQ(t.nodes[drive.b].name, "storage1");
  EXPECT_EQ(drive.forward_bytes_per_s, 3e9);
  EXPECT_EQ(drive.reverse_bytes_per_s, 2e9);
  EXPECT_DOUBLE_EQ(drive.latency_s, 80e-6);
  const TopologyLink& memory = link_named(t, "client0.memory");
  EXPECT_EQ(memory.forward_bytes_per_s, 100e9);  // 200 GB/s, crossed twice
  const TopologyLink& mds = link_named(t, "mds0.nic");
  EXPECT_EQ(t.nodes[mds.b].name, "leaf1");
  EXPECT_EQ(mds.forward_bytes_per_s, 12.5e9);
  const TopologyLink& up = link_named(t, "leaf1.uplink");
  EXPECT_EQ(t.nodes[up.a].name, "leaf1");  // storage leaf: the leaf is nearer the drives
  EXPECT_EQ(up.forward_bytes_per_s, 400e9);
  EXPECT_EQ(up.aggregated, 8);
  EXPECT_DOUBLE_EQ(up.latency_s, 1e-6);
  EXPECT_EQ(t.nodes[link_named(t, "leaf0.uplink").a].name, "spine");
}

TEST(Topology, LargeLeafSpineCounts) {
  const Topology t = build_ok(large_cluster(), 1);
  // 128 clients + 128 sinks + 16 servers + 384 drives + 1 MDS + 8 client leaves + 2 storage
  // leaves (16 servers + the MDS) + spine.
  EXPECT_EQ(t.nodes.size(), 668u);
  EXPECT_EQ(t.links.size(), 667u);
  EXPECT_EQ(t.clients.size(), 128u);
  EXPECT_EQ(t.drives.size(), 384u);
  EXPECT_EQ(t.switches.size(), 11u);
  EXPECT_EQ(count_links(t, LinkRole::kClientNic), 128);
  EXPECT_EQ(count_links(t, LinkRole::kClientMemory), 128);
  EXPECT_EQ(count_links(t, LinkRole::kStorageNic), 16);
  EXPECT_EQ(count_links(t, LinkRole::kDrive), 384);
  EXPECT_EQ(count_links(t, LinkRole::kFabric), 10);
  expect_index_lists(t);
  expect_unique_names(t);

  const int drive = node_named(t, "storage3.drive5");
  EXPECT_EQ(t.nodes[drive].index, 3 * 24 + 5);
  EXPECT_EQ(t.nodes[drive].owner, node_named(t, "storage3"));
  EXPECT_EQ(t.nodes[node_named(t, "client17.sink")].owner, node_named(t, "client17"));
  EXPECT_EQ(t.nodes[link_named(t, "client17.nic").b].name, "leaf1");
  EXPECT_EQ(t.nodes[link_named(t, "storage15.nic").b].name, "leaf8");
  EXPECT_EQ(t.nodes[link_named(t, "mds0.nic").b].name, "leaf9");
  EXPECT_EQ(link_named(t, "storage3.nic").forward_bytes_per_s, 50e9);
  EXPECT_EQ(link_named(t, "storage3.nic").aggregated, 2);
  EXPECT_EQ(link_named(t, "client17.nic").forward_bytes_per_s, 25e9);
}

TEST(Topology, UplinksFromOversubscription) {
  ClusterSpec c = large_cluster();
  c.fabric.uplinks_per_leaf = 0;
  c.fabric.oversubscription = 2;
  const Topology t = build_ok(c, 1);
  // Client leaf: 16 x 25 GB/s / 2. Storage leaf: 16 x 50 GB/s / 2. MDS leaf: 12.5 GB/s / 2.
  EXPECT_EQ(link_named(t, "leaf0.uplink").forward_bytes_per_s, 200e9);
  EXPECT_EQ(link_named(t, "leaf0.uplink").aggregated, 4);  // 400 Gb/s links
  EXPECT_EQ(link_named(t, "leaf8.uplink").forward_bytes_per_s, 400e9);
  EXPECT_EQ(link_named(t, "leaf9.uplink").forward_bytes_per_s, 6.25e9);
  EXPECT_EQ(link_named(t, "leaf9.uplink").aggregated, 1);
}

TEST(Topology, SharedLeaves) {
  ClusterSpec c = small_cluster();
  c.fabric.storage_on_own_leaves = false;
  c.fabric.hosts_per_leaf = 3;
  const Topology t = build_ok(c, 1);
  // Hosts in order client0..3, storage0..1, mds0: leaf0 = client0..2, leaf1 = client3,
  // storage0, storage1; leaf2 = mds0.
  EXPECT_EQ(t.switches.size(), 4u);
  EXPECT_EQ(t.nodes[link_named(t, "client3.nic").b].name, "leaf1");
  EXPECT_EQ(t.nodes[link_named(t, "storage1.nic").b].name, "leaf1");
  EXPECT_EQ(t.nodes[link_named(t, "mds0.nic").b].name, "leaf2");
  EXPECT_EQ(t.nodes[link_named(t, "leaf1.uplink").a].name, "leaf1");
  expect_unique_names(t);
  expect_single_paths(t);
  EXPECT_NE(t.description.find("1 mixed"), std::string::npos) << t.description;
}

TEST(Topology, SmallFatTree) {
  ClusterSpec c = small_cluster();
  c.fabric.topology = FabricTopology::kFatTree;
  c.clients.count = 8;
  c.fabric.hosts_per_leaf = 2;
  c.fabric.leaves_per_pod = 2;
  const Topology t = build_ok(c, 1);
  // Leaves: 4 client + 2 storage (2 servers, 1 MDS) = 6; pods of 2: 3; one core.
  EXPECT_EQ(t.switches.size(), 10u);
  EXPECT_EQ(t.nodes.size(), 8u * 2 + 2 + 8 + 1 + 10);
  EXPECT_EQ(count_links(t, LinkRole::kFabric), 9);
  EXPECT_EQ(t.nodes[link_named(t, "leaf3.uplink").a].name, "pod1");  // client leaf: pod first
  EXPECT_EQ(t.nodes[link_named(t, "pod1.uplink").a].name, "core");
  EXPECT_EQ(t.nodes[link_named(t, "pod2.uplink").a].name, "pod2");  // holds the storage
  // 8 x 400 Gb/s per leaf; a pod of 2 leaves at 1:1 carries both.
  EXPECT_EQ(link_named(t, "pod0.uplink").forward_bytes_per_s, 800e9);
  EXPECT_EQ(link_named(t, "pod0.uplink").aggregated, 16);
  expect_index_lists(t);
  expect_unique_names(t);
  expect_single_paths(t);
}

TEST(Topology, FabricLinksByNameAndWhatIsBeyondThem) {
  ClusterSpec c = small_cluster();
  c.fabric.topology = FabricTopology::kFatTree;
  c.clients.count = 8;
  c.fabric.hosts_per_leaf = 2;
  c.fabric.leaves_per_pod = 2;
  const Topology t = build_ok(c, 1);
  auto names = [&](const std::vector<int>& nodes) {
    std::set<std::string> out;
    for (int n : nodes) out.insert(t.nodes[n].name);
    return out;
  };
  // Either order; only switch-to-switch links.
  const int leaf4 = find_fabric_link(t, "leaf4", "pod2");
  ASSERT_GE(leaf4, 0);
  EXPECT_EQ(find_fabric_link(t, "pod2", "leaf4"), leaf4);
  EXPECT_EQ(t.links[leaf4].name, "leaf4.uplink");
  EXPECT_EQ(find_fabric_link(t, "leaf4", "core"), -1);
  EXPECT_EQ(find_fabric_link(t, "storage0", "leaf4"), -1);  // a NIC, not a fabric link
  // Storage leaf 4 holds both servers and their drives: cut its uplink, they are beyond it.
  EXPECT_EQ(
      names(nodes_beyond(t, leaf4)),
      (std::set<std::string>{"leaf4", "storage0", "storage0.drive0", "storage0.drive1",
                             "storage0.drive2", "storage0.drive3", "storage1", "storage1.drive0",
                             "storage1.drive1", "storage1.drive2", "storage1.drive3"}));
  // A pod's uplink: everything under the pod (client leaves 0 and 1 with their clients and
  // sinks).
  const auto pod0 = names(nodes_beyond(t, find_fabric_link(t, "core", "pod0")));
  EXPECT_EQ(pod0.size(), 1u + 2 + 4 * 2);
  EXPECT_EQ(pod0.count("client3.sink"), 1u);
  EXPECT_EQ(pod0.count("client4"), 0u);
  EXPECT_EQ(pod0.count("core"), 0u);
}

TEST(Topology, LargeFatTree) {
  ClusterSpec c = large_cluster();
  c.fabric.topology = FabricTopology::kFatTree;
  c.fabric.leaves_per_pod = 4;
  c.fabric.oversubscription = 2;
  const Topology t = build_ok(c, 1);
  // 10 leaves, pods of 4 leaves: 3 pods, one core.
  EXPECT_EQ(t.nodes.size(), 657u + 10 + 3 + 1);
  EXPECT_EQ(t.links.size(), t.nodes.size() - 1);
  EXPECT_EQ(count_links(t, LinkRole::kFabric), 13);
  // Leaf uplinks are explicit (8 x 400 Gb/s); pod uplinks are 4 x 400 GB/s / 2.
  EXPECT_EQ(link_named(t, "leaf0.uplink").forward_bytes_per_s, 400e9);
  EXPECT_EQ(link_named(t, "pod0.uplink").forward_bytes_per_s, 800e9);
  EXPECT_EQ(link_named(t, "pod2.uplink").forward_bytes_per_s, 400e9);  // 2 leaves
  expect_index_lists(t);
  expect_unique_names(t);

  // Defaults: k/2 = hosts_per_leaf leaves per pod, so one pod; or from the pod count.
  c.fabric.leaves_per_pod = 0;
  EXPECT_EQ(build_ok(c, 1).switches.size(), 10u + 1 + 1);
  c.fabric.pods = 5;
  EXPECT_EQ(build_ok(c, 1).switches.size(), 10u + 5 + 1);
}

TEST(Topology, SmallRailOptimized) {
  ClusterSpec c = small_cluster();
  c.fabric.topology = FabricTopology::kRailOptimized;
  c.fabric.rails = 2;
  c.fabric.hosts_per_leaf = 2;
  c.fabric.uplinks_per_leaf = 2;
  c.clients.nic = nic(200, 2);
  const Topology t = build_ok(c, 1);
  // 2 rail groups of 2 clients, storage leaves: (storage0, storage1), (mds0); one spine.
  EXPECT_EQ(t.switches.size(), 5u);
  EXPECT_EQ(t.nodes[link_named(t, "client3.nic").b].name, "railgroup1");
  EXPECT_EQ(link_named(t, "client3.nic").forward_bytes_per_s, 50e9);
  EXPECT_EQ(link_named(t, "client3.nic").aggregated, 2);
  // 2 rails x 2 uplinks x 400 Gb/s.
  EXPECT_EQ(link_named(t, "railgroup1.uplink").forward_bytes_per_s, 200e9);
  EXPECT_EQ(link_named(t, "railgroup1.uplink").aggregated, 4);
  EXPECT_EQ(link_named(t, "leaf0.uplink").forward_bytes_per_s, 100e9);
  expect_index_lists(t);
  expect_unique_names(t);
  expect_single_paths(t);
}

TEST(Topology, LargeRailOptimized) {
  ClusterSpec c = large_cluster();
  c.fabric.topology = FabricTopology::kRailOptimized;
  c.fabric.rails = 8;
  c.fabric.uplinks_per_leaf = 1;
  c.clients.nic = nic(200, 8);
  const Topology t = build_ok(c, 1);
  // 8 rail groups + 2 storage leaves + spine.
  EXPECT_EQ(t.nodes.size(), 657u + 8 + 2 + 1);
  EXPECT_EQ(t.switches.size(), 11u);
  EXPECT_EQ(count_links(t, LinkRole::kFabric), 10);
  EXPECT_EQ(link_named(t, "client100.nic").forward_bytes_per_s, 200e9);
  EXPECT_EQ(link_named(t, "railgroup7.uplink").forward_bytes_per_s, 400e9);
  EXPECT_EQ(link_named(t, "railgroup7.uplink").aggregated, 8);
  EXPECT_EQ(link_named(t, "leaf0.uplink").forward_bytes_per_s, 50e9);
  expect_index_lists(t);
  expect_unique_names(t);
}

TEST(Topology, GpuDirectMemoryLink) {
  ClusterSpec c = small_cluster();
  c.clients.gpudirect_storage = true;
  c.clients.accelerators_per_node = 4;
  const Topology t = build_ok(c);
  const TopologyLink& gds = link_named(t, "client1.gpudirect");
  EXPECT_EQ(gds.role, LinkRole::kClientMemory);
  EXPECT_EQ(gds.forward_bytes_per_s, 100e9);  // 4 x 25 GB/s of PCIe
  EXPECT_EQ(gds.aggregated, 4);
}

TEST(Topology, Deterministic) {
  const Topology a = build_ok(large_cluster(), 2);
  const Topology b = build_ok(large_cluster(), 2);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(a.links[i].name, b.links[i].name);
    EXPECT_EQ(a.links[i].forward_bytes_per_s, b.links[i].forward_bytes_per_s);
  }
  const MaxFlowBound fa = read_max_flow(a), fb = read_max_flow(b);
  EXPECT_EQ(fa.bytes_per_s, fb.bytes_per_s);
  EXPECT_EQ(fa.bottleneck, fb.bottleneck);
}

// ---- errors ---------------------------------------------------------------------------------

void expect_error(const ClusterSpec& c, const std::string& needle, int mds_count = 0) {
  Result<Topology> t = build_topology(c, mds_count);
  ASSERT_FALSE(t.ok()) << needle;
  EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(t.status().message().find(needle), std::string::npos) << t.status().to_string();
}

TEST(Topology, BadSpecs) {
  ClusterSpec c = small_cluster();
  c.clients.count = 0;
  expect_error(c, "cluster.clients.count: expected an integer >= 1, got 0");
  c = small_cluster();
  c.storage.count = -2;
  expect_error(c, "cluster.storage.count");
  c = small_cluster();
  c.storage.drives_per_node = 0;
  expect_error(c, "cluster.storage.drives_per_node");
  c = small_cluster();
  c.clients.nic.profile.gbps = 0;
  expect_error(c, "cluster.clients.nic.gbps: expected a finite number > 0, got 0");
  c = small_cluster();
  c.storage.nic.count = 0;
  expect_error(c, "cluster.storage.nic.count");
  c = small_cluster();
  c.storage.drive.read_gbytes_per_s = -1;
  expect_error(c, "cluster.storage.drive.read_gbytes_per_s");
  c = small_cluster();
  c.clients.memory_bandwidth_gbytes_per_s = std::nan("");
  expect_error(c, "cluster.clients.memory_bandwidth_gbytes_per_s");
  c = small_cluster();
  c.fabric.hosts_per_leaf = 0;
  expect_error(c, "cluster.fabric.hosts_per_leaf");
  c = small_cluster();
  c.fabric.oversubscription = 0;
  expect_error(c, "cluster.fabric.oversubscription");
  c = small_cluster();
  c.fabric.link_gbps = -400;
  expect_error(c, "cluster.fabric.link_gbps");
  c = small_cluster();
  c.fabric.uplinks_per_leaf = -1;
  expect_error(c, "cluster.fabric.uplinks_per_leaf");
  expect_error(small_cluster(), "cluster.mds_count", -1);

  c = small_cluster();
  c.fabric.topology = FabricTopology::kRailOptimized;
  c.fabric.rails = 0;
  expect_error(c, "cluster.fabric.rails: expected an integer >= 1, got 0");
  c.fabric.rails = 2;
  c.clients.nic.count = 3;
  expect_error(c, "multiple of 2, got 3");
  c.clients.nic.count = 2;
  c.fabric.storage_on_own_leaves = false;
  expect_error(c, "cluster.fabric.storage_on_own_leaves");

  c = small_cluster();
  c.fabric.topology = FabricTopology::kFatTree;
  c.fabric.hosts_per_leaf = 1;  // 6 leaves
  c.fabric.pods = 2;
  c.fabric.leaves_per_pod = 2;
  expect_error(c, "cluster.fabric.pods: 2 pods of 2 leaves cannot hold the 6 leaves");
  c.fabric.pods = -1;
  expect_error(c, "cluster.fabric.pods: expected an integer >= 0");

  c = small_cluster();
  c.clients.nic.count = 5000;
  expect_error(c, "cluster.clients.nic.count: expected an integer <= 1024, got 5000");
  c = small_cluster();
  c.storage.count = 100000;
  c.storage.drives_per_node = 1000;
  expect_error(c, "expected at most");
}

// ---- max-flow known answers -----------------------------------------------------------------

void expect_bound(const Topology& t, double bytes_per_s, LinkRole role,
                  const std::vector<std::string>& bottleneck) {
  const MaxFlowBound b = read_max_flow(t);
  EXPECT_EQ(b.bytes_per_s, bytes_per_s);
  ASSERT_EQ(b.cut_by_role.size(), 1u) << b.bottleneck.front();
  EXPECT_EQ(b.cut_by_role[0].first, role) << link_role_name(b.cut_by_role[0].first);
  EXPECT_EQ(b.cut_by_role[0].second, bytes_per_s);
  EXPECT_EQ(b.bottleneck, bottleneck);
}

TEST(MaxFlow, DrivesBound) {
  // Drives 8 x 3 = 24 GB/s; storage NICs 50, client NICs 50, memory 400, uplinks 400.
  expect_bound(build_ok(small_cluster()), 24e9, LinkRole::kDrive,
               {"8 drives x 3.00 GB/s = 24.0 GB/s"});
}

TEST(MaxFlow, StorageNicsBound) {
  ClusterSpec c = small_cluster();
  c.storage.drive.read_gbytes_per_s = 10;  // drives 80
  c.clients.nic = nic(200);                // client NICs 100
  expect_bound(build_ok(c), 50e9, LinkRole::kStorageNic,
               {"2 storage NICs x 25.0 GB/s = 50.0 GB/s"});
}

TEST(MaxFlow, OversubscribedLeafUplinkBound) {
  ClusterSpec c = small_cluster();
  c.storage.drive.read_gbytes_per_s = 10;  // drives 80
  c.clients.nic = nic(200);                // client NICs 100
  c.fabric.uplinks_per_leaf = 0;
  c.fabric.oversubscription = 4;  // storage leaf up: 50 / 4; client leaf up: 100 / 4
  expect_bound(build_ok(c), 12.5e9, LinkRole::kFabric, {"1 leaf uplink x 12.5 GB/s = 12.5 GB/s"});
}

TEST(MaxFlow, ClientNicsBound) {
  ClusterSpec c = small_cluster();
  c.storage.drive.read_gbytes_per_s = 10;  // drives 80
  c.storage.nic = nic(400, 4);             // storage NICs 2 x 200
  expect_bound(build_ok(c), 50e9, LinkRole::kClientNic, {"4 client NICs x 12.5 GB/s = 50.0 GB/s"});
}

ClusterSpec memory_bound_cluster() {
  ClusterSpec c = small_cluster();
  c.clients.nic = nic(400, 2);                    // 100 GB/s per client, 400 in all
  c.clients.memory_bandwidth_gbytes_per_s = 100;  // 50 GB/s per client, 200 in all
  c.storage.nic = nic(400, 8);                    // 2 x 400 GB/s
  c.storage.drives_per_node = 32;
  c.storage.drive.read_gbytes_per_s = 14;  // 2 x 32 x 14 = 896 GB/s
  c.fabric.uplinks_per_leaf = 16;          // 800 GB/s per leaf
  return c;
}

TEST(MaxFlow, ClientMemoryBoundWithoutGpuDirect) {
  expect_bound(build_ok(memory_bound_cluster()), 200e9, LinkRole::kClientMemory,
               {"4 client host-memory copies x 50.0 GB/s = 200 GB/s"});
}

TEST(MaxFlow, GpuDirectLiftsClientMemoryBound) {
  ClusterSpec c = memory_bound_cluster();
  c.clients.gpudirect_storage = true;  // 8 x 25 GB/s of PCIe per client
  expect_bound(build_ok(c), 400e9, LinkRole::kClientNic, {"4 client NICs x 100 GB/s = 400 GB/s"});
  c.clients.accelerators_per_node = 1;  // 25 GB/s per client
  expect_bound(build_ok(c), 100e9, LinkRole::kClientMemory,
               {"4 client GPUDirect PCIe paths x 25.0 GB/s = 100 GB/s"});
}

TEST(MaxFlow, SharedLeafMixesLocalAndUplinkTraffic) {
  ClusterSpec c = small_cluster();
  c.fabric.storage_on_own_leaves = false;
  c.fabric.hosts_per_leaf = 3;  // leaf0: client0..2; leaf1: client3, storage0, storage1
  c.fabric.uplinks_per_leaf = 1;
  c.fabric.link_gbps = 100;  // 12.5 GB/s per leaf
  c.clients.nic = nic(200);  // 25 GB/s
  c.storage.nic = nic(200, 4);
  c.storage.drive.read_gbytes_per_s = 10;
  // client3 reads 25 GB/s inside leaf1; clients 0..2 share leaf1's 12.5 GB/s uplink.
  const MaxFlowBound b = read_max_flow(build_ok(c));
  EXPECT_EQ(b.bytes_per_s, 37.5e9);
  ASSERT_EQ(b.cut_by_role.size(), 2u);
  EXPECT_EQ(b.cut_by_role[0], std::make_pair(LinkRole::kClientNic, 25e9));
  EXPECT_EQ(b.cut_by_role[1], std::make_pair(LinkRole::kFabric, 12.5e9));
  EXPECT_EQ(b.bottleneck, (std::vector<std::string>{"1 client NIC x 25.0 GB/s = 25.0 GB/s",
                                                    "1 leaf uplink x 12.5 GB/s = 12.5 GB/s"}));
}

TEST(MaxFlow, FatTreePodUplinksBound) {
  ClusterSpec c = small_cluster();
  c.fabric.topology = FabricTopology::kFatTree;
  c.clients.count = 8;
  c.fabric.hosts_per_leaf = 2;  // 4 client leaves, 1 storage leaf
  c.fabric.leaves_per_pod = 2;  // pods: (leaf0, leaf1), (leaf2, leaf3), (leaf4)
  c.fabric.uplinks_per_leaf = 0;
  c.fabric.oversubscription = 2;
  c.clients.nic = nic(200);     // client leaf up 2 x 25 / 2 = 25; client pod up 2 x 25 / 2 = 25
  c.storage.nic = nic(400, 4);  // storage leaf up 2 x 200 / 2 = 200; its pod up 100
  c.storage.drives_per_node = 16;
  c.storage.drive.read_gbytes_per_s = 10;
  expect_bound(build_ok(c), 50e9, LinkRole::kFabric, {"2 pod uplinks x 25.0 GB/s = 50.0 GB/s"});
}

ClusterSpec rail_cluster() {
  ClusterSpec c = small_cluster();
  c.fabric.topology = FabricTopology::kRailOptimized;
  c.fabric.rails = 2;
  c.fabric.hosts_per_leaf = 2;
  c.fabric.uplinks_per_leaf = 2;  // rail group: 2 x 2 x 50 = 200; storage leaf: 100
  c.clients.nic = nic(200, 2);    // 50 GB/s per client
  c.storage.nic = nic(400, 4);    // 200 GB/s per server
  c.storage.drives_per_node = 16;
  c.storage.drive.read_gbytes_per_s = 10;
  return c;
}

TEST(MaxFlow, RailOptimizedStorageLeafBound) {
  expect_bound(build_ok(rail_cluster()), 100e9, LinkRole::kFabric,
               {"1 leaf uplink x 100 GB/s = 100 GB/s"});
}

TEST(MaxFlow, RailOptimizedGroupUplinksBound) {
  ClusterSpec c = rail_cluster();
  c.fabric.uplinks_per_leaf = 0;
  c.fabric.oversubscription = 4;  // rail group: 2 x 50 / 4 = 25; storage leaf: 400 / 4 = 100
  expect_bound(build_ok(c), 50e9, LinkRole::kFabric,
               {"2 rail-group uplinks x 25.0 GB/s = 50.0 GB/s"});
}

TEST(MaxFlow, MixedCapacitiesInOneRole) {
  ClusterSpec c = small_cluster();
  c.clients.count = 6;  // leaves of 4: client leaf up 4 x 25 / 4 = 25, then 2 x 25 / 4 = 12.5
  c.clients.nic = nic(200);
  c.storage.drive.read_gbytes_per_s = 10;
  c.storage.nic = nic(400, 4);
  c.fabric.uplinks_per_leaf = 0;
  c.fabric.oversubscription = 4;  // storage leaf up 400 / 4 = 100
  expect_bound(build_ok(c), 37.5e9, LinkRole::kFabric,
               {"2 leaf uplinks = 37.5 GB/s (1 x 25.0 GB/s, 1 x 12.5 GB/s)"});
}

// The flagship question: 128 DGX A100 nodes with 200 Gb/s each (25.6 Tb/s = 3.2 TB/s) against
// 16 servers x 24 NVMe drives of 7 GB/s with 2 x 200 Gb/s each.
TEST(MaxFlow, Flagship128DgxA100) {
  ClusterSpec c = large_cluster();
  c.clients.accelerators_per_node = 8;
  const Topology t = build_ok(c);
  const MaxFlowBound b = read_max_flow(t);
  std::printf("flagship, %s\n  bound %.1f GB/s\n", t.description.c_str(), b.bytes_per_s / 1e9);
  for (const std::string& line : b.bottleneck) std::printf("  cut: %s\n", line.c_str());
  // The 16 servers share one leaf: 16 x 50 GB/s of NICs under 8 x 400 Gb/s of uplinks.
  EXPECT_EQ(b.bytes_per_s, 400e9);
  EXPECT_EQ(b.bottleneck, std::vector<std::string>{"1 leaf uplink x 400 GB/s = 400 GB/s"});

  c.fabric.uplinks_per_leaf = 0;  // non-blocking leaves (1:1)
  const Topology nb = build_ok(c);
  const MaxFlowBound b2 = read_max_flow(nb);
  std::printf("flagship, %s\n  bound %.1f GB/s\n", nb.description.c_str(), b2.bytes_per_s / 1e9);
  for (const std::string& line : b2.bottleneck) std::printf("  cut: %s\n", line.c_str());
  EXPECT_EQ(b2.bytes_per_s, 800e9);
  EXPECT_EQ(b2.bottleneck, std::vector<std::string>{"16 storage NICs x 50.0 GB/s = 800 GB/s"});
}

// Design local: each client's drive set hangs off that client by its PCIe path, off the
// fabric; the bound is every node's own drives (or its PCIe path, or its memory copy).
ClusterSpec local_cluster() {
  ClusterSpec c = small_cluster();
  c.storage.count = c.clients.count;
  c.storage.drives_per_node = 2;
  c.storage.in_client_nodes = true;
  return c;
}

TEST(Topology, LocalDrivesSitInsideTheirClientNode) {
  const Topology t = build_ok(local_cluster());
  ASSERT_EQ(t.storage.size(), 4u);
  ASSERT_EQ(t.drives.size(), 8u);
  const TopologyLink& pcie = link_named(t, "client2.local.pcie");
  EXPECT_EQ(pcie.role, LinkRole::kStorageNic);
  EXPECT_EQ(t.nodes[pcie.a].name, "client2.local");
  EXPECT_EQ(t.nodes[pcie.b].name, "client2");
  EXPECT_DOUBLE_EQ(pcie.forward_bytes_per_s, 6e9);  // 2 drives x 3 GB/s read
  EXPECT_DOUBLE_EQ(pcie.reverse_bytes_per_s, 4e9);  // 2 drives x 2 GB/s write
  EXPECT_EQ(link_named(t, "client2.local.drive1.link").b, node_named(t, "client2.local"));
  // The leaves hold the clients only.
  for (const TopologyLink& l : t.links) {
    if (l.role == LinkRole::kFabric) continue;
    const auto kind_a = t.nodes[l.a].kind, kind_b = t.nodes[l.b].kind;
    if (kind_a == NodeKind::kStorage) {
      EXPECT_EQ(kind_b, NodeKind::kClient) << l.name;
    }
  }
  EXPECT_NE(t.description.find("0 storage)"), std::string::npos) << t.description;
}

TEST(MaxFlow, LocalDrivesBoundEachNodeAlone) {
  // 4 nodes x 2 drives x 3 GB/s = 24 GB/s, far below the NICs' 50 GB/s (which nothing crosses).
  expect_bound(build_ok(local_cluster()), 24e9, LinkRole::kDrive,
               {"8 drives x 3.00 GB/s = 24.0 GB/s"});
  ClusterSpec c = local_cluster();
  c.storage.server_gbytes_per_s = 4;  // a PCIe switch's uplink per node
  expect_bound(build_ok(c), 16e9, LinkRole::kStorageNic,
               {"4 nodes' local-drive PCIe paths x 4.00 GB/s = 16.0 GB/s"});
}

TEST(MaxFlow, LinkRoleNames) {
  EXPECT_EQ(link_role_name(LinkRole::kClientNic), "client NIC");
  EXPECT_EQ(link_role_name(LinkRole::kClientMemory), "client memory");
  EXPECT_EQ(link_role_name(LinkRole::kStorageNic), "storage NIC");
  EXPECT_EQ(link_role_name(LinkRole::kDrive), "drive");
  EXPECT_EQ(link_role_name(LinkRole::kMdsNic), "MDS NIC");
  EXPECT_EQ(link_role_name(LinkRole::kFabric), "fabric");
}

}  // namespace
}  // namespace granary::models

#include "models/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace granary::models {

namespace {

// A metadata server's NIC (docs/models.md, "Fabric").
constexpr double kMdsNicGbps = 100;
// GPUDirect Storage: the NIC writes into GPU memory over PCIe, one Gen4 x16 link per accelerator
// at about 25 GB/s of usable bandwidth.
constexpr double kGpuDirectBytesPerSPerAccelerator = 25e9;
// Larger inputs are certainly mistakes; the limits keep every count product within an int.
constexpr int64_t kMaxNodes = 10'000'000;
constexpr int kMaxNicsPerNode = 1024;
constexpr int kMaxPortsPerNic = 64;
constexpr int kMaxAcceleratorsPerNode = 1024;
constexpr int kMaxUplinksPerLeaf = 65536;
constexpr int kMaxRails = 1024;

double gbps_to_bytes_per_s(double gbps) {
  return gbps * 1e9 / 8;
}

std::string format_double(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string format_number(double v) {
  return format_double("%g", v);
}

// 3 significant digits up to 100 GB/s, whole GB/s above: "7.00", "50.0", "800", "2688".
std::string format_gbytes_per_s(double bytes_per_s) {
  const double v = bytes_per_s / 1e9;
  if (v >= 100) return format_double("%.0f", v);
  if (v >= 10) return format_double("%.1f", v);
  return format_double("%.2f", v);
}

bool positive_finite(double v) {
  return std::isfinite(v) && v > 0;
}

// ---- validation

Status expect_count(const std::string& field, int64_t value, int64_t min,
                    int64_t max = std::numeric_limits<int>::max()) {
  if (value < min) {
    return Status::invalid_argument("cluster." + field + ": expected an integer >= " +
                                    std::to_string(min) + ", got " + std::to_string(value));
  }
  if (value > max) {
    return Status::invalid_argument("cluster." + field + ": expected an integer <= " +
                                    std::to_string(max) + ", got " + std::to_string(value));
  }
  return Status::ok_status();
}

Status expect_positive(const std::string& field, double value) {
  if (positive_finite(value)) return Status::ok_status();
  return Status::invalid_argument("cluster." + field + ": expected a finite number > 0, got " +
                                  format_number(value));
}

Status expect_non_negative(const std::string& field, double value) {
  if (std::isfinite(value) && value >= 0) return Status::ok_status();
  return Status::invalid_argument("cluster." + field + ": expected a finite number >= 0, got " +
                                  format_number(value));
}

Status validate_nic(const std::string& field, const NicSpec& nic) {
  for (Status s : {expect_count(field + ".count", nic.count, 1, kMaxNicsPerNode),
                   expect_count(field + ".ports", nic.profile.ports, 1, kMaxPortsPerNic),
                   expect_positive(field + ".gbps", nic.profile.gbps),
                   expect_non_negative(field + ".latency_us", nic.profile.latency_us)}) {
    if (!s.ok()) return s;
  }
  return Status::ok_status();
}

Status validate(const ClusterSpec& cluster, int mds_count) {
  const ClientNodesSpec& c = cluster.clients;
  const StorageNodesSpec& s = cluster.storage;
  const FabricSpec& f = cluster.fabric;
  std::vector<Status> checks = {
      expect_count("clients.count", c.count, 1),
      expect_count("clients.accelerators_per_node", c.accelerators_per_node, 1,
                   kMaxAcceleratorsPerNode),
      expect_positive("clients.memory_bandwidth_gbytes_per_s", c.memory_bandwidth_gbytes_per_s),
      validate_nic("clients.nic", c.nic),
      expect_count("storage.count", s.count, 1),
      expect_count("storage.drives_per_node", s.drives_per_node, 1),
      expect_positive("storage.drive.read_gbytes_per_s", s.drive.read_gbytes_per_s),
      expect_positive("storage.drive.write_gbytes_per_s", s.drive.write_gbytes_per_s),
      expect_non_negative("storage.drive.read_latency_us", s.drive.read_latency_us),
      s.in_client_nodes ? Status::ok_status() : validate_nic("storage.nic", s.nic),
      expect_count("mds_count", mds_count, 0),
      expect_count("fabric.hosts_per_leaf", f.hosts_per_leaf, 1),
      expect_count("fabric.uplinks_per_leaf", f.uplinks_per_leaf, 0, kMaxUplinksPerLeaf),
      expect_positive("fabric.link_gbps", f.link_gbps),
      expect_non_negative("fabric.link_latency_us", f.link_latency_us),
      expect_positive("fabric.oversubscription", f.oversubscription),
      expect_count("fabric.spines", f.spines, 0),
  };
  if (f.topology == FabricTopology::kFatTree) {
    checks.push_back(expect_count("fabric.pods", f.pods, 0));
    checks.push_back(expect_count("fabric.leaves_per_pod", f.leaves_per_pod, 0));
  }
  if (f.topology == FabricTopology::kRailOptimized) {
    checks.push_back(expect_count("fabric.rails", f.rails, 1, kMaxRails));
  }
  for (const Status& st : checks) {
    if (!st.ok()) return st;
  }
  const int64_t nodes =
      2 * int64_t{c.count} + int64_t{s.count} * (1 + int64_t{s.drives_per_node}) + mds_count;
  if (nodes > kMaxNodes) {
    return Status::invalid_argument("cluster: expected at most " + std::to_string(kMaxNodes) +
                                    " nodes (clients, sinks, servers, drives, MDS), got " +
                                    std::to_string(nodes));
  }
  if (f.topology == FabricTopology::kRailOptimized) {
    if (c.nic.count % f.rails != 0) {
      return Status::invalid_argument(
          "cluster.clients.nic.count: a rail-optimized fabric with " + std::to_string(f.rails) +
          " rails needs the same number of NICs on every rail, so a multiple of " +
          std::to_string(f.rails) + ", got " + std::to_string(c.nic.count));
    }
    if (!f.storage_on_own_leaves) {
      return Status::invalid_argument(
          "cluster.fabric.storage_on_own_leaves: a rail-optimized fabric puts storage on its own "
          "leaves, expected true, got false");
    }
  }
  return Status::ok_status();
}

// ---- building

std::vector<std::vector<int>> chunk(const std::vector<int>& hosts, int per_group) {
  std::vector<std::vector<int>> groups;
  for (size_t i = 0; i < hosts.size(); i += static_cast<size_t>(per_group)) {
    const size_t end = std::min(hosts.size(), i + static_cast<size_t>(per_group));
    groups.emplace_back(hosts.begin() + static_cast<std::ptrdiff_t>(i),
                        hosts.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return groups;
}

int ceil_div(int64_t a, int64_t b) {
  return static_cast<int>((a + b - 1) / b);
}

class Builder {
 public:
  explicit Builder(const ClusterSpec& cluster) : cluster_(cluster) {}

  int add_node(std::string name, NodeKind kind, int index, int owner = -1) {
    const int id = static_cast<int>(t_.nodes.size());
    t_.nodes.push_back(TopologyNode{std::move(name), kind, index, owner});
    switch (kind) {
      case NodeKind::kClient:
        t_.clients.push_back(id);
        break;
      case NodeKind::kClientSink:
        t_.client_sinks.push_back(id);
        break;
      case NodeKind::kStorage:
        t_.storage.push_back(id);
        break;
      case NodeKind::kDrive:
        t_.drives.push_back(id);
        break;
      case NodeKind::kMds:
        t_.mds.push_back(id);
        break;
      case NodeKind::kSwitch:
        t_.switches.push_back(id);
        break;
    }
    return id;
  }

  void add_link(std::string name, LinkRole role, int a, int b, double forward_bytes_per_s,
                double reverse_bytes_per_s, double latency_s, int aggregated) {
    t_.links.push_back(TopologyLink{std::move(name), role, a, b, forward_bytes_per_s,
                                    reverse_bytes_per_s, latency_s, aggregated});
  }

  // Bandwidth of a host's link to its leaf (clients, storage servers, MDS).
  double host_nic_bytes_per_s(int node) const {
    switch (t_.nodes[node].kind) {
      case NodeKind::kClient:
        return client_nic_bytes_per_s();
      case NodeKind::kStorage:
        return storage_nic_bytes_per_s();
      case NodeKind::kMds:
        return gbps_to_bytes_per_s(kMdsNicGbps);
      default:
        break;
    }
    GRANARY_CHECK(false);
    return 0;
  }
  double client_nic_bytes_per_s() const { return nic_bytes_per_s(cluster_.clients.nic); }
  double storage_nic_bytes_per_s() const { return nic_bytes_per_s(cluster_.storage.nic); }
  double link_bytes_per_s() const { return gbps_to_bytes_per_s(cluster_.fabric.link_gbps); }
  double fabric_latency_s() const { return cluster_.fabric.link_latency_us * 1e-6; }

  // The hosts: clients with their sinks, storage servers with their drives, MDS.
  void add_hosts(int mds_count) {
    const ClientNodesSpec& c = cluster_.clients;
    for (int i = 0; i < c.count; ++i) {
      const std::string name = "client" + std::to_string(i);
      const int client = add_node(name, NodeKind::kClient, i);
      add_node(name + ".sink", NodeKind::kClientSink, i, client);
    }
    const StorageNodesSpec& s = cluster_.storage;
    for (int i = 0; i < s.count; ++i) {
      // Design "local": client i's own drive set, "client3.local" with "client3.local.drive0".
      const std::string name = s.in_client_nodes ? "client" + std::to_string(i) + ".local"
                                                 : "storage" + std::to_string(i);
      const int server = add_node(name, NodeKind::kStorage, i);
      for (int d = 0; d < s.drives_per_node; ++d) {
        add_node(name + ".drive" + std::to_string(d), NodeKind::kDrive, i * s.drives_per_node + d,
                 server);
      }
    }
    for (int i = 0; i < mds_count; ++i) add_node("mds" + std::to_string(i), NodeKind::kMds, i);
  }

  // Links from every host (and its sink and drives) to the switch `edge_of[host]`.
  void add_host_links(const std::vector<int>& edge_of) {
    const ClientNodesSpec& c = cluster_.clients;
    const double memory_bytes_per_s =
        c.gpudirect_storage ? c.accelerators_per_node * kGpuDirectBytesPerSPerAccelerator
                            : c.memory_bandwidth_gbytes_per_s * 1e9 / 2;
    const int nic_links = c.nic.count * c.nic.profile.ports;
    for (size_t i = 0; i < t_.clients.size(); ++i) {
      const int client = t_.clients[i];
      const std::string& name = t_.nodes[client].name;
      add_link(name + ".nic", LinkRole::kClientNic, client, edge_of[client],
               client_nic_bytes_per_s(), client_nic_bytes_per_s(), c.nic.profile.latency_us * 1e-6,
               nic_links);
      add_link(name + (c.gpudirect_storage ? ".gpudirect" : ".memory"), LinkRole::kClientMemory,
               client, t_.client_sinks[i], memory_bytes_per_s, memory_bytes_per_s, 0,
               c.gpudirect_storage ? c.accelerators_per_node : 1);
    }
    const StorageNodesSpec& s = cluster_.storage;
    for (size_t i = 0; i < t_.storage.size(); ++i) {
      const int server = t_.storage[i];
      const std::string& name = t_.nodes[server].name;
      if (s.in_client_nodes) {
        // The node's PCIe path from its drives to its CPU and memory: the node's limit
        // (server_gbytes_per_s: a PCIe switch's uplink), else the drives' sum.
        const double limit = s.server_gbytes_per_s * 1e9;
        const double reads = s.drives_per_node * s.drive.read_gbytes_per_s * 1e9;
        const double writes = s.drives_per_node * s.drive.write_gbytes_per_s * 1e9;
        add_link(name + ".pcie", LinkRole::kStorageNic, server, t_.clients[i],
                 limit > 0 ? limit : reads, limit > 0 ? limit : writes, 0, 1);
      } else {
        add_link(name + ".nic", LinkRole::kStorageNic, server, edge_of[server],
                 storage_nic_bytes_per_s(), storage_nic_bytes_per_s(),
                 s.nic.profile.latency_us * 1e-6, s.nic.count * s.nic.profile.ports);
      }
      for (int d = 0; d < s.drives_per_node; ++d) {
        const int drive = t_.drives[i * static_cast<size_t>(s.drives_per_node) + d];
        add_link(t_.nodes[drive].name + ".link", LinkRole::kDrive, drive, server,
                 s.drive.read_gbytes_per_s * 1e9, s.drive.write_gbytes_per_s * 1e9,
                 s.drive.read_latency_us * 1e-6, 1);
      }
    }
    const double mds_bytes_per_s = gbps_to_bytes_per_s(kMdsNicGbps);
    for (int mds : t_.mds) {
      add_link(t_.nodes[mds].name + ".nic", LinkRole::kMdsNic, mds, edge_of[mds], mds_bytes_per_s,
               mds_bytes_per_s, s.nic.profile.latency_us * 1e-6, 1);
    }
  }

  // The uplink of an edge switch (a leaf or a rail group of `rails` leaves) holding `hosts`:
  // `rails` x uplinks_per_leaf links, or the hosts' bandwidth over the oversubscription.
  void add_edge_uplink(int edge, int upper, const std::vector<int>& hosts, int rails) {
    const FabricSpec& f = cluster_.fabric;
    double bytes_per_s = 0;
    int aggregated = 0;
    if (f.uplinks_per_leaf > 0) {
      aggregated = rails * f.uplinks_per_leaf;
      bytes_per_s = aggregated * link_bytes_per_s();
    } else {
      double down = 0;
      for (int h : hosts) down += host_nic_bytes_per_s(h);
      bytes_per_s = down / f.oversubscription;
      aggregated = links_for(bytes_per_s);
    }
    if (ports_.ok() && !f.edge_switch.name.empty()) {
      ports_ = check_ports(t_.nodes[edge].name, hosts, rails, ceil_div(aggregated, rails));
    }
    add_fabric_link(edge, upper, bytes_per_s, aggregated, holds_storage(hosts));
  }

  // The first edge switch without the ports its hosts and uplinks need (ok when all have them
  // or no switch profile is named).
  const Status& ports_status() const { return ports_; }

  // A switch-to-switch link; `a` is the end nearer the drives.
  void add_fabric_link(int lower, int upper, double bytes_per_s, int aggregated,
                       bool lower_holds_storage) {
    const int a = lower_holds_storage ? lower : upper;
    const int b = lower_holds_storage ? upper : lower;
    add_link(t_.nodes[lower].name + ".uplink", LinkRole::kFabric, a, b, bytes_per_s, bytes_per_s,
             fabric_latency_s(), aggregated);
  }

  // Physical links of link_gbps needed to carry `bytes_per_s` (at least one).
  int links_for(double bytes_per_s) const {
    const double n = std::ceil(bytes_per_s / link_bytes_per_s() * (1 - 1e-12));
    return static_cast<int>(std::clamp(n, 1.0, double{std::numeric_limits<int>::max()}));
  }

  bool holds_storage(const std::vector<int>& hosts) const {
    return std::any_of(hosts.begin(), hosts.end(),
                       [&](int h) { return t_.nodes[h].kind == NodeKind::kStorage; });
  }

  const Topology& topology() const { return t_; }
  Topology take() { return std::move(t_); }

  // Storage servers then MDS, in index order.
  // (Design "local": its drive sets are inside the clients, not on the fabric.)
  std::vector<int> storage_hosts() const {
    std::vector<int> hosts = cluster_.storage.in_client_nodes ? std::vector<int>{} : t_.storage;
    hosts.insert(hosts.end(), t_.mds.begin(), t_.mds.end());
    return hosts;
  }

 private:
  static double nic_bytes_per_s(const NicSpec& nic) {
    return nic.count * nic.profile.ports * gbps_to_bytes_per_s(nic.profile.gbps);
  }

  // Whether one physical leaf of `edge` (a rail group has `rails` of them, each with 1/rails of
  // every client's NIC ports) has the ports of the named switch for its hosts' NIC ports and
  // `uplinks` uplinks at link_gbps. Links of one rate share split ports: ceil(links / split)
  // ports per rate (SwitchProfile::links_at).
  Status check_ports(const std::string& edge, const std::vector<int>& hosts, int rails,
                     int uplinks) const {
    const SwitchProfile& sw = cluster_.fabric.edge_switch;
    std::map<double, int64_t> links;  // by Gb/s
    std::map<double, std::string> field;
    for (int h : hosts) {
      const NodeKind kind = t_.nodes[h].kind;
      const NicSpec* nic = kind == NodeKind::kClient    ? &cluster_.clients.nic
                           : kind == NodeKind::kStorage ? &cluster_.storage.nic
                                                        : nullptr;
      const double gbps = nic ? nic->profile.gbps : kMdsNicGbps;
      links[gbps] += nic ? int64_t{nic->count} * nic->profile.ports / rails : 1;
      field.emplace(gbps, kind == NodeKind::kClient    ? "cluster.clients.nic.gbps"
                          : kind == NodeKind::kStorage ? "cluster.storage.nic.gbps"
                                                       : "storage.pfs.mds_count");
    }
    links[cluster_.fabric.link_gbps] += uplinks;
    field.emplace(cluster_.fabric.link_gbps, "cluster.fabric.link_gbps");
    int64_t ports = 0;
    std::string parts;
    for (const auto& [gbps, count] : links) {
      const int64_t split = sw.links_at(gbps) / std::max(1, sw.ports);
      if (split == 0) {
        const std::string rates =
            format_number(gbps) + " Gb/s link is faster than the " + format_number(sw.port_gbps);
        return Status::invalid_argument(field[gbps] + ": a " + rates + " Gb/s ports of switch " +
                                        "profile '" + sw.name + "' (cluster.fabric.switch)");
      }
      ports += (count + split - 1) / split;
      parts += (parts.empty() ? "" : " + ") + std::to_string(count) + " x " + format_number(gbps) +
               " Gb/s";
    }
    if (ports <= sw.ports) return Status::ok_status();
    return Status::invalid_argument(
        "cluster.fabric.switch: " + edge + (rails > 1 ? " (each of its rail leaves)" : "") +
        " needs " + std::to_string(ports) + " ports for its " + parts + " links (" +
        std::to_string(hosts.size()) + " hosts and " + std::to_string(uplinks) +
        " uplinks), switch profile '" + sw.name + "' has " + std::to_string(sw.ports) + " x " +
        format_number(sw.port_gbps) + " Gb/s: expected fewer hosts_per_leaf or uplinks");
  }

  const ClusterSpec& cluster_;
  Topology t_;
  Status ports_;
};

// Leaves of a leaf-spine or fat-tree fabric: client leaves then storage leaves, or one run of
// shared leaves when storage does not have its own.
std::vector<std::vector<int>> assign_leaves(const Builder& b, const FabricSpec& f) {
  const Topology& t = b.topology();
  if (f.storage_on_own_leaves) {
    std::vector<std::vector<int>> leaves = chunk(t.clients, f.hosts_per_leaf);
    for (auto& leaf : chunk(b.storage_hosts(), f.hosts_per_leaf)) leaves.push_back(leaf);
    return leaves;
  }
  std::vector<int> hosts = t.clients;
  for (int h : b.storage_hosts()) hosts.push_back(h);
  return chunk(hosts, f.hosts_per_leaf);
}

std::string uplink_text(const FabricSpec& f, const char* per) {
  if (f.uplinks_per_leaf > 0) {
    return std::to_string(f.uplinks_per_leaf) + " x " + format_number(f.link_gbps) +
           " Gb/s up per " + per;
  }
  return "uplinks at " + format_number(f.oversubscription) + ":1 oversubscription";
}

std::string leaves_text(const Builder& b, const std::vector<std::vector<int>>& leaves,
                        const FabricSpec& f) {
  int client_leaves = 0, storage_leaves = 0, mixed = 0;
  for (const auto& leaf : leaves) {
    bool clients = false, others = false;
    for (int h : leaf) {
      (b.topology().nodes[h].kind == NodeKind::kClient ? clients : others) = true;
    }
    (clients && others ? mixed : clients ? client_leaves : storage_leaves) += 1;
  }
  std::string text =
      std::to_string(leaves.size()) + " leaves x " + std::to_string(f.hosts_per_leaf) + " hosts (";
  if (mixed > 0) text += std::to_string(mixed) + " mixed, ";
  return text + std::to_string(client_leaves) + " client, " + std::to_string(storage_leaves) +
         " storage)";
}

// Leaf-spine: every leaf has one aggregated uplink to the spine.
std::string build_leaf_spine(Builder& b, const FabricSpec& f) {
  const auto leaves = assign_leaves(b, f);
  std::vector<int> edge_of(b.topology().nodes.size(), -1);
  std::vector<int> leaf_ids;
  for (size_t i = 0; i < leaves.size(); ++i) {
    leaf_ids.push_back(
        b.add_node("leaf" + std::to_string(i), NodeKind::kSwitch, static_cast<int>(i)));
    for (int h : leaves[i]) edge_of[h] = leaf_ids.back();
  }
  const int spine = b.add_node("spine", NodeKind::kSwitch, 0);
  b.add_host_links(edge_of);
  for (size_t i = 0; i < leaves.size(); ++i) b.add_edge_uplink(leaf_ids[i], spine, leaves[i], 1);
  const std::string spines =
      f.spines > 0 ? " (" + std::to_string(f.spines) + " spines merged into one)" : "";
  return "leaf-spine: " + leaves_text(b, leaves, f) + ", " + uplink_text(f, "leaf") +
         " to one spine" + spines;
}

// Fat-tree: leaves grouped into pods; leaf -> pod and pod -> core aggregated uplinks.
Result<std::string> build_fat_tree(Builder& b, const FabricSpec& f) {
  const auto leaves = assign_leaves(b, f);
  const int leaf_count = static_cast<int>(leaves.size());
  int leaves_per_pod = f.leaves_per_pod;
  if (leaves_per_pod == 0) {
    // A k-ary fat-tree has k/2 hosts per edge switch and k/2 edge switches per pod.
    leaves_per_pod = f.pods > 0 ? ceil_div(leaf_count, f.pods) : f.hosts_per_leaf;
  }
  const int pod_count = ceil_div(leaf_count, leaves_per_pod);
  if (f.pods > 0 && pod_count > f.pods) {
    return Status::invalid_argument(
        "cluster.fabric.pods: " + std::to_string(f.pods) + " pods of " +
        std::to_string(leaves_per_pod) + " leaves cannot hold the " + std::to_string(leaf_count) +
        " leaves of " + std::to_string(f.hosts_per_leaf) + " hosts, expected at least " +
        std::to_string(pod_count) + " pods");
  }
  std::vector<int> edge_of(b.topology().nodes.size(), -1);
  std::vector<int> leaf_ids, pod_ids;
  for (int i = 0; i < leaf_count; ++i) {
    leaf_ids.push_back(b.add_node("leaf" + std::to_string(i), NodeKind::kSwitch, i));
    for (int h : leaves[i]) edge_of[h] = leaf_ids.back();
  }
  for (int p = 0; p < pod_count; ++p) {
    pod_ids.push_back(b.add_node("pod" + std::to_string(p), NodeKind::kSwitch, p));
  }
  const int core = b.add_node("core", NodeKind::kSwitch, 0);
  b.add_host_links(edge_of);
  std::vector<double> pod_down_bytes_per_s(pod_count, 0);
  std::vector<bool> pod_holds_storage(pod_count, false);
  for (int i = 0; i < leaf_count; ++i) {
    const int pod = i / leaves_per_pod;
    b.add_edge_uplink(leaf_ids[i], pod_ids[pod], leaves[i], 1);
    pod_down_bytes_per_s[pod] += b.topology().links.back().forward_bytes_per_s;
    pod_holds_storage[pod] = pod_holds_storage[pod] || b.holds_storage(leaves[i]);
  }
  for (int p = 0; p < pod_count; ++p) {
    const double up = pod_down_bytes_per_s[p] / f.oversubscription;
    b.add_fabric_link(pod_ids[p], core, up, b.links_for(up), pod_holds_storage[p]);
  }
  return "fat-tree: " + leaves_text(b, leaves, f) + " in " + std::to_string(pod_count) +
         " pods of up to " + std::to_string(leaves_per_pod) + " leaves, " + uplink_text(f, "leaf") +
         ", pod uplinks at " + format_number(f.oversubscription) +
         ":1 oversubscription to one core";
}

// Rail-optimized: each group of hosts_per_leaf clients has `rails` rail leaves, merged into one
// node; storage servers and MDS sit on their own leaves; rail groups and storage leaves meet at
// one spine.
std::string build_rail_optimized(Builder& b, const FabricSpec& f) {
  const auto groups = chunk(b.topology().clients, f.hosts_per_leaf);
  const auto leaves = chunk(b.storage_hosts(), f.hosts_per_leaf);
  std::vector<int> edge_of(b.topology().nodes.size(), -1);
  std::vector<int> group_ids, leaf_ids;
  for (size_t g = 0; g < groups.size(); ++g) {
    group_ids.push_back(
        b.add_node("railgroup" + std::to_string(g), NodeKind::kSwitch, static_cast<int>(g)));
    for (int h : groups[g]) edge_of[h] = group_ids.back();
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    leaf_ids.push_back(
        b.add_node("leaf" + std::to_string(i), NodeKind::kSwitch, static_cast<int>(i)));
    for (int h : leaves[i]) edge_of[h] = leaf_ids.back();
  }
  const int spine = b.add_node("spine", NodeKind::kSwitch, 0);
  b.add_host_links(edge_of);
  for (size_t g = 0; g < groups.size(); ++g) {
    b.add_edge_uplink(group_ids[g], spine, groups[g], f.rails);
  }
  for (size_t i = 0; i < leaves.size(); ++i) b.add_edge_uplink(leaf_ids[i], spine, leaves[i], 1);
  return "rail-optimized: " + std::to_string(groups.size()) + " groups of up to " +
         std::to_string(f.hosts_per_leaf) + " clients x " + std::to_string(f.rails) + " rails, " +
         uplink_text(f, "rail leaf") + "; storage on " + std::to_string(leaves.size()) +
         " leaves x " + std::to_string(f.hosts_per_leaf) + " hosts; one spine";
}

// ---- max-flow

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, double,
        boost::property<boost::edge_residual_capacity_t, double,
                        boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;
using FlowEdge = FlowTraits::edge_descriptor;

// An edge of the flow network that stands for (one direction of) a topology link.
struct FlowArc {
  FlowEdge edge;
  int u = -1, v = -1;
  int link = -1;  // index in Topology::links
  double capacity = 0;
};

class FlowNetwork {
 public:
  explicit FlowNetwork(int vertices) : g_(static_cast<size_t>(vertices)) {}

  // Adds u -> v with `capacity` and its zero-capacity residual partner v -> u.
  FlowEdge add(int u, int v, double capacity) {
    const FlowEdge e = boost::add_edge(u, v, g_).first;
    const FlowEdge r = boost::add_edge(v, u, g_).first;
    boost::put(boost::edge_capacity, g_, e, capacity);
    boost::put(boost::edge_capacity, g_, r, 0.0);
    boost::put(boost::edge_reverse, g_, e, r);
    boost::put(boost::edge_reverse, g_, r, e);
    return e;
  }

  void add_arc(int u, int v, int link, double capacity) {
    arcs_.push_back(FlowArc{add(u, v, capacity), u, v, link, capacity});
  }

  double max_flow(int source, int sink) { return boost::push_relabel_max_flow(g_, source, sink); }

  // Vertices reachable from `source` in the residual graph: the source side of a minimum cut.
  std::vector<char> source_side(int source) const {
    std::vector<char> reached(boost::num_vertices(g_), 0);
    std::deque<int> queue = {source};
    reached[source] = 1;
    const auto residual = boost::get(boost::edge_residual_capacity, g_);
    while (!queue.empty()) {
      const int u = queue.front();
      queue.pop_front();
      for (auto [it, end] = boost::out_edges(u, g_); it != end; ++it) {
        const int v = static_cast<int>(boost::target(*it, g_));
        if (!reached[v] && residual[*it] > 0) {
          reached[v] = 1;
          queue.push_back(v);
        }
      }
    }
    return reached;
  }

  const std::vector<FlowArc>& arcs() const { return arcs_; }

 private:
  FlowGraph g_;
  std::vector<FlowArc> arcs_;
};

// How a group of cut links is named in `bottleneck`.
struct Noun {
  std::string singular, plural;
};

Noun noun_of(const TopologyLink& link) {
  const std::string& n = link.name;
  auto ends_with = [&](const std::string& suffix) {
    return n.size() >= suffix.size() &&
           n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  switch (link.role) {
    case LinkRole::kClientNic:
      if (ends_with(".mount")) return {"client NFS mount", "client NFS mounts"};
      return {"client NIC", "client NICs"};
    case LinkRole::kClientMemory:
      if (ends_with(".gpudirect"))
        return {"client GPUDirect PCIe path", "client GPUDirect PCIe paths"};
      return {"client host-memory copy", "client host-memory copies"};
    case LinkRole::kStorageNic:
      if (ends_with(".controller")) {
        return {"storage server's internal limit", "storage servers' internal limits"};
      }
      if (ends_with(".pcie"))
        return {"node's local-drive PCIe path", "nodes' local-drive PCIe paths"};
      return {"storage NIC", "storage NICs"};
    case LinkRole::kDrive:
      return {"drive", "drives"};
    case LinkRole::kMdsNic:
      return {"MDS NIC", "MDS NICs"};
    case LinkRole::kFabric: {
      // "leaf3.uplink" -> "leaf uplink", "railgroup0.uplink" -> "rail-group uplink".
      if (ends_with(".uplink")) {
        std::string tier = n.substr(0, n.find_first_of("0123456789."));
        if (tier == "railgroup") tier = "rail-group";
        if (!tier.empty()) return {tier + " uplink", tier + " uplinks"};
      }
      return {"fabric link", "fabric links"};
    }
  }
  return {"link", "links"};
}

// One line of `bottleneck`: "16 storage NICs x 50.0 GB/s = 800 GB/s", or with several
// capacities "10 leaf uplinks = 1000 GB/s (8 x 100 GB/s, 2 x 100 GB/s)".
std::string bottleneck_line(const Noun& noun, const std::map<double, int>& count_by_capacity,
                            double total) {
  int count = 0;
  for (const auto& [capacity, n] : count_by_capacity) count += n;
  const std::string& name = count == 1 ? noun.singular : noun.plural;
  if (count_by_capacity.size() == 1) {
    return std::to_string(count) + " " + name + " x " +
           format_gbytes_per_s(count_by_capacity.begin()->first) +
           " GB/s = " + format_gbytes_per_s(total) + " GB/s";
  }
  std::string parts;
  for (auto it = count_by_capacity.rbegin(); it != count_by_capacity.rend(); ++it) {
    if (!parts.empty()) parts += ", ";
    parts += std::to_string(it->second) + " x " + format_gbytes_per_s(it->first) + " GB/s";
  }
  return std::to_string(count) + " " + name + " = " + format_gbytes_per_s(total) + " GB/s (" +
         parts + ")";
}

}  // namespace

Result<Topology> build_topology(const ClusterSpec& cluster, int mds_count) {
  if (Status s = validate(cluster, mds_count); !s.ok()) return s;
  Builder b(cluster);
  b.add_hosts(mds_count);
  Topology t;
  switch (cluster.fabric.topology) {
    case FabricTopology::kLeafSpine: {
      std::string description = build_leaf_spine(b, cluster.fabric);
      t = b.take();
      t.description = std::move(description);
      break;
    }
    case FabricTopology::kFatTree: {
      Result<std::string> description = build_fat_tree(b, cluster.fabric);
      if (!description.ok()) return description.status();
      t = b.take();
      t.description = std::move(description).value();
      break;
    }
    case FabricTopology::kRailOptimized: {
      std::string description = build_rail_optimized(b, cluster.fabric);
      t = b.take();
      t.description = std::move(description);
      break;
    }
  }
  if (!b.ports_status().ok()) return b.ports_status();
  GRANARY_CHECK(t.links.size() + 1 == t.nodes.size());  // a tree: one path per pair
  return t;
}

MaxFlowBound read_max_flow(const Topology& topology) {
  const int n = static_cast<int>(topology.nodes.size());
  const int source = n, sink = n + 1;
  FlowNetwork net(n + 2);
  // Whole bytes per second: every sum the algorithm forms is then an integer below 2^53, exact
  // in a double, so the bound does not depend on the order of the additions.
  auto capacity = [](double bytes_per_s) { return std::max(0.0, std::round(bytes_per_s)); };
  double total = 0;
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const TopologyLink& l = topology.links[i];
    const int link = static_cast<int>(i);
    const double forward = capacity(l.forward_bytes_per_s);
    const double reverse = capacity(l.reverse_bytes_per_s);
    switch (l.role) {
      case LinkRole::kDrive:  // the drive is a source: super-source -> drive -> server
        net.add_arc(source, l.a, link, forward);
        net.add_arc(l.a, l.b, link, forward);
        total += forward;
        break;
      case LinkRole::kStorageNic:    // server -> leaf (design "local": drive set -> client)
      case LinkRole::kClientMemory:  // client -> sink
        net.add_arc(l.a, l.b, link, forward);
        total += forward;
        break;
      case LinkRole::kClientNic:  // leaf -> client
        net.add_arc(l.b, l.a, link, reverse);
        total += reverse;
        break;
      case LinkRole::kFabric:  // both directions: leaves may hold clients and storage
        net.add_arc(l.a, l.b, link, forward);
        net.add_arc(l.b, l.a, link, reverse);
        total += forward + reverse;
        break;
      case LinkRole::kMdsNic:  // metadata servers hold no data
        break;
    }
  }
  // Sinks drain into the super-sink through edges no cut can contain.
  for (int s : topology.client_sinks) net.add(s, sink, total + 1);

  MaxFlowBound bound;
  bound.bytes_per_s = net.max_flow(source, sink);

  // The minimum cut nearest the drives: arcs leaving the residual-reachable set.
  const std::vector<char> reached = net.source_side(source);
  GRANARY_CHECK(!reached[sink]);
  struct Group {
    LinkRole role;
    Noun noun;
    std::map<double, int> count_by_capacity;
    double total = 0;
  };
  std::map<std::pair<LinkRole, std::string>, Group> groups;
  std::map<LinkRole, double> by_role;
  double cut = 0;
  for (const FlowArc& arc : net.arcs()) {
    if (!reached[arc.u] || reached[arc.v] || arc.capacity <= 0) continue;
    const TopologyLink& l = topology.links[arc.link];
    Noun noun = noun_of(l);
    Group& g = groups[{l.role, noun.plural}];
    g.role = l.role;
    g.noun = std::move(noun);
    g.count_by_capacity[arc.capacity] += 1;
    g.total += arc.capacity;
    by_role[l.role] += arc.capacity;
    cut += arc.capacity;
  }
  GRANARY_CHECK(std::abs(cut - bound.bytes_per_s) <= 1e-9 * std::max(1.0, cut));

  for (const auto& [role, bytes_per_s] : by_role) bound.cut_by_role.emplace_back(role, bytes_per_s);
  std::stable_sort(bound.cut_by_role.begin(), bound.cut_by_role.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::vector<const Group*> ordered;
  for (const auto& [key, g] : groups) ordered.push_back(&g);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const Group* x, const Group* y) { return x->total > y->total; });
  for (const Group* g : ordered) {
    bound.bottleneck.push_back(bottleneck_line(g->noun, g->count_by_capacity, g->total));
  }
  return bound;
}

std::string link_role_name(LinkRole role) {
  switch (role) {
    case LinkRole::kClientNic:
      return "client NIC";
    case LinkRole::kClientMemory:
      return "client memory";
    case LinkRole::kStorageNic:
      return "storage NIC";
    case LinkRole::kDrive:
      return "drive";
    case LinkRole::kMdsNic:
      return "MDS NIC";
    case LinkRole::kFabric:
      return "fabric";
  }
  return "unknown";
}

int find_fabric_link(const Topology& topology, std::string_view a, std::string_view b) {
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const TopologyLink& l = topology.links[i];
    if (l.role != LinkRole::kFabric) continue;
    const std::string& x = topology.nodes[l.a].name;
    const std::string& y = topology.nodes[l.b].name;
    if ((x == a && y == b) || (x == b && y == a)) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> nodes_beyond(const Topology& topology, size_t link) {
  GRANARY_CHECK(link < topology.links.size() && !topology.switches.empty());
  // The top switch is added last (leaves, pods or rail groups, then the spine or core).
  const int top = topology.switches.back();
  std::vector<std::vector<std::pair<int, size_t>>> adjacent(topology.nodes.size());
  for (size_t i = 0; i < topology.links.size(); ++i) {
    adjacent[topology.links[i].a].push_back({topology.links[i].b, i});
    adjacent[topology.links[i].b].push_back({topology.links[i].a, i});
  }
  std::vector<bool> reached(topology.nodes.size(), false);
  std::vector<int> queue{top};
  reached[top] = true;
  for (size_t q = 0; q < queue.size(); ++q) {
    for (const auto& [next, via] : adjacent[queue[q]]) {
      if (via == link || reached[next]) continue;
      reached[next] = true;
      queue.push_back(next);
    }
  }
  std::vector<int> beyond;
  for (size_t n = 0; n < reached.size(); ++n) {
    if (!reached[n]) beyond.push_back(static_cast<int>(n));
  }
  return beyond;
}

}  // namespace granary::models

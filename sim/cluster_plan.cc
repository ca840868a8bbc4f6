#include "sim/cluster_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "models/catalog.h"
#include "models/random_failures.h"

namespace granary::sim {

using models::Fidelity;
using models::LinkRole;
using models::NodeKind;
using models::Scenario;
using models::StorageDesign;

namespace {
// Concurrent readers above which "auto" slices the cluster.
constexpr int64_t kAutoRequestReaders = 512;
// A slice keeps at least this many requests in flight per storage server on average, so that
// each server's queue fluctuates no more than in the full cluster (docs/models.md, "Fidelity").
constexpr int64_t kMinRequestsPerServer = 32;
// With hard disks, also this many per simulated drive: each disk is its own queue, and one
// with fewer requests idles more often between bursts than the full cluster's (in the pfs
// storm of docs/validation.md a slice with 4 per disk gave 12.5% less than request level, with
// 8 4.5%, with 12 about 1%).
constexpr int64_t kMinRequestsPerHdd = 12;
// Beyond this many storage servers a slice simulates a subset of them (the imbalance between
// servers is represented by this many; more only costs time).
constexpr int kMaxSlicedServers = 16;
// Checkpoint ranks up to which "auto" simulates every rank.
constexpr int kAutoRequestRanks = 64;
// Bytes of writes a Ceph client keeps in flight: librados' objecter_inflight_op_bytes default.
constexpr uint64_t kObjecterInflightBytes = uint64_t{100} << 20;
// Erasure-coding CPU per core, bytes/s: encode per data byte, decode per rebuilt byte. Measured
// with ISA-L 2.30 on one core of the 2.6 GHz AMD EPYC development machine
// (tests/bench/codec_bench.sh, docs/models.md "Writes and erasure coding"), 4 KiB stripe units,
// data from memory: encode 9.7 GB/s (4+2) and 8.9 GB/s (8+3), decode of one lost chunk 2.9 and
// 1.9 GB/s; the means of the two codes.
constexpr double kEcEncodeBytesPerCoreSecond = 9.3e9;
constexpr double kEcDecodeBytesPerCoreSecond = 2.4e9;

bool is_checkpoint(const Scenario& s) {
  return !s.workloads.empty() && s.workloads[0].kind == models::WorkloadKind::kCheckpoint;
}

bool is_block(const Scenario& s) {
  return !s.workloads.empty() && (s.workloads[0].kind == models::WorkloadKind::kBlock ||
                                  s.workloads[0].kind == models::WorkloadKind::kBootStorm);
}

// The client nodes a block workload runs on (its `nodes`, from node 0 up; 0: all).
int block_nodes(const Scenario& s, size_t workload = 0) {
  const int n = s.workloads[workload].block.nodes;
  return n > 0 ? n : s.cluster.clients.count;
}

// The client nodes a run involves, from node 0 up: a checkpoint's ranks' nodes (and a mixed
// run's block nodes beside them), a block workload's nodes, or every node.
int run_nodes(const Scenario& s) {
  if (is_block(s)) return block_nodes(s);
  if (!is_checkpoint(s)) return s.cluster.clients.count;
  const int per_node = s.cluster.clients.accelerators_per_node;
  const int ranks = (s.workloads[0].checkpoint.ranks() + per_node - 1) / per_node;
  for (size_t i = 1; i < s.workloads.size(); ++i) {
    if (s.workloads[i].kind == models::WorkloadKind::kBlock ||
        s.workloads[i].kind == models::WorkloadKind::kBootStorm) {
      return std::max(ranks, block_nodes(s, i));
    }
  }
  return ranks;
}

// The client nodes a checkpoint's ranks occupy (one rank per accelerator, from node 0 up).
int checkpoint_nodes(const Scenario& s) {
  const int per_node = s.cluster.clients.accelerators_per_node;
  return (s.workloads[0].checkpoint.ranks() + per_node - 1) / per_node;
}

// Whether a slice's pfs and nfs reads go in transfer units. Not from hard disks: a disk
// positions once per request, so coarser requests would change its answer (docs/models.md,
// "Fidelity"); they keep the scenario's RPC size and count, as at request level.
bool coalesce_in_slice(const Scenario& s) {
  return s.cluster.storage.drive.kind != models::DriveKind::kHdd;
}

}  // namespace

RunPlan plan_run(const Scenario& s) {
  RunPlan p;
  const bool checkpoint = is_checkpoint(s);
  // A checkpoint involves only the nodes holding its ranks, a block workload its nodes.
  const int n = run_nodes(s);
  const int servers = s.cluster.storage.count;
  int64_t readers = 0;
  int per_file = 1;  // requests a reader keeps in flight
  for (const auto& w : s.workloads) {
    readers += int64_t{n} * s.cluster.clients.accelerators_per_node * w.training.read_threads;
  }
  switch (s.storage.design) {
    case StorageDesign::kRados:
      per_file = s.storage.rados.inflight_objects;
      break;
    case StorageDesign::kPfs:
      per_file = coalesce_in_slice(s)
                     ? static_cast<int>(std::max<uint64_t>(
                           1, (4ull << 20) * s.storage.pfs.inflight_rpcs /
                                  std::max<uint64_t>(4ull << 20, s.simulation.transfer_unit_bytes)))
                     : s.storage.pfs.inflight_rpcs;
      break;
    case StorageDesign::kNfs:
      per_file =
          coalesce_in_slice(s)
              ? static_cast<int>(std::max<uint64_t>(
                    1, s.storage.nfs.rsize_bytes * s.storage.nfs.inflight_rpcs /
                           std::max(s.storage.nfs.rsize_bytes, s.simulation.transfer_unit_bytes)))
              : s.storage.nfs.inflight_rpcs;
      break;
    case StorageDesign::kLocal:
      per_file = s.storage.local.inflight_ios;
      break;
  }
  Fidelity f = s.simulation.fidelity;
  if (is_block(s)) {
    // Small I/Os are latency-bound and few bytes: every volume, every I/O.
    p.reason = std::to_string(n) + " volumes: every volume and I/O" +
               (f == Fidelity::kSlice ? " (a slice does not apply to block I/O)" : "");
    f = Fidelity::kRequest;
  } else if (f == Fidelity::kAuto && checkpoint) {
    const int ranks = s.workloads[0].checkpoint.ranks();
    f = ranks <= kAutoRequestRanks ? Fidelity::kRequest : Fidelity::kSlice;
    p.reason = std::to_string(ranks) +
               " checkpoint ranks: " + (ranks <= kAutoRequestRanks ? "every rank" : "a slice");
  } else if (f == Fidelity::kAuto) {
    f = readers <= kAutoRequestReaders ? Fidelity::kRequest : Fidelity::kSlice;
    p.reason = std::to_string(readers) + " concurrent readers: " +
               (readers <= kAutoRequestReaders ? "request level" : "a slice");
  } else {
    p.reason = f == Fidelity::kRequest ? "request level, as the scenario asks"
                                       : "a slice, as the scenario asks";
  }
  p.fidelity = f;
  if (f == Fidelity::kSlice) {
    // The fewest client nodes that keep the scenario's representative count and, on average,
    // kMinRequestsPerServer requests in flight at every storage server.
    const int64_t per_node = int64_t{s.cluster.clients.accelerators_per_node} *
                             s.workloads.front().training.read_threads * per_file;
    // Servers: all of them up to kMaxSlicedServers, else the largest subset of 1/m of them
    // that still has kMaxSlicedServers (each at m/k of its capacity), so that the slice's
    // cost does not grow with the storage system once its imbalance is represented.
    auto choose_k = [&](int m) {
      const int64_t simulated_servers = servers / m;
      // (A checkpoint's ranks stream large writes: the representative count suffices.)
      const int64_t for_servers = checkpoint
                                      ? 0
                                      : (kMinRequestsPerServer * simulated_servers + per_node - 1) /
                                            std::max<int64_t>(1, per_node);
      const int64_t for_drives =
          checkpoint || s.cluster.storage.drive.kind != models::DriveKind::kHdd
              ? 0
              : (kMinRequestsPerHdd * simulated_servers * s.cluster.storage.drives_per_node +
                 per_node - 1) /
                    std::max<int64_t>(1, per_node);
      const int64_t min_clients =
          std::max<int64_t>({s.simulation.representative_nodes, for_servers, for_drives});
      for (int k = n; k >= m; --k) {
        if (n % k == 0 && n / k >= min_clients) return k;
      }
      return 0;
    };
    int m = 1;
    const bool local = s.storage.design == StorageDesign::kLocal;
    // (Failures name OSDs of the whole cluster: every server is simulated.)
    if (local) {
      // Every node reads only its own drives: the slice's nodes keep theirs, at full capacity.
      for (int k = n; k >= 1; --k) {
        if (n % k == 0 && n / k >= s.simulation.representative_nodes) {
          m = k;
          break;
        }
      }
    } else if (servers > kMaxSlicedServers && s.storage.rados.crush_map_path.empty() &&
               !checkpoint && !models::has_failures(s)) {
      for (int cand = servers / kMaxSlicedServers; cand > 1; --cand) {
        if (servers % cand == 0 && choose_k(cand) > 0) {
          m = cand;
          break;
        }
      }
    }
    p.slice_factor = local ? m : std::max(1, choose_k(m));
    p.storage_factor = m;
    if (local) {
      p.reason += ", 1/" + std::to_string(p.slice_factor) + " of the client nodes, each reading " +
                  "its own drives";
    } else {
      p.reason += ", 1/" + std::to_string(p.slice_factor) + " of the client nodes against " +
                  (m == 1 ? std::string("every storage server")
                          : "1/" + std::to_string(m) + " of the storage servers") +
                  " at " + std::to_string(m) + "/" + std::to_string(p.slice_factor) +
                  " of its capacity";
    }
  }
  // A failure scenario runs to the end: the failures break any steady state.
  p.allow_early_stop = s.simulation.stop_at_steady_state && !models::has_failures(s);
  p.clients = n / p.slice_factor;
  p.storage_servers = servers / p.storage_factor;
  return p;
}

namespace {

// ---------------------------------------------------------------- slice

// Endpoint hosts (clients, storage, MDS) on the far side of each fabric link from the bulk
// of the tree, and the depth of the link.
struct LinkSide {
  int clients = 0, storage = 0;
  int depth = 0;
};

std::vector<LinkSide> fabric_link_sides(const models::Topology& t) {
  const size_t n = t.nodes.size();
  std::vector<std::vector<std::pair<int, int>>> adj(n);  // (neighbour, link)
  for (size_t i = 0; i < t.links.size(); ++i) {
    adj[t.links[i].a].push_back({t.links[i].b, static_cast<int>(i)});
    adj[t.links[i].b].push_back({t.links[i].a, static_cast<int>(i)});
  }
  // Root the tree at the switch with the most switch neighbours (the spine / core).
  int root = t.switches.empty() ? 0 : t.switches.front();
  size_t best = 0;
  for (int sw : t.switches) {
    size_t deg = 0;
    for (auto [nb, l] : adj[sw]) deg += t.nodes[nb].kind == NodeKind::kSwitch;
    if (deg > best) best = deg, root = sw;
  }
  std::vector<int> parent_link(n, -1), order;
  std::vector<int> depth(n, 0);
  std::vector<bool> seen(n, false);
  order.push_back(root);
  seen[root] = true;
  for (size_t i = 0; i < order.size(); ++i) {
    for (auto [nb, l] : adj[order[i]]) {
      if (seen[nb]) continue;
      seen[nb] = true;
      parent_link[nb] = l;
      depth[nb] = depth[order[i]] + 1;
      order.push_back(nb);
    }
  }
  std::vector<int> clients(n, 0), storage(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int v = *it;
    if (t.nodes[v].kind == NodeKind::kClient) ++clients[v];
    if (t.nodes[v].kind == NodeKind::kStorage || t.nodes[v].kind == NodeKind::kMds) ++storage[v];
    if (parent_link[v] >= 0) {
      const auto& l = t.links[parent_link[v]];
      const int up = l.a == v ? l.b : l.a;
      clients[up] += clients[v];
      storage[up] += storage[v];
    }
  }
  std::vector<LinkSide> sides(t.links.size());
  for (size_t v = 0; v < n; ++v) {
    if (parent_link[v] < 0) continue;
    sides[parent_link[v]] = {clients[v], storage[v], depth[v]};
  }
  return sides;
}

// Capacity multipliers that give every fabric link of the slice the same capacity per endpoint
// host below it as the full cluster's links at the same depth on the same side (clients or
// storage): a leaf uplink of fixed capacity shared by 8 hosts in the cluster gets 1/8 of it per
// slice host; an uplink already sized from its hosts (uplinks_per_leaf 0) stays as it is.
std::vector<double> slice_link_scale(const models::Topology& real, const models::Topology& slice,
                                     double storage_share) {
  const auto real_sides = fabric_link_sides(real);
  const auto slice_sides = fabric_link_sides(slice);
  // (depth, side) -> capacity per host below, from the fullest real link of that kind.
  std::map<std::pair<int, int>, std::pair<int, double>> per_host;  // -> (hosts, bytes/s per host)
  auto side_of = [](const LinkSide& ls) { return ls.clients > 0 ? (ls.storage > 0 ? 2 : 0) : 1; };
  for (size_t i = 0; i < real.links.size(); ++i) {
    if (real.links[i].role != LinkRole::kFabric) continue;
    const LinkSide& ls = real_sides[i];
    const int hosts = ls.clients + ls.storage;
    if (hosts == 0) continue;
    auto& entry = per_host[{ls.depth, side_of(ls)}];
    if (hosts > entry.first) entry = {hosts, real.links[i].forward_bytes_per_s / hosts};
  }
  std::vector<double> scale(slice.links.size(), 1.0);
  for (size_t i = 0; i < slice.links.size(); ++i) {
    if (slice.links[i].role != LinkRole::kFabric) continue;
    const LinkSide& ls = slice_sides[i];
    const int hosts = ls.clients + ls.storage;
    auto it = per_host.find({ls.depth, side_of(ls)});
    if (hosts == 0 || it == per_host.end() || slice.links[i].forward_bytes_per_s <= 0) continue;
    scale[i] = std::min(1.0, it->second.second * hosts / slice.links[i].forward_bytes_per_s);
    // The storage side carries the slice's share of what its servers serve.
    if (ls.storage > 0) scale[i] *= storage_share;
  }
  return scale;
}

double tib_weight(double capacity_tb) {
  return capacity_tb * 1e12 / std::ldexp(1.0, 40);
}

// The link of the simulated `sim` topology that stands for the fabric link `names` of the
// scenario's cluster: the one with the same hosts beyond it (those the simulation has) between
// the same kinds of switches ("leaf", "pod", "spine", ...). -1: no host beyond it is simulated
// (a checkpoint's idle client nodes), so no simulated traffic crosses it. An error for a link
// with client nodes beyond it in a slice, where each simulated client stands for several.
Result<int> locate_link(const Scenario& scenario, int mds_count, const models::Topology& sim,
                        const std::vector<std::string>& names, int slice_factor) {
  auto full = models::build_topology(scenario.cluster, mds_count);
  if (!full.ok()) return full.status();
  const int l = models::find_fabric_link(*full, names[0], names[1]);
  if (l < 0) return Status::invalid_argument("no fabric link between these nodes");
  auto is_host = [](NodeKind k) {
    return k == NodeKind::kClient || k == NodeKind::kStorage || k == NodeKind::kMds;
  };
  auto hosts_beyond = [&](const models::Topology& t, size_t link) {
    std::set<std::string> hosts;
    for (int n : models::nodes_beyond(t, link)) {
      if (is_host(t.nodes[n].kind)) hosts.insert(t.nodes[n].name);
    }
    return hosts;
  };
  auto switch_kinds = [](const models::Topology& t, const models::TopologyLink& link) {
    auto kind = [&](int n) {
      std::string name = t.nodes[n].name;
      while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back()))) {
        name.pop_back();
      }
      return name;
    };
    return std::minmax(kind(link.a), kind(link.b));
  };
  const std::set<std::string> beyond = hosts_beyond(*full, static_cast<size_t>(l));
  const bool clients = std::any_of(beyond.begin(), beyond.end(),
                                   [&](const std::string& h) { return h.rfind("client", 0) == 0; });
  if (clients && slice_factor > 1) {
    return Status::invalid_argument(
        "[\"" + names[0] + "\", \"" + names[1] +
        "\"] has client nodes beyond it, and this run simulates a slice of the client nodes "
        "(each standing for " +
        std::to_string(slice_factor) +
        "); set simulation.fidelity to \"request\" to fail a link on the clients' side");
  }
  std::set<std::string> simulated;
  for (const auto& node : sim.nodes) {
    if (is_host(node.kind) && beyond.count(node.name) > 0) simulated.insert(node.name);
  }
  if (simulated.empty()) return -1;
  const auto kinds = switch_kinds(*full, full->links[l]);
  for (size_t i = 0; i < sim.links.size(); ++i) {
    if (sim.links[i].role != LinkRole::kFabric || switch_kinds(sim, sim.links[i]) != kinds) {
      continue;
    }
    if (hosts_beyond(sim, i) == simulated) return static_cast<int>(i);
  }
  return Status::invalid_argument("[\"" + names[0] + "\", \"" + names[1] +
                                  "\"] has no counterpart in the simulated platform");
}

// The OSDs' op queue of storage.rados.recovery.op_queue (none: nullopt), with Ceph's defaults
// for the drive class (docs/models.md, "The OSD op queue"); the world names one per drive.
std::optional<services::OpQueueOptions> plan_op_queue(const Scenario& s) {
  using Q = models::RecoverySpec::OpQueue;
  const models::RecoverySpec& rc = s.storage.rados.recovery;
  if (rc.op_queue == Q::kNone) return std::nullopt;
  const bool hdd = s.cluster.storage.drive.kind == models::DriveKind::kHdd;
  services::OpQueueOptions qo;
  qo.shards = rc.op_shards > 0 ? rc.op_shards : hdd ? 5 : 8;
  qo.threads_per_shard = rc.op_threads_per_shard > 0 ? rc.op_threads_per_shard : hdd ? 1 : 2;
  if (rc.op_queue == Q::kMclock) {
    const auto set = services::parse_mclock_allocation_set(rc.mclock_allocations);
    const auto profile = services::parse_mclock_profile(rc.mclock_profile);
    GRANARY_CHECK(set && profile);  // the scenario parser admits only these names
    qo.scheduler.kind = services::SchedulerKind::kMclock;
    qo.scheduler.mclock =
        services::MclockOptions::for_device(hdd, *set == services::MclockAllocationSet::kQuincyDev
                                                     ? services::MclockCostModel::kLegacyIops
                                                     : services::MclockCostModel::kBandwidth);
    qo.scheduler.mclock.allocations = services::mclock_allocations(*set, *profile);
    if (rc.mclock_max_capacity_iops > 0)
      qo.scheduler.mclock.capacity_iops = rc.mclock_max_capacity_iops;
    if (rc.mclock_max_sequential_bytes_per_s > 0) {
      qo.scheduler.mclock.sequential_bytes_per_s = rc.mclock_max_sequential_bytes_per_s;
    }
  }
  return qo;
}

// Which workloads run: the main one (workloads[0]) and a mixed run's beside it. One workload,
// or a training_read or checkpoint workload first, with block I/O (one block or boot_storm
// workload) beside it, and beside a training read also a checkpoint (asynchronous
// checkpointing, rados) — the three at once.
struct WorkloadMix {
  const models::WorkloadSpec* beside = nullptr;             // block or boot_storm
  const models::WorkloadSpec* beside_checkpoint = nullptr;  // checkpoint beside training
};

Result<WorkloadMix> workload_mix(const Scenario& scenario) {
  WorkloadMix mix;
  for (size_t i = 1; i < scenario.workloads.size(); ++i) {
    const models::WorkloadSpec& extra = scenario.workloads[i];
    const bool block_kind = extra.kind == models::WorkloadKind::kBlock ||
                            extra.kind == models::WorkloadKind::kBootStorm;
    if (block_kind && mix.beside == nullptr && !is_block(scenario)) {
      mix.beside = &extra;
    } else if (extra.kind == models::WorkloadKind::kCheckpoint &&
               mix.beside_checkpoint == nullptr &&
               scenario.workloads[0].kind == models::WorkloadKind::kTrainingRead) {
      mix.beside_checkpoint = &extra;
    } else {
      return Status::invalid_argument(
          scenario.source_path + ": workloads[" + std::to_string(i) +
          "]: format 1 runs one workload, or a training_read or checkpoint workload followed by "
          "at most one block or boot_storm workload beside it and, after a training_read, at "
          "most "
          "one checkpoint; found a " +
          std::string(models::workload_kind_name(extra.kind)) + " workload here");
    }
  }
  if (mix.beside != nullptr && scenario.storage.design != StorageDesign::kRados) {
    return Status::invalid_argument(scenario.source_path +
                                    ": workloads: block volumes need design 'rados'");
  }
  return mix;
}

// The cluster's topology and the simulated one, with the links' caps and latencies, and the
// platform's scaling of a slice.
Status plan_topologies(ClusterPlan& p) {
  const Scenario& s = p.sim;
  auto real_topology = models::build_topology(p.run.cluster, p.mds_count);
  if (!real_topology.ok()) return real_topology.status();
  auto topology = models::build_topology(s.cluster, p.mds_count);
  if (!topology.ok()) return topology.status();
  // Limits in goodput below a NIC's, applied to the NIC's link (which carries them over the
  // protocol's efficiency, as every network link): one client's NFS mount (mount_gbytes_per_s:
  // the link stands for the mount, "client3.mount"), and a storage server's internal
  // bandwidth (server_gbytes_per_s: "storage3.controller").
  auto cap_links = [&](LinkRole role, double goodput_bytes_per_s, const char* suffix) {
    if (!(goodput_bytes_per_s > 0)) return;
    const double cap = goodput_bytes_per_s / s.storage.protocol.efficiency;
    for (models::Topology* t : {&*real_topology, &*topology}) {
      for (auto& l : t->links) {
        if (l.role != role || !(cap < std::max(l.forward_bytes_per_s, l.reverse_bytes_per_s))) {
          continue;
        }
        l.forward_bytes_per_s = std::min(l.forward_bytes_per_s, cap);
        l.reverse_bytes_per_s = std::min(l.reverse_bytes_per_s, cap);
        l.name = l.name.substr(0, l.name.rfind('.')) + suffix;
      }
    }
  };
  if (s.storage.design == StorageDesign::kNfs) {
    cap_links(LinkRole::kClientNic, s.storage.nfs.mount_gbytes_per_s * 1e9, ".mount");
  }
  // (Design local: the topology already sized each node's drive path from it.)
  if (!s.cluster.storage.in_client_nodes) {
    cap_links(LinkRole::kStorageNic, s.cluster.storage.server_gbytes_per_s * 1e9, ".controller");
  }
  // The protocol's per-message software latency, paid once per message at the client's first
  // hop: its NIC, or in design local its drives' PCIe path. A drive's latency is paid in its
  // DriveQueue (drive_model.h), not on its link.
  const LinkRole first_hop =
      s.cluster.storage.in_client_nodes ? LinkRole::kStorageNic : LinkRole::kClientNic;
  for (auto& l : topology->links) {
    if (l.role == first_hop) l.latency_s += s.storage.protocol.message_latency_us * 1e-6;
    if (l.role == LinkRole::kDrive) l.latency_s = 0;
  }
  p.full_topology = std::move(*real_topology);
  p.topology = std::move(*topology);

  p.network_efficiency = s.storage.protocol.efficiency;
  p.storage_cores = s.cluster.storage.cpu_cores;
  const int k = p.plan.slice_factor;
  const int m = p.plan.storage_factor;
  p.storage_share = static_cast<double>(m) / k;
  if (k > 1) {
    // The slice: each simulated storage server and drive at m/k of its capacity (and CPU), the
    // metadata servers at 1/k, the fabric sized per host as in the cluster and its storage
    // side scaled like the servers.
    p.link_scale = slice_link_scale(p.full_topology, p.topology, p.storage_share);
    for (size_t i = 0; i < p.topology.links.size(); ++i) {
      const auto role = p.topology.links[i].role;
      if (role == LinkRole::kStorageNic || role == LinkRole::kDrive) {
        p.link_scale[i] = p.storage_share;
      }
      if (role == LinkRole::kMdsNic) p.link_scale[i] = 1.0 / k;
    }
    p.storage_cores = std::max(1, static_cast<int>(s.cluster.storage.cpu_cores * p.storage_share));
  }
  return Status();
}

// The dataset the run's stores hold: the training read's files (1/k of them in a slice), a
// checkpoint's rank files, or a block run's volume images.
void plan_dataset(ClusterPlan& p) {
  const Scenario& in = p.run;
  const models::TrainingWorkload& w = p.training;
  services::DatasetSpec& ds = p.dataset;
  ds.name = in.workloads[0].name.empty() ? "dataset" : in.workloads[0].name;
  ds.files = w.files;
  ds.samples_per_file = w.samples_per_file;
  ds.sample_bytes_mean = w.sample_bytes_mean;
  ds.sample_bytes_stddev = w.sample_bytes_stddev;
  ds.sample_sizes = w.sample_sizes;
  const models::CheckpointWorkload& ck = in.workloads[0].checkpoint;
  if (p.checkpoint) {
    // The checkpoint files: one per simulated rank and checkpoint, each rank's even share of
    // the model and optimizer state (file c * ranks + r is rank r's part of checkpoint c).
    ds.files = int64_t{p.checkpoint_ranks.ranks} * ck.checkpoints;
    ds.samples_per_file = 1;
    ds.sample_bytes_mean = std::max(4096.0, std::round(ck.total_gb() * 1e9 / ck.ranks()));
    ds.sample_bytes_stddev = 0;
  }
  if (p.block) {
    // The images the pool holds: each node's volume, or the one parent image every node's
    // volume is a clone of (the clones start empty).
    const models::BlockWorkload& bw = in.workloads[0].block;
    ds.name = bw.clone ? "golden" : "volumes";
    ds.files = bw.clone ? 1 : p.plan.clients;
    ds.samples_per_file = 1;
    ds.sample_bytes_mean = static_cast<double>(bw.volume_bytes);
    ds.sample_bytes_stddev = 0;
  }
}

// rados: the CRUSH map, the pool, the layout and one OSD per drive.
void plan_rados(ClusterPlan& p) {
  const Scenario& s = p.sim;
  StoragePlan& st = p.storage;
  st.crush_map_path = s.storage.rados.crush_map_path;
  st.generated_map.hosts = s.cluster.storage.count;
  st.generated_map.devices_per_host = s.cluster.storage.drives_per_node;
  st.generated_map.device_weight =
      static_cast<uint32_t>(tib_weight(s.cluster.storage.drive.capacity_tb) * crush::kWeightOne);
  st.pool.pg_num = s.storage.rados.pg_num;
  const bool ec = s.storage.rados.ec_k > 0;
  st.pool.size =
      ec ? s.storage.rados.ec_k + s.storage.rados.ec_m : std::max(1, s.storage.rados.replicas);
  st.pool.erasure = ec;
  // The generated map's rule 0 is replicated by host, rule 1 erasure (indep) by host.
  st.pool.crush_rule = s.storage.rados.crush_rule >= 0 ? s.storage.rados.crush_rule : (ec ? 1 : 0);
  st.failure_map = models::has_failures(s);
  st.layout.object_size_bytes = s.storage.rados.object_size_bytes;
  if (p.checkpoint) {
    // Checkpoint writes go in transfer units (docs/models.md, "Checkpoints").
    st.layout.object_size_bytes =
        std::max(st.layout.object_size_bytes, s.simulation.transfer_unit_bytes);
  }
  st.layout.stripe_unit_bytes = st.layout.object_size_bytes;
  if (p.block) {
    const models::BlockWorkload& bw = p.run.workloads[0].block;
    st.layout.object_size_bytes = bw.object_size_bytes;
    st.layout.stripe_unit_bytes = bw.stripe_unit_bytes;
    st.layout.stripe_count = bw.stripe_count;
  }
  st.op_queue = plan_op_queue(s);
  for (int d = 0; d < st.drives; ++d) {
    services::OsdServiceOptions o;
    o.endpoint_name = services::osd_endpoint_name(d);
    o.cpu_s_per_op = s.storage.protocol.server_cpu_us_per_op * 1e-6;
    o.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
    // Erasure coding CPU (kEcEncode/DecodeBytesPerCoreSecond, measured: docs/models.md).
    o.ec_cpu_s_per_byte = 1.0 / kEcEncodeBytesPerCoreSecond;
    o.ec_decode_cpu_s_per_byte = 1.0 / kEcDecodeBytesPerCoreSecond;
    // A primary's worker waits for its replicas or shards: writes and erasure-coded reads
    // get Ceph's 16 op threads per OSD (osd_op_num_shards_ssd 8 x
    // osd_op_num_threads_per_shard_ssd 2); replicated reads never wait on a peer, and 4
    // workers keep the drive as busy at a quarter of the simulation's tasks.
    o.worker_tasks = (p.checkpoint || p.block || ec) ? 16 : 4;
    if (st.failure_map) {
      // An erasure-coded primary reads around a silent shard after 1 s; writes of a PG
      // whose devices changed are discarded (the clients resend them), looked at every 1 s.
      o.shard_timeout_s = 1.0;
      o.interval_check_s = 1.0;
    }
    st.osds.push_back(o);
  }
  if (ec) st.ec = ErasureCoding{s.storage.rados.ec_k, s.storage.rados.ec_m, 4096};
  st.inflight_objects = s.storage.rados.inflight_objects;
}

// pfs: the OSTs (one per drive), the layouts' spec, the metadata servers.
void plan_pfs(ClusterPlan& p) {
  const Scenario& s = p.sim;
  StoragePlan& st = p.storage;
  const int k = p.plan.slice_factor;
  for (int d = 0; d < st.drives; ++d) {
    layout::Ost o;
    o.index = static_cast<uint32_t>(d);
    o.oss = static_cast<uint32_t>(d / s.cluster.storage.drives_per_node);
    o.capacity_bytes = st.drive_capacity_bytes;
    o.free_bytes = st.drive_capacity_bytes;
    st.osts.push_back(o);
  }
  st.pfs_layout.stripe_size_bytes = s.storage.pfs.stripe_size_bytes;
  st.pfs_layout.stripe_count = s.storage.pfs.stripe_count;
  for (int d = 0; d < st.drives; ++d) {
    services::OsdServiceOptions o;
    o.endpoint_name = services::ost_endpoint_name(static_cast<uint32_t>(d));
    o.cpu_s_per_op = s.storage.protocol.server_cpu_us_per_op * 1e-6;
    o.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
    st.osds.push_back(o);
  }
  // Metadata servers: each runs its rates / k (the slice's share); `latency_us` is the
  // service time at the highest of the rates, which sets the workers in parallel.
  const models::PfsSpec& pfs = s.storage.pfs;
  const double service_s = pfs.mds_latency_us * 1e-6;
  const double top =
      std::max({pfs.open_per_s(), pfs.close_per_s(), pfs.create_per_s(), pfs.stat_per_s()}) / k;
  const int parallel = std::max(1, static_cast<int>(std::lround(top * service_s)));
  for (int m = 0; m < p.mds_count; ++m) {
    services::MetadataServiceOptions o;
    o.endpoint_name = services::mds_endpoint_name(m);
    o.parallel_ops = parallel;
    o.open_time_s = parallel / (pfs.open_per_s() / k);
    o.close_time_s = parallel / (pfs.close_per_s() / k);
    o.create_time_s = parallel / (pfs.create_per_s() / k);
    o.stat_time_s = parallel / (pfs.stat_per_s() / k);
    st.mds.push_back(o);
  }
  st.mds_know_dataset = !p.checkpoint;
  // Lustre's 4 MiB RPCs; a slice coalesces them up to the transfer unit, keeping the bytes
  // in flight per file.
  uint64_t rpc = 4ull << 20;
  int inflight = s.storage.pfs.inflight_rpcs;
  if (((k > 1 && coalesce_in_slice(s)) || p.checkpoint) && s.simulation.transfer_unit_bytes > rpc) {
    const uint64_t bytes_in_flight = rpc * static_cast<uint64_t>(inflight);
    rpc = s.simulation.transfer_unit_bytes;
    inflight = static_cast<int>(std::max<uint64_t>(1, bytes_in_flight / rpc));
  }
  st.request_bytes = rpc;
  st.inflight_requests = inflight;
}

// NFS: each storage node is a filer head; its files are striped over its drives, so every
// drive serves the head's export: one service per drive, all on the head's endpoint, and
// an RPC goes to whichever drive's worker is free. Design local is the same per node: the
// node's file system striped over its own drives, every file on every node, each client
// reading its own "head" (services::NfsBackend::local_head).
void plan_nfs(ClusterPlan& p) {
  const Scenario& s = p.sim;
  StoragePlan& st = p.storage;
  const int k = p.plan.slice_factor;
  const bool local = s.storage.design == StorageDesign::kLocal;
  st.heads = s.cluster.storage.count;
  st.drives_per_head = s.cluster.storage.drives_per_node;
  for (int h = 0; h < st.heads; ++h) {
    for (int i = 0; i < st.drives_per_head; ++i) {
      services::OsdServiceOptions o;
      o.endpoint_name = services::nfs_endpoint_name(h);
      o.cpu_s_per_op = s.storage.protocol.server_cpu_us_per_op * 1e-6;
      // (Design local has no server: the node pays its per-byte CPU as the client.)
      o.cpu_s_per_byte = local ? 0 : s.storage.protocol.cpu_s_per_byte();
      o.worker_tasks = 2;
      st.osds.push_back(o);
    }
  }
  uint64_t rsize = local ? s.storage.local.io_bytes : s.storage.nfs.rsize_bytes;
  int inflight = local ? s.storage.local.inflight_ios : s.storage.nfs.inflight_rpcs;
  if (!local && ((k > 1 && coalesce_in_slice(s)) || p.checkpoint) &&
      s.simulation.transfer_unit_bytes > rsize) {  // as for pfs
    const uint64_t bytes_in_flight = rsize * static_cast<uint64_t>(inflight);
    rsize = s.simulation.transfer_unit_bytes;
    inflight = static_cast<int>(std::max<uint64_t>(1, bytes_in_flight / rsize));
  }
  st.request_bytes = rsize;
  st.inflight_requests = inflight;
}

void plan_storage(ClusterPlan& p) {
  const Scenario& s = p.sim;
  StoragePlan& st = p.storage;
  st.design = s.storage.design;
  st.drives = static_cast<int>(p.topology.drives.size());
  st.drive_capacity_bytes = static_cast<uint64_t>(s.cluster.storage.drive.capacity_tb * 1e12);
  st.stores_hold_dataset = !p.checkpoint;
  st.store_reserve_bytes = p.block ? p.run.workloads[0].block.object_size_bytes : uint64_t{4} << 20;
  if (s.storage.design == StorageDesign::kRados) {
    plan_rados(p);
  } else if (s.storage.design == StorageDesign::kPfs) {
    plan_pfs(p);
  } else {
    plan_nfs(p);
  }
}

// The failure timeline of a rados run with failures: link_* events located in the simulated
// topology.
Result<FailurePlan> plan_failures(const ClusterPlan& p) {
  const Scenario& s = p.sim;
  FailurePlan f;
  f.events = s.failures;
  f.recovery = s.storage.rados.recovery;
  // A slice's servers run at m/k of their capacity: so does their recovery share.
  f.recovery.recovery_bytes_per_s_per_osd *= p.storage_share;
  f.op_cpu_s = s.storage.protocol.server_cpu_us_per_op * 1e-6;
  f.drives_per_host = s.cluster.storage.drives_per_node;
  f.object_bytes = s.storage.rados.object_size_bytes;
  f.extra_stored_bytes = s.storage.rados.stored_bytes / p.plan.slice_factor;
  // link_* events name the cluster's links as the scenario has them; the simulated platform
  // may hold fewer client nodes (a checkpoint's, or a slice), so each is found there by the
  // hosts beyond it.
  const models::Topology& topology = p.topology;
  for (size_t i = 0; i < f.events.size(); ++i) {
    models::FailureEvent& e = f.events[i];
    if (e.link.empty()) continue;
    auto located = locate_link(p.scenario, p.mds_count, topology, e.link, p.plan.slice_factor);
    if (!located.ok()) {
      return Status::invalid_argument(p.scenario.source_path + ": failures[" +
                                      std::to_string(e.entry) +
                                      "].link: " + located.status().message());
    }
    e.target = -1;
    if (*located < 0) continue;  // no simulated traffic crosses it
    auto same = std::find_if(f.links.begin(), f.links.end(), [&](const FailurePlan::Link& l) {
      return l.topology_link == *located;
    });
    e.target = static_cast<int32_t>(same - f.links.begin());
    if (same != f.links.end()) continue;
    FailurePlan::Link link;
    link.name = e.link[0] + "-" + e.link[1];
    link.cables = topology.links[*located].aggregated;
    for (int n : models::nodes_beyond(topology, static_cast<size_t>(*located))) {
      if (topology.nodes[n].kind == NodeKind::kStorage) {
        link.cut_off_hosts.push_back(topology.nodes[n].index);
      }
    }
    link.topology_link = *located;
    f.links.push_back(std::move(link));
  }
  return f;
}

services::StorageClientOptions client_options(const Scenario& s, const std::string& name) {
  services::StorageClientOptions co;
  co.name = name;
  co.cpu_s_per_op = s.storage.protocol.client_cpu_us_per_op * 1e-6;
  co.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
  return co;
}

// The clients of the main workload, a training read's loaders, and the workloads beside it.
void plan_clients(ClusterPlan& p, const WorkloadMix& mix) {
  const Scenario& s = p.sim;
  const int k = p.plan.slice_factor;
  const int accel = s.cluster.clients.accelerators_per_node;
  const int nodes = p.checkpoint ? p.checkpoint_ranks.nodes : p.plan.clients;
  for (int c = 0; c < nodes; ++c) {
    p.clients.push_back({c, client_options(s, "client" + std::to_string(c))});
  }
  const models::TrainingWorkload& w = p.training;
  const int total_gpus = p.plan.clients * accel;
  if (p.kind == models::WorkloadKind::kTrainingRead) {
    for (int c = 0; c < p.plan.clients; ++c) {
      std::vector<services::GpuConsumerOptions> gpus;
      for (int g = 0; g < accel; ++g) {
        services::GpuConsumerOptions go;
        go.name = p.clients[c].options.name + ".gpu" + std::to_string(g);
        go.rank = c * accel + g;
        go.accelerators = total_gpus;
        go.read_threads = w.read_threads;
        go.batch_size = w.batch_size;
        go.prefetch_batches = w.prefetch_batches;
        go.decode_cpu_s_per_sample = w.decode_cpu_s_per_sample;
        go.compute_s_per_step = w.compute_s_per_step;
        go.epochs = w.epochs;
        gpus.push_back(go);
      }
      p.loaders.push_back(std::move(gpus));
    }
  }
  if (p.block) {
    BlockPlan b;
    b.spec = p.run.workloads[0];
    b.boot = b.spec.kind == models::WorkloadKind::kBootStorm;
    b.nodes = p.plan.clients;
    b.layout = p.storage.layout;
    p.block_volumes = std::move(b);
  }
  if (mix.beside != nullptr) {
    // A mixed run's block volumes simulated: one per block node of the simulated clients (a
    // slice has 1/k of them, as of the other clients).
    const models::BlockWorkload& vb = mix.beside->block;
    BlockPlan b;
    b.spec = *mix.beside;
    b.boot = b.spec.kind == models::WorkloadKind::kBootStorm;
    const int full_nodes = vb.nodes > 0 ? vb.nodes : p.scenario.cluster.clients.count;
    b.nodes = std::max(1, std::min(p.plan.clients, (full_nodes + k - 1) / k));
    b.cluster_scale = static_cast<double>(full_nodes) / b.nodes;
    b.images.name = vb.clone ? "golden" : "volumes";
    b.images.files = vb.clone ? 1 : b.nodes;
    b.images.samples_per_file = 1;
    b.images.sample_bytes_mean = static_cast<double>(vb.volume_bytes);
    b.layout = {vb.object_size_bytes, vb.stripe_unit_bytes, vb.stripe_count};
    p.block_volumes = std::move(b);
  }
  if (mix.beside_checkpoint != nullptr) {
    const models::CheckpointWorkload& c = mix.beside_checkpoint->checkpoint;
    AsyncCheckpointPlan a;
    a.spec = *mix.beside_checkpoint;
    a.ranks = std::min(total_gpus, (c.ranks() + k - 1) / k);
    a.rank_bytes =
        static_cast<uint64_t>(std::max(4096.0, std::round(c.total_gb() * 1e9 / c.ranks())));
    p.async_checkpoint = std::move(a);
  }
}

// simulation.carry_data resolved (CarryDataPlan). The scenario parser refused true where data
// cannot be carried (models/scenario_json.cc); here automatic mode finds those off, and the
// size decides the rest.
Status plan_carry_data(ClusterPlan& p) {
  const Scenario& in = p.run;
  CarryDataPlan& c = p.carry_data;
  c.automatic = !in.simulation.carry_data.has_value();
  if (in.simulation.carry_data == false) {
    c.reason = "simulation.carry_data is false";
    return Status();
  }
  if (in.storage.design != StorageDesign::kRados) {
    c.reason = "automatic: storage design '" +
               std::string(models::storage_design_name(in.storage.design)) +
               "' keeps sizes only (only rados carries data)";
    return Status();
  }
  if (in.workloads.size() != 1 ||
      (!p.checkpoint && p.kind != models::WorkloadKind::kTrainingRead)) {
    c.reason = "automatic: only a training_read or a checkpoint workload alone carries data";
    return Status();
  }
  if (c.automatic && models::has_failures(in)) {
    // (Carried recovery moves objects by peering, not sized chunks through the op queues and
    // the chunk throttles: it is asked for, not chosen.)
    c.reason = "automatic: runs with failures keep sizes only unless carry_data is true";
    return Status();
  }
  const services::DatasetSpec& ds = p.dataset;
  const double copies = p.storage.pool.erasure
                            ? static_cast<double>(p.storage.ec.k + p.storage.ec.m) / p.storage.ec.k
                            : static_cast<double>(p.storage.pool.size);
  const double held =
      static_cast<double>(ds.files) * ds.samples_per_file * ds.sample_bytes_mean * copies;
  c.held_bytes = held >= 1.8e19 ? ~uint64_t{0} : static_cast<uint64_t>(std::ceil(held));
  char copies_text[32];
  std::snprintf(copies_text, sizeof copies_text, "%g", copies);
  const std::string what = std::string(p.checkpoint ? "the checkpoint's files" : "the dataset") +
                           " times " + copies_text + " copies: " + std::to_string(c.held_bytes) +
                           " bytes, the limit " + std::to_string(CarryDataPlan::kLimitBytes) +
                           " bytes (1 GiB)";
  if (c.held_bytes <= CarryDataPlan::kLimitBytes) {
    c.on = true;
    c.reason = (c.automatic ? "automatic: " : "simulation.carry_data is true: ") + what;
    return Status();
  }
  if (!c.automatic) {
    return Status::invalid_argument(
        in.source_path +
        ": simulation.carry_data: expected a run that holds at most 1 GiB of carried data "
        "(" +
        std::to_string(CarryDataPlan::kLimitBytes) +
        " bytes: " + (p.checkpoint ? "the checkpoint's files" : "the dataset") +
        " times the pool's copies, as simulated), found " + std::to_string(c.held_bytes) +
        " bytes; set it to false or leave it out");
  }
  c.reason = "automatic: over the limit: " + what;
  return Status();
}

}  // namespace

Result<ClusterPlan> build_cluster_plan(const Scenario& scenario, uint64_t seed) {
  auto mix = workload_mix(scenario);
  if (!mix.ok()) return mix.status();
  ClusterPlan p;
  p.scenario = scenario;
  p.seed = seed;
  // A checkpoint runs on the nodes that hold its ranks; the cluster's other nodes are idle.
  p.run = scenario;
  p.run.cluster.clients.count = run_nodes(scenario);
  // The timeline with the random drive failures drawn from the run's seed (which --seed may
  // override, so they are drawn here rather than when the scenario is read).
  p.run.seed = seed;
  p.run.failures = models::expand_failures(scenario, seed);
  const Scenario& in = p.run;
  p.kind = in.workloads[0].kind;
  p.checkpoint = p.kind == models::WorkloadKind::kCheckpoint;
  p.block = is_block(in);
  p.plan = plan_run(in);
  const int k = p.plan.slice_factor;

  // The simulated (sliced) scenario.
  p.sim = in;
  p.sim.cluster.clients.count = p.plan.clients;
  p.sim.cluster.storage.count = p.plan.storage_servers;
  const models::TrainingWorkload& work = in.workloads[0].training;
  p.training = work;
  p.training.files = std::max<int64_t>(1, work.files / k);
  p.mds_count = p.sim.storage.design == StorageDesign::kPfs ? p.sim.storage.pfs.mds_count : 0;
  if (Status st = plan_topologies(p); !st.ok()) return st;
  // The analytic bounds over the full cluster: the data path at the protocol's efficiency and
  // every other ceiling a training read can hit (models/read_bounds.h).
  p.bounds = models::read_bounds(in, work, p.full_topology, p.client_cores);

  if (p.checkpoint) {
    const int per_node = p.sim.cluster.clients.accelerators_per_node;
    p.checkpoint_ranks.ranks = (in.workloads[0].checkpoint.ranks() + k - 1) / k;
    p.checkpoint_ranks.nodes = (p.checkpoint_ranks.ranks + per_node - 1) / per_node;
    p.checkpoint_ranks.cluster_nodes = checkpoint_nodes(scenario);
  }
  plan_dataset(p);
  plan_storage(p);
  if (p.storage.design == StorageDesign::kRados && p.storage.failure_map) {
    auto failures = plan_failures(p);
    if (!failures.ok()) return failures.status();
    p.failures = std::move(*failures);
  }
  plan_clients(p, *mix);
  if (Status st = plan_carry_data(p); !st.ok()) return st;
  // Every read of a run that carries data is verified: the epochs run to their end.
  if (p.carry_data.on) p.plan.allow_early_stop = false;
  return p;
}

}  // namespace granary::sim

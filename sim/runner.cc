#include "sim/runner.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <simgrid/s4u.hpp>

#include "engine/crush/edit.h"
#include "engine/crush/text_format.h"
#include "engine/layout/lustre.h"
#include "engine/layout/rbd.h"
#include "engine/placement/crush_pool.h"
#include "engine/services/client.h"
#include "engine/services/dataset.h"
#include "engine/services/gpu_consumer.h"
#include "engine/services/mds.h"
#include "engine/services/object_store.h"
#include "engine/services/osd.h"
#include "engine/services/written_store.h"
#include "models/catalog.h"
#include "models/durability.h"
#include "models/random_failures.h"
#include "models/read_bounds.h"
#include "models/topology.h"
#include "sim/block_workload.h"
#include "sim/failures.h"
#include "sim/metrics.h"
#include "sim/platform.h"
#include "sim/sim_env.h"

namespace granary::sim {

namespace sg4 = simgrid::s4u;
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
// MLPerf Storage: the dataset is at least this many times the client nodes' memory.
constexpr double kMlperfDatasetOverMemory = 5;
// Simulated seconds without a completed read after which a run without failures is stalled.
constexpr double kStallS = 60;
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

// ---------------------------------------------------------------- the world

struct ClientNode {
  HostId host = -1;
  std::unique_ptr<services::StorageClient> client;
  std::vector<std::unique_ptr<services::GpuConsumer>> gpus;
};

struct World {
  std::unique_ptr<services::Dataset> dataset;
  std::unique_ptr<crush::CrushMap> crush_map;
  std::unique_ptr<placement::CrushPool> pool;
  std::unique_ptr<services::PfsLayouts> pfs_layouts;
  std::unique_ptr<services::DatasetObjectIndex> index;
  // A mixed run's volume images beside the dataset (background.h), and the two together.
  std::unique_ptr<services::Dataset> volume_images;
  std::unique_ptr<services::DatasetObjectIndex> volume_index;
  std::unique_ptr<services::UnionObjectIndex> union_index;
  std::unique_ptr<layout::RbdLayout> volume_layout;
  // The block I/O of a mixed run: its nodes' clients, volumes and driver.
  std::vector<std::unique_ptr<services::StorageClient>> block_clients;
  std::vector<std::unique_ptr<services::BlockVolume>> volumes;
  std::unique_ptr<BlockWorkloadDriver> block_driver;
  const models::WorkloadSpec* beside = nullptr;  // the mixed run's block workload
  double block_scale = 1;                        // the cluster's block volumes / the simulated ones
  // What each drive (rados, pfs) or filer head (nfs) receives by writes, over `index` for a
  // training run, empty for a checkpoint run.
  std::vector<std::unique_ptr<services::WrittenObjectStore>> written;
  std::vector<std::unique_ptr<services::EnvMutex>> head_mutexes;         // nfs
  std::vector<std::unique_ptr<services::UnstableWrites>> head_unstable;  // nfs
  std::vector<std::unique_ptr<services::OsdService>> object_services;
  // The OSDs' op queues (storage.rados.recovery.op_queue; empty: none), [drive].
  std::vector<std::unique_ptr<services::OsdOpQueue>> op_queues;
  // Failure scenarios (rados): the clients read through the current map epoch's placement.
  std::unique_ptr<SwitchingPlacement> switching;
  std::atomic<uint32_t> map_epoch{1};
  std::unique_ptr<cluster::OsdMap> osd_map;
  std::unique_ptr<FailureDriver> failures;
  std::vector<std::unique_ptr<services::MetadataService>> mds;
  std::vector<ClientNode> clients;
};

// The OSDs' op queues of storage.rados.recovery.op_queue (none: empty), one per drive, with
// Ceph's defaults for the drive class (docs/models.md, "The OSD op queue").
std::vector<std::unique_ptr<services::OsdOpQueue>> make_op_queues(SimEnv& env, const Scenario& s,
                                                                  int drives) {
  using Q = models::RecoverySpec::OpQueue;
  const models::RecoverySpec& rc = s.storage.rados.recovery;
  std::vector<std::unique_ptr<services::OsdOpQueue>> queues;
  if (rc.op_queue == Q::kNone) return queues;
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
  Random seeds = env.random().fork();
  for (int d = 0; d < drives; ++d) {
    qo.name = services::osd_endpoint_name(d) + ".opq";
    queues.push_back(
        std::make_unique<services::OsdOpQueue>(env, env.host_of_drive(d), qo, seeds.next_u64()));
  }
  return queues;
}

// A mixed run's block volumes simulated: one per block node of the simulated clients (a slice
// has 1/k of them, as of the other clients).
int beside_nodes(const Scenario& full, const models::WorkloadSpec& beside, const RunPlan& plan) {
  const int nodes = beside.block.nodes > 0 ? beside.block.nodes : full.cluster.clients.count;
  return std::max(1, std::min(plan.clients, (nodes + plan.slice_factor - 1) / plan.slice_factor));
}

// Starts a mixed run's block I/O beside the main workload: a client, a volume and the driver's
// tasks (daemons: the I/O stops when the main workload ends) on each block node.
Status start_beside(const Scenario& full, const models::WorkloadSpec& beside, const RunPlan& plan,
                    const models::Topology& topology, const services::RadosBackend& rados,
                    double client_cpu_s, Env& env, World& world) {
  const models::BlockWorkload& b = beside.block;
  const int n = beside_nodes(full, beside, plan);
  const int full_nodes = b.nodes > 0 ? b.nodes : full.cluster.clients.count;
  world.block_scale = static_cast<double>(full_nodes) / n;
  services::RadosBackend backend = rados;
  backend.layout = *world.volume_layout;
  std::vector<services::BlockVolume*> vols;
  std::vector<HostId> hosts;
  for (int c = 0; c < n; ++c) {
    services::StorageClientOptions co;
    co.name = "blockclient" + std::to_string(c);
    co.cpu_s_per_op = client_cpu_s;
    co.cpu_s_per_byte = full.storage.protocol.cpu_s_per_byte();
    const HostId host = topology.client_sinks[c];
    world.block_clients.push_back(
        std::make_unique<services::StorageClient>(env, host, backend, co));
    services::BlockVolumeSpec vs;
    vs.size_bytes = b.volume_bytes;
    if (b.clone) {
      vs.image = "clones/node" + std::to_string(c);
      vs.parent = world.volume_images->files().front().path;
    } else {
      vs.image = world.volume_images->files()[c].path;
    }
    auto vol =
        services::BlockVolume::open(env, *world.block_clients.back(), *world.volume_layout, vs);
    if (!vol.ok()) return vol.status();
    world.volumes.push_back(std::move(*vol));
    vols.push_back(world.volumes.back().get());
    hosts.push_back(host);
  }
  world.block_driver =
      std::make_unique<BlockWorkloadDriver>(env, b, beside.kind == models::WorkloadKind::kBootStorm,
                                            vols, hosts, env.random().next_u64());
  world.block_driver->start(TaskOptions{.daemon = true});
  return Status();
}

// The report's "block" section of a mixed run (docs/report-format.md).
nlohmann::json beside_json(const World& world, const models::WorkloadSpec& beside) {
  const BlockWorkloadDriver& d = *world.block_driver;
  nlohmann::json j = d.summary();
  j["workload"] = beside.kind == models::WorkloadKind::kBootStorm ? "boot_storm" : "block";
  j["name"] = beside.name;
  // The slice's volumes stand for the cluster's: rates scale up, latencies do not.
  j["cluster_volumes"] = static_cast<int64_t>(std::llround(world.block_scale * d.volume_count()));
  for (const char* k : {"iops", "read_iops", "write_iops", "read_mibps", "write_mibps"}) {
    j["cluster_" + std::string(k)] = round_to(j[k].get<double>() * world.block_scale, 3);
  }
  j["latency_us"] = d.latency_us();
  return j;
}

// A checkpoint written beside a training read: what its ranks measured.
struct AsyncCheckpoint {
  int ranks = 0;  // simulated
  uint64_t rank_bytes = 0;
  std::vector<std::vector<double>> write_s;  // [checkpoint][rank], -1 when unfinished
  double end_s = 0;
  Status error;
};

nlohmann::json async_checkpoint_json(const models::WorkloadSpec& spec, const AsyncCheckpoint& a,
                                     int slice_factor) {
  const models::CheckpointWorkload& c = spec.checkpoint;
  // A checkpoint's time is its slowest rank's (MLPerf's rule), over the checkpoints every rank
  // finished before the training read ended.
  double sum = 0;
  int complete = 0;
  for (const auto& ck : a.write_s) {
    if (std::any_of(ck.begin(), ck.end(), [](double x) { return x < 0; })) break;
    sum += *std::max_element(ck.begin(), ck.end());
    ++complete;
  }
  const double seconds = complete > 0 ? sum / complete : 0;
  const double total = c.total_gb() * 1e9;
  return {{"name", spec.name},
          {"ranks", c.ranks()},
          {"simulated_ranks", a.ranks},
          {"rank_bytes", a.rank_bytes},
          {"start_s", c.start_s},
          {"checkpoints", c.checkpoints},
          {"checkpoints_complete", complete},
          {"write_seconds", round_to(seconds, 6)},
          {"write_gibps", round_to(seconds > 0 ? total / seconds / std::ldexp(1.0, 30) : 0, 6)},
          {"slice_factor", slice_factor}};
}

double tib_weight(double capacity_tb) {
  return capacity_tb * 1e12 / std::ldexp(1.0, 40);
}

// Partial MLPerf AU of one loader at `now`, as DLIO counts it (engine/services/gpu_consumer.h):
// the compute of every step but the first over the time since its start, without the first
// step's processing (its I/O wait and its compute).
double partial_au(const services::ConsumerMetrics& m, double compute_s_per_step, double now_s) {
  if (m.steps <= 0) return 0;
  const double first_step =
      (m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front()) + compute_s_per_step;
  const double span = (m.end_s > 0 ? m.end_s : now_s) - m.start_s - first_step;
  const double compute = static_cast<double>(m.steps - 1) * compute_s_per_step;
  return span > 0 ? std::min(1.0, compute / span) : 0.0;
}

std::string fidelity_name(Fidelity f) {
  switch (f) {
    case Fidelity::kAuto:
      return "auto";
    case Fidelity::kRequest:
      return "request";
    case Fidelity::kSlice:
      return "slice";
  }
  return "?";
}

// Per-resource utilisation over [0, end_s]: bytes each link carried in its busier direction
// / (capacity x time), mean and max over the links of each role (snake_case role names).
nlohmann::json utilization_json(const models::Topology& topology, const Platform& platform,
                                const std::vector<double>& link_bytes,
                                const std::vector<double>& link_bytes_reverse, double end_s) {
  std::map<std::string, std::pair<double, double>> by_role;  // role -> (sum util, count)
  std::map<std::string, double> max_by_role;
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const auto& l = topology.links[i];
    // The busier direction of each link (reads flow one way, requests the other).
    const bool fwd = link_bytes[i] >= link_bytes_reverse[i];
    const double cap = (fwd ? platform.forward[i] : platform.reverse[i])->get_bandwidth();
    const double carried = fwd ? link_bytes[i] : link_bytes_reverse[i];
    const double util = end_s > 0 && cap > 0 ? std::min(1.0, carried / (cap * end_s)) : 0;
    // Report keys in snake_case: "client NIC" -> "client_nic".
    std::string role = models::link_role_name(l.role);
    for (char& c : role)
      c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    by_role[role].first += util;
    by_role[role].second += 1;
    max_by_role[role] = std::max(max_by_role[role], util);
  }
  nlohmann::json util = nlohmann::json::object();
  for (const auto& [role, sum] : by_role) {
    util[role] = {{"mean", round_to(sum.first / sum.second, 6)},
                  {"max", round_to(max_by_role[role], 6)}};
  }
  return util;
}

// Sets the links of `role` (a drive, by global drive number; a storage NIC, by storage host)
// to 1/factor of their own speed, both directions: what slow_drive and nic_degraded do.
std::function<void(int32_t, double)> link_slowdown(const models::Topology& topology,
                                                   const Platform& platform, LinkRole role) {
  std::map<int, size_t> links;  // drive number or storage host -> topology link
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const auto& l = topology.links[i];
    if (l.role == role) links[topology.nodes[l.a].index] = i;
  }
  const Platform* plat = &platform;
  return [plat, links, base = std::map<size_t, std::pair<double, double>>()](
             int32_t which, double factor) mutable {
    auto it = links.find(which);
    if (it == links.end()) return;
    const size_t i = it->second;
    if (base.find(i) == base.end()) {
      base[i] = {plat->forward[i]->get_bandwidth(), plat->reverse[i]->get_bandwidth()};
    }
    plat->forward[i]->set_bandwidth(base[i].first / factor);
    plat->reverse[i]->set_bandwidth(base[i].second / factor);
  };
}

// The report's "recovery" section (docs/report-format.md): the failure driver's story,
// whole-cluster figures from a slice (x `full_factor`), the requests the clients sent again and
// the time they waited, and the durability the measured detection and recovery times give.
// `writes_discarded`: the OSDs' (read on a task: their counters are behind Env locks);
// `dataset_bytes`: what the simulated clients' data amounts to (before x full_factor).
nlohmann::json recovery_report(const Scenario& s, const World& world,
                               const std::vector<services::ClientStats>& client_stats,
                               uint64_t writes_discarded, double full_factor,
                               double dataset_bytes) {
  nlohmann::json rec = world.failures->report();
  // What the random_drive_failures entries drew (their events are in rec["events"]).
  if (!s.random_drive_failures.empty()) {
    nlohmann::json draws = nlohmann::json::array();
    for (const auto& r : s.random_drive_failures) {
      int failed = 0;
      for (const auto& e : s.failures) {
        failed += e.random && e.entry == r.entry && e.kind == models::FailureKind::kDriveFailure;
      }
      draws.push_back({{"entry", "failures[" + std::to_string(r.entry) + "]"},
                       {"seed", s.seed},
                       {"afr", r.afr},
                       {"time_scale", r.time_scale},
                       {"from_s", r.from_s},
                       {"to_s", r.to_s},
                       {"replace_after_s", r.replace_after_s > 0 ? nlohmann::json(r.replace_after_s)
                                                                 : nlohmann::json()},
                       {"drives_failed", failed}});
    }
    rec["random_drive_failures"] = draws;
  }
  // The slice moved 1/k of the data: whole-cluster figures.
  for (const char* key : {"bytes_moved", "bytes_minimum", "bytes_read", "bytes_lost",
                          "objects_lost", "degraded_objects_max"}) {
    rec[key] = static_cast<uint64_t>(std::llround(rec[key].get<uint64_t>() * full_factor));
  }
  for (auto& x : rec["series"]["recovery_gibps"]) x = round_to(x.get<double>() * full_factor, 6);
  uint64_t resent = 0, writes_resent = 0;
  double blocked = 0, write_blocked = 0;
  for (const auto& cs : client_stats) {
    resent += cs.resent + cs.writes_resent;
    writes_resent += cs.writes_resent;
    blocked += cs.blocked_s + cs.write_blocked_s;
    write_blocked += cs.write_blocked_s;
  }
  rec["requests_resent"] = static_cast<uint64_t>(std::llround(resent * full_factor));
  rec["blocked_io_seconds"] = round_to(blocked * full_factor, 6);
  rec["writes_resent"] = static_cast<uint64_t>(std::llround(writes_resent * full_factor));
  rec["write_blocked_seconds"] = round_to(write_blocked * full_factor, 6);
  rec["writes_discarded"] = static_cast<uint64_t>(std::llround(writes_discarded * full_factor));
  // Durability from what this run measured: a drive's data re-protected in the measured
  // time, after detection and the down-out interval (docs/models.md, "Durability").
  const double failed_at = world.failures->first_failure_s();
  const double restored = world.failures->clean_at_s();
  if (failed_at >= 0 && restored >= 0 && world.failures->out_at_s() >= 0) {
    const auto& rc = s.storage.rados.recovery;
    models::DurabilityInput di;
    di.drives = static_cast<int>(world.object_services.size());
    const bool ec = s.storage.rados.ec_k > 0;
    di.data_chunks = ec ? s.storage.rados.ec_k : 1;
    di.coding_chunks = ec ? s.storage.rados.ec_m : s.storage.rados.replicas - 1;
    di.placement_groups = s.storage.rados.pg_num;
    di.drive_afr = rc.drive_afr;
    di.detect_hours = (world.failures->out_at_s() - failed_at) / 3600;
    di.recovery_hours = std::max(1e-9, restored - world.failures->out_at_s()) / 3600;
    di.pool_bytes = std::max<double>(dataset_bytes * full_factor, s.storage.rados.stored_bytes);
    if (auto d = models::durability(di); d.ok()) {
      rec["durability"] = {{"drive_afr", di.drive_afr},
                           {"detect_hours", round_to(di.detect_hours, 9)},
                           {"recovery_hours", round_to(di.recovery_hours, 9)},
                           {"mttdl_years", d->cluster_mttdl_hours / models::kHoursPerYear},
                           {"annual_loss_probability", d->annual_loss_probability},
                           {"nines", round_to(d->nines, 3)}};
    }
  }
  return rec;
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

// Everything a checkpoint run needs from run_scenario's world building.
struct CheckpointRun {
  const Scenario& full;  // as the user wrote it
  const Scenario& sim;   // the simulated (possibly sliced) cluster
  const RunPlan& plan;
  const models::CheckpointWorkload& ck;
  int sim_ranks;
  uint64_t seed;
  const RunOptions& options;
  const models::Topology& topology;
  const Platform& platform;
  const models::MaxFlowBound& read_bound;
  SimEnv& env;
  sg4::Engine& engine;
  World& world;
  const services::StorageBackend& backend;
};

// Ranks meeting between the phases of a checkpoint run: the last to arrive lets all go.
class PhaseBarrier {
 public:
  PhaseBarrier(Env& env, int parties) : parties_(parties), mu_(env), gate_(env.make_semaphore(0)) {}
  void arrive_and_wait() {
    bool last = false;
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      last = ++arrived_ == parties_;
    }
    if (last) {
      for (int i = 1; i < parties_; ++i) gate_->release();
    } else {
      gate_->acquire();
    }
  }

 private:
  int parties_;
  int arrived_ = 0;
  services::EnvMutex mu_;
  std::unique_ptr<Semaphore> gate_;
};

// The analytic write bound: every byte crosses a client NIC once, enters the storage servers
// `copies_in` times (from the client, then from the primary to each other copy or shard) and
// lands on the drives `amplification` times; the bound is the tightest of the three.
struct WriteBound {
  double bytes_per_s = 0;
  std::string bottleneck;
};

WriteBound write_bound(const Scenario& s, int client_nodes, double efficiency) {
  const auto& c = s.cluster.clients;
  const auto& st = s.cluster.storage;
  double amplification = 1, copies_in = 1;
  if (s.storage.design == StorageDesign::kRados) {
    if (s.storage.rados.ec_k > 0) {
      amplification =
          static_cast<double>(s.storage.rados.ec_k + s.storage.rados.ec_m) / s.storage.rados.ec_k;
      // The client sends the object to the primary, which sends (k + m - 1) / k of it on.
      copies_in = 1 + (amplification - 1.0 / s.storage.rados.ec_k);
    } else {
      amplification = s.storage.rados.replicas;
      copies_in = s.storage.rados.replicas;
    }
  }
  const double client_nic =
      client_nodes * c.nic.count * c.nic.profile.ports * c.nic.profile.gbps * 1e9 / 8 * efficiency;
  const double storage_nic = st.count * st.nic.count * st.nic.profile.ports * st.nic.profile.gbps *
                             1e9 / 8 * efficiency / copies_in;
  const double drives = double{1.0} * st.count * st.drives_per_node * st.drive.write_gbytes_per_s *
                        1e9 / amplification;
  WriteBound b{client_nic, "client NICs"};
  if (storage_nic < b.bytes_per_s) b = {storage_nic, "storage NICs"};
  if (drives < b.bytes_per_s) b = {drives, "drive writes"};
  return b;
}

Result<nlohmann::json> run_checkpoint(CheckpointRun r) {
  const Scenario& s = r.sim;
  SimEnv& env = r.env;
  const int per_node = s.cluster.clients.accelerators_per_node;
  const int nodes = (r.sim_ranks + per_node - 1) / per_node;
  const auto& files = r.world.dataset->files();
  const double client_cpu_s = s.storage.protocol.client_cpu_us_per_op * 1e-6;
  std::vector<std::unique_ptr<services::StorageClient>> clients;
  for (int c = 0; c < nodes; ++c) {
    services::StorageClientOptions co;
    co.name = "client" + std::to_string(c);
    co.cpu_s_per_op = client_cpu_s;
    co.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
    clients.push_back(
        std::make_unique<services::StorageClient>(env, r.topology.client_sinks[c], r.backend, co));
  }
  // Per checkpoint and rank: write and read durations.
  const int n_ck = r.ck.checkpoints;
  std::vector<std::vector<double>> write_s(n_ck, std::vector<double>(r.sim_ranks, 0));
  std::vector<std::vector<double>> read_s(n_ck, std::vector<double>(r.sim_ranks, 0));
  std::vector<double> phase_end(2 * n_ck, 0);
  std::vector<std::unique_ptr<PhaseBarrier>> barriers;
  for (int i = 0; i < 2 * n_ck + 1; ++i) {
    barriers.push_back(std::make_unique<PhaseBarrier>(env, r.sim_ranks));
  }
  Status first_error;
  int ranks_done = 0;
  for (int rank = 0; rank < r.sim_ranks; ++rank) {
    const int node = rank / per_node;
    env.spawn(r.topology.client_sinks[node], "rank" + std::to_string(rank), [&, rank, node] {
      services::StorageClient& client = *clients[node];
      auto fail = [&](const Status& st) {
        if (first_error.ok()) first_error = st;
      };
      for (int phase = 0; phase < 2 * n_ck; ++phase) {
        barriers[phase]->arrive_and_wait();
        const bool writing = phase < n_ck;
        if (!writing && !r.ck.read_back) continue;
        const int c = writing ? phase : phase - n_ck;
        const auto& f = files[static_cast<size_t>(c) * r.sim_ranks + rank];
        const double t0 = env.now_s();
        if (writing) {
          auto w = client.write_file(f.path, f.size_bytes, {.fsync = r.ck.fsync});
          if (!w.ok()) fail(w.status());
          write_s[c][rank] = env.now_s() - t0;
        } else {
          auto rd = client.read_file(f.path, f.size_bytes);
          if (!rd.ok()) fail(rd.status());
          read_s[c][rank] = env.now_s() - t0;
        }
        phase_end[phase] = std::max(phase_end[phase], env.now_s());
      }
      ++ranks_done;
    });
  }
  // Monitor: drive and link load, progress.
  const double interval_s = 0.25;
  std::vector<double> link_bytes(r.topology.links.size(), 0.0),
      link_bytes_reverse(r.topology.links.size(), 0.0);
  std::vector<double> drive_write_series, drive_read_series;
  const double full_factor = static_cast<double>(r.ck.ranks()) / r.sim_ranks;
  const double gib = std::ldexp(1.0, 30);
  const double total_bytes = r.ck.total_gb() * 1e9;
  uint64_t drive_bytes = 0, writes_discarded = 0;
  std::vector<services::ClientStats> client_stats;
  env.spawn(r.topology.clients.front(), "monitor", [&] {
    const double expected_bytes =
        static_cast<double>(r.world.dataset->total_bytes()) * (r.ck.read_back ? 2 : 1);
    for (;;) {
      env.sleep_s(interval_s);
      double dw = 0, dr = 0;
      for (size_t i = 0; i < link_bytes.size(); ++i) {
        const double f = r.platform.forward[i]->get_usage() * interval_s;
        const double b = r.platform.reverse[i]->get_usage() * interval_s;
        link_bytes[i] += f;
        link_bytes_reverse[i] += b;
        if (r.topology.links[i].role == LinkRole::kDrive) {
          dr += f;
          dw += b;
        }
      }
      drive_write_series.push_back(dw * full_factor / interval_s / gib);
      drive_read_series.push_back(dr * full_factor / interval_s / gib);
      if (r.options.on_progress) {
        double moved = 0;
        for (auto& c : clients) {
          const auto st = c->stats();
          moved += static_cast<double>(st.bytes_written + st.bytes_read);
        }
        r.options.on_progress(env.now_s(), std::min(1.0, moved / std::max(1.0, expected_bytes)));
      }
      if (ranks_done == r.sim_ranks || env.now_s() >= s.simulation.max_simulated_s) {
        // Read the services' counters here: their locks are Env semaphores, usable only
        // from a task.
        for (const auto& o : r.world.object_services) {
          const services::OsdStats st = o->stats();
          drive_bytes += st.bytes_written;
          writes_discarded += st.writes_discarded;
        }
        for (auto& c : clients) client_stats.push_back(c->stats());
        if (r.world.block_driver) r.world.block_driver->collect(env.now_s());
        if (ranks_done < r.sim_ranks) sg4::Actor::kill_all();
        return;
      }
    }
  });
  r.engine.run();
  if (!first_error.ok()) return first_error;
  if (ranks_done < r.sim_ranks) {
    return Status::invalid_argument(
        r.full.source_path + ": simulation.max_simulated_s: the checkpoint did not finish in " +
        std::to_string(s.simulation.max_simulated_s) + " simulated seconds");
  }
  double end_s = 0;
  for (double e : phase_end) end_s = std::max(end_s, e);

  // A checkpoint's duration is its slowest rank's (MLPerf Storage); mean over checkpoints.
  auto phase_stats = [&](const std::vector<std::vector<double>>& d, LatencyRecorder& per_rank) {
    double sum = 0;
    for (const auto& ck : d) {
      sum += *std::max_element(ck.begin(), ck.end());
      for (double x : ck) per_rank.add(x);
    }
    return sum / static_cast<double>(d.size());
  };
  LatencyRecorder write_ranks, read_ranks;
  const double write_seconds = phase_stats(write_s, write_ranks);
  const double read_seconds = r.ck.read_back ? phase_stats(read_s, read_ranks) : 0;
  const double written = static_cast<double>(r.world.dataset->total_bytes());
  const WriteBound wb =
      write_bound(r.full, checkpoint_nodes(r.full), s.storage.protocol.efficiency);

  nlohmann::json report;
  report["granary_report"] = 1;
  report["scenario"] = {{"name", r.full.name}, {"source", r.full.source_path}, {"seed", r.seed}};
  report["fidelity"] = {
      {"mode", fidelity_name(r.plan.fidelity)},
      {"slice_factor", r.plan.slice_factor},
      {"simulated_client_nodes", nodes},
      {"simulated_ranks", r.sim_ranks},
      {"simulated_storage_servers", r.plan.storage_servers},
      {"storage_capacity_share", round_to(1.0 / r.plan.slice_factor, 6)},
      {"transfer_unit_mib", round_to(s.simulation.transfer_unit_bytes / 1048576.0, 6)},
      {"reason", r.plan.reason}};
  nlohmann::json summary;
  summary["workload"] = "checkpoint";
  summary["model"] = r.ck.name;
  summary["ranks"] = r.ck.ranks();
  summary["accelerators"] = r.ck.ranks();
  summary["checkpoint_bytes"] = static_cast<uint64_t>(std::llround(total_bytes));
  summary["checkpoint_gb"] = round_to(total_bytes / 1e9, 6);
  summary["checkpoints"] = n_ck;
  summary["rank_bytes"] = files.front().size_bytes;
  summary["write_seconds"] = round_to(write_seconds, 6);
  summary["write_gibps"] = round_to(write_seconds > 0 ? total_bytes / write_seconds / gib : 0, 6);
  summary["write_gbps"] = round_to(write_seconds > 0 ? total_bytes / write_seconds / 1e9 : 0, 6);
  summary["read_seconds"] = round_to(read_seconds, 6);
  summary["read_gibps"] = round_to(read_seconds > 0 ? total_bytes / read_seconds / gib : 0, 6);
  summary["fsync"] = r.ck.fsync;
  summary["write_amplification"] = round_to(written > 0 ? drive_bytes / written : 0, 6);
  summary["drive_bytes_written"] = static_cast<uint64_t>(std::llround(drive_bytes * full_factor));
  summary["simulated_seconds"] = round_to(end_s, 6);
  report["summary"] = summary;
  report["bounds"] = {
      {"write_gibps", round_to(wb.bytes_per_s / gib, 6)},
      {"write_bottleneck", wb.bottleneck},
      {"write_seconds_min", round_to(total_bytes / wb.bytes_per_s, 6)},
      {"max_flow_gibps", round_to(r.read_bound.bytes_per_s / gib, 6)},
      {"bottleneck",
       r.read_bound.bottleneck.empty() ? std::string() : r.read_bound.bottleneck.front()}};
  auto lat = [&](const LatencyRecorder& l, const char* unit) {
    return nlohmann::json{{"unit", unit},
                          {"count", l.count()},
                          {"mean", round_to(l.mean() * 1e3, 6)},
                          {"p50", round_to(l.percentile(50) * 1e3, 6)},
                          {"p99", round_to(l.percentile(99) * 1e3, 6)},
                          {"max", round_to(l.max() * 1e3, 6)}};
  };
  report["latency_ms"]["write"] = lat(write_ranks, "one rank's checkpoint write, fsync included");
  if (r.ck.read_back) report["latency_ms"]["read"] = lat(read_ranks, "one rank's checkpoint read");
  report["utilization"] =
      utilization_json(r.topology, r.platform, link_bytes, link_bytes_reverse, end_s);
  nlohmann::json dw = nlohmann::json::array(), dr = nlohmann::json::array();
  for (double x : drive_write_series) dw.push_back(round_to(x, 6));
  for (double x : drive_read_series) dr.push_back(round_to(x, 6));
  report["series"] = {
      {"interval_s", interval_s}, {"drive_write_gibps", dw}, {"drive_read_gibps", dr}};
  if (r.world.failures) {
    nlohmann::json rec =
        recovery_report(r.full, r.world, client_stats, writes_discarded, full_factor, written);
    // Every object the checkpoint wrote, against its PG's devices at the end: a complete copy
    // (chunk) on each, or it is short of copies (recovery unfinished, or data lost).
    std::map<std::string, uint64_t> objects;  // name -> logical bytes
    for (const auto& store : r.world.written) {
      store->for_each_written([&](std::string_view name, const services::StoredObject& o) {
        uint64_t& b = objects[std::string(name)];
        b = std::max(b, o.client_bytes());
      });
    }
    const int copies = s.storage.rados.ec_k > 0 ? s.storage.rados.ec_k + s.storage.rados.ec_m
                                                : s.storage.rados.replicas;
    uint64_t short_of_copies = 0;
    std::vector<int32_t> devices;
    for (const auto& [name, bytes] : objects) {
      r.world.switching->devices_of(r.world.switching->group_of(name), devices);
      int complete = 0;
      for (int32_t d : devices) {
        if (d < 0 || d == placement::kNoDevice) continue;
        auto o = r.world.written[d]->find(name);
        complete += o.ok() && o->client_bytes() >= bytes;
      }
      short_of_copies += complete < copies;
    }
    rec["written_objects"] = static_cast<uint64_t>(std::llround(objects.size() * full_factor));
    rec["written_objects_short_of_copies"] =
        static_cast<uint64_t>(std::llround(short_of_copies * full_factor));
    report["recovery"] = rec;
  }
  if (r.world.block_driver) report["block"] = beside_json(r.world, *r.world.beside);
  return report;
}

// Everything a block run needs from run_scenario's world building.
struct BlockRun {
  const Scenario& full;  // as the user wrote it
  const Scenario& sim;
  const RunPlan& plan;
  const models::BlockWorkload& block;
  uint64_t seed;
  const RunOptions& options;
  const models::Topology& topology;
  const Platform& platform;
  SimEnv& env;
  sg4::Engine& engine;
  World& world;
  const services::StorageBackend& backend;
  const DriveTiming& drive_timing;
};

// The analytic IOPS ceiling of a block workload: every drive at its rated IOPS, every storage
// server's cores at the protocol's CPU per request and per byte of each request, every copy of
// a write counted.
struct IopsBound {
  double iops = 0;
  std::string bottleneck;
};

IopsBound iops_bound(const Scenario& s, double read_fraction, uint64_t block_bytes,
                     const DriveTiming& t) {
  const auto& st = s.cluster.storage;
  const int drives = st.count * st.drives_per_node;
  const auto& r = s.storage.rados;
  const int copies = r.ec_k > 0 ? r.ec_k + r.ec_m : std::max(1, r.replicas);
  // Per client I/O: drive operations and server requests. A small read is one drive read
  // (erasure-coded: of the one data shard holding it, through the primary: two requests); a
  // write is one drive write and one request per copy or shard (the primary's included).
  const double w = 1 - read_fraction;
  const double drive_busy =
      t.units > 0 ? (read_fraction * t.read_hold_s + w * copies * t.write_hold_s) / t.units : 0;
  const double cpu = s.storage.protocol.server_cpu_us_per_op * 1e-6;
  // Per byte: each request of a read moves the block; a replicated write's copies each move it,
  // an erasure-coded one's primary at least the block (its shards less each).
  const double block_cpu = static_cast<double>(block_bytes) * s.storage.protocol.cpu_s_per_byte();
  const double server_busy =
      cpu * (read_fraction * (r.ec_k > 0 ? 2 : 1) + w * copies) +
      block_cpu * (read_fraction * (r.ec_k > 0 ? 2 : 1) + w * (r.ec_k > 0 ? 1 : copies));
  IopsBound b{std::numeric_limits<double>::infinity(), "none"};
  if (drive_busy > 0) b = {drives / drive_busy, "drive IOPS"};
  if (server_busy > 0 && st.count * st.cpu_cores / server_busy < b.iops) {
    b = {st.count * st.cpu_cores / server_busy, "storage server CPU"};
  }
  return b;
}

Result<nlohmann::json> run_block(BlockRun r) {
  const Scenario& s = r.sim;
  SimEnv& env = r.env;
  const bool boot = s.workloads[0].kind == models::WorkloadKind::kBootStorm;
  const auto& rados = std::get<services::RadosBackend>(r.backend);
  const double client_cpu_s = s.storage.protocol.client_cpu_us_per_op * 1e-6;
  const int nodes = r.plan.clients;
  std::vector<std::unique_ptr<services::StorageClient>> clients;
  std::vector<std::unique_ptr<services::BlockVolume>> volumes;
  std::vector<services::BlockVolume*> volume_ptrs;
  std::vector<HostId> hosts;
  const std::string parent = r.block.clone ? r.world.dataset->files().front().path : "";
  for (int c = 0; c < nodes; ++c) {
    services::StorageClientOptions co;
    co.name = "client" + std::to_string(c);
    co.cpu_s_per_op = client_cpu_s;
    co.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
    // librbd runs in the node's host memory (a VM's or the node's system disk).
    const HostId host = r.topology.client_sinks[c];
    clients.push_back(std::make_unique<services::StorageClient>(env, host, r.backend, co));
    services::BlockVolumeSpec vs;
    vs.size_bytes = r.block.volume_bytes;
    if (r.block.clone) {
      vs.image = "clones/node" + std::to_string(c);
      vs.parent = parent;
    } else {
      vs.image = r.world.dataset->files()[c].path;
    }
    auto vol = services::BlockVolume::open(env, *clients.back(), rados.layout, vs);
    if (!vol.ok()) return vol.status();
    volumes.push_back(std::move(*vol));
    volume_ptrs.push_back(volumes.back().get());
    hosts.push_back(host);
  }
  BlockWorkloadDriver driver(env, r.block, boot, volume_ptrs, hosts, env.random().next_u64());
  driver.start();

  // Monitor: link load, progress.
  const double interval_s =
      boot ? 0.05 : std::max(0.01, (r.block.ramp_s + r.block.duration_s) / 50);
  std::vector<double> link_bytes(r.topology.links.size(), 0.0),
      link_bytes_reverse(r.topology.links.size(), 0.0);
  const double expected = boot ? static_cast<double>(nodes) *
                                     (r.block.boot_read_bytes + r.block.boot_write_bytes) /
                                     r.block.block_bytes
                               : r.block.ramp_s + r.block.duration_s;
  double drive_ops = 0, drive_queued_s = 0;
  env.spawn(r.topology.clients.front(), "monitor", [&] {
    for (;;) {
      env.sleep_s(interval_s);
      for (size_t i = 0; i < link_bytes.size(); ++i) {
        link_bytes[i] += r.platform.forward[i]->get_usage() * interval_s;
        link_bytes_reverse[i] += r.platform.reverse[i]->get_usage() * interval_s;
      }
      if (r.options.on_progress) {
        const double done = boot ? static_cast<double>(driver.completed()) : env.now_s();
        r.options.on_progress(env.now_s(), std::min(1.0, done / std::max(1e-9, expected)));
      }
      if (driver.done() || env.now_s() >= s.simulation.max_simulated_s) {
        driver.collect(env.now_s());
        for (int d = 0; d < env.device_count(); ++d) {
          if (const DriveQueue* q = env.drive_queue(d)) {
            drive_ops += static_cast<double>(q->operations());
            drive_queued_s += q->queued_s();
          }
        }
        if (!driver.done()) sg4::Actor::kill_all();
        return;
      }
    }
  });
  r.engine.run();
  if (!driver.first_error().ok()) return driver.first_error();
  if (!driver.done()) {
    return Status::invalid_argument(
        r.full.source_path + ": simulation.max_simulated_s: the block workload did not finish in " +
        std::to_string(s.simulation.max_simulated_s) + " simulated seconds");
  }
  const double end_s = driver.end_s();

  nlohmann::json report;
  report["granary_report"] = 1;
  report["scenario"] = {{"name", r.full.name}, {"source", r.full.source_path}, {"seed", r.seed}};
  report["fidelity"] = {{"mode", fidelity_name(r.plan.fidelity)},
                        {"slice_factor", r.plan.slice_factor},
                        {"simulated_client_nodes", nodes},
                        {"simulated_storage_servers", r.plan.storage_servers},
                        {"reason", r.plan.reason}};
  nlohmann::json summary = driver.summary();
  summary["workload"] = boot ? "boot_storm" : "block";
  summary["simulated_seconds"] = round_to(end_s, 6);
  summary["drive_queue_wait_us_mean"] =
      round_to(drive_ops > 0 ? drive_queued_s / drive_ops * 1e6 : 0, 3);
  report["summary"] = summary;
  const IopsBound ib = iops_bound(s,
                                  boot ? static_cast<double>(r.block.boot_read_bytes) /
                                             (r.block.boot_read_bytes + r.block.boot_write_bytes)
                                       : r.block.read_fraction,
                                  r.block.block_bytes, r.drive_timing);
  report["bounds"] = {
      {"iops", std::isfinite(ib.iops) ? round_to(ib.iops, 1) : 0.0},
      {"iops_bottleneck", ib.bottleneck},
      {"drive_units", r.drive_timing.units},
      {"drive_read_latency_us", round_to(r.drive_timing.read_latency_s * 1e6, 3)},
      {"drive_write_latency_us", round_to(r.drive_timing.write_latency_s * 1e6, 3)}};
  report["latency_us"] = driver.latency_us();
  report["utilization"] =
      utilization_json(r.topology, r.platform, link_bytes, link_bytes_reverse, end_s);
  const double series_interval = boot ? std::max(0.01, end_s / 50) : interval_s;
  nlohmann::json iops = nlohmann::json::array();
  for (double x : driver.iops_series(series_interval)) iops.push_back(round_to(x, 3));
  report["series"] = {{"interval_s", round_to(series_interval, 6)}, {"iops", iops}};
  return report;
}

// The backend client node `c` reads through: design local's clients each read their own drives.
services::StorageBackend backend_of_client(const services::StorageBackend& backend,
                                           const Scenario& s, int c) {
  services::StorageBackend b = backend;
  if (auto* nf = std::get_if<services::NfsBackend>(&b);
      nf && s.storage.design == StorageDesign::kLocal) {
    nf->local_head = c;
  }
  return b;
}

// The bytes and drive reads one epoch puts on each simulated drive: the read plans of up to
// 20,000 files of the dataset (the first ones: files are placed independently of their order),
// exactly as the clients will send them.
models::PlacementLoad placement_load(const services::Dataset& dataset,
                                     const services::StorageBackend& backend, const Scenario& s,
                                     int repeat) {
  models::PlacementLoad load;
  load.drives_per_server = s.cluster.storage.drives_per_node;
  load.repeat = repeat;
  const size_t drives =
      static_cast<size_t>(s.cluster.storage.count) * s.cluster.storage.drives_per_node;
  load.drive_bytes.assign(drives, 0.0);
  load.drive_ops.assign(drives, 0.0);
  auto id_of = [](const std::string& endpoint) -> long {
    const size_t dot = endpoint.find('.');
    return dot == std::string::npos ? -1 : std::strtol(endpoint.c_str() + dot + 1, nullptr, 10);
  };
  auto put = [&](long d, double bytes) {
    if (d < 0 || static_cast<size_t>(d) >= drives) return;
    load.drive_bytes[static_cast<size_t>(d)] += bytes;
    load.drive_ops[static_cast<size_t>(d)] += 1;
  };
  const size_t n = std::min<size_t>(dataset.files().size(), 20000);
  for (size_t i = 0; i < n; ++i) {
    const services::DatasetFile& f = dataset.files()[i];
    if (const auto* r = std::get_if<services::RadosBackend>(&backend)) {
      const bool ec = r->ec.k > 0;
      auto reads = services::rados_reads(r->layout, *r->placement, f.path, 0, f.size_bytes, ec);
      if (!reads.ok()) continue;
      for (const auto& read : *reads) {
        if (!ec) {
          put(id_of(read.endpoint), static_cast<double>(read.length_bytes));
          continue;
        }
        // The primary gathers the k data chunks: one read of 1/k on each data position.
        for (int j = 0; j < r->ec.k && j < static_cast<int>(read.group.size()); ++j) {
          put(id_of(read.group[j]), static_cast<double>(read.length_bytes) / r->ec.k);
        }
      }
    } else if (const auto* p = std::get_if<services::PfsBackend>(&backend)) {
      auto it = p->layouts->find(f.path);
      if (it == p->layouts->end()) continue;
      auto reads = services::pfs_reads(it->second, f.path, 0, f.size_bytes, p->max_request_bytes);
      if (!reads.ok()) continue;
      for (const auto& read : *reads)
        put(id_of(read.endpoint), static_cast<double>(read.length_bytes));
    } else if (const auto* nf = std::get_if<services::NfsBackend>(&backend)) {
      // The file lives on its head, striped over the head's drives. (Design local: every node
      // has it, and the node that reads it is any one, so each node's drives carry an even
      // share.)
      const int per = s.cluster.storage.drives_per_node;
      if (s.cluster.storage.in_client_nodes) {
        for (size_t d = 0; d < drives; ++d) {
          load.drive_bytes[d] += static_cast<double>(f.size_bytes) / static_cast<double>(drives);
          load.drive_ops[d] +=
              std::ceil(static_cast<double>(f.size_bytes) / static_cast<double>(nf->rsize_bytes)) /
              static_cast<double>(drives);
        }
        continue;
      }
      const int head = services::nfs_head_of(f.path, nf->heads);
      const double requests =
          std::ceil(static_cast<double>(f.size_bytes) / static_cast<double>(nf->rsize_bytes));
      for (int d = 0; d < per; ++d) {
        const size_t drive = static_cast<size_t>(head) * per + d;
        if (drive >= drives) continue;
        load.drive_bytes[drive] += static_cast<double>(f.size_bytes) / per;
        load.drive_ops[drive] += requests / per;
      }
    }
  }
  return load;
}

// The report's `bounds` of a training read (docs/report-format.md).
nlohmann::json read_bounds_json(const models::ReadBounds& b) {
  const double gib = std::ldexp(1.0, 30);
  nlohmann::json cut = nlohmann::json::array();
  for (const auto& line : b.data_path.bottleneck) cut.push_back(line);
  nlohmann::json ceilings = nlohmann::json::array();
  for (const auto& c : b.ceilings) {
    ceilings.push_back({{"resource", c.resource},
                        {"gibps", round_to(c.bytes_per_s / gib, 6)},
                        {"files_per_s", round_to(c.files_per_s, 3)},
                        {"detail", c.detail}});
  }
  const models::Ceiling& binding = b.binding();
  return {{"max_flow_gibps", round_to(b.data_path.bytes_per_s / gib, 6)},
          {"line_rate_gibps", round_to(b.line_rate_bytes_per_s / gib, 6)},
          {"efficiency", b.efficiency},
          {"cut", cut},
          {"read_bound_gibps", round_to(binding.bytes_per_s / gib, 6)},
          {"binding", binding.resource},
          {"bottleneck", binding.detail},
          {"ceilings", ceilings},
          {"demand_gibps", round_to(b.demand_bytes_per_s / gib, 6)},
          {"accelerator_utilization_bound",
           b.demand_bytes_per_s > 0
               ? round_to(std::min(1.0, binding.bytes_per_s / b.demand_bytes_per_s), 6)
               : 1.0}};
}

// The simulation and its report, with the SimGrid settings `simgrid_config` added to Granary's.
Result<nlohmann::json> simulate(const Scenario& scenario, const RunOptions& options,
                                const std::vector<std::string>& simgrid_config) {
  // One workload, or a mixed run: a training_read or checkpoint workload first, with block I/O
  // (one block or boot_storm workload) beside it, and beside a training read also a checkpoint
  // (asynchronous checkpointing, rados) — the three at once.
  const models::WorkloadSpec* beside = nullptr;             // block or boot_storm
  const models::WorkloadSpec* beside_checkpoint = nullptr;  // checkpoint beside training
  for (size_t i = 1; i < scenario.workloads.size(); ++i) {
    const models::WorkloadSpec& extra = scenario.workloads[i];
    const bool block_kind = extra.kind == models::WorkloadKind::kBlock ||
                            extra.kind == models::WorkloadKind::kBootStorm;
    if (block_kind && beside == nullptr && !is_block(scenario)) {
      beside = &extra;
    } else if (extra.kind == models::WorkloadKind::kCheckpoint && beside_checkpoint == nullptr &&
               scenario.workloads[0].kind == models::WorkloadKind::kTrainingRead) {
      beside_checkpoint = &extra;
    } else {
      return Status::invalid_argument(
          scenario.source_path + ": workloads[" + std::to_string(i) +
          "]: format 1 runs one workload, or a training_read or checkpoint workload followed by "
          "at most one block or boot_storm workload beside it and, after a training_read, at most "
          "one checkpoint; found a " +
          std::string(models::workload_kind_name(extra.kind)) + " workload here");
    }
  }
  if (beside != nullptr && scenario.storage.design != StorageDesign::kRados) {
    return Status::invalid_argument(scenario.source_path +
                                    ": workloads: block volumes need design 'rados'");
  }
  // A checkpoint runs on the nodes that hold its ranks; the cluster's other nodes are idle.
  const uint64_t seed = options.seed.value_or(scenario.seed);
  Scenario shrunk = scenario;
  shrunk.cluster.clients.count = run_nodes(scenario);
  // The timeline with the random drive failures drawn from the run's seed (which --seed may
  // override, so they are drawn here rather than when the scenario is read).
  shrunk.seed = seed;
  shrunk.failures = models::expand_failures(scenario, seed);
  const Scenario& in = shrunk;
  const bool checkpoint = in.workloads[0].kind == models::WorkloadKind::kCheckpoint;
  const bool block = is_block(in);
  const models::BlockWorkload& bw = in.workloads[0].block;
  const RunPlan plan = plan_run(in);
  const int k = plan.slice_factor;

  // The simulated (sliced) scenario.
  Scenario s = in;
  s.cluster.clients.count = plan.clients;
  s.cluster.storage.count = plan.storage_servers;
  const models::TrainingWorkload& work = in.workloads[0].training;
  models::TrainingWorkload w = work;
  w.files = std::max<int64_t>(1, work.files / k);
  const int mds_count = s.storage.design == StorageDesign::kPfs ? s.storage.pfs.mds_count : 0;

  auto real_topology = models::build_topology(in.cluster, mds_count);
  if (!real_topology.ok()) return real_topology.status();
  auto topology = models::build_topology(s.cluster, mds_count);
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

  // The analytic bounds over the full cluster: the data path at the protocol's efficiency and
  // every other ceiling a training read can hit (models/read_bounds.h).
  const PlatformOptions default_platform;
  const models::ReadBounds bounds =
      models::read_bounds(in, work, *real_topology, default_platform.client_cores);
  const models::MaxFlowBound& bound = bounds.data_path;

  // ---- SimGrid
  static int argc = 1;
  static char arg0[] = "granary";
  static char* argv[] = {arg0, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_engine(engine, simgrid_config);
  PlatformOptions po;
  po.network_efficiency = s.storage.protocol.efficiency;
  po.storage_cores = s.cluster.storage.cpu_cores;
  const int m = plan.storage_factor;
  const double share = static_cast<double>(m) / k;  // of each simulated server's capacity
  if (k > 1) {
    // The slice: each simulated storage server and drive at m/k of its capacity (and CPU), the
    // metadata servers at 1/k, the fabric sized per host as in the cluster and its storage
    // side scaled like the servers.
    po.link_scale = slice_link_scale(*real_topology, *topology, share);
    for (size_t i = 0; i < topology->links.size(); ++i) {
      const auto role = topology->links[i].role;
      if (role == LinkRole::kStorageNic || role == LinkRole::kDrive) po.link_scale[i] = share;
      if (role == LinkRole::kMdsNic) po.link_scale[i] = 1.0 / k;
    }
    po.storage_cores = std::max(1, static_cast<int>(s.cluster.storage.cpu_cores * share));
  }
  auto platform = build_platform(*topology, po);
  if (!platform.ok()) return platform.status();
  SimEnv env(*topology, *platform, seed);
  // A slice's drives run at m/k of their capacity: their IOPS too; a hard disk also sees its
  // queue depth as the full cluster's drive does (drive_model.h).
  const DriveTiming drive_timing =
      DriveTiming::from_profile(s.cluster.storage.drive).sliced(k > 1 ? share : 1.0);
  env.set_drive_timing(drive_timing);

  // ---- storage
  World world;
  services::DatasetSpec ds;
  ds.name = in.workloads[0].name.empty() ? "dataset" : in.workloads[0].name;
  ds.files = w.files;
  ds.samples_per_file = w.samples_per_file;
  ds.sample_bytes_mean = w.sample_bytes_mean;
  ds.sample_bytes_stddev = w.sample_bytes_stddev;
  ds.sample_sizes = w.sample_sizes;
  const models::CheckpointWorkload& ck = in.workloads[0].checkpoint;
  const int sim_ranks = checkpoint ? (ck.ranks() + plan.slice_factor - 1) / plan.slice_factor : 0;
  if (checkpoint) {
    // The checkpoint files: one per simulated rank and checkpoint, each rank's even share of
    // the model and optimizer state (file c * ranks + r is rank r's part of checkpoint c).
    ds.files = int64_t{sim_ranks} * ck.checkpoints;
    ds.samples_per_file = 1;
    ds.sample_bytes_mean = std::max(4096.0, std::round(ck.total_gb() * 1e9 / ck.ranks()));
    ds.sample_bytes_stddev = 0;
  }
  if (block) {
    // The images the pool holds: each node's volume, or the one parent image every node's
    // volume is a clone of (the clones start empty).
    ds.name = bw.clone ? "golden" : "volumes";
    ds.files = bw.clone ? 1 : plan.clients;
    ds.samples_per_file = 1;
    ds.sample_bytes_mean = static_cast<double>(bw.volume_bytes);
    ds.sample_bytes_stddev = 0;
  }
  auto dataset = services::Dataset::create(ds, env.random());
  if (!dataset.ok()) return dataset.status();
  world.dataset = std::make_unique<services::Dataset>(std::move(*dataset));

  const double server_cpu_s = s.storage.protocol.server_cpu_us_per_op * 1e-6;
  const double client_cpu_s = s.storage.protocol.client_cpu_us_per_op * 1e-6;
  const uint64_t drive_capacity = static_cast<uint64_t>(s.cluster.storage.drive.capacity_tb * 1e12);
  const int drives = static_cast<int>(topology->drives.size());
  services::StorageBackend backend;
  // Erasure coding CPU (kEcEncode/DecodeBytesPerCoreSecond, measured: docs/models.md).
  const double ec_cpu_s_per_byte = 1.0 / kEcEncodeBytesPerCoreSecond;
  const double ec_decode_cpu_s_per_byte = 1.0 / kEcDecodeBytesPerCoreSecond;
  // A new store for a drive's (or filer head's) writes, over the dataset's objects for a
  // training run (a checkpoint run starts empty).
  auto writable_store = [&]() -> services::WrittenObjectStore& {
    world.written.push_back(std::make_unique<services::WrittenObjectStore>(
        drive_capacity,
        world.union_index ? static_cast<const services::ObjectIndex*>(world.union_index.get())
        : checkpoint      ? nullptr
                          : static_cast<const services::ObjectIndex*>(world.index.get()),
        services::WrittenObjectStoreOptions{.reserve_bytes =
                                                block ? bw.object_size_bytes : uint64_t{4} << 20}));
    return *world.written.back();
  };

  if (s.storage.design == StorageDesign::kRados) {
    crush::CrushMap map;
    if (!s.storage.rados.crush_map_path.empty()) {
      auto loaded = crush::load_text_map(s.storage.rados.crush_map_path);
      if (!loaded.ok()) return loaded.status();
      map = std::move(*loaded);
      if (map.max_devices() != drives) {
        return Status::invalid_argument(s.storage.rados.crush_map_path + ": the map has " +
                                        std::to_string(map.max_devices()) + " OSDs, the cluster " +
                                        std::to_string(drives) + " drives (one OSD per drive)");
      }
    } else {
      crush::GeneratedMapSpec gm;
      gm.hosts = s.cluster.storage.count;
      gm.devices_per_host = s.cluster.storage.drives_per_node;
      gm.device_weight = static_cast<uint32_t>(tib_weight(s.cluster.storage.drive.capacity_tb) *
                                               crush::kWeightOne);
      auto generated = crush::generate_host_map(gm);
      if (!generated.ok()) return generated.status();
      map = std::move(*generated);
    }
    world.crush_map = std::make_unique<crush::CrushMap>(std::move(map));
    placement::PoolSpec spec;
    spec.pg_num = s.storage.rados.pg_num;
    const bool ec = s.storage.rados.ec_k > 0;
    spec.size =
        ec ? s.storage.rados.ec_k + s.storage.rados.ec_m : std::max(1, s.storage.rados.replicas);
    spec.erasure = ec;
    // The generated map's rule 0 is replicated by host, rule 1 erasure (indep) by host.
    spec.crush_rule = s.storage.rados.crush_rule >= 0 ? s.storage.rados.crush_rule : (ec ? 1 : 0);
    auto pool = placement::CrushPool::create(
        *world.crush_map, spec, placement::OsdStates::all_up_in(world.crush_map->max_devices()));
    if (!pool.ok()) return pool.status();
    world.pool = std::make_unique<placement::CrushPool>(std::move(*pool));
    placement::Placement* client_placement = world.pool.get();
    if (models::has_failures(s)) {
      // The cluster map the monitor will change, and the placement the clients follow.
      cluster::Pool cp;
      cp.spec = spec;
      cp.redundancy =
          ec ? cluster::Redundancy::erasure_coded(s.storage.rados.ec_k, s.storage.rados.ec_m)
             : cluster::Redundancy::replicated(spec.size);
      auto osd_map = cluster::OsdMap::create(
          std::make_shared<const crush::CrushMap>(*world.crush_map), drives, {cp});
      if (!osd_map.ok()) return osd_map.status();
      world.osd_map = std::make_unique<cluster::OsdMap>(std::move(*osd_map));
      auto initial = world.osd_map->pool_placement(spec.id);
      if (!initial.ok()) return initial.status();
      world.switching = std::make_unique<SwitchingPlacement>(std::move(*initial));
      client_placement = world.switching.get();
    }
    layout::RbdLayoutSpec ls;
    ls.object_size_bytes = s.storage.rados.object_size_bytes;
    if (checkpoint) {
      // Checkpoint writes go in transfer units (docs/models.md, "Checkpoints").
      ls.object_size_bytes = std::max(ls.object_size_bytes, s.simulation.transfer_unit_bytes);
    }
    ls.stripe_unit_bytes = ls.object_size_bytes;
    if (block) {
      ls.object_size_bytes = bw.object_size_bytes;
      ls.stripe_unit_bytes = bw.stripe_unit_bytes;
      ls.stripe_count = bw.stripe_count;
    }
    auto rbd = layout::RbdLayout::create(ls);
    if (!rbd.ok()) return rbd.status();
    world.index = std::make_unique<services::DatasetObjectIndex>(
        *world.dataset, services::DatasetObjectIndex::Naming::kRados, *rbd);
    if (beside != nullptr) {
      // The volume images beside the dataset: one per simulated block node, or one parent.
      const models::BlockWorkload& vb = beside->block;
      services::DatasetSpec vs;
      vs.name = vb.clone ? "golden" : "volumes";
      vs.files = vb.clone ? 1 : beside_nodes(scenario, *beside, plan);
      vs.samples_per_file = 1;
      vs.sample_bytes_mean = static_cast<double>(vb.volume_bytes);
      auto images = services::Dataset::create(vs, env.random());
      if (!images.ok()) return images.status();
      world.volume_images = std::make_unique<services::Dataset>(std::move(*images));
      auto vl =
          layout::RbdLayout::create({vb.object_size_bytes, vb.stripe_unit_bytes, vb.stripe_count});
      if (!vl.ok()) return vl.status();
      world.volume_layout = std::make_unique<layout::RbdLayout>(*vl);
      world.volume_index = std::make_unique<services::DatasetObjectIndex>(
          *world.volume_images, services::DatasetObjectIndex::Naming::kRados, *vl);
      world.union_index = std::make_unique<services::UnionObjectIndex>(
          std::vector<const services::ObjectIndex*>{world.index.get(), world.volume_index.get()});
    }
    if (auto q = make_op_queues(env, s, drives); !q.empty()) world.op_queues = std::move(q);
    for (int d = 0; d < drives; ++d) {
      services::OsdServiceOptions o;
      o.endpoint_name = services::osd_endpoint_name(d);
      if (!world.op_queues.empty()) o.op_queue = world.op_queues[d].get();
      o.cpu_s_per_op = server_cpu_s;
      o.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
      o.ec_cpu_s_per_byte = ec_cpu_s_per_byte;
      o.ec_decode_cpu_s_per_byte = ec_decode_cpu_s_per_byte;
      // A primary's worker waits for its replicas or shards: writes and erasure-coded reads
      // get Ceph's 16 op threads per OSD (osd_op_num_shards_ssd 8 x
      // osd_op_num_threads_per_shard_ssd 2); replicated reads never wait on a peer, and 4
      // workers keep the drive as busy at a quarter of the simulation's tasks.
      o.worker_tasks = (checkpoint || block || ec) ? 16 : 4;
      if (models::has_failures(s)) {
        // An erasure-coded primary reads around a silent shard after 1 s; writes of a PG
        // whose devices changed are discarded (the clients resend them), looked at every 1 s.
        o.shard_timeout_s = 1.0;
        o.placement = world.switching.get();
        o.interval_check_s = 1.0;
      }
      world.object_services.push_back(std::make_unique<services::OsdService>(
          env, env.host_of_drive(d), env.device(d), writable_store(), o));
    }
    ErasureCoding ec_spec;
    if (ec) ec_spec = ErasureCoding{s.storage.rados.ec_k, s.storage.rados.ec_m, 4096};
    // Writes: the objects in flight librados' objecter lets one writer process have
    // (objecter_inflight_op_bytes, 100 MiB; each checkpoint rank is a process of its own), at
    // least the read window.
    const int write_window = static_cast<int>(std::max<uint64_t>(
        s.storage.rados.inflight_objects,
        kObjecterInflightBytes / std::max<uint64_t>(1, rbd->spec().object_size_bytes)));
    backend = services::RadosBackend{*rbd,
                                     client_placement,
                                     s.storage.rados.inflight_objects,
                                     ec_spec,
                                     models::has_failures(s) ? &world.map_epoch : nullptr,
                                     1.0,
                                     write_window};
  } else if (s.storage.design == StorageDesign::kPfs) {
    std::vector<layout::Ost> osts;
    for (int d = 0; d < drives; ++d) {
      layout::Ost o;
      o.index = static_cast<uint32_t>(d);
      o.oss = static_cast<uint32_t>(d / s.cluster.storage.drives_per_node);
      o.capacity_bytes = drive_capacity;
      o.free_bytes = drive_capacity;
      osts.push_back(o);
    }
    auto allocator = layout::OstAllocator::create(osts, {});
    if (!allocator.ok()) return allocator.status();
    layout::LustreLayoutSpec ls;
    ls.stripe_size_bytes = s.storage.pfs.stripe_size_bytes;
    ls.stripe_count = s.storage.pfs.stripe_count;
    Random layout_rng = env.random().fork();
    auto layouts = services::allocate_pfs_layouts(*world.dataset, *allocator, ls, layout_rng);
    if (!layouts.ok()) return layouts.status();
    world.pfs_layouts = std::make_unique<services::PfsLayouts>(std::move(*layouts));
    world.index = std::make_unique<services::DatasetObjectIndex>(
        *world.dataset, services::DatasetObjectIndex::Naming::kPfs,
        layout::RbdLayout::default_layout(), world.pfs_layouts.get());
    for (int d = 0; d < drives; ++d) {
      services::OsdServiceOptions o;
      o.endpoint_name = services::ost_endpoint_name(static_cast<uint32_t>(d));
      o.cpu_s_per_op = server_cpu_s;
      o.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
      world.object_services.push_back(std::make_unique<services::OsdService>(
          env, env.host_of_drive(d), env.device(d), writable_store(), o));
    }
    // Metadata servers: each runs its rates / k (the slice's share); `latency_us` is the
    // service time at the highest of the rates, which sets the workers in parallel.
    const models::PfsSpec& pfs = s.storage.pfs;
    const double service_s = pfs.mds_latency_us * 1e-6;
    const double top =
        std::max({pfs.open_per_s(), pfs.close_per_s(), pfs.create_per_s(), pfs.stat_per_s()}) / k;
    const int parallel = std::max(1, static_cast<int>(std::lround(top * service_s)));
    for (int m = 0; m < mds_count; ++m) {
      services::MetadataServiceOptions o;
      o.endpoint_name = services::mds_endpoint_name(m);
      o.parallel_ops = parallel;
      o.open_time_s = parallel / (pfs.open_per_s() / k);
      o.close_time_s = parallel / (pfs.close_per_s() / k);
      o.create_time_s = parallel / (pfs.create_per_s() / k);
      o.stat_time_s = parallel / (pfs.stat_per_s() / k);
      world.mds.push_back(std::make_unique<services::MetadataService>(
          env, topology->mds[m],
          checkpoint ? std::map<std::string, uint64_t, std::less<>>{}
                     : world.dataset->sizes_by_path(),
          o));
    }
    // Lustre's 4 MiB RPCs; a slice coalesces them up to the transfer unit, keeping the bytes
    // in flight per file.
    uint64_t rpc = 4ull << 20;
    int inflight = s.storage.pfs.inflight_rpcs;
    if (((k > 1 && coalesce_in_slice(s)) || checkpoint) && s.simulation.transfer_unit_bytes > rpc) {
      const uint64_t bytes_in_flight = rpc * static_cast<uint64_t>(inflight);
      rpc = s.simulation.transfer_unit_bytes;
      inflight = static_cast<int>(std::max<uint64_t>(1, bytes_in_flight / rpc));
    }
    backend = services::PfsBackend{world.pfs_layouts.get(), services::mds_endpoint_name(0), rpc,
                                   inflight, mds_count};
  } else {
    // NFS: each storage node is a filer head; its files are striped over its drives, so every
    // drive serves the head's export: one service per drive, all on the head's endpoint, and
    // an RPC goes to whichever drive's worker is free. Design local is the same per node: the
    // node's file system striped over its own drives, every file on every node, each client
    // reading its own "head" (services::NfsBackend::local_head).
    const int heads = s.cluster.storage.count;
    const bool local = s.storage.design == StorageDesign::kLocal;
    world.index = std::make_unique<services::DatasetObjectIndex>(
        *world.dataset, services::DatasetObjectIndex::Naming::kNfs);
    for (int h = 0; h < heads; ++h) {
      // The head's files are written into one store its drive services share (a file lands
      // on whichever drive's worker takes each RPC; the simulated drives have no seek model).
      services::WrittenObjectStore& store = writable_store();
      world.head_mutexes.push_back(std::make_unique<services::EnvMutex>(env));
      world.head_unstable.push_back(std::make_unique<services::UnstableWrites>(env));
      for (int i = 0; i < s.cluster.storage.drives_per_node; ++i) {
        const int drive = h * s.cluster.storage.drives_per_node + i;
        services::OsdServiceOptions o;
        o.endpoint_name = services::nfs_endpoint_name(h);
        o.cpu_s_per_op = server_cpu_s;
        // (Design local has no server: the node pays its per-byte CPU as the client.)
        o.cpu_s_per_byte = local ? 0 : s.storage.protocol.cpu_s_per_byte();
        o.worker_tasks = 2;
        o.store_mutex = world.head_mutexes.back().get();
        o.unstable = world.head_unstable.back().get();
        world.object_services.push_back(std::make_unique<services::OsdService>(
            env, env.host_of_drive(drive), env.device(drive), store, o));
      }
    }
    uint64_t rsize = local ? s.storage.local.io_bytes : s.storage.nfs.rsize_bytes;
    int inflight = local ? s.storage.local.inflight_ios : s.storage.nfs.inflight_rpcs;
    if (!local && ((k > 1 && coalesce_in_slice(s)) || checkpoint) &&
        s.simulation.transfer_unit_bytes > rsize) {  // as for pfs
      const uint64_t bytes_in_flight = rsize * static_cast<uint64_t>(inflight);
      rsize = s.simulation.transfer_unit_bytes;
      inflight = static_cast<int>(std::max<uint64_t>(1, bytes_in_flight / rsize));
    }
    backend = services::NfsBackend{heads, rsize, inflight};
  }
  for (auto& svc : world.object_services) svc->start();
  for (auto& m : world.mds) m->start();
  if (world.osd_map) {
    FailureDriverOptions fo;
    fo.events = s.failures;
    fo.recovery = s.storage.rados.recovery;
    // A slice's servers run at m/k of their capacity: so does their recovery share.
    fo.recovery.recovery_bytes_per_s_per_osd *= share;
    for (auto& q : world.op_queues) fo.op_queues.push_back(q.get());
    fo.op_cpu_s = s.storage.protocol.server_cpu_us_per_op * 1e-6;
    fo.drives_per_host = s.cluster.storage.drives_per_node;
    fo.monitor_host = env.host_of_drive(0);
    std::vector<services::OsdService*> osds;
    for (int d = 0; d < drives; ++d) {
      osds.push_back(world.object_services[d].get());
      fo.osd_hosts.push_back(env.host_of_drive(d));
    }
    const uint64_t object_bytes = s.storage.rados.object_size_bytes;
    uint64_t objects = 0;
    // What the pool stores: the dataset, or more (stored_tib), cut like the dataset in a slice.
    // A checkpoint's objects count as they are written (pg_contents below): stored_tib is then
    // what the pool held before.
    uint64_t stored = checkpoint ? 0 : world.dataset->total_bytes();
    if (!checkpoint) {
      for (const auto& f : world.dataset->files()) {
        objects += (f.size_bytes + object_bytes - 1) / object_bytes;
      }
    }
    const double extra = s.storage.rados.stored_bytes / k;
    if (extra > static_cast<double>(stored)) {
      objects = static_cast<uint64_t>(std::ceil(extra / static_cast<double>(object_bytes)));
      stored = static_cast<uint64_t>(extra);
    }
    fo.sizes = cluster::PgSizes::spread(s.storage.rados.pg_num, objects, stored);
    // slow_drive, nic_degraded: a drive's link (reads one way, writes the other), or a storage
    // host's NIC link, at 1/factor of its speed.
    fo.set_drive_slowdown = [&env, links = link_slowdown(*topology, *platform, LinkRole::kDrive)](
                                int32_t osd, double factor) mutable {
      links(osd, factor);
      env.set_drive_slowdown(osd, factor);
    };
    fo.set_nic_slowdown = link_slowdown(*topology, *platform, LinkRole::kStorageNic);
    fo.replace_drive = [stores = &world.written](int32_t osd) { (*stores)[osd]->clear(); };
    std::vector<int> link_index;  // [fo.links]: the topology link
    // link_* events name the cluster's links as the scenario has them; the simulated platform
    // may hold fewer client nodes (a checkpoint's, or a slice), so each is found there by the
    // hosts beyond it.
    for (size_t i = 0; i < fo.events.size(); ++i) {
      models::FailureEvent& e = fo.events[i];
      if (e.link.empty()) continue;
      auto located = locate_link(scenario, mds_count, *topology, e.link, plan.slice_factor);
      if (!located.ok()) {
        return Status::invalid_argument(scenario.source_path + ": failures[" +
                                        std::to_string(e.entry) +
                                        "].link: " + located.status().message());
      }
      e.target = -1;
      if (*located < 0) continue;  // no simulated traffic crosses it
      FailureDriverOptions::Link link;
      link.name = e.link[0] + "-" + e.link[1];
      link.cables = topology->links[*located].aggregated;
      for (int n : models::nodes_beyond(*topology, static_cast<size_t>(*located))) {
        if (topology->nodes[n].kind == NodeKind::kStorage) {
          link.cut_off_hosts.push_back(topology->nodes[n].index);
        }
      }
      auto same = std::find(link_index.begin(), link_index.end(), *located);
      e.target = static_cast<int32_t>(same - link_index.begin());
      if (same == link_index.end()) {
        fo.links.push_back(std::move(link));
        link_index.push_back(*located);
      }
    }
    fo.set_link_capacity = [plat = platform.operator->(), link_index,
                            base = std::map<size_t, std::pair<double, double>>()](
                               int32_t which, double fraction) mutable {
      if (which < 0 || which >= static_cast<int32_t>(link_index.size())) return;
      const size_t i = static_cast<size_t>(link_index[which]);
      if (base.find(i) == base.end()) {
        base[i] = {plat->forward[i]->get_bandwidth(), plat->reverse[i]->get_bandwidth()};
      }
      plat->forward[i]->set_bandwidth(base[i].first * fraction);
      plat->reverse[i]->set_bandwidth(base[i].second * fraction);
    };
    if (checkpoint) {
      // What the checkpoint wrote is in the drives' stores: recovery moves it, and a copy that
      // missed writes while its OSD was down is found by comparing stores.
      SwitchingPlacement* placement = world.switching.get();
      auto* stores = &world.written;
      const uint32_t pg_num = s.storage.rados.pg_num;
      fo.pg_contents = [placement, stores, pg_num](int32_t osd) {
        cluster::PgSizes c;
        c.objects.assign(pg_num, 0);
        c.bytes.assign(pg_num, 0);
        (*stores)[osd]->for_each_written(
            [&](std::string_view name, const services::StoredObject& o) {
              const uint32_t pg = placement->group_of(name);
              ++c.objects[pg];
              c.bytes[pg] += o.client_bytes();
            });
        return c;
      };
      fo.copy_pg = [placement, stores](uint32_t pg, int32_t from, int32_t to) {
        std::vector<std::pair<std::string, services::StoredObject>> copied;
        (*stores)[from]->for_each_written(
            [&](std::string_view name, const services::StoredObject& o) {
              if (placement->group_of(name) == pg) copied.emplace_back(std::string(name), o);
            });
        for (const auto& [name, o] : copied) {
          // (A full target drive keeps what it had: the recovery op charged the bytes anyway.)
          (void)(*stores)[to]->write(name, 0, o.size_bytes, o.client_bytes());
        }
      };
    }
    auto driver = FailureDriver::create(env, *world.osd_map, 1, std::move(osds), *world.switching,
                                        world.map_epoch, std::move(fo));
    if (!driver.ok()) return driver.status();
    world.failures = std::move(*driver);
    world.failures->start();
  }

  if (beside != nullptr) {
    world.beside = beside;
    if (Status st =
            start_beside(scenario, *beside, plan, *topology,
                         std::get<services::RadosBackend>(backend), client_cpu_s, env, world);
        !st.ok()) {
      return st;
    }
  }
  if (checkpoint) {
    return run_checkpoint(CheckpointRun{scenario, s, plan, ck, sim_ranks, seed, options, *topology,
                                        *platform, bound, env, engine, world, backend});
  }
  if (block) {
    return run_block(BlockRun{scenario, s, plan, bw, seed, options, *topology, *platform, env,
                              engine, world, backend, drive_timing});
  }
  // How the (simulated) dataset lies on the drives, for the bounds as placed.
  const models::PlacementLoad load =
      placement_load(*world.dataset, backend, s, plan.storage_factor);

  // ---- clients
  const int accel = s.cluster.clients.accelerators_per_node;
  const int total_gpus = plan.clients * accel;
  const uint64_t shuffle_seed = env.random().next_u64();
  world.clients.resize(plan.clients);
  for (int c = 0; c < plan.clients; ++c) {
    ClientNode& node = world.clients[c];
    // The client's data lands in its sink (GPU memory with GPUDirect Storage, host memory
    // otherwise): the loader and client run there so replies cross the memory or PCIe link.
    node.host = topology->client_sinks[c];
    services::StorageClientOptions co;
    co.name = "client" + std::to_string(c);
    co.cpu_s_per_op = client_cpu_s;
    co.cpu_s_per_byte = s.storage.protocol.cpu_s_per_byte();
    node.client = std::make_unique<services::StorageClient>(env, node.host,
                                                            backend_of_client(backend, s, c), co);
    for (int g = 0; g < accel; ++g) {
      services::GpuConsumerOptions go;
      go.name = co.name + ".gpu" + std::to_string(g);
      go.rank = c * accel + g;
      go.accelerators = total_gpus;
      go.read_threads = w.read_threads;
      go.batch_size = w.batch_size;
      go.prefetch_batches = w.prefetch_batches;
      go.decode_cpu_s_per_sample = w.decode_cpu_s_per_sample;
      go.compute_s_per_step = w.compute_s_per_step;
      go.epochs = w.epochs;
      go.shuffle_seed = shuffle_seed;
      node.gpus.push_back(std::make_unique<services::GpuConsumer>(env, node.host, *node.client,
                                                                  *world.dataset, go));
    }
  }
  const int64_t steps_per_epoch = world.clients.front().gpus.front()->steps_per_epoch();
  if (steps_per_epoch < 1) {
    return Status::invalid_argument(
        in.source_path + ": workloads[0]: " + std::to_string(work.files) +
        " files give each of the " + std::to_string(in.cluster.clients.count * accel) +
        " accelerators less than one batch");
  }
  const int64_t total_steps = steps_per_epoch * w.epochs;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) gpu->start();
  }
  // A checkpoint beside the training read: its ranks (1/k of them in a slice, one per
  // accelerator from node 0) write their shares from start_s on, each checkpoint after the
  // last, while the loaders keep reading (asynchronous checkpointing). Daemons: the run ends
  // with the training read.
  AsyncCheckpoint async_ck;
  if (beside_checkpoint != nullptr) {
    const models::CheckpointWorkload& c = beside_checkpoint->checkpoint;
    async_ck.ranks = std::min(total_gpus, (c.ranks() + k - 1) / k);
    async_ck.rank_bytes =
        static_cast<uint64_t>(std::max(4096.0, std::round(c.total_gb() * 1e9 / c.ranks())));
    async_ck.write_s.assign(c.checkpoints, std::vector<double>(async_ck.ranks, -1));
    for (int rank = 0; rank < async_ck.ranks; ++rank) {
      const int node = rank / accel;
      env.spawn(
          world.clients[node].host, "ckpt.rank" + std::to_string(rank),
          [&, rank, node, c] {
            env.sleep_s(c.start_s);
            for (int i = 0; i < c.checkpoints; ++i) {
              const double t0 = env.now_s();
              auto wr = world.clients[node].client->write_file(
                  "checkpoint" + std::to_string(i) + "/rank" + std::to_string(rank),
                  async_ck.rank_bytes, {.fsync = c.fsync});
              if (!wr.ok()) {
                if (async_ck.error.ok()) async_ck.error = wr.status();
                return;
              }
              async_ck.write_s[i][rank] = env.now_s() - t0;
              async_ck.end_s = std::max(async_ck.end_s, env.now_s());
            }
          },
          TaskOptions{.daemon = true});
    }
  }

  // ---- monitor: throughput series, progress, steady state
  const double interval_s = std::max(0.02, std::min(0.5, w.compute_s_per_step / 2));
  ThroughputSeries series(interval_s);
  std::vector<double> au_series;
  double stopped_at_s = -1;
  // Bytes each link carried in the read direction, integrated from its instantaneous usage
  // at every monitor tick (SimGrid's link-load plugin cannot be used: it crashes on the
  // cancelled receives of daemons killed at the end of a run).
  std::vector<double> link_bytes(topology->links.size(), 0.0),
      link_bytes_reverse(topology->links.size(), 0.0);
  std::vector<services::ClientStats> client_stats;
  double steady_steps_per_s = 0, read_at_stop = 0;
  double warm_at_s = -1, bytes_at_warm = 0;  // the end of the loaders' prefetch fill
  const HostId monitor_host = topology->clients.front();
  // The links into the clients' sinks (host memory, or the GPUs with GPUDirect): every byte a
  // loader reads crosses one of them.
  std::vector<size_t> sink_links;
  for (size_t i = 0; i < topology->links.size(); ++i) {
    if (topology->links[i].role == LinkRole::kClientMemory) sink_links.push_back(i);
  }
  const double mean_sample_bytes =
      static_cast<double>(world.dataset->total_bytes()) /
      (static_cast<double>(world.dataset->files().size()) * w.samples_per_file);
  double last_progress = 0, last_progress_s = 0;  // what the stall check watches
  Status stalled;
  env.spawn(monitor_host, "monitor", [&] {
    double last_flowing = 0;     // the sinks' links' usage at the last tick
    double& warm_s = warm_at_s;  // when every loader had done its first two steps
    for (;;) {
      env.sleep_s(interval_s);
      const double now = env.now_s();
      for (size_t i = 0; i < link_bytes.size(); ++i) {
        link_bytes[i] += platform->forward[i]->get_usage() * interval_s;
        link_bytes_reverse[i] += platform->reverse[i]->get_usage() * interval_s;
      }
      double bytes = 0, au_sum = 0, steps_done = 0;
      // Bytes delivered, counted reply by reply (a file's bytes would arrive in one lump
      // when it completes).
      for (auto& node : world.clients) bytes += static_cast<double>(node.client->bytes_received());
      int64_t min_steps = total_steps;
      for (auto& node : world.clients) {
        for (auto& gpu : node.gpus) {
          const auto& m = gpu->metrics();
          au_sum += partial_au(m, w.compute_s_per_step, now);
          min_steps = std::min(min_steps, m.steps);
          steps_done += static_cast<double>(m.steps);
        }
      }
      // The read rate as the bytes flow: the sinks' links' usage, averaged between this tick and
      // the last (the trapezoid rule: never above what the links carry; a reply counted whole
      // when its last byte lands would put a 4 MiB burst into one interval, up to 1.85x the
      // bound at small intervals: issue 10).
      double flowing = 0;
      for (size_t i : sink_links) flowing += platform->forward[i]->get_usage();
      series.add(now - interval_s / 2, (flowing + last_flowing) / 2 * interval_s);
      last_flowing = flowing;
      au_series.push_back(au_sum / total_gpus);
      if (options.on_progress) {
        options.on_progress(now, static_cast<double>(min_steps) / static_cast<double>(total_steps));
      }
      bool all_done = true;
      for (auto& node : world.clients) {
        for (auto& gpu : node.gpus) all_done = all_done && gpu->metrics().end_s > 0;
      }
      bool stop = !all_done && now >= s.simulation.max_simulated_s;
      // Without failures nothing may stop every read and every step for a minute: such a
      // stall is a Granary defect (a deadlock among the services), and its report would show
      // numbers that are silently wrong. The run fails instead.
      if (bytes + steps_done > last_progress || all_done) {
        last_progress = bytes + steps_done;
        last_progress_s = now;
      } else if (!models::has_failures(s) && now - last_progress_s >= kStallS) {
        stalled = Status::io_error(
            scenario.source_path + ": the run stalled: no read or step completed for " +
            std::to_string(static_cast<int>(kStallS)) + " s of simulated time (from " +
            std::to_string(last_progress_s) +
            " s) with the loaders not done; this is a Granary defect, please report it with "
            "the scenario and seed " +
            std::to_string(seed));
        stop = true;
      }
      // Steady: once every loader is past its first two steps (the start-up), each loader's
      // step rate over its steps since then, first half against second half,
      // summed over the loaders, within 5x the tolerance. Rates run between a loader's own
      // step completions, so the lockstep of compute-bound loaders cannot bias them.
      if (warm_s < 0) {
        bool warm = true;
        for (auto& node : world.clients) {
          for (auto& gpu : node.gpus) {
            warm = warm && static_cast<int>(gpu->metrics().step_end_s.size()) >= 2;
          }
        }
        if (warm) {
          warm_s = now;
          bytes_at_warm = bytes;
        }
      }
      // A checkpoint beside the training read must finish before a steady state counts.
      bool checkpoint_done = true;
      for (const auto& ck : async_ck.write_s) {
        for (double x : ck) checkpoint_done = checkpoint_done && x >= 0;
      }
      if (!all_done && plan.allow_early_stop && checkpoint_done) {
        // The window must be long enough not to measure the loaders' prefetch queues draining
        // instead of the storage feeding them: at least 1 s since the warm-up (short steps:
        // cosmoflow was once declared steady after 0.04 s), and 3 steps done by every loader.
        const double min_window_s = 1.0;
        if (warm_s >= 0 && now - warm_s >= min_window_s) {
          double r1 = 0, r2 = 0, r = 0;
          bool enough = true;
          for (auto& node : world.clients) {
            for (auto& gpu : node.gpus) {
              const auto& ends = gpu->metrics().step_end_s;
              const auto first = std::lower_bound(ends.begin(), ends.end(), warm_s);
              const size_t m = static_cast<size_t>(ends.end() - first);
              if (m < 3) {
                enough = false;
                break;
              }
              const size_t mid = (m - 1) / 2;
              const double t0 = *first, tm = *(first + mid), t1 = ends.back();
              if (!(tm > t0 && t1 > tm)) {
                enough = false;
                break;
              }
              r1 += static_cast<double>(mid) / (tm - t0);
              r2 += static_cast<double>(m - 1 - mid) / (t1 - tm);
              r += static_cast<double>(m - 1) / (t1 - t0);
            }
            if (!enough) break;
          }
          // And conservation: in a steady state the accelerators cannot take more bytes than
          // storage delivers. Many readers on few drives finish their files in waves; between
          // waves the accelerators eat what a wave brought at a steady-looking step rate
          // above the storage's (a Micron single-drive run: 14.7 GiB/s "epoch" from a
          // 13.0 GiB/s drive until this check).
          const double consumed = r * w.batch_size * mean_sample_bytes;
          const double delivered = (bytes - bytes_at_warm) / (now - warm_s);
          const double tolerance = s.simulation.steady_state_tolerance * 5;
          if (enough && r1 > 0 && std::abs(r2 - r1) / r1 <= tolerance &&
              consumed <= delivered * (1 + tolerance)) {
            stop = true;
            steady_steps_per_s = r;
          }
        }
      }
      if (all_done || stop) {
        // Read the clients' figures here: their locks are Env semaphores, usable only
        // from a task.
        for (auto& node : world.clients) client_stats.push_back(node.client->stats());
        if (world.block_driver) world.block_driver->collect(now);
        if (stop) {
          stopped_at_s = now;
          read_at_stop = bytes;
          sg4::Actor::kill_all();
        }
        return;
      }
    }
  });

  engine.run();
  if (!async_ck.error.ok()) return async_ck.error;
  if (!stalled.ok()) return stalled;
  double end_s = stopped_at_s;
  if (end_s < 0) {  // the epoch ended: the last loader's end
    end_s = 0;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus) end_s = std::max(end_s, gpu->metrics().end_s);
    }
  }

  // ---- measurements
  LatencyRecorder file_latency;
  std::vector<double> aus;
  double bytes = 0;
  int64_t samples = 0;
  double epoch_s = 0;
  bool extrapolated = false;
  Status first_error;
  uint64_t simulated_requests = 0;
  for (const auto& cs : client_stats) {
    for (double l : cs.file_latency_s) file_latency.add(l);
    simulated_requests += cs.requests;
  }
  for (auto& node : world.clients) bytes += static_cast<double>(node.client->bytes_received());
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) {
      const auto& m = gpu->metrics();
      // A loader that failed fails the run, whenever it stopped (one refused at its start left
      // the monitor waiting for the time limit: issue 10). Loaders killed at a steady-state stop
      // keep an OK status.
      if (first_error.ok() && !gpu->status().ok()) first_error = gpu->status();
      samples += m.steps * w.batch_size;
      double au = stopped_at_s >= 0 ? partial_au(m, w.compute_s_per_step, end_s) : m.au;
      if (stopped_at_s >= 0 && steady_steps_per_s > 0 && warm_at_s >= 0) {
        // This loader's own steady step period since the prefetch fill, carried to the end
        // of its steps: its extrapolated MLPerf AU.
        const auto& ends = m.step_end_s;
        const auto first = std::lower_bound(ends.begin(), ends.end(), warm_at_s);
        const size_t n = static_cast<size_t>(ends.end() - first);
        if (n >= 2 && ends.back() > *first) {
          const double period = (ends.back() - *first) / static_cast<double>(n - 1);
          const double finish = ends.back() + period * static_cast<double>(total_steps - m.steps);
          // DLIO's AU: the first step's compute and its whole processing left out.
          const double first_step =
              (m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front()) + w.compute_s_per_step;
          const double compute = static_cast<double>(total_steps - 1) * w.compute_s_per_step;
          au = std::min(1.0, compute / std::max(compute, finish - m.start_s - first_step));
        }
      }
      aus.push_back(au);
      epoch_s = std::max(epoch_s, m.end_s / w.epochs);
    }
  }
  if (stopped_at_s >= 0 && steady_steps_per_s > 0) {
    // Extrapolate the steady state to the end of the epochs: the steps left at the steady
    // step rate of all loaders; MLPerf's AU over that span.
    double done_steps = 0, first_wait = 0;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus) {
        const auto& m = gpu->metrics();
        done_steps += static_cast<double>(m.steps);
        first_wait += m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front();
      }
    }
    first_wait /= total_gpus;
    const double remaining = static_cast<double>(total_steps) * total_gpus - done_steps;
    const double total_s = end_s + std::max(0.0, remaining) / steady_steps_per_s;
    epoch_s = total_s / w.epochs;
    extrapolated = true;
  }
  if (!first_error.ok()) {
    return Status::invalid_argument(scenario.source_path +
                                    ": the run failed: " + first_error.message());
  }
  double au_mean = aus.empty() ? 0 : std::accumulate(aus.begin(), aus.end(), 0.0) / aus.size();
  double au_min = aus.empty() ? 0 : *std::min_element(aus.begin(), aus.end());
  double au_max = aus.empty() ? 0 : *std::max_element(aus.begin(), aus.end());

  const double gib = std::ldexp(1.0, 30);
  const double full_factor = static_cast<double>(k);
  nlohmann::json report;
  report["granary_report"] = 1;
  report["scenario"] = {{"name", in.name}, {"source", in.source_path}, {"seed", seed}};
  report["fidelity"] = {{"mode", fidelity_name(plan.fidelity)},
                        {"slice_factor", k},
                        {"simulated_client_nodes", plan.clients},
                        {"simulated_storage_servers", plan.storage_servers},
                        {"storage_capacity_share", round_to(share, 6)},
                        {"simulated_requests", simulated_requests},
                        {"reason", plan.reason},
                        {"stopped_at_steady_state", stopped_at_s >= 0 && extrapolated}};
  nlohmann::json summary;
  summary["accelerators"] = in.cluster.clients.count * accel;
  summary["epoch_seconds"] = round_to(epoch_s, 6);
  summary["epoch_extrapolated"] = extrapolated;
  // Stopped at max_simulated_s before the loaders finished (and not from a steady state): the
  // epoch took at least the simulated time.
  const bool epoch_complete = stopped_at_s < 0 || extrapolated;
  summary["epoch_complete"] = epoch_complete;
  if (!epoch_complete) summary["epoch_seconds"] = round_to(std::max(epoch_s, end_s), 6);
  summary["simulated_seconds"] = round_to(end_s, 6);
  // MLPerf Storage's rule against the page cache: a dataset at least 5x the client nodes'
  // memory. Granary serves every read from storage (no page cache is modelled), which is right
  // only when the rule holds.
  {
    const double dataset =
        static_cast<double>(work.files) * work.samples_per_file * work.sample_bytes_mean;
    const double memory = in.cluster.clients.count * in.cluster.clients.memory_gib * gib;
    const double ratio = memory > 0 ? dataset / memory : 0;
    summary["dataset_over_client_memory"] = round_to(ratio, 6);
    summary["page_cache_rule_met"] = ratio >= kMlperfDatasetOverMemory;
  }
  summary["read_gibps_mean"] = round_to(end_s > 0 ? bytes * full_factor / end_s / gib : 0, 6);
  // The rate once every loader's prefetch queue had filled (start-up excluded).
  // The bytes delivered since every loader's prefetch fill, per second.
  const double steady_span = warm_at_s >= 0 ? end_s - warm_at_s : 0;
  double steady_bytes_per_s = steady_span > 0 ? (bytes - bytes_at_warm) / steady_span : 0;
  if (extrapolated) {
    // The long-run rate is at most what the steps consume (loaders may still be deepening
    // their queues during the window) and at most what was delivered.
    const double consumed = steady_steps_per_s * w.batch_size * mean_sample_bytes;
    steady_bytes_per_s = steady_bytes_per_s > 0 ? std::min(steady_bytes_per_s, consumed) : consumed;
  }
  summary["read_gibps_steady"] = round_to(steady_bytes_per_s * full_factor / gib, 6);
  // The epoch's rate as MLPerf Storage reports throughput: the samples an epoch consumes
  // (steps x batch x accelerators) at the mean sample size, over the (extrapolated) epoch;
  // null when the epoch did not end within the simulated time.
  {
    const double epoch_bytes = static_cast<double>(steps_per_epoch) * w.batch_size *
                               in.cluster.clients.count * accel * mean_sample_bytes;
    summary["read_gibps_epoch"] = epoch_complete && epoch_s > 0
                                      ? nlohmann::json(round_to(epoch_bytes / epoch_s / gib, 6))
                                      : nlohmann::json();
  }
  summary["bytes_read"] = static_cast<uint64_t>(std::llround(bytes * full_factor));
  summary["samples_read"] = samples * k;
  summary["steps_per_epoch"] = steps_per_epoch;
  summary["accelerator_utilization"] = {{"mean", round_to(au_mean, 6)},
                                        {"min", round_to(au_min, 6)},
                                        {"max", round_to(au_max, 6)},
                                        {"threshold", w.au_threshold},
                                        {"meets_threshold", au_mean >= w.au_threshold}};
  report["summary"] = summary;
  const DriveTiming full_drive = DriveTiming::from_profile(in.cluster.storage.drive);
  std::function<double(double)> hdd_positioning;
  if (full_drive.hard_disk) {
    hdd_positioning = [&](double q) { return full_drive.head.positioning_s(q, /*write=*/false); };
  }
  report["bounds"] = read_bounds_json(models::read_bounds(
      in, work, *real_topology, default_platform.client_cores, &load, hdd_positioning));
  report["latency_ms"]["read"] = {{"unit", "one file (sample) read, request to last byte"},
                                  {"count", file_latency.count()},
                                  {"mean", round_to(file_latency.mean() * 1e3, 6)},
                                  {"p50", round_to(file_latency.percentile(50) * 1e3, 6)},
                                  {"p99", round_to(file_latency.percentile(99) * 1e3, 6)},
                                  {"p999", round_to(file_latency.percentile(99.9) * 1e3, 6)},
                                  {"max", round_to(file_latency.max() * 1e3, 6)}};
  report["utilization"] =
      utilization_json(*topology, *platform, link_bytes, link_bytes_reverse, end_s);
  nlohmann::json rates = nlohmann::json::array();
  for (double r : series.rates(end_s)) rates.push_back(round_to(r * full_factor / gib, 6));
  nlohmann::json aus_json = nlohmann::json::array();
  for (double a : au_series) aus_json.push_back(round_to(a, 6));
  report["series"] = {
      {"interval_s", interval_s}, {"read_gibps", rates}, {"accelerator_utilization", aus_json}};
  if (world.failures) {
    // (A training run writes nothing: no write is ever discarded.)
    nlohmann::json rec = recovery_report(s, world, client_stats, 0, full_factor,
                                         static_cast<double>(world.dataset->total_bytes()));
    // MLPerf AU over windows: compute time of the steps that ended in the window over the
    // accelerators' time in it.
    auto window_au = [&](double t0, double t1) -> nlohmann::json {
      if (!(t1 > t0)) return nullptr;
      double steps = 0;
      for (auto& node : world.clients) {
        for (auto& gpu : node.gpus) {
          for (double t : gpu->metrics().step_end_s) steps += (t > t0 && t <= t1) ? 1 : 0;
        }
      }
      return round_to(std::min(1.0, steps * w.compute_s_per_step / (total_gpus * (t1 - t0))), 6);
    };
    const double failed_at = world.failures->first_failure_s();
    const double clean_at = world.failures->clean_at_s();
    if (failed_at >= 0) {
      const nlohmann::json before = window_au(std::max(0.0, warm_at_s), std::min(failed_at, end_s));
      rec["accelerator_utilization_before_failure"] = before;
      rec["accelerator_utilization_after_failure"] =
          window_au(failed_at, clean_at >= 0 ? std::min(clean_at, end_s) : end_s);
      // The dip the failure causes: sliding windows of `span` (5 steps, at least 2 s) from the
      // failure on, one per monitor interval; the dip starts at the first window whose AU is
      // below the target (98% of the workload's threshold, or of the AU before the failure if
      // that was lower) and ends at the start of the first window after it back at the target.
      std::vector<double> ends;
      for (auto& node : world.clients) {
        for (auto& gpu : node.gpus) {
          const auto& e = gpu->metrics().step_end_s;
          ends.insert(ends.end(), e.begin(), e.end());
        }
      }
      std::sort(ends.begin(), ends.end());
      const double span = std::max(2.0, 5 * w.compute_s_per_step);
      const double target =
          std::min(w.au_threshold, before.is_number() ? before.get<double>() : 1.0) * 0.98;
      auto au_in = [&](double t0) {
        const auto a = std::upper_bound(ends.begin(), ends.end(), t0);
        const auto b = std::upper_bound(ends.begin(), ends.end(), t0 + span);
        return static_cast<double>(b - a) * w.compute_s_per_step / (total_gpus * span);
      };
      double dip_from = -1, dip_to = -1;
      for (double t0 = failed_at; t0 + span <= end_s; t0 += interval_s) {
        const bool low = au_in(t0) < target;
        if (dip_from < 0 && low) dip_from = t0 + span;  // the window's end: AU fell by then
        if (dip_from >= 0 && !low) {
          dip_to = t0;
          break;
        }
      }
      rec["accelerator_utilization_dip"] = {
          {"target", round_to(target, 6)},
          {"window_s", round_to(span, 6)},
          {"from_s", dip_from >= 0 ? nlohmann::json(round_to(dip_from, 6)) : nlohmann::json()},
          {"to_s", dip_to >= 0 ? nlohmann::json(round_to(dip_to, 6)) : nlohmann::json()}};
      // Time from the failure until the accelerators are fed again: 0 without a dip, null
      // when the run ended in it.
      rec["time_to_accelerator_recovery_s"] = dip_from < 0 ? nlohmann::json(0.0)
                                              : dip_to < 0
                                                  ? nlohmann::json()
                                                  : nlohmann::json(round_to(dip_to - failed_at, 6));
    }
    report["recovery"] = rec;
  }
  if (world.block_driver) report["block"] = beside_json(world, *world.beside);
  if (beside_checkpoint != nullptr) {
    report["checkpoint"] = async_checkpoint_json(*beside_checkpoint, async_ck, k);
  }
  return report;
}

}  // namespace

Result<nlohmann::json> run_scenario(const Scenario& scenario, const RunOptions& options) {
  // What the environment changes in a run is recorded in its report (docs/report-format.md).
  auto simgrid_config = simgrid_config_from_env();
  if (!simgrid_config.ok()) return simgrid_config.status();
  auto report = simulate(scenario, options, *simgrid_config);
  if (!report.ok()) return report;
  (*report)["run"] = {{"simgrid_config", *simgrid_config}};
  return report;
}

}  // namespace granary::sim

// The cluster plan: what a scenario makes, as plain data, before anything runs — how it will be
// simulated (RunPlan: request level or a slice), the cluster's topology and the simulated one,
// the dataset, the storage services and their options, the placement and layouts, the clients
// and accelerators, the failure timeline with its fabric links located, and a mixed run's
// workloads beside the main one. Built from the Scenario alone: no SimGrid, no Env, no
// randomness (everything drawn from the run's seed is drawn when the plan is built into a world:
// sim/world.h builds it on SimGrid; real mode can build the same plan into threads and NVMe).
//
// The options structs of engine/services are filled in everything but the pointers to objects
// the world owns (op queues, placements, store mutexes): the world sets those.
//
// Thread-safety: plain values; build_cluster_plan is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/crush/edit.h"
#include "engine/layout/lustre.h"
#include "engine/layout/rbd.h"
#include "engine/messages.h"
#include "engine/placement/crush_pool.h"
#include "engine/services/client.h"
#include "engine/services/dataset.h"
#include "engine/services/file_mapping.h"
#include "engine/services/gpu_consumer.h"
#include "engine/services/mds.h"
#include "engine/services/op_queue.h"
#include "engine/services/osd.h"
#include "engine/status.h"
#include "models/read_bounds.h"
#include "models/scenario.h"
#include "models/topology.h"

namespace granary::sim {

// How a scenario will be simulated.
struct RunPlan {
  models::Fidelity fidelity = models::Fidelity::kRequest;  // kRequest or kSlice
  int slice_factor = 1;     // k: the slice has 1/k of the clients and storage servers
  int clients = 0;          // client nodes simulated
  int storage_factor = 1;   // m: the slice has 1/m of the storage servers, each at m/k capacity
  int storage_servers = 0;  // storage servers simulated
  bool allow_early_stop = false;
  std::string reason;  // why this plan
};

// The plan for a scenario (no simulation): what "auto" resolves to, the slice factor.
RunPlan plan_run(const models::Scenario& scenario);

// The storage design's services, layouts and the backend its clients use.
struct StoragePlan {
  models::StorageDesign design = models::StorageDesign::kRados;
  int drives = 0;                     // simulated drives (one service or more per drive)
  uint64_t drive_capacity_bytes = 0;  // each drive's (or filer head's) written-object store
  // Whether the stores hold the dataset's objects (a training or block run) or start empty (a
  // checkpoint run), and the extra capacity each store keeps for one object in flight.
  bool stores_hold_dataset = true;
  uint64_t store_reserve_bytes = 0;
  // One per drive ([drive]; nfs and local: the drives of head h are h * drives_per_head + i).
  // The world sets op_queue, placement, store_mutex and unstable.
  std::vector<services::OsdServiceOptions> osds;

  // rados: the CRUSH map (loaded from crush_map_path, or generated), the pool, the object
  // layout, the OSD op queues (null: none; the world names one per drive) and the backend's
  // windows. failure_map: the monitor changes the map (failure scenarios), the clients follow.
  std::string crush_map_path;
  crush::GeneratedMapSpec generated_map;
  placement::PoolSpec pool;
  bool failure_map = false;
  layout::RbdLayoutSpec layout;
  std::optional<services::OpQueueOptions> op_queue;
  ErasureCoding ec;
  int inflight_objects = 0;

  // pfs: the OSTs the layouts are allocated on, the file layout, the metadata servers
  // ([mds]; each on the topology's mds host of that number).
  std::vector<layout::Ost> osts;
  layout::LustreLayoutSpec pfs_layout;
  std::vector<services::MetadataServiceOptions> mds;
  bool mds_know_dataset = true;  // the MDS start with the dataset's files (not a checkpoint's)

  // nfs and local: the filer heads (each storage node), each with its drives' services sharing
  // one store on one endpoint.
  int heads = 0;
  int drives_per_head = 0;

  // pfs and nfs: the request size and the requests in flight per file.
  uint64_t request_bytes = 0;
  int inflight_requests = 0;
};

// A storage client (one per simulated client node of the workload), on the node's sink host
// (topology.client_sinks[node]).
struct ClientPlan {
  int node = 0;
  services::StorageClientOptions options;
};

// The failure timeline as the simulated cluster runs it (rados only).
struct FailurePlan {
  // The events (drawn random failures included); a link_* event's target is its entry in
  // `links` (-1: a link no simulated traffic crosses).
  std::vector<models::FailureEvent> events;
  models::RecoverySpec recovery;  // a slice's recovery share scaled like its servers
  double op_cpu_s = 0;
  int drives_per_host = 1;
  struct Link {
    std::string name;                    // "leaf3-spine"
    int cables = 1;                      // parallel cables aggregated in it
    std::vector<int32_t> cut_off_hosts;  // storage hosts beyond it
    int topology_link = -1;              // the simulated topology's link
  };
  std::vector<Link> links;
  // What the pool stores beyond the dataset (stored_tib, cut like the dataset in a slice), and
  // the object size its objects are counted in.
  double extra_stored_bytes = 0;
  uint64_t object_bytes = 0;
};

// A checkpoint run's ranks (one per accelerator, from node 0 up; 1/k of them in a slice).
struct CheckpointPlan {
  int ranks = 0;          // simulated
  int nodes = 0;          // client nodes holding them
  int cluster_nodes = 0;  // client nodes the cluster's ranks occupy
};

// Block volumes: a block run's (the main workload), or a mixed run's beside the main one.
struct BlockPlan {
  models::WorkloadSpec spec;  // block or boot_storm
  bool boot = false;
  int nodes = 0;             // simulated volumes, one per client node from node 0
  double cluster_scale = 1;  // the cluster's volumes / the simulated ones
  // A mixed run's volume images beside the dataset (one per node, or one parent image for
  // clones) and their layout; a block run's images are the plan's dataset.
  services::DatasetSpec images;
  layout::RbdLayoutSpec layout;
};

// A checkpoint written beside a training read (asynchronous checkpointing).
struct AsyncCheckpointPlan {
  models::WorkloadSpec spec;
  int ranks = 0;  // simulated
  uint64_t rank_bytes = 0;
};

// simulation.carry_data as the run resolves it (docs/scenario-format.md, docs/models.md, "Real
// data and modelled cost"): the OSDs keep their objects in DiskStores on devices that keep
// bytes, the dataset is written with known content before the clock starts, every read is
// compared with it, and a deep scrub checks every PG after the run.
struct CarryDataPlan {
  // The bytes a run may hold at most when it carries data: the dataset (or the checkpoint's
  // files) times the copies the pool keeps, estimated from the mean sample size.
  static constexpr uint64_t kLimitBytes = uint64_t{1} << 30;
  bool on = false;
  bool automatic = true;    // carry_data absent from the scenario
  uint64_t held_bytes = 0;  // the estimate (0 where data cannot be carried at all)
  std::string reason;       // why on or off, for the report
};

struct ClusterPlan {
  // The scenario as written; as run (client nodes cut to those the run involves, the seed,
  // random drive failures drawn); and as simulated (the slice).
  models::Scenario scenario;
  models::Scenario run;
  models::Scenario sim;
  uint64_t seed = 0;
  RunPlan plan;
  models::WorkloadKind kind = models::WorkloadKind::kTrainingRead;  // the main workload's
  bool checkpoint = false;
  bool block = false;                 // block or boot_storm
  models::TrainingWorkload training;  // the main workload's, its files cut by k

  // The cluster's topology and the simulated one (links capped by mounts and controllers, the
  // protocol's message latency at the first hop), and the platform's scaling of the simulated
  // one: [link] capacity multipliers (empty: none), storage cores, network efficiency.
  int mds_count = 0;
  models::Topology full_topology;
  models::Topology topology;
  int client_cores = 64;  // each client node's (the platform's, and the read bounds')
  std::vector<double> link_scale;
  int storage_cores = 0;
  double network_efficiency = 1;
  double storage_share = 1;  // m/k: of each simulated server's capacity
  // The analytic read bounds over the cluster (models/read_bounds.h), without placement.
  models::ReadBounds bounds;

  services::DatasetSpec dataset;
  StoragePlan storage;
  std::optional<FailurePlan> failures;
  std::vector<ClientPlan> clients;  // training read, checkpoint and block runs
  // Training read: per client node, its accelerators' loaders (shuffle_seed drawn by the world).
  std::vector<std::vector<services::GpuConsumerOptions>> loaders;
  CheckpointPlan checkpoint_ranks;
  std::optional<BlockPlan> block_volumes;  // block run, or beside the main workload
  std::optional<AsyncCheckpointPlan> async_checkpoint;
  CarryDataPlan carry_data;
};

// The plan of `scenario` with the run's `seed` (which draws the random drive failures). Errors:
// a mix of workloads format 1 cannot run, block volumes without design rados, a failed fabric
// link that a slice cannot represent, a topology the scenario cannot build, carry_data true on
// a run that would hold more than CarryDataPlan::kLimitBytes.
Result<ClusterPlan> build_cluster_plan(const models::Scenario& scenario, uint64_t seed);

}  // namespace granary::sim

// The simulated world of a cluster plan (cluster_plan.h): the dataset, the storage services on
// the SimGrid platform (OSDs, OSTs or filer heads with their written-object stores, metadata
// servers, op queues), the placement the clients follow, the failure driver (failures.h) and a
// mixed run's block I/O beside the main workload. The workload drivers (sim/workloads/) add
// their clients and run it.
//
// build_world draws from the Env's random source and spawns tasks in a fixed order (dataset,
// storage, failures, block I/O beside): the same plan and seed give the same world. A plan
// that carries data gets OSDs over DiskStores, formatted and (training read) filled with the
// dataset before the clock starts (carry_data.h).
//
// Thread-safety: simulation only, like SimEnv.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "engine/cluster/map_client.h"
#include "engine/cluster/map_placement.h"
#include "engine/crush/crush_map.h"
#include "engine/layout/lustre.h"
#include "engine/layout/rbd.h"
#include "engine/placement/crush_pool.h"
#include "engine/services/block_volume.h"
#include "engine/services/client.h"
#include "engine/services/dataset.h"
#include "engine/services/gpu_consumer.h"
#include "engine/services/mds.h"
#include "engine/services/object_store.h"
#include "engine/services/osd.h"
#include "engine/services/written_store.h"
#include "sim/block_workload.h"
#include "sim/carry_data.h"
#include "sim/cluster_plan.h"
#include "sim/failures.h"
#include "sim/platform.h"
#include "sim/sim_env.h"

namespace granary::sim {

// A training read's client node: its storage client and its accelerators' loaders.
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
  // Failure scenarios (rados): each storage and client host holds the cluster map through a
  // map client of its own (epochs arrive as messages from the monitor), and its OSDs and
  // clients place through that host's MapPlacement.
  std::unique_ptr<cluster::OsdMap> osd_map;
  struct HostMaps {
    std::unique_ptr<cluster::MapClient> client;
    std::unique_ptr<cluster::MapPlacement> placement;
  };
  std::map<HostId, HostMaps> host_maps;
  std::unique_ptr<FailureDriver> failures;
  std::vector<std::unique_ptr<services::MetadataService>> mds;
  // The backend the clients use (design local: see backend_of_client).
  services::StorageBackend backend;
  std::vector<ClientNode> clients;  // a training read's
  // A run that carries data (plan.carry_data.on): the OSDs' DiskStores and what was verified
  // (carry_data.h); null for a size-only run.
  std::unique_ptr<CarriedData> carried;

  // The backend a client on `host` uses: `backend`, placing through the host's map in a failure
  // run (host_maps).
  services::StorageBackend backend_on(HostId host) const;
  // The placement a failure run's host follows (null: no failure map, or not a host of it).
  cluster::MapPlacement* placement_on(HostId host) const;
};

// Builds `plan` into `world` on `env` (whose platform is `platform`) and starts its services,
// failure driver and block I/O beside the main workload. Errors: a CRUSH map that cannot be
// loaded or does not fit the cluster, a pool, layout or dataset the engine refuses.
Status build_world(const ClusterPlan& plan, SimEnv& env, const Platform& platform, World& world);

// A run that carries data, once its workload has ended: waits (on the calling task) until the
// failures, if any, have settled — recovery done — then deep-scrubs every PG from `host`
// (carry_data.h scrub).
void scrub_carried(SimEnv& env, World& world, HostId host);

// The backend client node `c` reads through: design local's clients each read their own drives.
services::StorageBackend backend_of_client(const services::StorageBackend& backend,
                                           const models::Scenario& s, int c);

}  // namespace granary::sim

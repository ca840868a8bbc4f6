// ClusterProcess: one process of a real-mode cluster (a daemon, or a client such as the
// launcher's workload runner): its host's RealEnv with every host of the configuration listed
// (its own local), the transport at its address with the cluster key, the names table (OSD i's
// "osd.<i>", "mon.0" on the monitor's host, the configuration's client names on theirs), and
// the pool's placement: CRUSH on the cluster map of epoch 1, or, once follow_maps() is called
// (a cluster with a monitor), on the epochs the monitor publishes.
//
// run_osd_daemon is granary-osd: OSD `osd`'s drive (UringDevice), formatted when asked
// (--mkfs) and otherwise mounted (the journal replayed after a crash), its OsdService, served
// until `stop` says so. A kill -9 loses nothing a client was told was written: the store
// acknowledges a write only once its journal record is durable (engine/store/disk_store.h).
// With a monitor it also sends heartbeats (with an incarnation drawn at start, so that a
// restart the monitor did not notice is one: monitor.h), follows the maps, and peers the PGs it
// is primary of on each new interval (engine/recovery/primary_peering.h); its client ops wait
// for their PG to be active.
//
// run_mon_daemon is granary-mon: the MonitorService (engine/cluster/monitor.h) on the monitor's
// host, starting from the map of epoch 1, logging every epoch it makes. Its map lives in memory
// (a restarted monitor starts again from epoch 1; Ceph's monitors keep theirs in a Paxos store).
//
// run_mds_daemon is granary-mds (a pfs cluster): the MetadataService (engine/services/mds.h)
// on the MDS's host as "mds.0", its namespace on its drive (DiskNamespaceStore on a DiskStore,
// formatted with --mkfs, else mounted and replayed), allocating each new file's layout over the
// OSTs (every OSD of the file, OST index = OSD id) with Lustre's allocator. A create or a close
// that sets a size is acknowledged once its record is durable, so a kill -9 loses no file a
// client was told exists. Open handles are not kept: a client's close after a restart fails.
//
// Thread-safety: as RealEnv.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "engine/cluster/map_client.h"
#include "engine/cluster/map_placement.h"
#include "engine/placement/crush_pool.h"
#include "engine/services/client.h"
#include "realmode/cluster_config.h"
#include "realmode/real_env.h"
#include "realmode/transport.h"

namespace granary::realmode {

// OSD `osd`'s endpoint: "osd.<id>", or "ost.<id>" in a pfs cluster.
std::string osd_endpoint(const ClusterConfig& config, int32_t osd);

// Opens the transport `options` describe for `env`'s process: messages it receives are
// delivered into `env` (deliver_from_network), bulk receives draw from env's buffer pool, and
// env sends to other hosts through it (attach_transport). It must be destroyed before `env`.
Result<std::unique_ptr<Transport>> open_attached_transport(RealEnv& env, TransportOptions options);

class ClusterProcess {
 public:
  // Loads the key, opens the transport; errors name what failed (the key file, the address).
  static Result<std::unique_ptr<ClusterProcess>> open(const ClusterConfig& config, HostId host,
                                                      uint64_t seed);
  ~ClusterProcess();
  RealEnv& env() { return *env_; }
  Transport& transport() { return *transport_; }
  const ClusterConfig& config() const { return config_; }
  HostId host() const { return host_; }
  // The cluster map of epoch 1 (not for a pfs cluster).
  const cluster::OsdMap& initial_map() const { return *initial_map_; }

  // A cluster with a monitor: this process's map client (endpoint `endpoint_name`, under one of
  // its host's names) and the placement on its maps. Before env().run(); starts the client.
  // Errors: no monitor in the configuration, called twice.
  Status follow_maps(const std::string& endpoint_name);
  // The pool's placement: on the monitor's maps after follow_maps(), else epoch 1's.
  placement::Placement& placement();
  // The map following it, or null.
  cluster::MapClient* map_client() { return map_client_.get(); }
  cluster::MapPlacement* map_placement() { return map_placement_.get(); }
  // The epoch behind placement() for services::RadosBackend::map_epoch (null without maps).
  std::function<uint32_t()> map_epoch();
  // A client's view of the pool: placement(), and the configuration's op_s as the time a
  // request waits before it fails (no monitor) or is sent again (with one: after a new map,
  // within resend_check_s; under the same map, after op_s).
  services::RadosBackend rados_backend();
  // A pfs cluster's client view: layouts from "mds.0", op_s as the time a metadata operation
  // or a data request waits before it fails.
  services::PfsBackend pfs_backend() const;

 private:
  ClusterProcess(ClusterConfig config, HostId host) : config_(std::move(config)), host_(host) {}
  ClusterConfig config_;
  HostId host_;
  std::unique_ptr<RealEnv> env_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<cluster::OsdMap> initial_map_;
  std::unique_ptr<placement::CrushPool> static_pool_;  // epoch 1's placement
  std::unique_ptr<cluster::MapClient> map_client_;
  std::unique_ptr<cluster::MapPlacement> map_placement_;
};

struct OsdDaemonOptions {
  bool mkfs = false;     // format the drive first (a new OSD)
  int worker_tasks = 4;  // OsdService workers
  // Fault injection (tests; Ceph's filestore_kill_at): > 0: the daemon kills itself (SIGKILL)
  // halfway through its Nth write to the store's journal after mounting: the first half of
  // the write's 512-byte sectors reach the drive (written and synced), the rest never do.
  int kill_at_journal_write = 0;
  // Fault injection (granary real's slow_drive and drive_failure): a JSON file of DriveFaults,
  // {"slow_factor": F, "failed": B, "bad_ranges": [[OFFSET, LENGTH], ...]} (any key may be
  // left out), read when the daemon starts and again whenever it changes (polled every 100 ms;
  // absent: no fault): with F the drive's every I/O takes F times as long
  // (UringDevice::set_slowdown), with "failed": true every I/O fails with EIO
  // (UringDevice::set_failed), and reads of the bad ranges' blocks fail with EIO until a write
  // remaps them (UringDevice::set_bad_ranges; applied when the file's list changes). A file
  // that does not parse is logged and changes nothing. Empty: none. A write or flush error of
  // its drive, or any error of a failed drive, stops the daemon at once (exit status 3, the
  // error logged), as an EIO on a write aborts ceph-osd: its peers and the monitor then see a
  // dead OSD. A read error does not: the OSD rewrites the object from a replica (read repair,
  // OsdServiceOptions::peers_of); one it cannot repair stops the daemon the same way.
  std::string fault_file;
  // Polled every 100 ms; the daemon ends (cleanly) once it returns true (SIGTERM's handler).
  std::function<bool()> stop;
  // Where each step is said ("osd.2: mounted, 12 journal records replayed"); null: stderr.
  std::function<void(const std::string&)> log;
};

// What a fault file (OsdDaemonOptions::fault_file) asks for: none when the file is absent;
// InvalidArgument naming the file for one that is not an object of "slow_factor" (a number in
// 1..1e6) and "failed" (a boolean).
struct DriveFaults {
  double slow_factor = 1;
  bool failed = false;
  // Unreadable byte ranges of the drive, {offset, length} (UringDevice::set_bad_ranges).
  std::vector<std::pair<uint64_t, uint64_t>> bad_ranges;
};
Result<DriveFaults> read_drive_faults(const std::string& path);

// The exit status of a daemon its drive's I/O error stopped.
inline constexpr int kDriveErrorExitStatus = 3;

Status run_osd_daemon(const ClusterConfig& config, int osd, const OsdDaemonOptions& options);

struct MonDaemonOptions {
  // As OsdDaemonOptions.
  std::function<bool()> stop;
  std::function<void(const std::string&)> log;
};

// Errors: the configuration has no monitor.
Status run_mon_daemon(const ClusterConfig& config, const MonDaemonOptions& options);

struct MdsDaemonOptions {
  bool mkfs = false;     // format the MDS's drive first (a new file system)
  int worker_tasks = 4;  // operations in service at once
  // As OsdDaemonOptions.
  std::function<bool()> stop;
  std::function<void(const std::string&)> log;
};

// Errors: the configuration has no pfs section.
Status run_mds_daemon(const ClusterConfig& config, const MdsDaemonOptions& options);

}  // namespace granary::realmode

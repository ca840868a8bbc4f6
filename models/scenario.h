// Scenario: what a user describes — a cluster, a storage design, workloads and how to
// simulate them. This header holds the resolved form (profiles looked up, defaults applied,
// units converted to SI); scenario_json.h reads and validates the JSON format documented in
// docs/scenario-format.md. Plain values; safe to copy and share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/expectations.h"
#include "models/hardware.h"

namespace granary::models {

// ---- cluster

enum class FabricTopology { kLeafSpine, kFatTree, kRailOptimized };

struct FabricSpec {
  FabricTopology topology = FabricTopology::kLeafSpine;
  double link_gbps = 400;             // switch-to-switch links
  double link_latency_us = 1.0;       // per hop (switch + cable)
  int hosts_per_leaf = 16;            // client and storage nodes per leaf (edge) switch
  int uplinks_per_leaf = 8;           // leaf -> spine links; 0 means "from oversubscription"
  double oversubscription = 1.0;      // host-facing / spine-facing bandwidth of a leaf
  int spines = 0;                     // informational for leaf-spine (uplinks spread over them)
  int pods = 0;                       // fat-tree: pods (0 = as many as needed)
  int leaves_per_pod = 0;             // fat-tree
  int rails = 0;                      // rail-optimized: one leaf per rail per group of nodes
  bool storage_on_own_leaves = true;  // storage servers on separate leaves from clients
  // The edge (leaf) switch, when the scenario names one (name empty: none named): every leaf
  // must have the ports its hosts and uplinks need (models/topology.h).
  SwitchProfile edge_switch;
};

struct NicSpec {
  NicProfile profile;
  int count = 1;  // NICs (rails) per node, used together
};

struct ClientNodesSpec {
  int count = 1;
  AcceleratorProfile accelerator;
  int accelerators_per_node = 8;
  NicSpec nic;
  double memory_bandwidth_gbytes_per_s = 200;  // host DRAM bandwidth available to I/O copies
  double memory_gib = 1024;
  bool gpudirect_storage = false;  // data goes NIC -> GPU, skipping the host bounce copy
};

struct StorageNodesSpec {
  int count = 1;
  // The server profile the scenario names (name empty: none; the figures below are then the
  // scenario's own).
  ServerProfile server;
  DriveProfile drive;
  int drives_per_node = 1;
  NicSpec nic;
  int cpu_cores = 32;
  // What one server moves at most between its drives and its NICs, 10^9 bytes/s (a
  // controller's, PCIe's or memory's limit in an appliance); 0: only its NICs and drives limit.
  double server_gbytes_per_s = 0;
  // Design "local": the drives sit inside the client nodes. Storage node i is then client node
  // i's drive set, linked to that node alone by its PCIe path (no NIC, no server CPU).
  bool in_client_nodes = false;
};

struct ClusterSpec {
  FabricSpec fabric;
  ClientNodesSpec clients;
  StorageNodesSpec storage;
};

// ---- storage design

// rados: Ceph RADOS with CRUSH; pfs: a Lustre-style parallel file system; nfs: NFS filer
// heads; local: each client node reads its own NVMe drives (a copy of the dataset on every
// node, as single-node MLPerf Storage results and node-local caches do).
enum class StorageDesign { kRados, kPfs, kNfs, kLocal };

// Ceph's failure detection and recovery throttles (docs/recovery.md), option names in the
// comments, defaults for flash.
struct RecoverySpec {
  double heartbeat_interval_s = 6;          // osd_heartbeat_interval
  double heartbeat_grace_s = 20;            // osd_heartbeat_grace
  double down_out_interval_s = 600;         // mon_osd_down_out_interval (0: never mark out)
  int max_backfills = 1;                    // osd_max_backfills
  int recovery_max_active = 3;              // osd_recovery_max_active
  double recovery_sleep_s = 0;              // osd_recovery_sleep_ssd
  double recovery_bytes_per_s_per_osd = 0;  // the recovery share of an OSD (0: no limit)
  // The OSD op queue that client and recovery ops share (docs/models.md, "The OSD op queue"):
  // kNone models none (recovery limited by the throttles above and the hardware only).
  enum class OpQueue { kNone, kWpq, kMclock };
  OpQueue op_queue = OpQueue::kNone;               // osd_op_queue: "wpq", "mclock_scheduler"
  std::string mclock_profile = "high_client_ops";  // osd_mclock_profile
  std::string mclock_allocations = "reef";         // which Ceph version's profile allocations
  int op_shards = 0;                               // osd_op_num_shards (0: 8 for flash, 5 for HDD)
  int op_threads_per_shard = 0;         // osd_op_num_threads_per_shard (0: 2 flash, 1 HDD)
  double mclock_max_capacity_iops = 0;  // osd_mclock_max_capacity_iops (0: 21500 / 315)
  // osd_mclock_max_sequential_bandwidth (0: 1200 / 150 MiB/s)
  double mclock_max_sequential_bytes_per_s = 0;
  int recovery_max_single_start = 1;  // osd_recovery_max_single_start
  // Annual failure rate of a drive, for the durability estimate from the measured recovery
  // (docs/models.md, "Durability"): 1% (the order of data-centre SSD fleets' AFR).
  double drive_afr = 0.01;
};

struct RadosSpec {
  uint32_t pg_num = 4096;
  int replicas = 3;                         // replicated pool; 0 when erasure-coded
  int ec_k = 0, ec_m = 0;                   // erasure-coded pool when k > 0
  uint64_t object_size_bytes = 4ull << 20;  // files are striped into objects of this size
  std::string crush_map_path;  // empty: generated from the cluster (host failure domain)
  int32_t crush_rule = -1;     // -1: the generated rule
  int inflight_objects = 2;    // object reads in flight per file read (8 MiB readahead)
  // Logical bytes stored in the pool, which recovery moves after a failure (0: the workload's
  // dataset; more when the pool holds other data too).
  double stored_bytes = 0;
  RecoverySpec recovery;
};

struct PfsSpec {
  int mds_count = 1;
  // Metadata operations per second per MDS, for each kind of operation not given its own rate
  // below: an MDS that does 50,000 opens/s alone, or 50,000 closes/s alone, serves 25,000 file
  // reads/s (open + close each).
  double mds_ops_per_s = 50000;
  // Per kind, operations per second per MDS when it does only that kind (0: mds_ops_per_s).
  double mds_open_per_s = 0, mds_close_per_s = 0, mds_create_per_s = 0, mds_stat_per_s = 0;
  double mds_latency_us = 200;  // service time of one operation at the highest rate
  double open_per_s() const { return mds_open_per_s > 0 ? mds_open_per_s : mds_ops_per_s; }
  double close_per_s() const { return mds_close_per_s > 0 ? mds_close_per_s : mds_ops_per_s; }
  double create_per_s() const { return mds_create_per_s > 0 ? mds_create_per_s : mds_ops_per_s; }
  double stat_per_s() const { return mds_stat_per_s > 0 ? mds_stat_per_s : mds_ops_per_s; }
  // File reads per second one MDS serves: an open and a close each.
  double file_reads_per_s() const { return 1.0 / (1.0 / open_per_s() + 1.0 / close_per_s()); }
  uint64_t stripe_size_bytes = 1ull << 20;
  int stripe_count = 1;     // -1: all OSTs
  int osts_per_server = 0;  // 0: one OST per drive
  int inflight_rpcs = 8;    // RPCs in flight per file read (Lustre max_rpcs_in_flight)
};

struct NfsSpec {
  // The storage nodes are the filer heads; each file lives on one head and is striped over
  // that head's drives.
  uint64_t rsize_bytes = 1ull << 20;  // NFS read size (one RPC)
  int inflight_rpcs = 16;             // RPCs in flight per file read (the client's slot table)
  // What one client's mount delivers at most, 10^9 bytes/s of data (one TCP connection
  // without nconnect, a client's RPC processing); 0: only the client's NICs limit.
  double mount_gbytes_per_s = 0;
};

struct LocalSpec {
  // Every client node holds the whole dataset on its own drives (a local file system striped
  // over them, as md RAID 0 or a striped XFS); a file read is block reads of io_bytes, up to
  // inflight_ios of them in flight, each served by whichever of the node's drives is free.
  uint64_t io_bytes = 1ull << 20;  // one block read (the kernel's max_sectors_kb, read-ahead)
  int inflight_ios = 8;            // block reads in flight per file read
};

struct StorageSpec {
  StorageDesign design = StorageDesign::kRados;
  ProtocolProfile protocol;
  RadosSpec rados;
  PfsSpec pfs;
  NfsSpec nfs;
  LocalSpec local;
};

// ---- workloads

enum class WorkloadKind {
  kTrainingRead,
  kCheckpoint,
  kBlock,      // random block I/O on per-node RBD volumes at a queue depth (fio-like)
  kBootStorm,  // every node reads (and writes) its system volume's boot set at once
};

// Block volumes (RBD images, design rados): one per client node running the workload.
struct BlockWorkload {
  // The volume: an RBD image with Ceph's striping parameters (engine/layout/rbd.h).
  uint64_t volume_bytes = 64ull << 30;
  uint64_t object_size_bytes = 4ull << 20;
  uint64_t stripe_unit_bytes = 0;  // 0: the object size (no striping)
  uint64_t stripe_count = 1;
  // Every node's volume is a fresh clone of one parent image (`rbd clone` of a golden
  // image): reads come from the parent until a write copies an object up.
  bool clone = false;
  int nodes = 0;                // client nodes running the workload (0: every node)
  uint64_t block_bytes = 4096;  // one I/O
  int queue_depth = 32;         // I/Os in flight per volume
  // kBlock: random offsets (block-aligned) over the whole volume, a read with this
  // probability, else a write; measured for duration_s after ramp_s.
  double read_fraction = 1.0;
  // I/Os per second per volume at most (fio's rate_iops): each of the queue_depth loops starts
  // an I/O every queue_depth / rate_iops seconds, or as soon as the last one ends if later.
  // 0: no limit (a closed loop at the queue depth).
  double rate_iops = 0;
  double duration_s = 1.0;
  double ramp_s = 0.1;
  // kBootStorm: each node reads boot_read_bytes and writes boot_write_bytes (interleaved),
  // at block-aligned offsets drawn once for the image (every node boots the same OS, so it
  // reads the same blocks); its boot ends with its last I/O.
  uint64_t boot_read_bytes = 256ull << 20;
  uint64_t boot_write_bytes = 0;
};

struct WorkloadSpec {
  std::string name;
  WorkloadKind kind = WorkloadKind::kTrainingRead;
  TrainingWorkload training;      // kind training_read
  CheckpointWorkload checkpoint;  // kind checkpoint
  BlockWorkload block;            // kinds block, boot_storm
};

// ---- failures

enum class FailureKind {
  kOsdCrash,      // the OSD daemon dies; its drive and data survive
  kDriveFailure,  // the drive dies with its data; the OSD cannot come back
  kHostDown,      // every OSD of a storage host crashes (power, kernel); data survives
  kOsdRestart,    // a crashed OSD comes back
  kHostRestart,   // a host that went down comes back
  kPartition,     // the listed storage hosts are cut off (a rack's switch): their OSDs are
                  // unreachable, their data intact
  kHeal,          // the partition of the listed hosts ends
  kSlowDrive,     // the OSD's drive runs `factor` times slower (a failing or throttling drive)
  kNicDegraded,   // a storage host's NICs run `factor` times slower (a bad cable, a link
                  // renegotiated down); 1 restores them.
  kNicDown,       // a storage host's NICs die: its OSDs are unreachable, data intact (a
                  // partition of that one host)
  kNicUp,         // they work again
  kLinkDown,      // `cables` of the parallel cables of a fabric link fail: the aggregate loses
                  // their share of its capacity; the last one cuts off what is beyond it
  kLinkDegraded,  // a fabric link runs `factor` times slower (1 restores it)
  kLinkUp,        // a fabric link is whole again: every cable up, full speed
  kDriveReplace,  // a failed drive (drive_failure earlier) is replaced by an empty one: the OSD
                  // comes back up and in, and backfill fills it
};

struct FailureEvent {
  double at_s = 0;
  FailureKind kind = FailureKind::kOsdCrash;
  int32_t target = 0;  // the OSD (osd_*, drive_failure, slow_drive, drive_replace) or storage
                       // host (host_*, nic_*)
  std::vector<int32_t> hosts;  // partition, heal
  double factor = 1;           // slow_drive, nic_degraded, link_degraded: > 1 is slower; 1 restores
  // link_*: the fabric link, by the names of its two ends (topology node names, as written).
  std::vector<std::string> link;
  int cables = 1;      // link_down: how many of the link's parallel cables fail
  int32_t entry = -1;  // the failures[] entry it came from (-1: made in code)
  // Drawn by the random_drive_failures entry failures[entry] from the run's seed `seed`
  // (models/random_failures.h), not written in the timeline.
  bool random = false;
  uint64_t seed = 0;
};

// A random_drive_failures entry of failures[]: every OSD's drive fails at an exponentially
// distributed time, at the annual failure rate `afr` with its clock run `time_scale` times
// faster than the simulated one; the first failure of each drive in [from_s, to_s) becomes a
// drive_failure event (and a drive_replace `replace_after_s` later when > 0). Drawn when the
// run's seed is known (models/random_failures.h, expand_failures).
struct RandomDriveFailures {
  int32_t entry = 0;  // its index in failures[]
  double afr = 0.01;
  double from_s = 0;
  double to_s = 0;
  double time_scale = 1;
  double replace_after_s = 0;  // 0: a failed drive stays failed
};

// ---- simulation

enum class Fidelity { kAuto, kRequest, kSlice };

struct SimulationSpec {
  Fidelity fidelity = Fidelity::kAuto;
  int representative_nodes = 8;                // slice: client nodes to simulate (about; see docs)
  uint64_t transfer_unit_bytes = 16ull << 20;  // slice: pfs/nfs requests coalesced up to this
  bool stop_at_steady_state = true;            // stop once steady and extrapolate the epoch
  double max_simulated_s = 3600;               // stop (and report) after this much simulated time
  double steady_state_tolerance = 0.01;  // relative change of throughput that counts as steady
  // Carry and verify real bytes (docs/scenario-format.md, "simulation"): true, false, or
  // nullopt (absent) for automatic: on when the bytes held stay small (sim/cluster_plan.h).
  std::optional<bool> carry_data;
};

// ---- real (read by `granary real` only: the simulator ignores it)

// A lab host of real.hosts "ssh": one machine of the cluster, reached over ssh.
struct LabHost {
  std::string address;  // the IP its daemons listen on and the others reach it at
  std::string ssh;      // [user@]host for ssh (empty: root@address)
  int ssh_port = 22;
};

struct RealSpec {
  bool namespaces = false;              // hosts: "namespaces" (else "loopback", or "ssh")
  bool ssh = false;                     // hosts: "ssh": lab_hosts
  std::vector<LabHost> lab_hosts;       // storage servers, the monitor (or MDS), client nodes
  std::string ssh_identity;             // a private key for ssh (empty: ssh's defaults)
  std::string bin_dir;                  // the binaries on the lab hosts (empty: the local ones')
  uint64_t drive_bytes = 256ull << 20;  // each OSD's drive file
  double link_gbps = 0;                 // veth shaping (0: each host's modelled NICs)
  double added_latency_s = 0;           // one way, added by the senders (no netem here)
  std::string dir;                      // the cluster's folder (empty: /tmp/granary-real-NAME)
};

struct Scenario {
  int version = 1;
  std::string name;
  std::string description;
  std::string source_path;  // the file it was read from
  // SHA-256 of the text it was parsed from, 64 lowercase hex digits (report scenario.sha256).
  std::string source_sha256;
  uint64_t seed = 1;
  ClusterSpec cluster;
  StorageSpec storage;
  std::vector<WorkloadSpec> workloads;
  std::vector<FailureEvent> failures;  // in time order (the explicit events of failures[])
  std::vector<RandomDriveFailures> random_drive_failures;  // failures[]'s random entries
  SimulationSpec simulation;
  RealSpec real;
  std::vector<Expectation> expectations;  // `expect`: assertions on the run report
};

// The scenario has a failure timeline: explicit events or random ones to draw.
inline bool has_failures(const Scenario& s) {
  return !s.failures.empty() || !s.random_drive_failures.empty();
}

}  // namespace granary::models

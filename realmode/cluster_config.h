// ClusterConfig: what every process of a real-mode cluster reads at start (the launcher,
// `granary real up`, writes it; realmode/README.md): the hosts table, the cluster key's file,
// the OSDs and their drives, the names that live on client hosts, the pool every client and
// OSD places with, and the monitor. All processes read the same file, so they build the same
// cluster map (epoch 1) and the same table of names.
//
//   {"version": 1, "provider": "tcp;ofi_rxm", "key_file": "/run/granary/key",
//    "hosts": [{"name": "storage0", "address": "127.0.0.1:40001", "cores": 4}, ...],
//      (a host may name the storage server it is part of: "server": "storage0", see below, and
//      add latency to what it sends: "added_latency_s": 0.001)
//    "osds": [{"id": 0, "host": 0, "drive": "/var/lib/granary/osd.0.img",
//              "drive_bytes": 67108864, "queue_depth": 32}, ...],
//    "names": {"c3": 3, "peer": 3},
//    "pool": {"replicas": 3, "pg_num": 32},
//      (or an erasure-coded pool: "pool": {"erasure": {"k": 4, "m": 2, "stripe_unit_bytes": 4096},
//       "pg_num": 32})
//      (or, in place of "pool", a Lustre-style file system: "pfs": {"mds": {"host": 3,
//       "drive": "/var/lib/granary/mdt.img", "drive_bytes": 67108864},
//       "stripe_size_bytes": 1048576, "stripe_count": 2})
//    "monitor": {"host": 3, "heartbeat_interval_s": 1, "heartbeat_grace_s": 3,
//                "down_out_interval_s": 30},
//    "timeouts": {"op_s": 5, "sub_op_s": 5, "handshake_s": 5}}
//
// OSD i's endpoint is "osd.<id>" on its host; a client's endpoints are the names under
// "names" (the prefix of its reply endpoints). A host is one address, so one process: a storage
// server with several OSDs (one process per drive, as Ceph runs them) is several hosts, each
// OSD's, that name the same "server". The pool (id 1) is placed by CRUSH as Ceph
// places a replicated pool: a map with one bucket per server that has OSDs (named as the
// server; a host without "server" is a server of its own),
// each OSD weighted by its drive's capacity in TiB (Ceph's convention), rule
// "replicated_host" (chooseleaf firstn 0 type host: copies on distinct servers), pg_num PGs; an
// erasure-coded pool as Ceph places one: size k + m, rule "erasure_host" (chooseleaf indep 0
// type host: shard i in position i, a position left empty when no host is found for it,
// never shifted), so k + m may not exceed the servers with OSDs. Its stripe unit (the bytes of
// one data chunk of a stripe: Ceph's osd_pool_erasure_code_stripe_unit, 4 KiB by default) is
// a multiple of the stores' 4 KiB block. An object's primary is the first OSD of its group's
// acting set that is not empty (Ceph's choice for an erasure-coded PG whose shard 0 has no OSD).
// A pfs cluster has no pool and no monitor: OSD i serves as OST i ("ost.<i>", no replication,
// as a Lustre OST relies on the RAID beneath it), and granary-mds ("mds.0" on pfs.mds.host)
// keeps the namespace on its drive (its MDT) and gives each new file a layout of stripe_count
// OSTs (-1: every OST) of stripe_size_bytes (a multiple of 64 KiB), chosen as Lustre's
// allocator does (engine/layout/lustre.h); clients learn a file's layout when they open or
// create it. An OST or the MDS down: requests to it fail after op_s.
// With a monitor (granary-mon on its host, "mon.0"), OSDs send it heartbeats, it marks a silent
// one down and, after down_out_interval_s (0: never), out; every process follows its epochs,
// and each OSD peers the PGs it is primary of on each new interval
// (engine/recovery/primary_peering.h). Without one, the map stays at epoch 1 and the timeouts
// end the waits on a dead OSD: a client's request fails after op_s, a primary's wait for its
// replicas after sub_op_s (the write fails unacknowledged). With one, a request unanswered for
// op_s is sent again, a primary drops a write whose replica stayed silent for sub_op_s (the
// client resends it), and peering gives up on a member after sub_op_s (and tries again).
// handshake_s bounds the cluster-key handshake with a peer in both cases. Errors name the file and
// the JSON path
// ("cluster.json: /osds/2/host: expected an integer in 0..2, found 7").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/messages.h"
#include "engine/status.h"

namespace granary::realmode {

struct ClusterHost {
  std::string name;
  std::string address;  // IP:PORT
  int cores = 1;
  // The storage server (CRUSH host bucket, the failure domain) this host's OSDs belong to;
  // empty: the host is its own. Several OSD processes of one server are hosts of their own
  // (an address each: a port of the server's IP) with the same `server`.
  std::string server;
  // One-way latency added to every message the host's process sends to another host (its
  // RealEnv's NIC model, RealHostOptions::latency_s: the netem this kernel lacks). 0: none.
  double added_latency_s = 0;
  // The failure domain: `server`, or the host's name.
  const std::string& domain() const { return server.empty() ? name : server; }
};

struct ClusterOsd {
  int32_t id = 0;
  int32_t host = 0;
  std::string drive;  // a block device or a file (created and preallocated)
  uint64_t drive_bytes = 0;
  unsigned queue_depth = 32;
};

struct ClusterMonitor {
  int32_t host = 0;
  double heartbeat_interval_s = 1;  // an OSD's heartbeats
  double heartbeat_grace_s = 3;     // silence beyond one interval before it is marked down
  double down_out_interval_s = 30;  // down this long: out (0: never)
};

struct ClusterPfs {
  int32_t mds_host = 0;
  std::string mdt_drive;  // the MDS's drive (a block device or a file)
  uint64_t mdt_drive_bytes = 0;
  uint64_t stripe_size_bytes = 1 << 20;
  int32_t stripe_count = 1;  // -1: every OST
};

// The pool's id in the cluster map, and the monitor's endpoint.
inline constexpr int64_t kClusterPoolId = 1;
inline constexpr const char* kMonitorEndpoint = "mon.0";

struct ClusterConfig {
  std::string provider = "tcp;ofi_rxm";
  std::string key_file;
  std::vector<ClusterHost> hosts;
  std::vector<ClusterOsd> osds;
  std::map<std::string, int32_t> names;  // client-side endpoint prefixes -> host
  int replicas = 3;                      // a replicated pool's copies (0 when erasure-coded)
  ErasureCoding ec;                      // an erasure-coded pool's code (k = 0: replicated)
  uint32_t pg_num = 32;
  std::optional<ClusterMonitor> monitor;
  std::optional<ClusterPfs> pfs;   // a pfs cluster (no pool, no monitor)
  double op_timeout_s = 5;         // timeouts/op_s
  double sub_op_timeout_s = 5;     // timeouts/sub_op_s
  double handshake_timeout_s = 5;  // timeouts/handshake_s

  // The hosts table for the transport.
  std::vector<std::string> addresses() const;
  // The cluster map of epoch 1: every OSD up and in (identical in every process). A pfs
  // cluster has none (InvalidArgument).
  Result<cluster::OsdMap> osd_map() const;
};

// Reads and checks the file: InvalidArgument naming the file, the JSON path, what was expected
// and what was found; NotFound / IOError for a file that cannot be read.
Result<ClusterConfig> load_cluster_config(const std::string& path);
// Parses `text` (`path` names it in errors).
Result<ClusterConfig> parse_cluster_config(const std::string& text, const std::string& path);
// The JSON of `config` (what load reads back).
std::string cluster_config_json(const ClusterConfig& config);

// A TCP port of 127.0.0.1 that nobody listens on now, for a loopback hosts table: below the
// kernel's ephemeral range (so no outgoing connection's source port takes it before its owner
// binds it), drawn from a random start and then in sequence within this process (the kernel's
// choice when none is free there). Another process could still take it first, which the
// caller then sees as a failed open.
int free_loopback_port();

}  // namespace granary::realmode

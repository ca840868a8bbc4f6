// ClusterConfig: what every process of a real-mode cluster reads at start (the launcher,
// `granary real up`, writes it; realmode/README.md): the hosts table, the cluster key's file,
// the OSDs and their drives, the names that live on client hosts, and the pool every client and
// OSD places with. All processes read the same file, so they build the same ring and the same
// table of names.
//
//   {"version": 1, "provider": "tcp;ofi_rxm", "key_file": "/run/granary/key",
//    "hosts": [{"name": "storage0", "address": "127.0.0.1:40001", "cores": 4}, ...],
//    "osds": [{"id": 0, "host": 0, "drive": "/var/lib/granary/osd.0.img",
//              "drive_bytes": 67108864, "queue_depth": 32}, ...],
//    "names": {"c3": 3, "peer": 3},
//    "pool": {"replicas": 3, "part_power": 5},
//    "timeouts": {"op_s": 5, "sub_op_s": 5, "handshake_s": 5}}
//
// OSD i's endpoint is "osd.<id>" on its host; a client's endpoints are the names under
// "names" (the prefix of its reply endpoints). The pool is a ring (engine/placement/ring.h)
// over the OSDs, OSD i a device of its host, rebalanced with a fixed seed. With no monitor
// marking an OSD down, the timeouts end the waits on a dead one: a client's request (op_s), a
// primary's wait for its replicas (sub_op_s; the write then fails unacknowledged), the
// cluster-key handshake with a peer (handshake_s). Errors name the
// file and the JSON path ("cluster.json: /osds/2/host: host 7 is not in /hosts (3 hosts)").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/placement/ring.h"
#include "engine/status.h"

namespace granary::realmode {

struct ClusterHost {
  std::string name;
  std::string address;  // IP:PORT
  int cores = 1;
};

struct ClusterOsd {
  int32_t id = 0;
  int32_t host = 0;
  std::string drive;  // a block device or a file (created and preallocated)
  uint64_t drive_bytes = 0;
  unsigned queue_depth = 32;
};

struct ClusterConfig {
  std::string provider = "tcp;ofi_rxm";
  std::string key_file;
  std::vector<ClusterHost> hosts;
  std::vector<ClusterOsd> osds;
  std::map<std::string, int32_t> names;  // client-side endpoint prefixes -> host
  int replicas = 3;
  int part_power = 5;
  double op_timeout_s = 5;         // timeouts/op_s
  double sub_op_timeout_s = 5;     // timeouts/sub_op_s
  double handshake_timeout_s = 5;  // timeouts/handshake_s

  // The hosts table for the transport.
  std::vector<std::string> addresses() const;
  // The pool's ring (identical in every process).
  Result<placement::Ring> ring() const;
};

// Reads and checks the file: InvalidArgument naming the file, the JSON path, what was expected
// and what was found; NotFound / IOError for a file that cannot be read.
Result<ClusterConfig> load_cluster_config(const std::string& path);
// Parses `text` (`path` names it in errors).
Result<ClusterConfig> parse_cluster_config(const std::string& text, const std::string& path);
// The JSON of `config` (what load reads back).
std::string cluster_config_json(const ClusterConfig& config);

}  // namespace granary::realmode

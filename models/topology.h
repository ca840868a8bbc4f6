// The cluster as a graph of nodes and links, built from a ClusterSpec: client nodes, storage
// servers, their drives, metadata servers, and the switches of the fabric. The simulator turns
// it into a SimGrid platform and the analytic bound runs max-flow over it (Boost.Graph).
//
// Fluid approximation, stated once: parallel paths that a real fabric balances (ECMP over
// several spines, the ports of a bonded or multi-rail NIC, the rails of a rail-optimized
// fabric) are merged into one link whose capacity is their sum, so that every pair of nodes has
// exactly one shortest path. This assumes perfect balancing; docs/models.md discusses it.
//
// Plain value; safe to share once built.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "models/scenario.h"

namespace granary::models {

enum class NodeKind {
  kClient,      // a client (GPU) node: where requests start
  kClientSink,  // where a client's data ends up: GPU memory (GPUDirect) or host memory
  kStorage,     // a storage server (OSD host, OSS, filer head)
  kDrive,       // one drive of a storage server
  kMds,         // a metadata server
  kSwitch,      // a switch or an aggregated group of switches
};

enum class LinkRole {
  kClientNic,     // client <-> its leaf (all NICs of the node together)
  kClientMemory,  // client -> client sink: the bounce-buffer copy or the GPUDirect PCIe path
  kStorageNic,    // storage server <-> its leaf (design local: a node's drives' PCIe path)
  kDrive,         // drive <-> its storage server
  kMdsNic,        // metadata server <-> its leaf
  kFabric,        // switch <-> switch (aggregated uplinks)
};

struct TopologyNode {
  std::string name;  // unique, e.g. "client17", "client17.sink", "storage3", "storage3.drive5"
  NodeKind kind = NodeKind::kSwitch;
  int index = -1;  // client number, storage server number, global drive number, MDS number
  int owner = -1;  // for sinks and drives: the node index (in nodes) of their client/server
};

struct TopologyLink {
  std::string name;  // unique, e.g. "client17.nic", "leaf3.uplink"
  LinkRole role = LinkRole::kFabric;
  int a = -1, b = -1;  // node indices; "forward" is a -> b
  double forward_bytes_per_s = 0;
  double reverse_bytes_per_s = 0;  // full duplex: usually equal; drives: read vs write
  double latency_s = 0;
  int aggregated = 1;  // physical links merged into this one
};

struct Topology {
  std::vector<TopologyNode> nodes;
  std::vector<TopologyLink> links;
  // Node indices by kind, in index order.
  std::vector<int> clients, client_sinks, storage, drives, mds, switches;
  std::string description;  // one line: "leaf-spine: 9 leaves x 16 hosts, 8 x 400 Gb/s up"
};

// Builds the graph. For every link, `a` is the end nearer the drives for drive, storage and
// fabric links, and the client for client links, so that a read flows drive -> ... -> sink:
// drive (a) -> storage (b) uses forward = drive read bandwidth, reverse = write bandwidth.
// Errors: counts or bandwidths out of range, a topology that cannot hold the nodes.
Result<Topology> build_topology(const ClusterSpec& cluster, int mds_count);

// The max-flow bound on storage -> GPU bandwidth for reads: every drive a source, every client
// sink a destination, capacities in the read direction. `bottleneck` describes the minimum
// cut, grouped by link role ("384 drives x 7.00 GB/s = 2688 GB/s", ...), largest share first.
struct MaxFlowBound {
  double bytes_per_s = 0;
  std::vector<std::string> bottleneck;
  // Capacity of the cut per role, bytes/s (roles absent from the cut are absent).
  std::vector<std::pair<LinkRole, double>> cut_by_role;
};
MaxFlowBound read_max_flow(const Topology& topology);

std::string link_role_name(LinkRole role);

// The fabric link (role kFabric) between the nodes named `a` and `b`, in either order; -1 when
// there is none.
int find_fabric_link(const Topology& topology, std::string_view a, std::string_view b);
// The nodes on the far side of `link` from the top switch (the spine, or the fat-tree core):
// those cut off from the rest of the cluster when the link fails. Node indices, ascending.
std::vector<int> nodes_beyond(const Topology& topology, size_t link);

}  // namespace granary::models

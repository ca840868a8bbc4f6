// ReadBounds: every ceiling a training read can hit, each as the read throughput it allows,
// computed in closed form from the scenario (whole cluster, no simulation), and the binding one.
//
// A ceiling is a resource's capacity divided by what one file read costs it, times the file's
// bytes (files are read whole, once per epoch):
//  - data path: the max-flow from the drives to the clients' sinks (models/topology.h), at the
//    protocol's efficiency (goodput / line rate) on every network link; also given at line rate;
//  - drives and storage servers as placed (with a PlacementLoad, below): the busiest one's
//    capacity (a server's: its NICs' goodput, or its internal limit) over its share of the
//    reads;
//  - drive IOPS: drives x rated random-read IOPS / drive operations per file;
//  - metadata servers (pfs): MDSs x 1 / (1/open + 1/close) file reads per second;
//  - storage CPU: servers x cores / (requests per file x server CPU per request + bytes the
//    servers move per file x the protocol's CPU per byte), where the bytes are the file's (an
//    erasure-coded read: the primary's gather of the file plus the (k-1)/k of it its shard
//    reads send);
//  - client CPU: client nodes x cores / (requests x client CPU per request + file bytes x CPU
//    per byte + samples x decode CPU per sample + metadata operations x client CPU per
//    operation), per file.
// The CPU per byte is the protocol's cpu_us_per_mib per 2^20 bytes, 0 when zero_copy
// (ProtocolProfile::cpu_s_per_byte).
// Requests per file follow the design: rados ceil(F / object size) object reads (erasure
// coding: each a read of k shards of 1/k), pfs the RPCs of up to 4 MiB per OST object over the
// file's stripe count, nfs ceil(F / rsize) RPCs. The simulation can run below the binding
// ceiling (imbalance between servers, latency-bound readers) but never above it.
//
// The accelerators' demand (what they consume at full utilisation) is given beside, so
// min(1, bound / demand) bounds the AU.
//
// Pure function; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/scenario.h"
#include "models/topology.h"

namespace granary::models {

struct Ceiling {
  std::string resource;  // "data path", "drive IOPS", "metadata servers", "storage CPU", ...
  double bytes_per_s = 0;
  double files_per_s = 0;
  std::string detail;  // how it follows from the scenario, with units
};

struct ReadBounds {
  double line_rate_bytes_per_s = 0;  // the data path's max-flow at line rate
  double efficiency = 1;             // the protocol's goodput / line rate
  MaxFlowBound data_path;            // at the protocol's efficiency
  std::vector<Ceiling> ceilings;     // ascending: front() binds
  double demand_bytes_per_s = 0;     // the accelerators' consumption at AU 1
  double file_bytes = 0;             // mean file size
  double requests_per_file = 0;      // data requests one file read sends
  double drive_ops_per_file = 0;     // drive reads one file read causes

  const Ceiling& binding() const { return ceilings.front(); }
};

// How the dataset is placed on the drives: bytes and drive operations of one epoch's reads on
// each drive (CRUSH, the OST allocator or the path hash decide; even placement has equal
// shares). The drives are those of `storage_servers` consecutive servers of
// `drives_per_server` each, a 1/`repeat` part of the cluster whose placement the rest repeats
// (a slice's storage servers; 1 for the whole cluster).
struct PlacementLoad {
  std::vector<double> drive_bytes;
  std::vector<double> drive_ops;
  int drives_per_server = 1;
  int repeat = 1;
};

// The bounds of workload `w` (a training read) on the scenario's cluster and design.
// `topology` is the whole cluster's (build_topology of s.cluster). `client_cores` is the CPU
// cores of a client node as simulated. With `placement`, the drive and storage NIC ceilings
// are also given as placed: a storm that reads every file alike loads each drive with its share
// of the bytes, so the busiest drive (server) saturates first and sets the rate —
// capacity / busiest share — below the max-flow's even spread.
//
// Hard disks (`hdd_positioning_s`, the drive model's positioning time at a queue depth): a
// disk serves an operation of S bytes in t_pos(q) + S / B, one at a time, so the drives'
// ceiling is drives x S / (t_pos(q) + S / B) at the queue depth q = the requests the readers
// keep in flight per disk (read threads x requests in flight per file, over the disks); as
// placed, the busiest disk's share sets it.
ReadBounds read_bounds(const Scenario& s, const TrainingWorkload& w, const Topology& topology,
                       int client_cores, const PlacementLoad* placement = nullptr,
                       const std::function<double(double)>& hdd_positioning_s = {});

}  // namespace granary::models

// The cost model of a run (docs/models.md, "Cost of a run"). Each workload contributes the
// actors it spawns, the requests it keeps in flight, the requests it simulates over the
// simulated seconds the run will cover, and what it keeps in memory; the wall time is the
// simulation events times a cost per event that grows with the requests in flight (SimGrid's
// max-min solver shares every link among the flows crossing it), calibrated on the shipped
// scenarios.
#include "sim/cost_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "models/topology.h"
#include "sim/cluster_plan.h"

namespace granary::sim {

namespace {

using models::StorageDesign;
using models::WorkloadKind;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

// ---- calibration (docs/models.md, "Cost of a run": fitted on the shipped scenarios)

// Wall seconds per simulated request: a base (the request's messages, the drive's queue, the
// tasks it wakes) and a share of SimGrid's max-min solver per request in flight, larger for
// bulk transfers that share links for their whole length (object and RPC reads, checkpoint
// writes) than for small block I/Os that are mostly latency. Fitted on the shipped scenarios
// (docs/models.md, "Cost of a run").
constexpr double kWallPerRequestS = 15e-6;
constexpr double kWallPerRequestPerBulkFlowS = 0.8e-6;
constexpr double kWallPerRequestPerSmallFlowS = 0.1e-6;
// Simulation events per request: the request message, the drive's admission, the data's
// transfer, the reply, the client's completion (reported, not used in the wall time).
constexpr double kEventsPerRequest = 5;
// A timer tick (the monitor's, a heartbeat): a few events, no transfer.
constexpr double kWallPerTickS = 5e-6;
// Drawing a dataset before the run: a file's path and entry, a sample's size.
constexpr double kWallPerFileS = 2e-7;
constexpr double kWallPerSampleS = 3e-8;
// Building the platform, the CRUSH map and the placement before the first event.
constexpr double kSetupWallS = 0.05;
// Resident memory: the process (SimGrid, the binary), an actor (its context and the touched
// part of its 256 KiB stack), a dataset file (its path, sizes and index), a request (latency
// samples and completion records kept for the report), an object written (a store entry per
// copy), a placement group (its mapping and state).
constexpr double kBaseBytes = 40 * kMiB;
constexpr double kBytesPerActor = 16 * 1024;
constexpr double kBytesPerFile = 400;
constexpr double kBytesPerRequest = 48;
constexpr double kBytesPerWrittenObject = 200;
constexpr double kBytesPerPg = 256;
// Map entries a SimGrid actor takes (its stack and the guard page below it), and the entries
// left for the rest of the process (libraries, heap).
constexpr int64_t kMapsPerActor = 2;
constexpr int64_t kMapsReserved = 4096;

// The monitor's tick (runner.cc): between 20 ms and 0.5 s, half a compute step.
double monitor_interval_s(const models::TrainingWorkload& w) {
  return std::max(0.02, std::min(0.5, w.compute_s_per_step / 2));
}

struct Load {
  int64_t actors = 0;
  int64_t flows = 0;
  double requests = 0;
  double simulated_s = 0;
  double memory_bytes = 0;
  double setup_s = 0;  // building it before the first event (drawing a dataset's sizes)
  // Of the requests, those of a burst with burst_flows in flight (a start-up fill).
  double burst_requests = 0;
  int64_t burst_flows = 0;
  bool bulk = true;    // large transfers (reads of objects or RPCs, checkpoint writes)
  std::string driver;  // the key that sets the requests
  std::string advice;
  std::string memory_driver;  // the key that sets the memory (empty: driver)
  std::string memory_advice;
};

double nic_bytes_per_s(const models::NicSpec& nic, double efficiency) {
  return nic.count * nic.profile.ports * nic.profile.gbps * 1e9 / 8 * efficiency;
}

// Copies written per byte (replicas, or (k + m) / k), and requests per object (an
// erasure-coded object is k + m shard writes, or k shard reads).
double write_copies(const models::Scenario& s) {
  if (s.storage.design != StorageDesign::kRados) return 1;
  const auto& r = s.storage.rados;
  if (r.ec_k > 0) return static_cast<double>(r.ec_k + r.ec_m) / r.ec_k;
  return std::max(1, r.replicas);
}
double write_requests_per_object(const models::Scenario& s) {
  if (s.storage.design != StorageDesign::kRados) return 1;
  const auto& r = s.storage.rados;
  return r.ec_k > 0 ? r.ec_k + r.ec_m : std::max(1, r.replicas);
}
double read_requests_per_object(const models::Scenario& s) {
  if (s.storage.design != StorageDesign::kRados) return 1;
  return s.storage.rados.ec_k > 0 ? s.storage.rados.ec_k : 1;
}

// The unit one request moves for a stream of large reads or writes.
double request_bytes(const models::Scenario& s, const RunPlan& plan, bool checkpoint) {
  const double unit = static_cast<double>(s.simulation.transfer_unit_bytes);
  // A slice coalesces reads into transfer units, except from hard disks (runner.cc).
  const bool coalesced =
      plan.slice_factor > 1 && s.cluster.storage.drive.kind != models::DriveKind::kHdd;
  switch (s.storage.design) {
    case StorageDesign::kRados: {
      const double obj = static_cast<double>(s.storage.rados.object_size_bytes);
      return checkpoint ? std::max(obj, unit) : obj;
    }
    case StorageDesign::kPfs: {
      const double rpc = 4 * kMiB;
      return (coalesced || checkpoint) ? std::max(rpc, unit) : rpc;
    }
    case StorageDesign::kNfs: {
      const double rsize = static_cast<double>(s.storage.nfs.rsize_bytes);
      return (coalesced || checkpoint) ? std::max(rsize, unit) : rsize;
    }
    case StorageDesign::kLocal:  // a node's own block reads, never coalesced
      return static_cast<double>(s.storage.local.io_bytes);
  }
  return 4 * kMiB;
}

int osd_workers(const models::Scenario& s, bool checkpoint, bool block) {
  switch (s.storage.design) {
    case StorageDesign::kRados:
      return (checkpoint || block || s.storage.rados.ec_k > 0) ? 16 : 4;
    case StorageDesign::kPfs:
      return 4;
    case StorageDesign::kNfs:
    case StorageDesign::kLocal:
      return 2;
  }
  return 4;
}

// The fabric's read bound (max-flow, at the protocol's efficiency) of the whole cluster.
double read_bound_bytes_per_s(const models::Scenario& s) {
  const int mds = s.storage.design == StorageDesign::kPfs ? s.storage.pfs.mds_count : 0;
  auto topology = models::build_topology(s.cluster, mds);
  if (!topology.ok()) return 0;
  for (auto& l : topology->links) {
    if (l.role != models::LinkRole::kDrive && l.role != models::LinkRole::kClientMemory) {
      l.forward_bytes_per_s *= s.storage.protocol.efficiency;
      l.reverse_bytes_per_s *= s.storage.protocol.efficiency;
    }
  }
  return models::read_max_flow(*topology).bytes_per_s;
}

// The write bound: client NICs, storage NICs (each byte enters the servers once per copy),
// drives (each byte lands once per copy).
double write_bound_bytes_per_s(const models::Scenario& s, int client_nodes) {
  const auto& st = s.cluster.storage;
  const double eff = s.storage.protocol.efficiency;
  const double copies = write_copies(s);
  const double client = client_nodes * nic_bytes_per_s(s.cluster.clients.nic, eff);
  const double storage = st.count * nic_bytes_per_s(st.nic, eff) / copies;
  const double drives =
      double{1.0} * st.count * st.drives_per_node * st.drive.write_gbytes_per_s * 1e9 / copies;
  return std::max(1.0, std::min({client, storage, drives}));
}

// The bytes of the first workload's dataset (a training read's), 0 for other workloads.
double dataset_bytes(const models::Scenario& s) {
  if (s.workloads.empty() || s.workloads[0].kind != WorkloadKind::kTrainingRead) return 0;
  const auto& w = s.workloads[0].training;
  return static_cast<double>(w.files) * w.samples_per_file * w.sample_bytes_mean;
}

// The OSDs the failure timeline takes down (an upper bound: every event counted).
int64_t failed_osds(const models::Scenario& s) {
  const auto& st = s.cluster.storage;
  const double osds = double{1.0} * st.count * st.drives_per_node;
  double hit = 0;
  for (const auto& e : s.failures) {
    switch (e.kind) {
      case models::FailureKind::kHostDown:
      case models::FailureKind::kNicDown:
        hit += st.drives_per_node;
        break;
      case models::FailureKind::kPartition:
        hit += static_cast<double>(e.hosts.size()) * st.drives_per_node;
        break;
      case models::FailureKind::kOsdCrash:
      case models::FailureKind::kDriveFailure:
        hit += 1;
        break;
      default:
        break;
    }
  }
  for (const auto& r : s.random_drive_failures) {
    // Expected failures over the window, at the scaled rate.
    hit += std::ceil(osds * r.afr * r.time_scale * (r.to_s - r.from_s) / (365.25 * 86400));
  }
  return static_cast<int64_t>(std::min(hit, osds));
}

// How long recovery after the timeline's last event may take: detection, the down-out
// interval, then refilling the failed drives' share from the survivors.
double recovery_tail_s(const models::Scenario& s) {
  if (!models::has_failures(s) || s.storage.design != StorageDesign::kRados) return 0;
  const auto& rc = s.storage.rados.recovery;
  const auto& st = s.cluster.storage;
  const double osds = double{1.0} * st.count * st.drives_per_node;
  const double hit = static_cast<double>(failed_osds(s));
  if (hit == 0) return rc.heartbeat_grace_s;
  const double stored = std::max(s.storage.rados.stored_bytes, dataset_bytes(s));
  const double moved = stored * std::min(1.0, hit / std::max(1.0, osds)) * write_copies(s);
  double per_osd = st.drive.write_gbytes_per_s * 1e9 / 4;  // recovery's share of a drive
  if (rc.recovery_bytes_per_s_per_osd > 0) {
    per_osd = std::min(per_osd, rc.recovery_bytes_per_s_per_osd);
  }
  const double rate = std::max(1.0, (osds - std::min(osds - 1, hit)) * per_osd);
  return rc.heartbeat_grace_s + rc.down_out_interval_s + moved / rate;
}

double last_event_s(const models::Scenario& s) {
  double t = 0;
  for (const auto& e : s.failures) t = std::max(t, e.at_s);
  for (const auto& r : s.random_drive_failures) {
    t = std::max(t, r.to_s + r.replace_after_s);
  }
  return t;
}

// A training read: every simulated accelerator's loader and readers, their requests over the
// epochs (or until the steady state), the dataset's files.
Load training_load(const models::Scenario& s, const RunPlan& plan, double read_bound,
                   double min_span_s) {
  const auto& w = s.workloads[0].training;
  const auto& c = s.cluster.clients;
  Load l;
  const double gpus_total = double{1.0} * c.count * c.accelerators_per_node;
  const double gpus_sim = double{1.0} * plan.clients * c.accelerators_per_node;
  const double file_bytes = std::max(1.0, w.samples_per_file * w.sample_bytes_mean);
  const double dataset_bytes = static_cast<double>(w.files) * file_bytes;
  const double compute = std::max(1e-9, w.compute_s_per_step);
  const double demand = gpus_total * w.batch_size * w.sample_bytes_mean / compute;
  // A parallel file system opens and closes every file at its metadata servers.
  double bound = read_bound;
  if (s.storage.design == StorageDesign::kPfs) {
    bound =
        std::min(bound, s.storage.pfs.mds_count * s.storage.pfs.file_reads_per_s() * file_bytes);
  }
  const double rate = std::max(1.0, std::min(demand, bound));
  const double epoch_s = dataset_bytes / rate;
  const double all_epochs_s = epoch_s * w.epochs;
  double t = all_epochs_s;
  if (plan.allow_early_stop) {
    // The steady-state test (runner.cc): every loader past two steps, then at least 1 s and
    // three steps more; loaders that share a saturated storage system take about as long
    // again to agree on a rate (measured on the shipped read storms).
    const double step_s = gpus_total * w.batch_size * w.sample_bytes_mean / rate;
    const double settle = demand >= bound ? 2 : 1;
    // (A steady step rate shows only once the loaders have gone through their first files:
    // samples_per_file / batch_size steps each.)
    const double first_file_s =
        static_cast<double>(w.samples_per_file) / w.batch_size * std::max(compute, step_s);
    const double stop_s = std::max(2 * step_s + settle * std::max(1.0, 3 * step_s), first_file_s) +
                          monitor_interval_s(w);
    // (A checkpoint beside the read must be written before a steady state counts.)
    t = std::min(t, std::max(stop_s, min_span_s));
  }
  // The loaders read until the epochs end (or the run stops); a failure timeline keeps the run
  // going, its heartbeats ticking, until its last event and the recovery after it.
  const double reading_s = std::min(t, s.simulation.max_simulated_s);
  if (models::has_failures(s)) t = std::max(t, last_event_s(s) + recovery_tail_s(s));
  t = std::min(t, s.simulation.max_simulated_s);
  l.simulated_s = t;
  const double unit = std::min(file_bytes, request_bytes(s, plan, false));
  int per_file = 1;
  switch (s.storage.design) {
    case StorageDesign::kRados:
      per_file = s.storage.rados.inflight_objects;
      break;
    case StorageDesign::kPfs:
    case StorageDesign::kNfs: {
      // A slice coalesces RPCs into transfer units, keeping the bytes in flight per file.
      const bool pfs = s.storage.design == StorageDesign::kPfs;
      const double rpc = pfs ? 4 * kMiB : static_cast<double>(s.storage.nfs.rsize_bytes);
      const int rpcs = pfs ? s.storage.pfs.inflight_rpcs : s.storage.nfs.inflight_rpcs;
      per_file = std::max(1, static_cast<int>(rpc * rpcs / std::max(rpc, unit)));
      break;
    }
    case StorageDesign::kLocal:
      per_file = s.storage.local.inflight_ios;
      break;
  }
  const double per_file_requests =
      std::max(1.0, std::min<double>(per_file, std::ceil(file_bytes / unit)));
  const double all_flows = gpus_sim * w.read_threads * per_file_requests;
  // The start: every reader takes a file at once and the loaders fill their prefetch queues,
  // a burst with every request in flight whatever the accelerators' demand.
  const double dataset_sim = dataset_bytes / plan.slice_factor;
  const double fill =
      std::min(dataset_sim * w.epochs,
               gpus_sim * std::max(w.read_threads * file_bytes,
                                   (w.prefetch_batches + 2) * w.batch_size * w.sample_bytes_mean));
  // Then the steady reading: the slice moves 1/k of the cluster's bytes, with every reader's
  // requests in flight when the storage is the bottleneck, fewer when the accelerators' demand
  // leaves it idle part of the time (the readers then wait on compute).
  const double bytes = std::max(fill, rate * reading_s / plan.slice_factor);
  const double files_read = bytes / file_bytes;
  const double per_byte = read_requests_per_object(s) / unit;
  const double metadata = s.storage.design == StorageDesign::kPfs ? 2 * files_read : 0;
  l.burst_requests = fill * per_byte;
  l.requests = bytes * per_byte + metadata;
  l.burst_flows = static_cast<int64_t>(all_flows);
  // (A checkpoint written beside the read saturates the storage: every reader waits on it.)
  const double busy = min_span_s > 0 ? 1.0 : std::min(1.0, demand / std::max(1.0, bound));
  l.flows = static_cast<int64_t>(std::ceil(all_flows * busy));
  l.actors = static_cast<int64_t>(gpus_sim * (1 + w.read_threads));
  const double files_sim = static_cast<double>(w.files) / plan.slice_factor;
  // The dataset is drawn before the run: every file's path and every sample's size.
  l.setup_s = files_sim * (kWallPerFileS + w.samples_per_file * kWallPerSampleS);
  l.memory_bytes = files_sim * kBytesPerFile + files_read * 8 * w.epochs;
  // Which key drives it: the simulated span is the epochs (or the cap), its requests the
  // dataset's size.
  if (t >= s.simulation.max_simulated_s && s.simulation.max_simulated_s < all_epochs_s) {
    l.driver = "simulation.max_simulated_s";
    l.advice = "lower simulation.max_simulated_s";
  } else if (models::has_failures(s) && t > all_epochs_s) {
    l.driver = "failures";
    l.advice = "move the failures earlier or shorten the recovery (storage.rados.recovery)";
  } else if (w.epochs > 1 && !plan.allow_early_stop) {
    l.driver = "workloads[0].epochs";
    l.advice =
        "simulate fewer epochs, or let the run stop at steady state "
        "(simulation.stop_at_steady_state)";
  } else if (t < all_epochs_s) {
    // Stopped at steady state: the requests in flight set the cost, not the dataset.
    l.driver = plan.slice_factor > 1 ? "simulation.representative_nodes" : "simulation.fidelity";
    l.advice = plan.slice_factor > 1
                   ? "simulate a smaller slice (fewer simulation.representative_nodes)"
                   : "simulate a slice (simulation.fidelity \"slice\")";
  } else {
    l.driver = "workloads[0].files";
    l.advice = plan.slice_factor > 1 ? "use fewer files, or a smaller slice "
                                       "(simulation.representative_nodes)"
                                     : "use fewer files, or simulation.fidelity \"slice\"";
  }
  // The dataset's file list is held in memory whatever the run's length.
  l.memory_driver = "workloads[0].files";
  l.memory_advice = plan.slice_factor > 1
                        ? "use fewer files, or a smaller slice (simulation.representative_nodes)"
                        : "use fewer files, or simulation.fidelity \"slice\"";
  // Drawing millions of sample sizes per file before the run can outweigh the run itself.
  if (files_sim * w.samples_per_file * kWallPerSampleS > 60 &&
      w.samples_per_file * kWallPerSampleS > 10 * kWallPerFileS) {
    l.driver = "workloads[0].samples_per_file";
    l.advice = "use fewer, larger samples per file";
  }
  return l;
}

// A checkpoint: every simulated rank writes its share (each byte once per copy) and reads it
// back, checkpoint after checkpoint.
Load checkpoint_load(const models::Scenario& s, const models::CheckpointWorkload& ck,
                     const RunPlan& plan, double read_bound, std::string key) {
  Load l;
  const int per_node = s.cluster.clients.accelerators_per_node;
  const int ranks = ck.ranks();
  const int nodes = (ranks + per_node - 1) / per_node;
  const double k = std::max(1, plan.slice_factor);
  const double bytes_full = ck.total_gb() * 1e9;
  const double write_s = bytes_full / write_bound_bytes_per_s(s, nodes);
  const double read_s = ck.read_back ? bytes_full / std::max(1.0, read_bound) : 0;
  double t = ck.start_s + ck.checkpoints * (write_s + read_s);
  l.simulated_s = std::min(t, s.simulation.max_simulated_s);
  // The run stops (with an error) at max_simulated_s: the requests up to then.
  const double done = t > 0 ? l.simulated_s / t : 1;
  const double unit = request_bytes(s, plan, true);
  const double objects = std::ceil(bytes_full / k / unit) * ck.checkpoints * done;
  l.requests =
      objects * (write_requests_per_object(s) + (ck.read_back ? read_requests_per_object(s) : 0));
  const int64_t ranks_sim = static_cast<int64_t>(std::ceil(ranks / k));
  l.actors = ranks_sim;
  l.flows = ranks_sim * static_cast<int64_t>(write_requests_per_object(s));
  l.memory_bytes = objects * write_requests_per_object(s) * kBytesPerWrittenObject +
                   double(ranks_sim) * ck.checkpoints * kBytesPerFile;
  l.driver = key + (ck.checkpoints > 1 ? ".checkpoints" : ".model_gb");
  l.advice = ck.checkpoints > 1 ? "write fewer checkpoints"
                                : "use simulation.fidelity \"slice\" or fewer ranks";
  return l;
}

// Block I/O: queue_depth actors per volume, each I/O a request per copy written or one read.
Load block_load(const models::Scenario& s, const models::BlockWorkload& b, bool boot, int volumes,
                std::string key) {
  Load l;
  const auto& st = s.cluster.storage;
  const double drives = double{1.0} * st.count * st.drives_per_node;
  const double read_fraction = boot ? 1.0 : b.read_fraction;
  const double copies = write_requests_per_object(s);
  // The ceiling: drives' IOPS (each write once per copy) and what the queue depth allows at the
  // drives' latency.
  const double read_iops = st.drive.read_iops_limit(), write_iops = st.drive.write_iops_limit();
  const double per_io_drive_s = read_fraction / std::max(1.0, read_iops) +
                                (1 - read_fraction) * copies / std::max(1.0, write_iops);
  const double drive_bound = drives / std::max(1e-12, per_io_drive_s);
  // The storage servers' CPUs: a request per copy written, one per read (two when erasure-coded),
  // each with the protocol's CPU per byte of the block.
  const double ec_read =
      (s.storage.design == StorageDesign::kRados && s.storage.rados.ec_k > 0) ? 2 : 1;
  const double cpu_s = (s.storage.protocol.server_cpu_us_per_op * 1e-6 +
                        static_cast<double>(b.block_bytes) * s.storage.protocol.cpu_s_per_byte()) *
                       (read_fraction * ec_read + (1 - read_fraction) * copies);
  const double cpu_bound = cpu_s > 0 ? double{1.0} * st.count * st.cpu_cores / cpu_s
                                     : std::numeric_limits<double>::infinity();
  const double latency_s = std::max(1e-6, (read_fraction * st.drive.read_latency_us +
                                           (1 - read_fraction) * st.drive.write_latency_us) *
                                                  1e-6 +
                                              2 * s.storage.protocol.message_latency_us * 1e-6);
  double iops = std::min({drive_bound, cpu_bound, volumes * b.queue_depth / latency_s});
  if (b.rate_iops > 0) iops = std::min(iops, volumes * b.rate_iops);
  iops = std::max(1.0, iops);
  const double per_io_requests = read_fraction + (1 - read_fraction) * copies;
  if (boot) {
    const double ios =
        double(volumes) *
        (static_cast<double>(b.boot_read_bytes) + static_cast<double>(b.boot_write_bytes)) /
        static_cast<double>(b.block_bytes);
    l.simulated_s = ios / iops;
    // A clone's first write to an object copies it up from the parent: the object read, then
    // written once per copy.
    const double copyups =
        b.clone ? double(volumes) * std::ceil(static_cast<double>(b.boot_write_bytes) /
                                              static_cast<double>(b.object_size_bytes))
                : 0;
    l.requests = ios * per_io_requests + copyups * (1 + copies);
    l.driver = key + ".boot_read_mib";
    l.advice = "boot fewer nodes (" + key + ".nodes) or read less per boot";
  } else {
    l.simulated_s = b.ramp_s + b.duration_s;
    l.requests = iops * l.simulated_s * per_io_requests;
    l.driver = key + ".duration_s";
    l.advice = "shorten " + key + ".duration_s or lower " + key + ".queue_depth";
  }
  l.actors = int64_t{volumes} * b.queue_depth;
  l.flows = l.actors;
  l.bulk = false;
  // Each I/O keeps its completion time and latency sample; an image's objects are indexed.
  l.memory_bytes =
      l.requests * 2 * kBytesPerRequest +
      double(b.clone ? 1 : volumes) *
          (static_cast<double>(b.volume_bytes) / static_cast<double>(b.object_size_bytes)) * 16;
  return l;
}

int beside_volumes(const models::Scenario& s, const models::BlockWorkload& b, const RunPlan& plan) {
  const int nodes = b.nodes > 0 ? b.nodes : s.cluster.clients.count;
  return std::max(1, nodes / std::max(1, plan.slice_factor));
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// "41,000" for counts in messages.
std::string count(double v) {
  if (!std::isfinite(v)) return "infinitely many";
  if (v >= 1e15) return fmt("%.3g", v);
  std::string digits = fmt("%.0f", v);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - 1 - i) % 3 == 0 && i + 1 < n) out += ',';
  }
  return out;
}

}  // namespace

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "forever";
  if (s < 1) return fmt("%.2f s", s);
  if (s < 120) return fmt("%.0f s", s);
  if (s < 7200) return fmt("%.1f min", s / 60);
  if (s < 86400 * 3) return fmt("%.1f h", s / 3600);
  if (s < 86400 * 365.25 * 3) return fmt("%.1f days", s / 86400);
  return fmt("%.3g years", s / (86400 * 365.25));
}

std::string format_bytes(double b) {
  if (!std::isfinite(b)) return "unbounded memory";
  if (b < kGiB) return fmt("%.0f MiB", b / kMiB);
  if (b < 1024 * kGiB) return fmt("%.1f GiB", b / kGiB);
  return fmt("%.3g TiB", b / (1024 * kGiB));
}

HostLimits host_limits() {
  HostLimits h;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  h.physical_memory_bytes = pages > 0 && page > 0 ? double(pages) * double(page) : 8 * kGiB;
  h.max_map_count = 65530;  // Linux's default
  std::ifstream f("/proc/sys/vm/max_map_count");
  int64_t v = 0;
  if (f >> v && v > 0) h.max_map_count = v;
  h.max_actors = std::max<int64_t>(0, (h.max_map_count - kMapsReserved) / kMapsPerActor);
  return h;
}

CostEstimate estimate_cost(const models::Scenario& scenario) {
  CostEstimate e;
  e.plan = plan_run(scenario);
  const RunPlan& plan = e.plan;
  const models::Scenario& s = scenario;
  if (s.workloads.empty()) return e;
  const models::WorkloadSpec& first = s.workloads[0];
  const bool checkpoint = first.kind == WorkloadKind::kCheckpoint;
  const bool block = first.kind == WorkloadKind::kBlock || first.kind == WorkloadKind::kBootStorm;
  const double read_bound = read_bound_bytes_per_s(s);

  std::vector<Load> loads;
  if (block) {
    loads.push_back(block_load(s, first.block, first.kind == WorkloadKind::kBootStorm, plan.clients,
                               "workloads[0]"));
  } else if (checkpoint) {
    loads.push_back(checkpoint_load(s, first.checkpoint, plan, read_bound, "workloads[0]"));
  } else {
    double checkpoint_end_s = 0;
    for (size_t i = 1; i < s.workloads.size(); ++i) {
      if (s.workloads[i].kind == WorkloadKind::kCheckpoint) {
        checkpoint_end_s =
            checkpoint_load(s, s.workloads[i].checkpoint, plan, read_bound, "").simulated_s;
      }
    }
    loads.push_back(training_load(s, plan, read_bound, checkpoint_end_s));
  }
  for (size_t i = 1; i < s.workloads.size(); ++i) {
    const auto& w = s.workloads[i];
    const std::string key = "workloads[" + std::to_string(i) + "]";
    if (w.kind == WorkloadKind::kBlock || w.kind == WorkloadKind::kBootStorm) {
      Load b = block_load(s, w.block, w.kind == WorkloadKind::kBootStorm,
                          beside_volumes(s, w.block, plan), key);
      // Beside a main workload, block I/O runs (as daemon tasks) until the main workload ends.
      if (w.kind == WorkloadKind::kBlock && b.simulated_s > loads[0].simulated_s) {
        const double cut = loads[0].simulated_s / b.simulated_s;
        b.requests *= cut;
        b.memory_bytes *= cut;
        b.simulated_s = loads[0].simulated_s;
      }
      loads.push_back(std::move(b));
    } else if (w.kind == WorkloadKind::kCheckpoint) {
      loads.push_back(checkpoint_load(s, w.checkpoint, plan, read_bound, key));
    }
  }

  // The storage side: OSD workers and a courier per simulated drive, metadata servers' workers.
  const int64_t drives_sim = int64_t{plan.storage_servers} * s.cluster.storage.drives_per_node;
  // Per drive: its OSD's client-op and sub-op workers and its courier.
  int64_t actors = drives_sim * (2 * osd_workers(s, checkpoint, block) + 1) + 8;
  if (s.storage.design == StorageDesign::kPfs) {
    const models::PfsSpec& pfs = s.storage.pfs;
    const double ops =
        std::max({pfs.open_per_s(), pfs.close_per_s(), pfs.create_per_s(), pfs.stat_per_s()}) /
        std::max(1, plan.slice_factor);
    const double parallel = std::max(1.0, std::round(ops * s.storage.pfs.mds_latency_us * 1e-6));
    actors += static_cast<int64_t>(std::min(parallel, 1e15)) * s.storage.pfs.mds_count;
  }
  double events = 0, simulated_s = 0, memory = kBaseBytes, monitor_tick_s = 0;
  int64_t flows = 0, bulk_flows = 0, small_flows = 0;
  double requests = 0;
  const Load* biggest = &loads[0];
  for (const Load& l : loads) {
    actors += l.actors;
    flows += l.flows;
    (l.bulk ? bulk_flows : small_flows) += l.flows;
    requests += l.requests;
    simulated_s = std::max(simulated_s, l.simulated_s);
    memory += l.memory_bytes;
    if (l.requests > biggest->requests) biggest = &l;
  }
  // Timer ticks: the monitor's, and with a failure timeline every OSD's heartbeat and the
  // PG sampler.
  // The monitor's tick reads every loader's step records; with many samples per file those
  // grow long (measured: 4 ms a tick for 4 loaders at 1,400 steps per file).
  if (!checkpoint && !block) {
    const auto& w = first.training;
    const double steps_per_file = static_cast<double>(w.samples_per_file) / w.batch_size;
    const double loaders = double{1.0} * plan.clients * s.cluster.clients.accelerators_per_node;
    monitor_tick_s = 0.5e-6 * loaders * std::max(0.0, steps_per_file - 1);
  }
  double ticks = simulated_s / (checkpoint || block ? 0.05 : monitor_interval_s(first.training));
  if (models::has_failures(s) && s.storage.design == StorageDesign::kRados) {
    const auto& r = s.storage.rados;
    const auto& rc = r.recovery;
    ticks += 2 * double(drives_sim) * simulated_s / std::max(1e-3, rc.heartbeat_interval_s) +
             simulated_s;
    // Heartbeat agents, recovery daemons (4 per OSD), and a task per placement group to recover
    // with up to recovery_max_active lanes (engine/recovery/recovery_service.h), all at once.
    actors += drives_sim * 5 + 4;
    const double size = r.ec_k > 0 ? r.ec_k + r.ec_m : std::max(1, r.replicas);
    const double hit = std::min(double(drives_sim), double(failed_osds(s)));
    const double pgs =
        std::min<double>(r.pg_num, r.pg_num * size * hit / std::max(1.0, double(drives_sim)));
    const double pg_bytes = std::max(r.stored_bytes, dataset_bytes(s)) / std::max(1u, r.pg_num);
    const double lanes =
        std::clamp(std::ceil(pg_bytes / (4 * kMiB)), 1.0, double(rc.recovery_max_active));
    // Every PG's task starts at once; its lanes only while it holds a backfill slot.
    const double active = std::min(pgs, double(drives_sim) * rc.max_backfills);
    actors += static_cast<int64_t>(pgs + active * (lanes - 1));
  }
  events = ticks + requests * kEventsPerRequest;
  if (s.storage.design == StorageDesign::kRados) {
    memory += double(s.storage.rados.pg_num) * kBytesPerPg * (models::has_failures(s) ? 4 : 1);
  }
  memory += double(actors) * kBytesPerActor + requests * kBytesPerRequest * 0.1;
  // A run that carries data holds its bytes in the devices' images, with the stores' blocks and
  // maps: about 1.4 times the bytes held (docs/models.md, "Real data and modelled cost").
  if (auto planned = build_cluster_plan(s, s.seed); planned.ok() && planned->carry_data.on) {
    memory += 1.4 * double(planned->carry_data.held_bytes);
  }

  e.actors = actors;
  e.flows = std::max<int64_t>(1, flows);
  e.transfers = requests;
  e.events = events;
  e.simulated_s = simulated_s;
  // The steady requests share the solver with every workload's flows in flight; a burst's with
  // its own (the other workloads are still starting).
  double wall = kSetupWallS + ticks * kWallPerTickS +
                simulated_s / monitor_interval_s(first.training) * monitor_tick_s;
  for (const Load& l : loads) {
    wall += l.setup_s;
    const double per_flow = l.bulk ? kWallPerRequestPerBulkFlowS : kWallPerRequestPerSmallFlowS;
    wall += l.burst_requests * (kWallPerRequestS + per_flow * double(l.burst_flows));
    wall += (l.requests - l.burst_requests) *
            (kWallPerRequestS + kWallPerRequestPerBulkFlowS * double(bulk_flows) +
             kWallPerRequestPerSmallFlowS * double(small_flows));
  }
  e.wall_s = wall;
  e.memory_bytes = memory;
  e.driver = biggest->driver;
  e.advice = biggest->advice;
  const Load* heaviest = &loads[0];
  for (const Load& l : loads) {
    if (l.memory_bytes > heaviest->memory_bytes) heaviest = &l;
  }
  e.memory_driver = heaviest->memory_driver.empty() ? heaviest->driver : heaviest->memory_driver;
  e.memory_advice = heaviest->memory_driver.empty() ? heaviest->advice : heaviest->memory_advice;
  return e;
}

Status check_cost(const models::Scenario& s, const CostEstimate& e, const CostLimits& limits) {
  const HostLimits host = host_limits();
  const double max_memory =
      limits.max_memory_bytes > 0 ? limits.max_memory_bytes : host.physical_memory_bytes / 2;
  const int64_t max_actors = limits.max_actors > 0 ? limits.max_actors : host.max_actors;
  const std::string where = s.source_path + ": ";
  if (e.actors > max_actors) {
    // Which workload spawns them.
    std::string key = "cluster.storage.drive.count";
    std::string advice = "fewer storage servers or drives";
    for (size_t i = 0; i < s.workloads.size(); ++i) {
      const auto& w = s.workloads[i];
      if ((w.kind == WorkloadKind::kBlock || w.kind == WorkloadKind::kBootStorm) &&
          int64_t{w.block.queue_depth} * s.cluster.clients.count * 4 > e.actors) {
        key = "workloads[" + std::to_string(i) + "].queue_depth";
        advice =
            "a lower queue depth or fewer volumes (workloads[" + std::to_string(i) + "].nodes)";
      } else if (w.kind == WorkloadKind::kTrainingRead &&
                 int64_t{e.plan.clients} * s.cluster.clients.accelerators_per_node *
                         (1 + w.training.read_threads) * 2 >
                     e.actors) {
        key = "workloads[" + std::to_string(i) + "].read_threads";
        advice = "fewer read threads or a smaller slice (simulation.representative_nodes)";
      }
    }
    return Status::invalid_argument(
        where + key + ": the run needs " + count(double(e.actors)) +
        " simulated tasks, more than the " + count(double(max_actors)) +
        " this machine allows (vm.max_map_count " + count(double(host.max_map_count)) +
        ", two memory maps per task): use " + advice + ", or raise vm.max_map_count");
  }
  // Wall time or memory, whichever is further past its limit.
  const double over_memory = e.memory_bytes / max_memory, over_wall = e.wall_s / limits.max_wall_s;
  if (over_memory > 1 && over_memory >= over_wall) {
    return Status::invalid_argument(where + e.memory_driver + ": the run would need about " +
                                    format_bytes(e.memory_bytes) + " of memory (limit " +
                                    format_bytes(max_memory) + "): " + e.memory_advice +
                                    ", or raise --max-memory-gib");
  }
  if (over_wall > 1) {
    return Status::invalid_argument(where + e.driver + ": the run would take about " +
                                    format_duration(e.wall_s) + " of wall time (limit " +
                                    format_duration(limits.max_wall_s) + "; " + count(e.transfers) +
                                    " requests over " + format_duration(e.simulated_s) +
                                    " simulated): " + e.advice + ", or raise --max-wall-s");
  }
  return Status::ok_status();
}

std::string cost_summary(const CostEstimate& e) {
  return "about " + format_duration(e.wall_s) + " wall, " + format_bytes(e.memory_bytes) + ", " +
         count(double(e.actors)) + " tasks, " + count(e.transfers) + " requests (" +
         count(double(e.flows)) + " in flight) over " + format_duration(e.simulated_s) +
         " simulated";
}

}  // namespace granary::sim

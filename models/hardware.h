// Hardware and workload profiles: the numbers the simulator's models are made of. Each profile
// has a name; the built-in catalog (catalog.h) documents the source of every number, and a
// scenario may name a profile and override any of its fields.
// Plain values; safe to copy and share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "engine/services/dataset.h"

namespace granary::models {

enum class DriveKind { kNvme, kSataSsd, kHdd };

struct DriveProfile {
  std::string name;
  DriveKind kind = DriveKind::kNvme;
  double capacity_tb = 0;         // decimal terabytes
  double read_gbytes_per_s = 0;   // sequential read, 10^9 bytes/s
  double write_gbytes_per_s = 0;  // sequential write
  double read_kiops = 0;          // 4 KiB random read, thousands of I/O per second
  double write_kiops = 0;         // 4 KiB random write
  double read_latency_us = 0;     // 4 KiB read at queue depth 1
  double write_latency_us = 0;
  // The device queue depth at which the IOPS figures hold, and the most commands the drive
  // works on at once (flash: it caps the command units below; hard disk: the depth at which
  // positioning reaches its rated time). 0: not given (profiles built in code): no cap.
  int queue_depth = 0;
  double price_usd = 0;  // an example price, not a quote (0: unknown)
  // Where the figures and the example price come from (the built-in catalog's profiles, a
  // catalog database row); informational.
  std::string source;

  // Flash (nvme, sata-ssd), the drive model's command units (sim/drive_model.h,
  // docs/models.md "Drives"): Little's law at the rated read IOPS, c = max(1, round(R_r L_r)),
  // each held c / R_r per read. 0 without IOPS figures (no unit limit).
  int littles_law_units() const {
    if (!(read_kiops > 0 && write_kiops > 0)) return 0;
    return std::max(1, static_cast<int>(std::lround(read_kiops * 1e3 * read_latency_us * 1e-6)));
  }
  // The units the drive works with: c, but no more than queue_depth commands at once. A
  // queue_depth below c caps the drive at queue_depth / L_r reads per second (Little's law:
  // queue_depth commands, each taking the read latency), under its rated IOPS.
  int command_units() const {
    const int c = littles_law_units();
    return queue_depth > 0 ? std::min(c, queue_depth) : c;
  }
  // The most 4 KiB random reads (writes) per second the drive model serves: the rated IOPS,
  // times command_units() / c for flash when queue_depth caps the units; a hard disk's rated
  // IOPS (at queue_depth).
  double read_iops_limit() const { return read_kiops * 1e3 * flash_unit_share(); }
  double write_iops_limit() const { return write_kiops * 1e3 * flash_unit_share(); }

 private:
  double flash_unit_share() const {
    const int c = kind == DriveKind::kHdd ? 0 : littles_law_units();
    return c > 0 ? static_cast<double>(command_units()) / c : 1.0;
  }
};

struct NicProfile {
  std::string name;
  double gbps = 0;  // per port, 10^9 bits/s
  int ports = 1;
  double latency_us = 0;  // NIC + wire, one way
  double price_usd = 0;   // an example price, not a quote (0: unknown)
  std::string source;     // where the figures and the example price come from
};

// How a storage protocol costs: per message and per byte, on both ends.
struct ProtocolProfile {
  // rdma, tcp (Ceph's messenger), nvmeof-rdma, nvme-tcp, iscsi, nfs-rdma, nfs-tcp, lnet-rdma,
  // lnet-tcp (Lustre LNet), local-nvme (a node's own drives)
  std::string name;
  double message_latency_us = 0;    // software latency added to each message, one way
  double client_cpu_us_per_op = 0;  // CPU time per request on the client
  double server_cpu_us_per_op = 0;  // CPU time per request on the server
  // CPU time per MiB a request moves (copies, checksums), paid on each end: by the client for
  // the bytes it sends or receives and by the storage server for the bytes it reads or writes
  // for the request. 0 when zero_copy (the scenario format refuses both).
  double cpu_us_per_mib = 0;
  double efficiency = 1.0;  // goodput / line rate (headers, framing, congestion)
  bool zero_copy = false;   // data lands in the final buffer without a CPU copy: no per-byte CPU

  // The CPU seconds per byte moved, on each end: 0 for a zero-copy transport, else
  // cpu_us_per_mib per 2^20 bytes.
  double cpu_s_per_byte() const { return zero_copy ? 0 : cpu_us_per_mib * 1e-6 / (1 << 20); }
};

// An accelerator and its MLPerf Storage compute time per training step for each workload.
struct AcceleratorProfile {
  std::string name;
  std::map<std::string, double> compute_s_per_step;  // by workload name (unet3d, ...)
  double price_usd = 0;                              // an example price, not a quote (0: unknown)
  std::string source;  // where the figures and the example price come from
};

// A storage server as bought: chassis, CPUs, memory and boot drives, without its data drives
// and NICs (scenarios choose those; their profiles carry their own prices). A scenario naming
// one (cluster.storage.profile) takes its cpu_cores and server_gbytes_per_s unless it gives
// them, and may fit no more drives than drive_bays nor NICs than nic_slots.
struct ServerProfile {
  std::string name;
  int cpu_cores = 0;               // per server, all sockets
  int drive_bays = 0;              // data drive bays
  int nic_slots = 0;               // PCIe slots for storage NICs
  double server_gbytes_per_s = 0;  // internal limit between drives and NICs; 0: none
  int rack_units = 0;              // height, U
  double power_watts = 0;          // typical draw with drives and NICs fitted, under load
  double price_usd = 0;            // an example price, not a quote (0: unknown)
  std::string source;              // where the figures and the example price come from
};

// A fabric switch: `ports` ports of `port_gbps`, each splittable by breakout cables into up to
// `max_split` links of port_gbps / split. A scenario naming one (cluster.fabric.switch) takes
// its port rate as the fabric's link rate and its latency (plus cable) as the per-hop latency
// unless it gives them, and every edge switch must have the ports its hosts and uplinks need.
struct SwitchProfile {
  std::string name;
  int ports = 0;           // at port_gbps
  double port_gbps = 0;    // 10^9 bits/s per port
  int max_split = 1;       // breakout: links one port can be split into
  double latency_us = 0;   // port to port, cut-through
  int rack_units = 0;      // height, U
  double power_watts = 0;  // typical draw, without optics
  double price_usd = 0;    // an example price, not a quote (0: unknown)
  std::string source;      // where the figures and the example price come from

  // The links of `gbps` one switch offers: ports x the split that rate allows (at most
  // max_split, and no split finer than port_gbps / gbps); 0 when gbps exceeds port_gbps.
  int64_t links_at(double gbps) const {
    if (!(gbps > 0) || gbps > port_gbps * (1 + 1e-9)) return 0;
    const int64_t split = std::clamp<int64_t>(
        static_cast<int64_t>(std::floor(port_gbps / gbps * (1 + 1e-9))), 1, std::max(1, max_split));
    return int64_t{ports} * split;
  }
};

// A DLIO / MLPerf Storage training workload (per accelerator).
struct TrainingWorkload {
  std::string name;
  double sample_bytes_mean = 0;
  double sample_bytes_stddev = 0;
  // How sizes are drawn from the mean and stddev: the MLPerf presets as DLIO generates them
  // (engine/services/dataset.h); a workload that gives its own sample_size_mib, normal.
  services::SampleSizes sample_sizes = services::SampleSizes::kNormal;
  int samples_per_file = 1;
  int64_t files = 0;         // dataset size in files
  int batch_size = 1;        // samples per step
  int read_threads = 1;      // reader threads per accelerator
  int prefetch_batches = 2;  // batches buffered ahead of compute
  // Client CPU a reader thread spends per sample once its file is read (decoding, format
  // parsing, augmentation), seconds; 0: free.
  double decode_cpu_s_per_sample = 0;
  double compute_s_per_step = 0;  // resolved from the accelerator when not given
  int epochs = 1;
  double au_threshold = 0.9;  // MLPerf's minimum accelerator utilisation
  std::string file_format;    // npz, tfrecord, ... (informational)
};

// An MLPerf Storage checkpoint workload (llama3): every rank writes its part of the model and
// optimizer state at once, with fsync, then (on restart) reads it back.
struct CheckpointWorkload {
  std::string name;
  double model_gb = 0;      // fp16 model weights, 10^9 bytes
  double optimizer_gb = 0;  // fp32 optimizer state
  int tensor_parallel = 1, pipeline_parallel = 1, data_parallel = 1;
  int checkpoints = 1;    // checkpoints written (one after the other), then read back
  bool read_back = true;  // read every checkpoint back after writing (a restart)
  bool fsync = true;      // each rank's writes are durable before its checkpoint counts done
  // Beside a training read (a mixed run): when the ranks start writing, simulated seconds.
  double start_s = 0;

  int ranks() const { return tensor_parallel * pipeline_parallel * data_parallel; }
  double total_gb() const { return model_gb + optimizer_gb; }
};

}  // namespace granary::models

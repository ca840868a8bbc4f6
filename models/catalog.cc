// The built-in catalog. Every number carries its source. "Datasheet" figures are vendors'
// maximums (fresh drive, best queue depth); "estimate" marks a figure derived from first
// principles or from a neighbouring product where no vendor figure is published, with the
// reasoning next to it.
//
// Prices are examples, never quotes: a round figure of the order of what the part sold for in
// 2024 through resellers in the USA, our estimate (kExamplePrice), for comparing designs at
// the right order of magnitude. Procurement replaces them with vendors' quotes (a scenario's
// or the catalog database's price_usd).
#include "models/catalog.h"

#include <algorithm>

namespace granary::models {

namespace {

constexpr const char* kExamplePrice =
    "; price: example, an estimate of the 2024 US reseller price, not a quote";

std::string sourced(const char* figures) {
  return std::string(figures) + kExamplePrice;
}

// ---- drives

DriveProfile samsung_pm9a3() {
  // Samsung PM9A3 7.68 TB, U.2, PCIe 4.0 x4, TLC V-NAND (MZQL27T6HBLA). Sequential and random
  // figures from Samsung's PM9A3 data sheet as listed for the 3.84/7.68 TB models (128 KiB
  // sequential, 4 KiB random at QD32 x 4 jobs). The 2020 launch announcement quoted up to
  // 6.5 GB/s and 900k/200k IOPS for the U.2 model (heise.de, 2020-05); the later data sheet
  // figures are used.
  DriveProfile d;
  d.name = "samsung-pm9a3-7.68tb";
  d.kind = DriveKind::kNvme;
  d.capacity_tb = 7.68;
  d.read_gbytes_per_s = 6.9;
  d.write_gbytes_per_s = 4.1;
  d.read_kiops = 1000;
  d.write_kiops = 180;
  // Samsung's PM983 data sheet gives 85 us typical 4 KiB random read latency; the PM9A3 brief
  // quotes ~80 us for its generation.
  d.read_latency_us = 80;
  // Estimate: posted writes complete from the drive's power-protected DRAM; Kioxia lists
  // 14 us for its CD7 (computerbase.de, 2021-11), 20 us allows for a busier controller.
  d.write_latency_us = 20;
  d.queue_depth = 128;  // the data sheet's 32 outstanding I/Os x 4 jobs
  d.price_usd = 900;
  d.source = sourced(
      "Samsung PM9A3 data sheet (7.68 TB U.2); read latency from the PM983/PM9A3 briefs; write "
      "latency an estimate");
  return d;
}

DriveProfile kioxia_cm7r() {
  // Kioxia CM7-R 7.68 TB, PCIe 5.0 x4 (U.2/E3.S), read-intensive. Kioxia CM7 series product
  // brief: up to 14,000 MB/s sequential read, 6,750 MB/s sequential write, 2,700k random read
  // IOPS, 310k random write IOPS (7.68 TB, 1 DWPD model).
  DriveProfile d;
  d.name = "kioxia-cm7r-7.68tb";
  d.kind = DriveKind::kNvme;
  d.capacity_tb = 7.68;
  d.read_gbytes_per_s = 14.0;
  d.write_gbytes_per_s = 6.75;
  d.read_kiops = 2700;
  d.write_kiops = 310;
  // Estimate: Kioxia publishes 75/14 us read/write for its PCIe 5.0 CD7 (computerbase.de,
  // 2021-11) and reported gen-5 prototype read latency at 77% of its gen-4 drives; 70 us.
  d.read_latency_us = 70;
  d.write_latency_us = 14;
  d.queue_depth = 256;
  d.price_usd = 1600;
  d.source = sourced("Kioxia CM7 series product brief (CM7-R 7.68 TB); latencies estimates");
  return d;
}

DriveProfile micron_5400pro() {
  // Micron 5400 PRO 7.68 TB, SATA 6 Gb/s, 2.5-inch, 176-layer TLC. Micron 5400 product brief
  // (blocksandfiles.com, 2022-06-29): 540 MB/s read, 520 MB/s write, 95k/37k random IOPS.
  DriveProfile d;
  d.name = "micron-5400pro-7.68tb";
  d.kind = DriveKind::kSataSsd;
  d.capacity_tb = 7.68;
  d.read_gbytes_per_s = 0.54;
  d.write_gbytes_per_s = 0.52;
  d.read_kiops = 95;
  d.write_kiops = 37;
  // Estimate: NVMe-class NAND read (~80 us) plus the AHCI/SATA command path; Micron's older
  // P400m SATA drive listed 510-570 us under load, typical QD1 reads of current SATA drives
  // are ~100-150 us.
  d.read_latency_us = 120;
  d.write_latency_us = 40;  // estimate: posted to the drive's power-protected cache
  d.queue_depth = 32;       // SATA NCQ: 32 command slots
  d.price_usd = 700;
  d.source = sourced("Micron 5400 product brief (7.68 TB); latencies estimates");
  return d;
}

DriveProfile seagate_exos_x20() {
  // Seagate Exos X20 20 TB, 7,200 rpm, helium, CMR (ST20000NM007D). Exos X20 data sheet:
  // 285 MB/s maximum sustained transfer rate (outer diameter; blocksandfiles.com 2022-03-28),
  // 4 KiB random read 168 IOPS and random write 550 IOPS (QD16, write cache enabled for
  // writes), 4.16 ms average latency.
  DriveProfile d;
  d.name = "seagate-exos-x20-20tb";
  d.kind = DriveKind::kHdd;
  d.capacity_tb = 20;
  d.read_gbytes_per_s = 0.285;
  d.write_gbytes_per_s = 0.285;
  d.read_kiops = 0.168;
  d.write_kiops = 0.55;
  // A 4 KiB random read at queue depth 1 seeks, waits half a rotation and transfers. The data
  // sheet's "average latency" is the half rotation at 7,200 rpm (4.16 ms); Seagate gives no
  // seek time for the X20, so the average read seek is a comparable 7,200 rpm nearline drive's,
  // 8.2 ms typical (HGST Ultrastar 7K4000 specification, "Mechanical positioning"): 12.4 ms
  // with the 14 us transfer (estimate; ~81 IOPS at QD1 against 168 at QD16, the gain the
  // drive's command queueing gives: sim/drive_model.h, docs/models.md "Drives").
  d.read_latency_us = 12400;
  // Estimate: with the write cache enabled (the data sheet's write IOPS are measured so) the
  // drive acknowledges from its cache and orders the writes to the media itself, whatever the
  // host's queue depth, so writes position as at the rated depth from queue depth 1: 1 / 550
  // IOPS = 1,818 us.
  d.write_latency_us = 1820;
  d.queue_depth = 16;
  d.price_usd = 350;
  d.source = sourced(
      "Seagate Exos X20 data sheet (ST20000NM007D); seek time from a comparable 7,200 rpm "
      "drive's specification (estimate)");
  return d;
}

// ---- NICs

NicProfile nic(const char* name, double gbps, double latency_us, double price_usd,
               const char* figures) {
  NicProfile n;
  n.name = name;
  n.gbps = gbps;
  n.ports = 1;
  n.latency_us = latency_us;
  n.price_usd = price_usd;
  n.source = sourced(figures);
  return n;
}

// ---- protocols

ProtocolProfile protocol(const char* name, double message_latency_us, double client_cpu_us_per_op,
                         double server_cpu_us_per_op, double cpu_us_per_mib, double efficiency,
                         bool zero_copy) {
  ProtocolProfile p;
  p.name = name;
  p.message_latency_us = message_latency_us;
  p.client_cpu_us_per_op = client_cpu_us_per_op;
  p.server_cpu_us_per_op = server_cpu_us_per_op;
  p.cpu_us_per_mib = cpu_us_per_mib;
  p.efficiency = efficiency;
  p.zero_copy = zero_copy;
  return p;
}

std::vector<ProtocolProfile> make_protocols() {
  return {
      // Ceph's messenger over RDMA (ms_type async+rdma). Server CPU: Ceph's hardware
      // recommendations and M. Nelson, "Ceph OSD CPU Scaling" (ceph.io, 2022) size an NVMe OSD
      // at 1 core per 1,000-3,000 IOPS (333-1,000 us per op, writes included) and per
      // 200-500 MB/s; reads are the cheap end, so 250 us per op (messenger, PG, BlueStore
      // read path). Per MiB (estimate): crc32c on the wire (ms_crc_data) and in BlueStore at
      // ~10 GB/s per core (~200 us together with the copy into registered buffers, which
      // Ceph's RDMA messenger makes: not zero-copy). Latency (estimate): ~10 us one way in the
      // messenger and dispatch over verbs. Efficiency (estimate): as NFS over RDMA below plus
      // the messenger's larger frames, 0.85.
      protocol("rdma", 10, 20, 250, 200, 0.85, false),
      // Ceph's messenger over kernel TCP (ms_type async+posix). As above plus the socket
      // copies and TCP processing: Linux moves ~3-4 GB/s per core through a TCP receive with
      // copies, ~300 us per MiB more (estimate); ~25 us one way through the stack and the
      // messenger's event loop (estimate); efficiency 0.80 (estimate, single-flow TCP with
      // 9000-byte MTU and Ceph framing).
      protocol("tcp", 25, 30, 300, 500, 0.80, false),
      // NVMe over Fabrics, RDMA transport. SPDK's NVMe-oF RDMA performance reports add ~5 us
      // per direction over local NVMe and reach ~3 us of target CPU per 4 KiB I/O (hundreds of
      // kIOPS per core); the kernel initiator costs a few us. Data moves by RDMA READ/WRITE
      // straight into the host's buffers: zero-copy, no per-byte CPU. Efficiency 0.93
      // (estimate: InfiniBand/RoCE headers on 4 KiB MTU plus NVMe capsules).
      protocol("nvmeof-rdma", 5, 3, 3, 0, 0.93, true),
      // NVMe/TCP: ~10-15 us more per round trip than RDMA (SPDK NVMe-oF TCP performance
      // reports; vendor comparisons quote 25-40 us against 10-20 us end to end). Per MiB: the
      // socket copies (estimate 150 us, data digest off). Efficiency 0.90 (estimate).
      protocol("nvme-tcp", 12, 6, 8, 150, 0.90, false),
      // iSCSI (open-iscsi initiator, LIO target): SCSI command processing on both ends and
      // the TCP copies; 40 us one way, 15/25 us per op, 300 us per MiB, efficiency 0.85
      // (estimates: the kernel iSCSI path is about twice the work of NVMe/TCP).
      protocol("iscsi", 40, 15, 25, 300, 0.85, false),
      // NFS over RDMA (knfsd, RPC-over-RDMA with direct data placement). NVIDIA GPUDirect
      // Storage design guide: 9.48 GiB/s read on one 100 Gb/s link = 10.18 GB/s of 12.5 GB/s,
      // efficiency 0.81; 4 KiB random reads at ~234k IOPS and 137 us, of which the drive is
      // ~80 us: ~25 us one way for RPC and nfsd (estimate 20 us messaging + CPU below).
      protocol("nfs-rdma", 20, 10, 20, 0, 0.81, true),
      // NFS over TCP: the RPC over sockets, with copies on the client (estimate 400 us per
      // MiB on both ends together with TCP processing), 35 us one way, efficiency 0.75
      // (estimate: one TCP connection per mount without nconnect).
      protocol("nfs-tcp", 35, 15, 30, 400, 0.75, false),
      // Lustre LNet over RDMA (o2iblnd): bulk data by RDMA, zero-copy. lnet_selftest on EDR
      // InfiniBand (100 Gb/s) commonly reaches ~11 GB/s (efficiency 0.9); per-RPC cost on the
      // OSS ~30 us (estimate: ptlrpc service thread plus OST I/O setup); 8 us one way.
      protocol("lnet-rdma", 8, 10, 30, 0, 0.90, true),
      // Lustre LNet over TCP (ksocklnd): as above with socket copies (estimate 400 us per
      // MiB), 20 us one way, efficiency 0.80 (estimate).
      protocol("lnet-tcp", 20, 15, 40, 400, 0.80, false),
      // A node's own NVMe drives through its file system with O_DIRECT (design "local"): no
      // network and no server. The kernel's block layer and NVMe driver add ~2 us each way
      // around the drive's own latency, and submitting and completing one I/O costs the node
      // ~4 us of CPU (estimates: interrupt-driven libaio/io_uring reach ~250k IOPS per core
      // through a file system). The drive DMAs into the reader's buffer: zero-copy. The
      // drives' rated bandwidth is already goodput: efficiency 1.
      protocol("local-nvme", 2, 4, 0, 0, 1.0, true),
  };
}

// ---- accelerators

AcceleratorProfile accelerator(const char* name, double unet3d, double resnet50, double cosmoflow,
                               double price_usd, const char* figures) {
  AcceleratorProfile a;
  a.name = name;
  a.compute_s_per_step = {{"unet3d", unet3d}, {"resnet50", resnet50}, {"cosmoflow", cosmoflow}};
  a.price_usd = price_usd;
  a.source = sourced(figures);
  return a;
}

std::vector<AcceleratorProfile> make_accelerators() {
  return {
      // MLPerf Storage v0.5 / DLIO configs (*_v100.yaml): unet3d 1.3604 s at batch 4,
      // resnet50 0.195 s at batch 64, cosmoflow 0.00936 s at batch 1. Scaled linearly to the
      // v1.0 batch sizes of the presets below (unet3d 7, resnet50 400), since a step here
      // is one v1.0 batch: unet3d 1.3604 x 7/4 = 2.3807 s, resnet50 0.195 x 400/64 = 1.21875 s.
      // Price: the 2024 second-hand price of a V100 SXM2 32 GB (no longer sold new).
      accelerator("v100", 1.3604 * 7 / 4, 0.195 * 400 / 64, 0.00936, 3000,
                  "MLPerf Storage v0.5 DLIO configs (*_v100.yaml), scaled to v1.0 batch sizes"),
      // MLPerf Storage v1.0 (mlcommons/storage configs/dlio/workload/*_a100.yaml).
      accelerator("a100", 0.636, 0.435, 0.00551, 15000,
                  "MLPerf Storage v1.0 DLIO configs (*_a100.yaml)"),
      // MLPerf Storage v1.0 (mlcommons/storage configs/dlio/workload/*_h100.yaml).
      accelerator("h100", 0.323, 0.224, 0.00350, 30000,
                  "MLPerf Storage v1.0 DLIO configs (*_h100.yaml)"),
  };
}

// ---- storage servers
//
// Generic reference designs, not one vendor's model: the shapes storage servers for GPU
// clusters are built in (1U and 2U all-NVMe, 4U top-loading HDD), with figures typical of the
// 2023-2024 products of that shape from the main server vendors (estimates, the reasoning
// next to each). Prices include CPUs, memory and boot drives, not data drives or NICs.

ServerProfile server(const char* name, int cores, int bays, int nic_slots, int rack_units,
                     double power_watts, double price_usd, const char* figures) {
  ServerProfile p;
  p.name = name;
  p.cpu_cores = cores;
  p.drive_bays = bays;
  p.nic_slots = nic_slots;
  p.server_gbytes_per_s = 0;  // the drives' and NICs' own PCIe lanes: nothing shared limits
  p.rack_units = rack_units;
  p.power_watts = power_watts;
  p.price_usd = price_usd;
  p.source = sourced(figures);
  return p;
}

std::vector<ServerProfile> make_servers() {
  return {
      // One 64-core PCIe 5.0 socket (128 lanes): 12 x4 E3.S/U.2 bays use 48 lanes, two x16
      // NIC slots 32: every drive and NIC on its own lanes, no shared limit. ~800 W with
      // 12 drives at ~20 W and two 400 Gb/s NICs (estimate).
      server("nvme-1u-12bay", 64, 12, 2, 1, 800, 14000,
             "generic 1U single-socket all-NVMe server (estimate)"),
      // Two 32-core PCIe 4.0 sockets: 24 x4 U.2 bays on direct lanes (96), four x16 slots. The
      // design of the flagship scenario's servers; ~1,100 W loaded (estimate).
      server("nvme-2u-24bay", 64, 24, 4, 2, 1100, 20000,
             "generic 2U dual-socket all-NVMe server (estimate)"),
      // A top-loading 60-bay 4U server for nearline disks behind SAS expanders, two 16-core
      // sockets, two x16 NIC slots; ~1,000 W with 60 disks at ~10 W (estimate). Sixty disks
      // move ~17 GB/s, under one SAS4 x8 controller's ~19 GB/s: no limit set.
      server("hdd-4u-60bay", 32, 60, 2, 4, 1000, 12000,
             "generic 4U 60-bay nearline disk server (estimate)"),
  };
}

// ---- switches

SwitchProfile fabric_switch(const char* name, int ports, double port_gbps, int max_split,
                            double latency_us, int rack_units, double power_watts, double price_usd,
                            const char* figures) {
  SwitchProfile p;
  p.name = name;
  p.ports = ports;
  p.port_gbps = port_gbps;
  p.max_split = max_split;
  p.latency_us = latency_us;
  p.rack_units = rack_units;
  p.power_watts = power_watts;
  p.price_usd = price_usd;
  p.source = sourced(figures);
  return p;
}

std::vector<SwitchProfile> make_switches() {
  return {
      // Spectrum-3 SN4600C: 64 x 100 GbE QSFP28 in 2U, split into 2 x 50 (or 25) GbE
      // (NVIDIA SN4000 user manual). Latency: Spectrum's cut-through Ethernet pipeline,
      // ~0.45 us (estimate); ~450 W without optics (estimate).
      fabric_switch("spectrum3-sn4600c", 64, 100, 2, 0.45, 2, 450, 15000,
                    "NVIDIA Spectrum-3 SN4000 series user manual; latency and power estimates"),
      // Quantum HDR QM8700: 40 x 200 Gb/s QSFP56 in 1U, split 2 x 100 Gb/s (HDR100). Latency:
      // 0.13 us is the figure commonly quoted for Quantum HDR; ~250 W without optics (estimate).
      fabric_switch("quantum-qm8700", 40, 200, 2, 0.13, 1, 250, 18000,
                    "NVIDIA Quantum HDR QM8700 product brief; power an estimate"),
      // Quantum-2 QM9700: 64 x 400 Gb/s NDR in 1U (32 twin-port OSFP cages), split 2 x 200
      // Gb/s. Published latencies range from under 0.15 to ~0.33 us port to port; 0.3 us
      // (estimate); ~750 W without optics (estimate).
      fabric_switch("quantum2-qm9700", 64, 400, 2, 0.3, 1, 750, 30000,
                    "NVIDIA Quantum-2 QM9700/QM9790 user manual; latency and power estimates"),
      // Spectrum-4 SN5600: 64 x 800 GbE OSFP in 2U, breakout to 2 x 400 or 4 x 200 GbE
      // (up to 256 ports of 100 GbE; NVIDIA SN5000 2U user manual). ~0.6 us (estimate, a
      // store-and-forward 51.2 Tb/s Ethernet pipeline); ~1,000 W without optics (estimate).
      fabric_switch("spectrum4-sn5600", 64, 800, 4, 0.6, 2, 1000, 60000,
                    "NVIDIA Spectrum-4 SN5000 2U user manual; latency and power estimates"),
  };
}

// ---- MLPerf Storage v1.0 training workloads (mlcommons/storage configs/dlio/workload, same
// values at tag v1.0.1 under storage-conf/workload). Prefetch is DLIO's default (2 batches);
// compute time per step comes from the accelerator.

TrainingWorkload training(const char* name, double mean, double sd, int samples_per_file,
                          int64_t files, int batch, int threads, double au, const char* format) {
  TrainingWorkload w;
  w.name = name;
  w.sample_bytes_mean = mean;
  w.sample_bytes_stddev = sd;
  // DLIO draws a sample's two dimensions, not its bytes (engine/services/dataset.h).
  w.sample_sizes = services::SampleSizes::kDlioDimensions;
  w.samples_per_file = samples_per_file;
  w.files = files;
  w.batch_size = batch;
  w.read_threads = threads;
  w.prefetch_batches = 2;
  w.compute_s_per_step = 0;
  w.epochs = 5;  // train.epochs: 5 in all three configs
  w.au_threshold = au;
  w.file_format = format;
  return w;
}

std::vector<TrainingWorkload> make_workloads() {
  return {
      // unet3d_*.yaml: npz, record_length_bytes 146600628 +- 68341808, 1 sample per file,
      // 168 files, batch 7, 4 read threads, metric.au 0.90.
      training("unet3d", 146600628, 68341808, 1, 168, 7, 4, 0.90, "npz"),
      // resnet50_*.yaml: tfrecord, record_length_bytes 114660.07 (resized to 150528 in
      // memory, which storage never sees), 1251 samples per file, 1024 files, batch 400,
      // 8 read threads, metric.au 0.90.
      training("resnet50", 114660.07, 0, 1251, 1024, 400, 8, 0.90, "tfrecord"),
      // cosmoflow_*.yaml: tfrecord, record_length_bytes 2828486 +- 71311, 1 sample per file,
      // 524288 files, batch 1, 4 read threads; Submission_guidelines.md: minimum AU 0.70.
      training("cosmoflow", 2828486, 71311, 1, 524288, 1, 4, 0.70, "tfrecord"),
  };
}

template <typename T>
std::vector<std::string> names_of(const std::vector<T>& profiles) {
  std::vector<std::string> names;
  names.reserve(profiles.size());
  for (const T& p : profiles) names.push_back(p.name);
  return names;
}

template <typename T>
Result<T> find(const std::vector<T>& profiles, std::string_view name, const char* what) {
  for (const T& p : profiles) {
    if (p.name == name) return p;
  }
  std::string known;
  for (const T& p : profiles) known += (known.empty() ? "" : ", ") + p.name;
  return Status::not_found("unknown " + std::string(what) + " '" + std::string(name) +
                           "' (known: " + known + ")");
}

}  // namespace

const std::vector<DriveProfile>& drive_profiles() {
  static const std::vector<DriveProfile> kDrives = {kioxia_cm7r(), samsung_pm9a3(),
                                                    micron_5400pro(), seagate_exos_x20()};
  return kDrives;
}

const std::vector<NicProfile>& nic_profiles() {
  // Latency is the NIC's own (one way, plus a few metres of cable). NVIDIA's ConnectX-6 and
  // ConnectX-7 product briefs quote sub-600 ns RDMA latency; 0.6 us. The 25 GbE adapter
  // (ConnectX-4 Lx / ConnectX-6 Lx class) has no such figure: 1.0 us (estimate).
  static const std::vector<NicProfile> kNics = {
      // 25 GbE, SFP28
      nic("connectx4lx-25g", 25, 1.0, 250, "25 GbE line rate; latency an estimate"),
      // HDR100 InfiniBand / 100 GbE, QSFP56
      nic("connectx6-100g", 100, 0.6, 900, "NVIDIA ConnectX-6 product brief"),
      // HDR InfiniBand / 200 GbE, QSFP56
      nic("connectx6-200g", 200, 0.6, 1400, "NVIDIA ConnectX-6 product brief"),
      // NDR InfiniBand / 400 GbE, OSFP
      nic("connectx7-400g", 400, 0.6, 2200, "NVIDIA ConnectX-7 product brief"),
  };
  return kNics;
}

const std::vector<ServerProfile>& server_profiles() {
  static const std::vector<ServerProfile> kServers = make_servers();
  return kServers;
}

const std::vector<SwitchProfile>& switch_profiles() {
  static const std::vector<SwitchProfile> kSwitches = make_switches();
  return kSwitches;
}

const std::vector<ProtocolProfile>& protocol_profiles() {
  static const std::vector<ProtocolProfile> kProtocols = make_protocols();
  return kProtocols;
}

const std::vector<AcceleratorProfile>& accelerator_profiles() {
  static const std::vector<AcceleratorProfile> kAccelerators = make_accelerators();
  return kAccelerators;
}

const std::vector<TrainingWorkload>& mlperf_workloads() {
  static const std::vector<TrainingWorkload> kWorkloads = make_workloads();
  return kWorkloads;
}

const std::vector<CheckpointWorkload>& mlperf_checkpoints() {
  // MLPerf Storage v2.0 checkpointing (mlcommons/storage, llama3 configs): fp16 model, fp32
  // optimizer state; TP x PP x DP; the closed division's GPU counts.
  auto c = [](const char* name, double model, double optimizer, int tp, int pp, int dp) {
    CheckpointWorkload w;
    w.name = name;
    w.model_gb = model;
    w.optimizer_gb = optimizer;
    w.tensor_parallel = tp;
    w.pipeline_parallel = pp;
    w.data_parallel = dp;
    return w;
  };
  static const std::vector<CheckpointWorkload> kCheckpoints = {
      c("llama3-8b", 15, 90, 1, 1, 8),        // 105 GB on 8 GPUs
      c("llama3-70b", 130, 781, 8, 1, 8),     // 912 GB on 64 GPUs
      c("llama3-405b", 755, 4533, 8, 32, 2),  // 5.29 TB on 512 GPUs
      c("llama3-1t", 2571, 15426, 8, 64, 2),  // 18 TB on 1024 GPUs
  };
  return kCheckpoints;
}

Result<CheckpointWorkload> mlperf_checkpoint(std::string_view name) {
  return find(mlperf_checkpoints(), name, "MLPerf Storage checkpoint workload");
}

std::vector<std::string> drive_profile_names() {
  return names_of(drive_profiles());
}
std::vector<std::string> nic_profile_names() {
  return names_of(nic_profiles());
}
std::vector<std::string> server_profile_names() {
  return names_of(server_profiles());
}
std::vector<std::string> switch_profile_names() {
  return names_of(switch_profiles());
}
std::vector<std::string> protocol_profile_names() {
  return names_of(protocol_profiles());
}
std::vector<std::string> accelerator_profile_names() {
  return names_of(accelerator_profiles());
}
std::vector<std::string> mlperf_workload_names() {
  return names_of(mlperf_workloads());
}

Result<DriveProfile> drive_profile(std::string_view name) {
  return find(drive_profiles(), name, "drive profile");
}
Result<NicProfile> nic_profile(std::string_view name) {
  return find(nic_profiles(), name, "NIC profile");
}
Result<ServerProfile> server_profile(std::string_view name) {
  return find(server_profiles(), name, "server profile");
}
Result<SwitchProfile> switch_profile(std::string_view name) {
  return find(switch_profiles(), name, "switch profile");
}
Result<ProtocolProfile> protocol_profile(std::string_view name) {
  return find(protocol_profiles(), name, "protocol");
}
Result<AcceleratorProfile> accelerator_profile(std::string_view name) {
  return find(accelerator_profiles(), name, "accelerator");
}
Result<TrainingWorkload> mlperf_workload(std::string_view name) {
  return find(mlperf_workloads(), name, "MLPerf Storage workload");
}

namespace {

template <typename T>
std::string name_list(const std::vector<T>& profiles) {
  std::string out;
  for (const T& p : profiles) out += (out.empty() ? "" : ", ") + p.name;
  return out.empty() ? std::string("none") : out;
}

// Looks `name` up in the built-in profiles, then in each extra source's.
template <typename T>
Result<T> find_in(const std::vector<ExtraProfiles>& extras, std::vector<T> ExtraProfiles::*member,
                  Result<T> built_in, std::string_view name, const std::vector<T>& builtins,
                  const char* what) {
  if (built_in.ok() || extras.empty()) return built_in;
  for (const ExtraProfiles& e : extras) {
    for (const T& p : e.*member) {
      if (p.name == name) return p;
    }
  }
  std::string looked = "built-in: " + name_list(builtins);
  for (const ExtraProfiles& e : extras) looked += "; " + e.source + ": " + name_list(e.*member);
  return Status::not_found("unknown " + std::string(what) + " '" + std::string(name) +
                           "' (known: " + looked + ")");
}

template <typename T>
std::vector<std::string> all_names(const std::vector<ExtraProfiles>& extras,
                                   std::vector<T> ExtraProfiles::*member,
                                   std::vector<std::string> names) {
  for (const ExtraProfiles& e : extras) {
    for (const T& p : e.*member) {
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
    }
  }
  return names;
}

}  // namespace

const Catalog& Catalog::built_in() {
  static const Catalog kBuiltIn;
  return kBuiltIn;
}

Result<DriveProfile> Catalog::drive(std::string_view name) const {
  return find_in(extras_, &ExtraProfiles::drives, drive_profile(name), name, drive_profiles(),
                 "drive profile");
}
Result<NicProfile> Catalog::nic(std::string_view name) const {
  return find_in(extras_, &ExtraProfiles::nics, nic_profile(name), name, nic_profiles(),
                 "NIC profile");
}
Result<AcceleratorProfile> Catalog::accelerator(std::string_view name) const {
  return find_in(extras_, &ExtraProfiles::accelerators, accelerator_profile(name), name,
                 accelerator_profiles(), "accelerator");
}
Result<ServerProfile> Catalog::server(std::string_view name) const {
  return find_in(extras_, &ExtraProfiles::servers, server_profile(name), name, server_profiles(),
                 "server profile");
}
Result<SwitchProfile> Catalog::fabric_switch(std::string_view name) const {
  return find_in(extras_, &ExtraProfiles::switches, switch_profile(name), name, switch_profiles(),
                 "switch profile");
}
std::vector<std::string> Catalog::drive_names() const {
  return all_names(extras_, &ExtraProfiles::drives, drive_profile_names());
}
std::vector<std::string> Catalog::nic_names() const {
  return all_names(extras_, &ExtraProfiles::nics, nic_profile_names());
}
std::vector<std::string> Catalog::accelerator_names() const {
  return all_names(extras_, &ExtraProfiles::accelerators, accelerator_profile_names());
}
std::vector<std::string> Catalog::server_names() const {
  return all_names(extras_, &ExtraProfiles::servers, server_profile_names());
}
std::vector<std::string> Catalog::switch_names() const {
  return all_names(extras_, &ExtraProfiles::switches, switch_profile_names());
}

const std::vector<std::string>& protocols_for_design(StorageDesign design) {
  static const std::vector<std::string> kRados = {"rdma", "tcp"};
  static const std::vector<std::string> kPfs = {"lnet-rdma", "lnet-tcp"};
  static const std::vector<std::string> kNfs = {"nfs-rdma", "nfs-tcp"};
  static const std::vector<std::string> kLocal = {"local-nvme"};
  switch (design) {
    case StorageDesign::kRados:
      return kRados;
    case StorageDesign::kPfs:
      return kPfs;
    case StorageDesign::kNfs:
      return kNfs;
    case StorageDesign::kLocal:
      return kLocal;
  }
  GRANARY_CHECK(false);
  return kRados;
}

std::string_view storage_design_name(StorageDesign design) {
  switch (design) {
    case StorageDesign::kRados:
      return "rados";
    case StorageDesign::kPfs:
      return "pfs";
    case StorageDesign::kNfs:
      return "nfs";
    case StorageDesign::kLocal:
      return "local";
  }
  return "?";
}

std::string_view workload_kind_name(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kTrainingRead:
      return "training_read";
    case WorkloadKind::kCheckpoint:
      return "checkpoint";
    case WorkloadKind::kBlock:
      return "block";
    case WorkloadKind::kBootStorm:
      return "boot_storm";
  }
  return "?";
}

std::string_view failure_kind_name(FailureKind k) {
  switch (k) {
    case FailureKind::kOsdCrash:
      return "osd_crash";
    case FailureKind::kDriveFailure:
      return "drive_failure";
    case FailureKind::kHostDown:
      return "host_down";
    case FailureKind::kOsdRestart:
      return "osd_restart";
    case FailureKind::kHostRestart:
      return "host_restart";
    case FailureKind::kPartition:
      return "partition";
    case FailureKind::kHeal:
      return "heal";
    case FailureKind::kSlowDrive:
      return "slow_drive";
    case FailureKind::kNicDegraded:
      return "nic_degraded";
    case FailureKind::kNicDown:
      return "nic_down";
    case FailureKind::kNicUp:
      return "nic_up";
    case FailureKind::kLinkDown:
      return "link_down";
    case FailureKind::kLinkDegraded:
      return "link_degraded";
    case FailureKind::kLinkUp:
      return "link_up";
    case FailureKind::kDriveReplace:
      return "drive_replace";
  }
  return "?";
}

std::string_view drive_kind_name(DriveKind kind) {
  switch (kind) {
    case DriveKind::kNvme:
      return "nvme";
    case DriveKind::kSataSsd:
      return "sata-ssd";
    case DriveKind::kHdd:
      return "hdd";
  }
  return "?";
}

}  // namespace granary::models

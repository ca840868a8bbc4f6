// The built-in catalog: every profile sane, lookups, and the published MLPerf Storage numbers.
#include "models/catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace granary::models {
namespace {

template <typename T>
void expect_unique_names(const std::vector<T>& profiles) {
  std::set<std::string> names;
  for (const T& p : profiles) {
    EXPECT_FALSE(p.name.empty());
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
  }
}

TEST(Catalog, DrivesAreSane) {
  ASSERT_GE(drive_profiles().size(), 4u);
  expect_unique_names(drive_profiles());
  for (const DriveProfile& d : drive_profiles()) {
    SCOPED_TRACE(d.name);
    EXPECT_GT(d.capacity_tb, 0.1);
    EXPECT_LT(d.capacity_tb, 200);
    EXPECT_GT(d.read_gbytes_per_s, 0.1);
    EXPECT_LT(d.read_gbytes_per_s, 30);  // PCIe 5.0 x4 carries ~15.7 GB/s
    EXPECT_GT(d.write_gbytes_per_s, 0.1);
    EXPECT_LE(d.write_gbytes_per_s, d.read_gbytes_per_s * 1.01);
    EXPECT_GT(d.read_kiops, 0);
    EXPECT_GT(d.write_kiops, 0);
    EXPECT_LT(d.read_kiops, 5000);
    EXPECT_GE(d.queue_depth, 1);
    EXPECT_GE(d.price_usd, 0);
    // NAND reads take tens of microseconds; a disk seeks and rotates for milliseconds.
    if (d.kind == DriveKind::kHdd) {
      EXPECT_GE(d.read_latency_us, 2000);
      EXPECT_LE(d.read_latency_us, 20000);
      EXPECT_LT(d.read_kiops, 1);
    } else {
      EXPECT_GE(d.read_latency_us, 20);
      EXPECT_LE(d.read_latency_us, 500);
      EXPECT_GE(d.write_latency_us, 5);
      EXPECT_LE(d.write_latency_us, 500);
    }
  }
}

TEST(Catalog, DriveClassesMatchTheirDatasheets) {
  const DriveProfile gen4 = drive_profile("samsung-pm9a3-7.68tb").value();
  EXPECT_EQ(gen4.kind, DriveKind::kNvme);
  EXPECT_NEAR(gen4.read_gbytes_per_s, 7, 0.5);
  EXPECT_NEAR(gen4.write_gbytes_per_s, 4, 0.5);
  EXPECT_NEAR(gen4.read_kiops, 1000, 150);
  EXPECT_NEAR(gen4.read_latency_us, 80, 10);
  EXPECT_DOUBLE_EQ(gen4.capacity_tb, 7.68);
  const DriveProfile gen5 = drive_profile("kioxia-cm7r-7.68tb").value();
  EXPECT_NEAR(gen5.read_gbytes_per_s, 14, 0.5);
  const DriveProfile sata = drive_profile("micron-5400pro-7.68tb").value();
  EXPECT_EQ(sata.kind, DriveKind::kSataSsd);
  EXPECT_NEAR(sata.read_gbytes_per_s, 0.55, 0.02);
  EXPECT_NEAR(sata.read_kiops, 90, 10);
  const DriveProfile hdd = drive_profile("seagate-exos-x20-20tb").value();
  EXPECT_EQ(hdd.kind, DriveKind::kHdd);
  EXPECT_NEAR(hdd.read_gbytes_per_s, 0.27, 0.03);
  EXPECT_NEAR(hdd.read_kiops, 0.2, 0.05);
  // QD1: an 8.2 ms seek and half a rotation at 7,200 rpm (4.16 ms), slower than the rated
  // QD16 IOPS (1 / 168 = 5.95 ms), as the hdd head model requires.
  EXPECT_NEAR(hdd.read_latency_us, 12400, 500);
  EXPECT_GE(hdd.read_latency_us, 1e3 / hdd.read_kiops);
  EXPECT_GE(hdd.write_latency_us, 1e3 / hdd.write_kiops);
  EXPECT_GE(hdd.queue_depth, 2);
}

TEST(Catalog, NicsAreSane) {
  expect_unique_names(nic_profiles());
  std::set<double> speeds;
  for (const NicProfile& n : nic_profiles()) {
    SCOPED_TRACE(n.name);
    speeds.insert(n.gbps);
    EXPECT_GE(n.ports, 1);
    EXPECT_GT(n.latency_us, 0.1);
    EXPECT_LT(n.latency_us, 10);
  }
  EXPECT_EQ(speeds, (std::set<double>{25, 100, 200, 400}));
  EXPECT_DOUBLE_EQ(nic_profile("connectx6-200g")->gbps, 200);
}

TEST(Catalog, ProtocolsAreSane) {
  expect_unique_names(protocol_profiles());
  for (const char* name :
       {"rdma", "tcp", "nvmeof-rdma", "nvme-tcp", "iscsi", "nfs-rdma", "nfs-tcp", "lnet-rdma"}) {
    EXPECT_TRUE(protocol_profile(name).ok()) << name;
  }
  for (const ProtocolProfile& p : protocol_profiles()) {
    SCOPED_TRACE(p.name);
    EXPECT_GT(p.message_latency_us, 0);
    EXPECT_LT(p.message_latency_us, 100);
    EXPECT_GT(p.client_cpu_us_per_op, 0);
    // Every protocol to a server costs the server CPU; the node's own drives have no server.
    if (p.name == "local-nvme") {
      EXPECT_EQ(p.server_cpu_us_per_op, 0);
    } else {
      EXPECT_GT(p.server_cpu_us_per_op, 0);
    }
    EXPECT_LT(p.server_cpu_us_per_op, 1000);
    EXPECT_GE(p.cpu_us_per_mib, 0);
    EXPECT_GT(p.efficiency, 0.5);
    EXPECT_LE(p.efficiency, 1.0);
    // Zero-copy transports spend no CPU per byte; copying ones do.
    if (p.zero_copy) {
      EXPECT_EQ(p.cpu_us_per_mib, 0);
    } else {
      EXPECT_GT(p.cpu_us_per_mib, 0);
    }
  }
  // An RDMA transport is never slower or costlier per op than its TCP sibling.
  const std::pair<const char*, const char*> pairs[] = {{"rdma", "tcp"},
                                                       {"nvmeof-rdma", "nvme-tcp"},
                                                       {"nfs-rdma", "nfs-tcp"},
                                                       {"lnet-rdma", "lnet-tcp"}};
  for (const auto& [rdma, tcp] : pairs) {
    const ProtocolProfile r = protocol_profile(rdma).value();
    const ProtocolProfile t = protocol_profile(tcp).value();
    EXPECT_LT(r.message_latency_us, t.message_latency_us) << rdma;
    EXPECT_LE(r.client_cpu_us_per_op, t.client_cpu_us_per_op) << rdma;
    EXPECT_LT(r.cpu_us_per_mib, t.cpu_us_per_mib) << rdma;
  }
  // NVIDIA GDS guide: NFS over RDMA, 9.48 GiB/s on one 100 Gb/s link.
  EXPECT_NEAR(protocol_profile("nfs-rdma")->efficiency, 9.48 * (1 << 30) / 12.5e9, 0.01);
}

TEST(Catalog, EveryDesignHasCatalogProtocols) {
  for (StorageDesign d :
       {StorageDesign::kRados, StorageDesign::kPfs, StorageDesign::kNfs, StorageDesign::kLocal}) {
    ASSERT_FALSE(protocols_for_design(d).empty());
    for (const std::string& p : protocols_for_design(d)) {
      EXPECT_TRUE(protocol_profile(p).ok()) << p;
    }
  }
  EXPECT_EQ(protocols_for_design(StorageDesign::kRados).front(), "rdma");
  EXPECT_EQ(protocols_for_design(StorageDesign::kPfs).front(), "lnet-rdma");
  EXPECT_EQ(protocols_for_design(StorageDesign::kNfs).front(), "nfs-rdma");
  EXPECT_EQ(protocols_for_design(StorageDesign::kLocal).front(), "local-nvme");
}

TEST(Catalog, AcceleratorsCarryMlperfComputeTimes) {
  expect_unique_names(accelerator_profiles());
  for (const AcceleratorProfile& a : accelerator_profiles()) {
    SCOPED_TRACE(a.name);
    for (const char* w : {"unet3d", "resnet50", "cosmoflow"}) {
      ASSERT_EQ(a.compute_s_per_step.count(w), 1u) << w;
      EXPECT_GT(a.compute_s_per_step.at(w), 0.001);
      EXPECT_LT(a.compute_s_per_step.at(w), 10);
    }
  }
  // The MLPerf Storage v1.0 table (shared/notes/mlperf-storage.md).
  const AcceleratorProfile a100 = accelerator_profile("a100").value();
  EXPECT_DOUBLE_EQ(a100.compute_s_per_step.at("unet3d"), 0.636);
  EXPECT_DOUBLE_EQ(a100.compute_s_per_step.at("resnet50"), 0.435);
  EXPECT_DOUBLE_EQ(a100.compute_s_per_step.at("cosmoflow"), 0.00551);
  const AcceleratorProfile h100 = accelerator_profile("h100").value();
  EXPECT_DOUBLE_EQ(h100.compute_s_per_step.at("unet3d"), 0.323);
  EXPECT_DOUBLE_EQ(h100.compute_s_per_step.at("resnet50"), 0.224);
  EXPECT_DOUBLE_EQ(h100.compute_s_per_step.at("cosmoflow"), 0.00350);
  // V100: v0.5 figures per sample, at the v1.0 batch sizes.
  const AcceleratorProfile v100 = accelerator_profile("v100").value();
  EXPECT_NEAR(v100.compute_s_per_step.at("unet3d") / 7, 1.3604 / 4, 1e-12);
  EXPECT_NEAR(v100.compute_s_per_step.at("resnet50") / 400, 0.195 / 64, 1e-12);
  EXPECT_DOUBLE_EQ(v100.compute_s_per_step.at("cosmoflow"), 0.00936);
  // Faster accelerators step faster.
  for (const char* w : {"unet3d", "resnet50", "cosmoflow"}) {
    EXPECT_GT(v100.compute_s_per_step.at(w), a100.compute_s_per_step.at(w)) << w;
    EXPECT_GT(a100.compute_s_per_step.at(w), h100.compute_s_per_step.at(w)) << w;
  }
}

TEST(Catalog, MlperfWorkloadsArePublishedParameters) {
  EXPECT_EQ(mlperf_workload_names(), (std::vector<std::string>{"unet3d", "resnet50", "cosmoflow"}));
  const TrainingWorkload u = mlperf_workload("unet3d").value();
  EXPECT_DOUBLE_EQ(u.sample_bytes_mean, 146600628);
  EXPECT_DOUBLE_EQ(u.sample_bytes_stddev, 68341808);
  EXPECT_EQ(u.samples_per_file, 1);
  EXPECT_EQ(u.files, 168);
  EXPECT_EQ(u.batch_size, 7);
  EXPECT_EQ(u.read_threads, 4);
  EXPECT_DOUBLE_EQ(u.au_threshold, 0.90);
  EXPECT_EQ(u.file_format, "npz");
  const TrainingWorkload r = mlperf_workload("resnet50").value();
  EXPECT_DOUBLE_EQ(r.sample_bytes_mean, 114660.07);
  EXPECT_EQ(r.samples_per_file, 1251);
  EXPECT_EQ(r.files, 1024);
  EXPECT_EQ(r.batch_size, 400);
  EXPECT_EQ(r.read_threads, 8);
  EXPECT_DOUBLE_EQ(r.au_threshold, 0.90);
  const TrainingWorkload c = mlperf_workload("cosmoflow").value();
  EXPECT_DOUBLE_EQ(c.sample_bytes_mean, 2828486);
  EXPECT_DOUBLE_EQ(c.sample_bytes_stddev, 71311);
  EXPECT_EQ(c.files, 524288);
  EXPECT_EQ(c.batch_size, 1);
  EXPECT_EQ(c.read_threads, 4);
  EXPECT_DOUBLE_EQ(c.au_threshold, 0.70);
  for (const TrainingWorkload& w : mlperf_workloads()) {
    EXPECT_EQ(w.epochs, 5) << w.name;
    EXPECT_EQ(w.prefetch_batches, 2) << w.name;
    EXPECT_EQ(w.compute_s_per_step, 0) << w.name << ": compute time comes from the accelerator";
  }
}

TEST(Catalog, UnknownNamesListTheKnownOnes) {
  auto d = drive_profile("nvme-gen9");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(d.status().message(),
            "unknown drive profile 'nvme-gen9' (known: kioxia-cm7r-7.68tb, samsung-pm9a3-7.68tb, "
            "micron-5400pro-7.68tb, seagate-exos-x20-20tb)");
  EXPECT_EQ(nic_profile("cx9").status().message(),
            "unknown NIC profile 'cx9' (known: connectx4lx-25g, connectx6-100g, connectx6-200g, "
            "connectx7-400g)");
  EXPECT_EQ(accelerator_profile("b200").status().message(),
            "unknown accelerator 'b200' (known: v100, a100, h100)");
  EXPECT_EQ(mlperf_workload("bert").status().message(),
            "unknown MLPerf Storage workload 'bert' (known: unet3d, resnet50, cosmoflow)");
  EXPECT_FALSE(protocol_profile("RDMA").ok());  // names are exact
  EXPECT_EQ(drive_profile_names().size(), drive_profiles().size());
  EXPECT_EQ(protocol_profile_names().size(), protocol_profiles().size());
  EXPECT_EQ(accelerator_profile_names(), (std::vector<std::string>{"v100", "a100", "h100"}));
  EXPECT_EQ(server_profile("x").status().message(),
            "unknown server profile 'x' (known: nvme-1u-12bay, nvme-2u-24bay, hdd-4u-60bay)");
  EXPECT_EQ(switch_profile("x").status().message(),
            "unknown switch profile 'x' (known: spectrum3-sn4600c, quantum-qm8700, "
            "quantum2-qm9700, spectrum4-sn5600)");
}

// Every hardware profile says where its figures come from and carries an example price,
// labelled as one.
template <typename T>
void expect_sourced_and_priced(const std::vector<T>& profiles) {
  for (const T& p : profiles) {
    SCOPED_TRACE(p.name);
    EXPECT_GT(p.price_usd, 0);
    EXPECT_LT(p.price_usd, 1e6);
    EXPECT_NE(p.source.find("price: example"), std::string::npos) << p.source;
    EXPECT_NE(p.source.find("not a quote"), std::string::npos) << p.source;
  }
}

TEST(Catalog, EveryHardwareProfileHasASourceAndAnExamplePrice) {
  expect_sourced_and_priced(drive_profiles());
  expect_sourced_and_priced(nic_profiles());
  expect_sourced_and_priced(accelerator_profiles());
  expect_sourced_and_priced(server_profiles());
  expect_sourced_and_priced(switch_profiles());
  // Orders of magnitude a reader can check: a disk is cheaper per TB than flash, a GPU dearer
  // than a server's drive.
  const DriveProfile hdd = drive_profile("seagate-exos-x20-20tb").value();
  const DriveProfile nvme = drive_profile("samsung-pm9a3-7.68tb").value();
  EXPECT_LT(hdd.price_usd / hdd.capacity_tb, nvme.price_usd / nvme.capacity_tb);
  EXPECT_GT(accelerator_profile("h100")->price_usd, 10 * nvme.price_usd);
}

TEST(Catalog, ServersAreSane) {
  ASSERT_EQ(server_profiles().size(), 3u);
  expect_unique_names(server_profiles());
  for (const ServerProfile& p : server_profiles()) {
    SCOPED_TRACE(p.name);
    EXPECT_GE(p.cpu_cores, 8);
    EXPECT_LE(p.cpu_cores, 512);
    EXPECT_GE(p.drive_bays, 1);
    EXPECT_GE(p.nic_slots, 1);
    EXPECT_GE(p.rack_units, 1);
    EXPECT_LE(p.rack_units, 8);
    EXPECT_GT(p.power_watts, 100);
    EXPECT_GE(p.server_gbytes_per_s, 0);
  }
  // The flagship scenario's servers (24 drives, 2 NICs, 64 cores) fit the 2U design.
  const ServerProfile s = server_profile("nvme-2u-24bay").value();
  EXPECT_EQ(s.drive_bays, 24);
  EXPECT_EQ(s.cpu_cores, 64);
  EXPECT_GE(s.nic_slots, 2);
}

TEST(Catalog, SwitchesOfferLinksByPortRateAndBreakout) {
  ASSERT_EQ(switch_profiles().size(), 4u);
  expect_unique_names(switch_profiles());
  double last_rate = 0;
  for (const SwitchProfile& p : switch_profiles()) {
    SCOPED_TRACE(p.name);
    EXPECT_GE(p.port_gbps, last_rate);  // by port rate
    last_rate = p.port_gbps;
    EXPECT_GE(p.ports, 32);
    EXPECT_GE(p.max_split, 1);
    EXPECT_GT(p.latency_us, 0);
    EXPECT_LT(p.latency_us, 2);
    EXPECT_EQ(p.links_at(p.port_gbps), p.ports);
    EXPECT_EQ(p.links_at(p.port_gbps * 2), 0);  // faster than a port: none
  }
  // Quantum-2: 64 x 400 Gb/s, or 128 x 200 (twin-port split); no finer split than 2.
  const SwitchProfile q = switch_profile("quantum2-qm9700").value();
  EXPECT_EQ(q.links_at(400), 64);
  EXPECT_EQ(q.links_at(200), 128);
  EXPECT_EQ(q.links_at(100), 128);
  EXPECT_EQ(q.links_at(300), 64);  // 300 Gb/s links take whole ports
  // Spectrum-4: 64 x 800 GbE, 128 x 400, 256 x 200 or 100.
  const SwitchProfile e = switch_profile("spectrum4-sn5600").value();
  EXPECT_EQ(e.links_at(800), 64);
  EXPECT_EQ(e.links_at(400), 128);
  EXPECT_EQ(e.links_at(200), 256);
  EXPECT_EQ(e.links_at(100), 256);
  EXPECT_EQ(e.links_at(0), 0);
}

}  // namespace
}  // namespace granary::models

// Test worlds for the services: a MemoryEnv with storage hosts, drives, object stores and
// services for one storage design, plus a client host. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/layout/lustre.h"
#include "engine/layout/rbd.h"
#include "engine/placement/ring.h"
#include "engine/services/client.h"
#include "engine/services/dataset.h"
#include "engine/services/file_mapping.h"
#include "engine/services/mds.h"
#include "engine/services/object_store.h"
#include "engine/services/osd.h"
#include "engine/services/written_store.h"
#include "engine/testing/memory_env.h"

namespace granary::services::test {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kTiB = uint64_t{1} << 40;

// A ring over `devices` devices, device i on host "h<i / devices_per_host>".
inline placement::Ring make_ring(int devices, int replicas, int devices_per_host = 1,
                                 int part_power = 6) {
  Result<placement::RingBuilder> builder =
      placement::RingBuilder::create({.part_power = part_power, .replicas = replicas});
  EXPECT_TRUE(builder.ok());
  for (int i = 0; i < devices; ++i) {
    EXPECT_TRUE(builder
                    ->add_device({.id = i,
                                  .weight = 1.0,
                                  .region = 0,
                                  .zone = 0,
                                  .host = "h" + std::to_string(i / devices_per_host)})
                    .ok());
  }
  Random rng(7);
  EXPECT_TRUE(builder->rebalance(rng).ok());
  Result<placement::Ring> ring = builder->build();
  EXPECT_TRUE(ring.ok());
  return std::move(ring).value();
}

inline Dataset make_dataset(const DatasetSpec& spec, uint64_t seed = 1) {
  Random rng(seed);
  Result<Dataset> d = Dataset::create(spec, rng);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return std::move(d).value();
}

struct HardwareSpec {
  int servers = 1;
  int devices_per_server = 1;
  int server_cores = 16;
  double server_nic_bytes_per_s = 25e9;
  double server_latency_s = 5e-6;
  double device_bytes_per_s = 2e9;
  double device_latency_s = 100e-6;
  uint64_t device_capacity_bytes = 4 * kTiB;
  int client_cores = 32;
  double client_nic_bytes_per_s = 25e9;
  double client_latency_s = 5e-6;
  double server_cpu_s_per_op = 0;
  double server_cpu_s_per_byte = 0;
  int osd_workers = 4;
};

// Storage servers with drives and one client host. Server s has devices
// s * devices_per_server ... (device ids = OSD ids = OST indices = head ids).
struct World {
  explicit World(uint64_t seed, const HardwareSpec& hw = {}) : env(seed), hw(hw) {
    for (int s = 0; s < hw.servers; ++s) {
      servers.push_back(env.add_host("storage" + std::to_string(s), hw.server_cores,
                                     hw.server_nic_bytes_per_s, hw.server_latency_s));
      for (int d = 0; d < hw.devices_per_server; ++d) {
        const DeviceId id = env.add_device(servers.back(), hw.device_capacity_bytes,
                                           hw.device_bytes_per_s, hw.device_latency_s);
        stores.emplace(id, ObjectStore(hw.device_capacity_bytes));
      }
    }
    client_host =
        env.add_host("client0", hw.client_cores, hw.client_nic_bytes_per_s, hw.client_latency_s);
  }

  int device_count() const { return hw.servers * hw.devices_per_server; }

  // One OsdService per device, endpoint name from `name_of(device)`.
  template <typename NameOf>
  void start_object_services(NameOf name_of, TaskOptions task_options = {.daemon = true}) {
    for (int d = 0; d < device_count(); ++d) {
      Device& dev = env.device(d);
      osds.push_back(
          std::make_unique<OsdService>(env, dev.host(), dev, stores.at(d),
                                       OsdServiceOptions{.endpoint_name = name_of(d),
                                                         .cpu_s_per_op = hw.server_cpu_s_per_op,
                                                         .cpu_s_per_byte = hw.server_cpu_s_per_byte,
                                                         .worker_tasks = hw.osd_workers}));
      osds.back()->start(task_options);
    }
  }
  // As start_object_services, but every service also takes writes, into a WrittenObjectStore
  // over the device's ObjectStore.
  template <typename NameOf>
  void start_writable_services(NameOf name_of, OsdServiceOptions base = {}) {
    for (int d = 0; d < device_count(); ++d) {
      Device& dev = env.device(d);
      written.push_back(
          std::make_unique<WrittenObjectStore>(hw.device_capacity_bytes, &stores.at(d)));
      OsdServiceOptions o = base;
      o.endpoint_name = name_of(d);
      o.cpu_s_per_op = hw.server_cpu_s_per_op;
      o.cpu_s_per_byte = hw.server_cpu_s_per_byte;
      o.worker_tasks = hw.osd_workers;
      osds.push_back(std::make_unique<OsdService>(env, dev.host(), dev, *written.back(), o));
      osds.back()->start();
    }
  }
  void start_osds(TaskOptions task_options = {.daemon = true}) {
    start_object_services([](int d) { return osd_endpoint_name(d); }, task_options);
  }
  void start_osts() {
    start_object_services([](int d) { return ost_endpoint_name(static_cast<uint32_t>(d)); });
  }
  void start_nfs_heads() {
    start_object_services([](int d) { return nfs_endpoint_name(d); });
  }

  testing::MemoryEnv env;
  HardwareSpec hw;
  std::vector<HostId> servers;
  HostId client_host = 0;
  ObjectStores stores;
  std::vector<std::unique_ptr<WrittenObjectStore>> written;
  std::vector<std::unique_ptr<OsdService>> osds;
};

}  // namespace granary::services::test

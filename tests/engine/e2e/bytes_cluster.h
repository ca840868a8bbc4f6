// A small storage cluster that keeps real bytes, for the end-to-end tests of engine/: a
// MemoryEnv with 8 storage hosts (one drive each, a DiskStore on it, one OsdService over the
// store), a client host, a 3x replicated pool and an erasure-coded 4+2 pool on the same OSDs
// (object names "r/..." and "e/...", each pool its own ring), and the operations a test needs
// between runs: crash a drive (power loss: unflushed writes kept, dropped or torn by seed),
// remount its store (journal replay), restart the services, peer, scrub. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/recovery/peering.h"
#include "engine/services/client.h"
#include "engine/services/file_mapping.h"
#include "engine/services/osd.h"
#include "engine/store/disk_store.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/services/service_world.h"

namespace granary::e2e {

constexpr int kOsds = 8;
constexpr uint64_t kDriveBytes = 48ull << 20;
const ErasureCoding kEc{4, 2, 4096};

inline bool replicated_object(const std::string& name) {
  return name.rfind("r/", 0) == 0;
}

class BytesCluster {
 public:
  explicit BytesCluster(uint64_t seed)
      : env(seed),
        ring3(services::test::make_ring(kOsds, 3, 1, 5)),
        ring6(services::test::make_ring(kOsds, 6, 1, 5)) {
    for (int i = 0; i < kOsds; ++i) {
      hosts.push_back(env.add_host("storage" + std::to_string(i), 4, 10e9, 10e-6));
      env.add_device(hosts.back(), kDriveBytes, 2e9, 20e-6);
    }
    client_host = env.add_host("client", 8, 10e9, 10e-6);
    stores.resize(kOsds);
    osds.resize(kOsds);
    services::RadosBackend r;
    r.placement = &ring3;
    r.op_timeout_s = 3;
    replicated = std::make_unique<services::StorageClient>(
        env, client_host, r, services::StorageClientOptions{.name = "c3"});
    r.placement = &ring6;
    r.ec = kEc;
    coded = std::make_unique<services::StorageClient>(env, client_host, r,
                                                      services::StorageClientOptions{.name = "ec"});
  }

  services::StorageClient& client_for(const std::string& name) {
    return replicated_object(name) ? *replicated : *coded;
  }

  // Formats every drive (a run of its own).
  void format() {
    env.spawn(hosts[0], "format", [this] {
      store::FormatOptions f;
      f.journal_bytes = 1 << 20;
      f.checkpoint_bytes = 2 << 20;
      for (int i = 0; i < kOsds; ++i) ASSERT_TRUE(store::DiskStore::format(env.device(i), f).ok());
    });
    ASSERT_TRUE(env.run().ok());
  }

  // From a task: mounts the stores not mounted (after a crash: journal replay) and starts a
  // service over each; every service's workers are started again (a run ends them). Each
  // OSD comes up on a task of its own host; returns when all are up.
  void start_services() {
    auto up = env.make_semaphore(0);
    for (int i = 0; i < kOsds; ++i) {
      env.spawn(hosts[i], "boot.osd" + std::to_string(i), [this, i, &up] {
        boot(i);
        up->release();
      });
    }
    for (int i = 0; i < kOsds; ++i) up->acquire();
  }

  void boot(int i) {
    if (!stores[i]) {
      // A crashed daemon's sockets are gone: what was queued for it is dropped.
      const std::string name = services::osd_endpoint_name(i);
      for (const std::string& ep : {name, services::OsdService::sub_op_endpoint(name)}) {
        while (env.endpoint(hosts[i], ep).recv(0).ok()) {
        }
      }
      Result<std::unique_ptr<store::DiskStore>> s = store::DiskStore::mount(env.device(i));
      EXPECT_TRUE(s.ok()) << "osd." << i << ": " << s.status().to_string();
      if (!s.ok()) return;
      stores[i] = std::move(*s);
      replayed_records += stores[i]->mount_report().records_replayed;
      services::OsdServiceOptions o;
      o.endpoint_name = name;
      o.worker_tasks = 4;
      o.sub_op_timeout_s = 1;
      o.shard_timeout_s = 1;
      // Read repair for the replicated pool (its ring: MemoryEnv runs one task at a time).
      o.peers_of = [this](const std::string& object) {
        std::vector<std::string> peers;
        if (!replicated_object(object)) return peers;
        std::vector<int32_t> group;
        ring3.devices_of(ring3.group_of(object), group);
        for (int32_t d : group) peers.push_back(services::osd_endpoint_name(d));
        return peers;
      };
      osds[i] = std::make_unique<services::OsdService>(env, hosts[i], env.device(i), *stores[i], o);
    }
    osds[i]->start();
  }

  // Between runs: power loss on drive `i` (its unflushed writes resolved by `seed`); its
  // daemon and store are gone until start_services.
  void crash(int i, uint64_t seed) {
    const testing::CrashReport r = env.crash_device(i, seed);
    kept += r.kept;
    dropped += r.dropped;
    torn += r.torn;
    osds[i].reset();
    stores[i].reset();
  }

  // The PGs of both pools.
  std::vector<recovery::PgMembers> pgs(placement::Placement& p) { return recovery::pg_members(p); }

  // From a task: peers (or deep-scrubs) both pools; the two reports.
  std::pair<recovery::PeeringReport, recovery::PeeringReport> peer_all(bool deep) {
    recovery::PeeringOptions o3;
    o3.reply_endpoint = deep ? "scrub.r" : "peer.r";
    o3.deep = deep;
    o3.timeout_s = 10;
    o3.pg_of = [this](const std::string& n) {
      return replicated_object(n) ? ring3.group_of(n) : ~0u;
    };
    recovery::PeeringOptions oe = o3;
    oe.reply_endpoint = deep ? "scrub.e" : "peer.e";
    oe.ec = kEc;
    oe.pg_of = [this](const std::string& n) {
      return replicated_object(n) ? ~0u : ring6.group_of(n);
    };
    Result<recovery::PeeringReport> a = recovery::peer(env, client_host, pgs(ring3), o3);
    EXPECT_TRUE(a.ok()) << a.status().to_string();
    Result<recovery::PeeringReport> b = recovery::peer(env, client_host, pgs(ring6), oe);
    EXPECT_TRUE(b.ok()) << b.status().to_string();
    return {a.ok() ? *a : recovery::PeeringReport{}, b.ok() ? *b : recovery::PeeringReport{}};
  }

  testing::MemoryEnv env;
  placement::Ring ring3, ring6;
  std::vector<HostId> hosts;
  HostId client_host = 0;
  std::vector<std::unique_ptr<store::DiskStore>> stores;
  std::vector<std::unique_ptr<services::OsdService>> osds;
  std::unique_ptr<services::StorageClient> replicated, coded;
  uint64_t kept = 0, dropped = 0, torn = 0, replayed_records = 0;
};

inline Payload random_payload(Random& rng, size_t n) {
  MutableBuffer b(n);
  for (auto& x : b) x = static_cast<std::byte>(rng.next_u64());
  return Payload::of(std::move(b).freeze());
}

}  // namespace granary::e2e

// The engine's services on real mode, every host its own RealEnv with its own Transport, as
// each daemon process will hold them (here threads of one test process, on loopback): three
// storage hosts, each an OsdService over a DiskStore on a UringDevice (a preallocated file,
// O_DIRECT), and a client host whose StorageClient writes objects of random content to a 3x
// replicated pool — small ones inline, large ones by RMA read — and reads every one back
// through the other processes' OSDs. Unchanged service code; real bytes, drives and fabric.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/services/client.h"
#include "engine/services/file_mapping.h"
#include "engine/services/osd.h"
#include "engine/store/disk_store.h"
#include "realmode/cluster_process.h"
#include "realmode/real_env.h"
#include "realmode/transport.h"
#include "realmode/uring_device.h"
#include "tests/engine/services/service_world.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode {
namespace {

constexpr int kOsds = 3;
constexpr uint64_t kDriveBytes = 64ull << 20;

// One host's process: its Env (every host listed, this one local), transport and services.
struct HostProcess {
  std::unique_ptr<RealEnv> env;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<store::DiskStore> store;
  std::unique_ptr<services::OsdService> osd;
  Status result;
};

class LoopbackCluster {
 public:
  LoopbackCluster()
      : table_(test::loopback_table(kOsds + 1)), ring_(services::test::make_ring(kOsds, 3, 1, 5)) {
    char dir[] = "/tmp/granary-cluster-XXXXXX";
    GRANARY_CHECK(mkdtemp(dir) != nullptr);
    dir_ = dir;
    auto key = ClusterKey::generate();
    GRANARY_CHECK(key.ok());
    key_ = *key;
  }
  ~LoopbackCluster() {
    hosts_.clear();
    std::filesystem::remove_all(dir_);
  }

  // Opens host `h`'s Env and transport; kNotSupported where io_uring or the provider is missing.
  Status open_host(HostId h) {
    auto p = std::make_unique<HostProcess>();
    p->env = std::make_unique<RealEnv>(h + 1);
    for (int i = 0; i <= kOsds; ++i) {
      RealHostOptions o;
      o.name = i < kOsds ? "storage" + std::to_string(i) : "client";
      o.cores = 4;
      o.local = i == h;
      GRANARY_CHECK(p->env->add_host(o).ok());
      if (i < kOsds) {
        p->env->place(services::osd_endpoint_name(i), i);
        p->env->place("ctl" + std::to_string(i), i);
      }
    }
    p->env->place("c3", kOsds);
    TransportOptions t;
    t.host = h;
    t.hosts = table_;
    t.key = key_;
    auto transport = open_attached_transport(*p->env, t);
    if (!transport.ok()) return transport.status();
    p->transport = std::move(transport).value();
    if (h < kOsds) {
      UringDeviceOptions d;
      d.id = 0;
      d.host = h;
      d.path = dir_ + "/drive" + std::to_string(h);
      d.capacity_bytes = kDriveBytes;
      auto device = UringDevice::open(d);
      if (!device.ok()) return device.status();
      GRANARY_CHECK(p->env->add_device(std::move(device).value()).ok());
      store::FormatOptions f;
      f.journal_bytes = 2 << 20;
      f.checkpoint_bytes = 2 << 20;
      if (Status s = store::DiskStore::format(p->env->device(0), f); !s.ok()) return s;
      auto st = store::DiskStore::mount(p->env->device(0));
      if (!st.ok()) return st.status();
      p->store = std::move(st).value();
      services::OsdServiceOptions o;
      o.endpoint_name = services::osd_endpoint_name(h);
      o.worker_tasks = 4;
      p->osd = std::make_unique<services::OsdService>(*p->env, h, p->env->device(0), *p->store, o);
      p->osd->start();
      // The daemon's main task: serves until told to stop.
      RealEnv* env = p->env.get();
      p->env->spawn(h, "main",
                    [env, h] { (void)env->endpoint(h, "ctl" + std::to_string(h)).recv(); });
    }
    hosts_[h] = std::move(p);
    return Status::ok_status();
  }

  RealEnv& env(HostId h) { return *hosts_.at(h)->env; }
  Transport& transport(HostId h) { return *hosts_.at(h)->transport; }
  placement::Ring& ring() { return ring_; }

  // Runs every host's world on a thread of its own until all have ended.
  void run_all() {
    std::vector<std::thread> threads;
    for (auto& [h, p] : hosts_) {
      threads.emplace_back([&p = p] {
        RealRunOptions o;
        o.max_time_s = 120;
        p->result = p->env->run(o);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  Status result(HostId h) const { return hosts_.at(h)->result; }

 private:
  std::vector<std::string> table_;
  placement::Ring ring_;
  std::string dir_;
  ClusterKey key_;
  std::map<HostId, std::unique_ptr<HostProcess>> hosts_;
};

TEST(RealCluster, AClientWritesAndReadsBackThroughOsdsInOtherEnvsOverTheFabric) {
  LoopbackCluster c;
  for (HostId h = 0; h <= kOsds; ++h) {
    const Status s = c.open_host(h);
    if (s.code() == Status::Code::kNotSupported) GTEST_SKIP() << s.message();
    ASSERT_TRUE(s.ok()) << "host " << h << ": " << s.to_string();
  }
  const HostId client_host = kOsds;
  RealEnv& env = c.env(client_host);
  services::RadosBackend r;
  r.placement = &c.ring();
  r.op_timeout_s = 10;
  services::StorageClient client(env, client_host, r, services::StorageClientOptions{.name = "c3"});
  std::map<std::string, Payload> written;
  int lost = 0, corrupted = 0, failed_writes = 0;
  env.spawn(client_host, "client", [&] {
    Random rng(7);
    for (int i = 0; i < 40; ++i) {
      const size_t n = i % 4 == 0 ? 100'000 + rng.uniform(400'000) : 1 + rng.uniform(20'000);
      MutableBuffer b(n);
      for (auto& x : b) x = static_cast<std::byte>(rng.next_u64());
      const std::string name = "r/" + std::to_string(i);
      const Payload data = Payload::of(std::move(b).freeze());
      Result<services::FileWrite> w = client.write_file(name, data);
      if (!w.ok()) {
        ++failed_writes;
        ADD_FAILURE() << name << ": " << w.status().to_string();
        continue;
      }
      written[name] = data;
    }
    Buffer got;
    for (const auto& [name, data] : written) {
      Result<services::FileRead> rd = client.read_file(name, data.size_bytes, &got);
      if (!rd.ok()) {
        ++lost;
        ADD_FAILURE() << name << ": " << rd.status().to_string();
      } else if (got != data.bytes) {
        ++corrupted;
        ADD_FAILURE() << name << " reads other bytes";
      }
    }
    for (int h = 0; h < kOsds; ++h) {
      Message stop;
      stop.body = Shutdown{};
      EXPECT_TRUE(env.send(client_host, "ctl" + std::to_string(h), stop).ok());
    }
  });
  c.run_all();
  for (HostId h = 0; h <= kOsds; ++h) EXPECT_TRUE(c.result(h).ok()) << c.result(h).to_string();
  EXPECT_EQ(written.size(), 40u);
  EXPECT_EQ(failed_writes, 0);
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(corrupted, 0);
  // Every OSD host received over the fabric, large payloads by RMA.
  uint64_t bulk = 0;
  for (HostId h = 0; h < kOsds; ++h) {
    EXPECT_GT(c.transport(h).stats().delivered, 0u) << "osd host " << h;
    bulk += c.transport(h).stats().bulk_received;
    EXPECT_EQ(c.transport(h).stats().refused, 0u);
  }
  EXPECT_GT(bulk, 0u);
  EXPECT_GT(c.transport(client_host).stats().bulk_received, 0u);  // large reads came back by RMA
}

}  // namespace
}  // namespace granary::realmode

// A Lustre-style file system that keeps real bytes: OSTs (OsdServices "ost.<i>" on DiskStores),
// a metadata server that allocates each new file's layout and keeps its namespace on its own
// DiskStore (its MDT), and a client that learns layouts from the MDS. Files written with
// content read back byte for byte; the MDS's drive loses power and the namespace it acknowledged
// comes back from its store, layouts and sizes included.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/layout/lustre.h"
#include "engine/services/client.h"
#include "engine/services/file_mapping.h"
#include "engine/services/mds.h"
#include "engine/services/mds_store.h"
#include "engine/services/osd.h"
#include "engine/store/disk_store.h"
#include "engine/testing/memory_env.h"
#include "tests/engine/e2e/file_content.h"

namespace granary::services {
namespace {

constexpr int kOsts = 4;
constexpr uint64_t kDriveBytes = 32ull << 20;

using granary::test::file_content;

using Files = std::vector<std::pair<std::string, uint64_t>>;

// From a task: reads every file back through `c`, compares it with its content, closes it.
void expect_read_back(StorageClient& c, const Files& files) {
  for (const auto& [path, size] : files) {
    Buffer data;
    Result<FileRead> r = c.read_file(path, size, &data);
    ASSERT_TRUE(r.ok()) << path << ": " << r.status().to_string();
    EXPECT_TRUE(std::equal(data.span().begin(), data.span().end(),
                           file_content(path, size).bytes.span().begin()))
        << path;
    EXPECT_TRUE(c.close_file(path).ok());
  }
}

struct PfsWorld {
  PfsWorld() : env(11) {
    for (int i = 0; i < kOsts; ++i) {
      ost_hosts.push_back(env.add_host("oss" + std::to_string(i), 4, 10e9, 10e-6));
      env.add_device(ost_hosts.back(), kDriveBytes, 2e9, 20e-6);
    }
    mds_host = env.add_host("mds", 4, 10e9, 10e-6);
    mdt = env.add_device(mds_host, 16ull << 20, 2e9, 20e-6);
    client_host = env.add_host("client", 8, 10e9, 10e-6);
    std::vector<layout::Ost> pool;
    for (int i = 0; i < kOsts; ++i) {
      pool.push_back(
          {static_cast<uint32_t>(i), static_cast<uint32_t>(i), kDriveBytes, kDriveBytes});
    }
    allocator =
        std::make_unique<layout::OstAllocator>(layout::OstAllocator::create(pool, {}).value());
    stores.resize(kOsts);
    env.spawn(mds_host, "format", [this] {
      for (int i = 0; i <= kOsts; ++i) {
        ASSERT_TRUE(store::DiskStore::format(env.device(i)).ok());
      }
      for (int i = 0; i < kOsts; ++i) stores[i] = store::DiskStore::mount(env.device(i)).value();
    });
    EXPECT_TRUE(env.run().ok());
    for (int i = 0; i < kOsts; ++i) {
      OsdServiceOptions o;
      o.endpoint_name = ost_endpoint_name(static_cast<uint32_t>(i));
      osts.push_back(std::make_unique<OsdService>(env, ost_hosts[i], env.device(i), *stores[i], o));
    }
  }

  // From a task: mounts the MDT (replaying its journal), loads the namespace and serves it.
  void boot_mds() {
    mdt_store = store::DiskStore::mount(env.device(mdt)).value();
    ns_store = std::make_unique<DiskNamespaceStore>(*mdt_store);
    MetadataServiceOptions o;
    o.allocator = allocator.get();
    o.layout_spec.stripe_count = 2;
    o.layout_spec.stripe_size_bytes = 64 << 10;
    o.layout_seed = 5;
    o.store = ns_store.get();
    mds = std::make_unique<MetadataService>(env, mds_host, ns_store->load().value(), o);
    mds->start();
  }

  StorageClient client(const std::string& name) {
    PfsBackend b;                    // layouts from the MDS
    b.max_request_bytes = 96 << 10;  // RPCs that cut stripes and merge a stripe's runs
    return StorageClient(env, client_host, b, StorageClientOptions{.name = name});
  }

  testing::MemoryEnv env;
  std::vector<HostId> ost_hosts;
  HostId mds_host = 0, client_host = 0;
  DeviceId mdt = 0;
  std::unique_ptr<layout::OstAllocator> allocator;
  std::vector<std::unique_ptr<store::DiskStore>> stores;
  std::vector<std::unique_ptr<OsdService>> osts;
  std::unique_ptr<store::DiskStore> mdt_store;
  std::unique_ptr<DiskNamespaceStore> ns_store;
  std::unique_ptr<MetadataService> mds;
};

TEST(PfsBytes, FilesStripedByTheMdsLayoutsReadBackAndTheNamespaceSurvivesPowerLoss) {
  PfsWorld w;
  const Files files = {
      {"ckpt/rank0", 300001}, {"ckpt/rank1", 64 << 10}, {"ckpt/rank2", 1}, {"data/a", 1 << 20}};
  MdsNamespace before;
  w.env.spawn(w.client_host, "writer", [&] {
    w.boot_mds();
    for (auto& o : w.osts) o->start();
    StorageClient c = w.client("w");
    for (const auto& [path, size] : files) {
      Result<FileWrite> wr = c.write_file(path, file_content(path, size));
      ASSERT_TRUE(wr.ok()) << path << ": " << wr.status().to_string();
      EXPECT_EQ(wr->bytes, size);
    }
    expect_read_back(c, files);
    before = w.mds->files();
  });
  ASSERT_TRUE(w.env.run().ok());
  ASSERT_EQ(before.size(), files.size());
  for (const auto& [path, size] : files) {
    const MdsFile& f = before.at(path);
    EXPECT_EQ(f.size_bytes, size) << path;
    EXPECT_EQ(f.stripe_size_bytes, 64u << 10) << path;
    ASSERT_EQ(f.ost_indices.size(), 2u) << path;
    EXPECT_NE(f.ost_indices[0], f.ost_indices[1]) << path;
    // Stripe 0 is on the OST the layout names, stripe 1 (when the file reaches it) on the other.
    EXPECT_TRUE(w.stores[f.ost_indices[0]]->size(lustre_object_name(path, 0)).ok()) << path;
    EXPECT_EQ(w.stores[f.ost_indices[1]]->size(lustre_object_name(path, 1)).ok(),
              size > (64u << 10))
        << path;
  }
  // The MDS's drive loses power (its unflushed writes kept, dropped or torn); every record it
  // acknowledged comes back, and a new client reads every file by the layouts it gets.
  w.mds.reset();
  w.mdt_store.reset();
  w.env.crash_device(w.mdt, 3);
  w.env.spawn(w.client_host, "reader", [&] {
    w.boot_mds();
    for (auto& o : w.osts) o->start();
    EXPECT_EQ(w.mds->files(), before);
    StorageClient c = w.client("r");
    expect_read_back(c, files);
    // A file the namespace does not hold fails at the MDS.
    Result<FileRead> missing = c.read_file("nope", 1);
    EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  });
  ASSERT_TRUE(w.env.run().ok());
}

// A file a client holds open while the MDS restarts: the new MDS has no handle for it (handles
// live in memory), so the client's close replays the open first, as Lustre's clients replay
// their opens to a recovering MDS, and the close succeeds.
TEST(PfsBytes, AnOpenHeldAcrossAnMdsRestartIsReplayedByItsClose) {
  PfsWorld w;
  const std::string path = "ckpt/held";
  StorageClient c = w.client("h");
  w.env.spawn(w.client_host, "open", [&] {
    w.boot_mds();
    for (auto& o : w.osts) o->start();
    ASSERT_TRUE(c.write_file(path, file_content(path, 5000)).ok());
    Buffer data;
    ASSERT_TRUE(c.read_file(path, 5000, &data).ok());  // opens, and holds the handle
  });
  ASSERT_TRUE(w.env.run().ok());
  const uint64_t opens_before = w.mds->stats().opens;
  w.mds.reset();  // the MDS restarts: its namespace from its store, no handles
  w.mdt_store.reset();
  w.env.spawn(w.client_host, "close", [&] {
    w.boot_mds();
    for (auto& o : w.osts) o->start();
    EXPECT_TRUE(c.close_file(path).ok());
    EXPECT_EQ(w.mds->stats().opens, 1u);   // the replayed open
    EXPECT_EQ(w.mds->stats().closes, 2u);  // refused, then after the replay
    EXPECT_EQ(w.mds->files().at(path).size_bytes, 5000u);
    // A close of what the client does not hold is still refused, by the client.
    EXPECT_EQ(c.close_file(path).code(), Status::Code::kInvalidArgument);
  });
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_GE(opens_before, 1u);
}

TEST(PfsBytes, TheNamespaceStoreRefusesWhatItCannotKeepAndNamesABadRecord) {
  testing::MemoryEnv env(1);
  const HostId h = env.add_host("mds", 1, 1e9, 1e-6);
  const DeviceId d = env.add_device(h, 16ull << 20, 1e9, 1e-6);
  env.spawn(h, "t", [&] {
    ASSERT_TRUE(store::DiskStore::format(env.device(d)).ok());
    auto s = store::DiskStore::mount(env.device(d)).value();
    DiskNamespaceStore ns(*s);
    EXPECT_EQ(ns.put(std::string(1100, 'x'), MdsFile{}).code(), Status::Code::kInvalidArgument);
    MdsFile wide{1, 1 << 20, std::vector<uint32_t>(300, 65535)};
    EXPECT_EQ(ns.put("wide", wide).code(), Status::Code::kInvalidArgument);
    ASSERT_TRUE(ns.put("ok", MdsFile{7, 65536, {3, 1}}).ok());
    ASSERT_TRUE(ns.put("plain", MdsFile{9, 0, {}}).ok());
    store::WriteOptions o;
    o.attrs = {{"size", "12x"}};
    ASSERT_TRUE(s->write("ns/bad", 0, Payload::of(Buffer::zeros(0)), o).ok());
    Result<MdsNamespace> loaded = ns.load();
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().message(), "metadata record ns/bad: size \"12x\" is not a number");
    ASSERT_TRUE(s->remove("ns/bad").ok());
    loaded = ns.load();
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(*loaded,
              (MdsNamespace{{"ok", MdsFile{7, 65536, {3, 1}}}, {"plain", MdsFile{9, 0, {}}}}));
  });
  ASSERT_TRUE(env.run().ok());
}

}  // namespace
}  // namespace granary::services

// Write paths: primary-copy replication, erasure coding (full and degraded reads), NFS
// write-back with COMMIT, Lustre-style create/write/close, and the write-ahead journal.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>

#include "engine/services/mds.h"
#include "tests/engine/placement/forwarding_placement.h"
#include "tests/engine/services/service_world.h"

namespace granary::services {
namespace {

using test::kMiB;

// A placement that reports one device as gone (kNoDevice in its position), as an
// erasure-coded pool does while an OSD is down.
class MaskedPlacement final : public placement::test::ForwardingPlacement {
 public:
  MaskedPlacement(placement::Placement& inner, int32_t gone)
      : ForwardingPlacement(inner), gone_(gone) {}
  void devices_of(uint32_t group, std::vector<int32_t>& out) override {
    inner().devices_of(group, out);
    for (int32_t& d : out) {
      if (d == gone_) d = placement::kNoDevice;
    }
  }

 private:
  int32_t gone_;
};

// A placement that follows a cluster map in a test: drop(osd) takes the OSD out of every group
// (as the monitor marking it down does) and moves each group that held it to a new interval.
class ChangingPlacement final : public placement::test::ForwardingPlacement {
 public:
  explicit ChangingPlacement(placement::Placement& inner)
      : ForwardingPlacement(inner), intervals_(inner.num_groups(), 1) {}
  void drop(int32_t osd) {
    std::vector<int32_t> devices;
    for (uint32_t g = 0; g < num_groups(); ++g) {
      devices_of(g, devices);
      if (std::find(devices.begin(), devices.end(), osd) != devices.end()) ++intervals_[g];
    }
    gone_.push_back(osd);
  }
  void restore(int32_t osd) {
    std::erase(gone_, osd);
    for (uint32_t g = 0; g < num_groups(); ++g) ++intervals_[g];
  }
  void devices_of(uint32_t group, std::vector<int32_t>& out) override {
    inner().devices_of(group, out);
    std::erase_if(
        out, [&](int32_t d) { return std::find(gone_.begin(), gone_.end(), d) != gone_.end(); });
  }
  uint64_t interval_of(uint32_t group) const override { return intervals_[group]; }

 private:
  std::vector<uint64_t> intervals_;
  std::vector<int32_t> gone_;
};

uint64_t sum(const test::World& w, uint64_t OsdStats::*field) {
  uint64_t n = 0;
  for (const auto& o : w.osds) n += o->stats().*field;
  return n;
}

TEST(WritePath, ReplicationWritesEveryCopyBeforeTheAck) {
  test::World w(1, {.servers = 3, .device_bytes_per_s = 1e9, .client_nic_bytes_per_s = 10e9});
  placement::Ring ring = test::make_ring(3, 3);
  w.start_writable_services([](int d) { return osd_endpoint_name(d); });
  StorageClient client(
      w.env, w.client_host,
      RadosBackend{layout::RbdLayout::default_layout(), &ring, 0, {}, nullptr, 1.0}, {.name = "c"});
  Result<FileWrite> written = Status::io_error("not run");
  Result<FileRead> read = Status::io_error("not run");
  w.env.spawn(w.client_host, "writer", [&] {
    written = client.write_file("ckpt/rank0", 8 * kMiB);
    read = client.read_file("ckpt/rank0", 8 * kMiB);
  });
  w.env.run();
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  EXPECT_EQ(written->bytes, 8 * kMiB);
  EXPECT_EQ(written->requests, 2u);  // two 4 MiB objects
  // Write amplification of 3 replicas: every byte on three drives, twice over the network
  // from the primaries.
  EXPECT_EQ(sum(w, &OsdStats::bytes_written), 3 * 8 * kMiB);
  EXPECT_EQ(sum(w, &OsdStats::bytes_forwarded), 2 * 8 * kMiB);
  // The ack waits for the replicas: at least client -> primary, primary -> replica, and a
  // 4 MiB drive write at 1 GB/s.
  EXPECT_GT(written->latency_s, 4.0 * kMiB / 1e9);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->bytes, 8 * kMiB);
}

// Every OSD with one worker, three of them, every write 3x replicated and many writers at once:
// each OSD's worker becomes a primary waiting for its replicas. Were replica writes queued
// behind client writes on the same workers, no worker would be left to serve them and every
// write would wait forever; sub-ops have workers of their own (osd.h).
TEST(WritePath, PrimariesWaitingForReplicasNeverTieUpEveryWorker) {
  test::World w(
      1,
      {.servers = 3, .device_bytes_per_s = 1e9, .client_nic_bytes_per_s = 10e9, .osd_workers = 1});
  placement::Ring ring = test::make_ring(3, 3);
  w.start_writable_services([](int d) { return osd_endpoint_name(d); });
  StorageClient client(
      w.env, w.client_host,
      RadosBackend{layout::RbdLayout::default_layout(), &ring, 0, {}, nullptr, 1.0}, {.name = "c"});
  constexpr int kWriters = 12;
  int written = 0;
  for (int i = 0; i < kWriters; ++i) {
    w.env.spawn(w.client_host, "writer" + std::to_string(i), [&, i] {
      Result<FileWrite> r = client.write_file("vm/disk" + std::to_string(i), 4 * kMiB);
      EXPECT_TRUE(r.ok()) << r.status().to_string();
      written += r.ok();
    });
  }
  w.env.run();
  EXPECT_EQ(written, kWriters);
  EXPECT_EQ(sum(w, &OsdStats::bytes_written), 3 * kWriters * 4 * kMiB);
}

// A write keeps write_window_requests objects in flight, not the read window: 8 objects of
// 4 MiB to 3 drives of 1 GB/s go out together and take about the drives' time, where one at a
// time each waits for the last.
TEST(WritePath, WritesUseTheirOwnWindow) {
  auto write_s = [](int write_window) {
    test::World w(1, {.servers = 3, .device_bytes_per_s = 1e9, .client_nic_bytes_per_s = 10e9});
    placement::Ring ring = test::make_ring(3, 1);
    w.start_writable_services([](int d) { return osd_endpoint_name(d); });
    StorageClient client(
        w.env, w.client_host,
        RadosBackend{layout::RbdLayout::default_layout(), &ring, 1, {}, nullptr, 1.0, write_window},
        {.name = "c"});
    double latency = -1;
    w.env.spawn(w.client_host, "writer", [&] {
      Result<FileWrite> r = client.write_file("ckpt/rank0", 8 * 4 * kMiB);
      EXPECT_TRUE(r.ok()) << r.status().to_string();
      if (r.ok()) latency = r->latency_s;
    });
    w.env.run();
    return latency;
  };
  const double one = write_s(0);  // 0: the read window, one object
  const double eight = write_s(8);
  EXPECT_GT(one, 8 * 4.0 * kMiB / 1e9);  // eight drive writes one after the other
  EXPECT_LT(eight, 0.5 * one);           // spread over the three drives at once
}

TEST(WritePath, ErasureCodingStoresKPlusMOverKAndReadsDegraded) {
  test::World w(1, {.servers = 6});
  placement::Ring ring = test::make_ring(6, 6);
  w.start_writable_services([](int d) { return osd_endpoint_name(d); },
                            [] {
                              OsdServiceOptions o;
                              o.ec_cpu_s_per_byte = 1e-10;
                              return o;
                            }());
  const ErasureCoding ec{4, 2, 4096};
  StorageClient client(
      w.env, w.client_host,
      RadosBackend{layout::RbdLayout::default_layout(), &ring, 2, ec, nullptr, 1.0}, {.name = "c"});
  // The same pool with osd.3 down.
  MaskedPlacement degraded_placement(ring, 3);
  StorageClient degraded(
      w.env, w.client_host,
      RadosBackend{layout::RbdLayout::default_layout(), &degraded_placement, 2, ec, nullptr, 1.0},
      {.name = "d"});
  Result<FileWrite> written = Status::io_error("not run");
  Result<FileRead> read = Status::io_error("not run"), read_degraded = Status::io_error("not run");
  uint64_t decoded_healthy = 0;
  w.env.spawn(w.client_host, "writer", [&] {
    written = client.write_file("ckpt/rank0", 16 * kMiB);
    read = client.read_file("ckpt/rank0", 16 * kMiB);
    decoded_healthy = sum(w, &OsdStats::ec_reads_degraded);
    read_degraded = degraded.read_file("ckpt/rank0", 16 * kMiB);
  });
  w.env.run();
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  EXPECT_EQ(sum(w, &OsdStats::bytes_written), 16 * kMiB / 4 * 6);  // 1.5x on the drives
  // The primaries send the other 5 of every 6 chunks.
  EXPECT_EQ(sum(w, &OsdStats::bytes_forwarded), 16 * kMiB / 4 * 5);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->bytes, 16 * kMiB);
  EXPECT_EQ(decoded_healthy, 0u);
  ASSERT_TRUE(read_degraded.ok()) << read_degraded.status().to_string();
  EXPECT_EQ(read_degraded->bytes, 16 * kMiB);
  // Every object has osd.3 among its 6 shards (there are 6 devices); the reads of the objects
  // where it held a data chunk had to decode.
  EXPECT_GT(sum(w, &OsdStats::ec_reads_degraded), 0u);
}

// Decoding is charged at its own rate: a slower decoder lengthens the degraded read only.
TEST(WritePath, DecodeCpuIsChargedApartFromEncode) {
  auto latencies = [](double decode_cpu_s_per_byte) {
    test::World w(1, {.servers = 6});
    placement::Ring ring = test::make_ring(6, 6);
    OsdServiceOptions o;
    o.ec_cpu_s_per_byte = 1e-10;
    o.ec_decode_cpu_s_per_byte = decode_cpu_s_per_byte;
    w.start_writable_services([](int d) { return osd_endpoint_name(d); }, o);
    const ErasureCoding ec{4, 2, 4096};
    StorageClient client(
        w.env, w.client_host,
        RadosBackend{layout::RbdLayout::default_layout(), &ring, 2, ec, nullptr, 1.0},
        {.name = "c"});
    MaskedPlacement degraded_placement(ring, 3);
    StorageClient degraded(
        w.env, w.client_host,
        RadosBackend{layout::RbdLayout::default_layout(), &degraded_placement, 2, ec, nullptr, 1.0},
        {.name = "d"});
    double write_s = -1, healthy_s = -1, degraded_s = -1;
    w.env.spawn(w.client_host, "rw", [&] {
      auto wr = client.write_file("ckpt/rank0", 16 * kMiB);
      auto r = client.read_file("ckpt/rank0", 16 * kMiB);
      auto d = degraded.read_file("ckpt/rank0", 16 * kMiB);
      ASSERT_TRUE(wr.ok() && r.ok() && d.ok());
      write_s = wr->latency_s;
      healthy_s = r->latency_s;
      degraded_s = d->latency_s;
    });
    w.env.run();
    return std::array<double, 3>{write_s, healthy_s, degraded_s};
  };
  const auto same = latencies(-1);  // the encode rate
  const auto slow = latencies(1e-8);
  EXPECT_DOUBLE_EQ(slow[0], same[0]);
  EXPECT_DOUBLE_EQ(slow[1], same[1]);
  EXPECT_GT(slow[2], same[2] + 1e-3);  // at least 1 ms more of decoding
}

TEST(WritePath, NfsCommitWaitsForTheDrive) {
  // A fast network in front of a slow drive: unstable WRITEs are acknowledged from the
  // server's memory, the COMMIT only once the drive has the data.
  test::World w(1, {.servers = 1,
                    .server_nic_bytes_per_s = 10e9,
                    .device_bytes_per_s = 0.5e9,
                    .client_nic_bytes_per_s = 10e9,
                    .osd_workers = 8});
  UnstableWrites unstable(w.env);
  w.start_writable_services([](int d) { return nfs_endpoint_name(d); },
                            [&] {
                              OsdServiceOptions o;
                              o.unstable = &unstable;
                              return o;
                            }());
  StorageClient client(w.env, w.client_host, NfsBackend{1, kMiB, 16}, {.name = "c"});
  Result<FileWrite> with_commit = Status::io_error("not run"),
                    without = Status::io_error("not run");
  Result<FileRead> read = Status::io_error("not run");
  w.env.spawn(w.client_host, "writer", [&] {
    without = client.write_file("a", 64 * kMiB, {.fsync = false});
    w.env.sleep_s(1.0);  // let the drive drain
    with_commit = client.write_file("b", 64 * kMiB, {.fsync = true});
    read = client.read_file("b", 64 * kMiB);
  });
  w.env.run();
  ASSERT_TRUE(with_commit.ok()) << with_commit.status().to_string();
  ASSERT_TRUE(without.ok()) << without.status().to_string();
  const double drive_s = 64.0 * kMiB / 0.5e9;  // 0.134 s
  EXPECT_GE(with_commit->latency_s, drive_s);
  EXPECT_LT(without->latency_s, drive_s * 0.5);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
}

TEST(WritePath, PfsCreatesWritesAndClosesWithTheSize) {
  test::World w(1, {.servers = 4});
  w.start_writable_services([](int d) { return ost_endpoint_name(static_cast<uint32_t>(d)); });
  const HostId mds_host = w.env.add_host("mds", 8, 25e9, 5e-6);
  MetadataService mds(w.env, mds_host, MdsNamespace{},
                      {.endpoint_name = "mds.0",
                       .parallel_ops = 2,
                       .open_time_s = 50e-6,
                       .close_time_s = 50e-6,
                       .create_time_s = 50e-6,
                       .stat_time_s = 50e-6});
  mds.start();
  PfsLayouts layouts;
  layouts.emplace("ckpt/rank0", layout::LustreFileLayout::create(kMiB, {0, 1, 2, 3}).value());
  StorageClient client(w.env, w.client_host,
                       PfsBackend{.layouts = &layouts, .max_request_bytes = 4 * kMiB},
                       {.name = "c"});
  Result<FileWrite> written = Status::io_error("not run");
  Result<FileRead> read = Status::io_error("not run");
  w.env.spawn(w.client_host, "writer", [&] {
    written = client.write_file("ckpt/rank0", 10 * kMiB);
    read = client.read_file("ckpt/rank0", 10 * kMiB);  // the MDS must report 10 MiB
  });
  w.env.run();
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(sum(w, &OsdStats::bytes_written), 10 * kMiB);  // no replication in the OSTs
  EXPECT_EQ(mds.stats().opens, 2u);                        // the create and the read's open
}

TEST(WritePath, JournalAcknowledgesBeforeTheDataDrive) {
  auto latency = [](bool journal) {
    test::World w(1, {.servers = 1, .device_bytes_per_s = 0.2e9});
    // A fast journal device on the same server.
    const DeviceId wal = w.env.add_device(w.servers[0], 1ull << 40, 4e9, 10e-6);
    w.start_writable_services([](int d) { return osd_endpoint_name(d); },
                              [&] {
                                OsdServiceOptions o;
                                o.journal = journal ? &w.env.device(wal) : nullptr;
                                return o;
                              }());
    placement::Ring ring = test::make_ring(1, 1);
    StorageClient client(
        w.env, w.client_host,
        RadosBackend{layout::RbdLayout::default_layout(), &ring, 0, {}, nullptr, 1.0},
        {.name = "c"});
    double l = 0;
    w.env.spawn(w.client_host, "writer", [&] {
      auto r = client.write_file("f", 4 * kMiB);
      EXPECT_TRUE(r.ok());
      l = r.ok() ? r->latency_s : 0;
    });
    w.env.run();
    return l;
  };
  const double direct = latency(false), journalled = latency(true);
  EXPECT_GT(direct, 4.0 * kMiB / 0.2e9);
  EXPECT_LT(journalled, direct / 5);
}

// The devices of `object`'s group, primary first.
std::vector<int32_t> group_of(placement::Placement& p, const std::string& object) {
  std::vector<int32_t> devices;
  p.devices_of(p.group_of(object), devices);
  return devices;
}

// A failure world: 4 OSDs, 3 replicas, services and clients following `placement` and
// `epoch`; the monitor drops `osd` from the map at 3 s.
struct FailoverWorld {
  explicit FailoverWorld() : w(1, {.servers = 4}), ring(test::make_ring(4, 3)), placement(ring) {
    w.start_writable_services([](int d) { return osd_endpoint_name(d); },
                              [&] {
                                OsdServiceOptions o;
                                o.placement = &placement;
                                o.interval_check_s = 0.5;
                                return o;
                              }());
  }
  void mark_down_at(int32_t osd, double at_s) {
    w.env.spawn(w.servers[0], "monitor", [this, osd, at_s] {
      w.env.sleep_s(at_s);
      placement.drop(osd);
      epoch.fetch_add(1);
    });
  }
  // Marks `osd` up again (and available) at at_s: a later map change bounding how long a
  // request stuck on it can wait.
  void mark_up_at(int32_t osd, double at_s) {
    w.env.spawn(w.servers[0], "monitor.up", [this, osd, at_s] {
      w.env.sleep_s(at_s);
      w.osds[osd]->set_available(true);
      placement.restore(osd);
      epoch.fetch_add(1);
    });
  }
  RadosBackend backend(int window_requests = 0) {
    return RadosBackend{layout::RbdLayout::default_layout(), &placement, window_requests, {},
                        [this] { return epoch.load(); },     1.0};
  }
  test::World w;
  placement::Ring ring;
  ChangingPlacement placement;
  std::atomic<uint32_t> epoch{1};
};

TEST(WritePath, WriteToACrashedPrimaryCompletesOnceAfterTheMapChange) {
  FailoverWorld f;
  const std::string object = rados_object_name("ckpt/rank0", 0);  // the file's one object
  const std::vector<int32_t> old_group = group_of(f.placement, object);
  ASSERT_EQ(old_group.size(), 3u);
  const int32_t primary = old_group[0];
  f.w.osds[primary]->set_available(false);  // crashed: drops what it is sent
  f.mark_down_at(primary, 2.5);
  StorageClient client(f.w.env, f.w.client_host, f.backend(), {.name = "c"});
  Result<FileWrite> written = Status::io_error("not run");
  Result<FileRead> read = Status::io_error("not run");
  f.w.env.spawn(f.w.client_host, "writer", [&] {
    written = client.write_file("ckpt/rank0", 4 * kMiB);
    read = client.read_file("ckpt/rank0", 4 * kMiB);
  });
  f.w.env.run();
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  EXPECT_EQ(written->bytes, 4 * kMiB);
  // Sent at 0, unanswered; the map drops the primary at 2.5 s, the client looks at 3 s (every
  // resend_check_s = 1 s of waiting) and resends to the new primary: 4 MiB to three drives
  // at 2 GB/s and a few network hops later, 3.002 s.
  EXPECT_GE(written->latency_s, 3.0);
  EXPECT_LT(written->latency_s, 3.01);
  const ClientStats st = client.stats();
  EXPECT_EQ(st.write_requests, 1u);
  EXPECT_EQ(st.writes_resent, 1u);
  EXPECT_NEAR(st.write_blocked_s, 3.0, 0.01);
  EXPECT_EQ(st.files_written, 1u);
  EXPECT_EQ(st.bytes_written, 4 * kMiB);
  // Recorded exactly once: the new group (the old one without its primary, as a down OSD
  // leaves its PGs undersized) holds one 4 MiB copy on each OSD; the crashed primary holds
  // nothing (it forwarded nothing either).
  const std::vector<int32_t> new_group = group_of(f.placement, object);
  EXPECT_EQ(new_group, (std::vector<int32_t>{old_group[1], old_group[2]}));
  for (int32_t d : new_group) {
    auto o = f.w.written[d]->find(object);
    ASSERT_TRUE(o.ok()) << "osd." << d;
    EXPECT_EQ(o->size_bytes, 4 * kMiB);
    EXPECT_EQ(f.w.written[d]->written_objects(), 1u);
  }
  EXPECT_EQ(f.w.written[primary]->written_objects(), 0u);
  EXPECT_EQ(sum(f.w, &OsdStats::bytes_written), 2 * 4 * kMiB);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->bytes, 4 * kMiB);
}

TEST(WritePath, PrimaryDiscardsAWriteStuckOnADeadReplicaAndTheResendIsIdempotent) {
  FailoverWorld f;
  const std::string object = rados_object_name("ckpt/rank0", 0);
  const std::vector<int32_t> old_group = group_of(f.placement, object);
  ASSERT_EQ(old_group.size(), 3u);
  const int32_t primary = old_group[0], dead = old_group[2];
  f.w.osds[dead]->set_available(false);
  f.mark_down_at(dead, 2.5);
  StorageClient client(f.w.env, f.w.client_host, f.backend(), {.name = "c"});
  Result<FileWrite> written = Status::io_error("not run");
  f.w.env.spawn(f.w.client_host, "writer",
                [&] { written = client.write_file("ckpt/rank0", 4 * kMiB); });
  f.w.env.run();
  ASSERT_TRUE(written.ok()) << written.status().to_string();
  // The primary wrote its copy and waited for the dead replica; at 2.5 s the group moved to a
  // new interval: the primary dropped its first op at its next look (every 0.5 s), unanswered,
  // and the client resent at its own (3 s). It never hangs; nothing is acknowledged twice.
  EXPECT_GE(written->latency_s, 3.0);
  EXPECT_LT(written->latency_s, 3.01);
  EXPECT_EQ(f.w.osds[primary]->stats().writes_discarded, 1u);
  EXPECT_EQ(client.stats().writes_resent, 1u);
  EXPECT_EQ(client.stats().files_written, 1u);
  // The primary wrote the extent twice, in place: one object, one 4 MiB reservation.
  EXPECT_EQ(f.w.osds[primary]->stats().bytes_written, 2 * 4 * kMiB);
  EXPECT_EQ(f.w.written[primary]->written_objects(), 1u);
  EXPECT_EQ(f.w.written[primary]->used_bytes(), 4 * kMiB);
  EXPECT_EQ(f.w.written[primary]->find(object)->size_bytes, 4 * kMiB);
  EXPECT_EQ(f.w.written[dead]->written_objects(), 0u);
}

// Issue 10's failover stall: a read plans every object at open; an object planned before a
// down mark and sent after it must go to the group's primary of the new map. It went to the
// dead OSD tagged with the new epoch, so nothing resent it until the next map change (in a
// host-down storm: the mark-out, 600 s later).
TEST(ReadPath, AnObjectPlannedBeforeADownMarkAndSentAfterItGoesToTheNewPrimary) {
  FailoverWorld f;
  // A file of 8 objects whose 4th object's primary is not the first object's.
  const std::string file = "train/f0";
  const std::string first = rados_object_name(file, 0), fourth = rados_object_name(file, 3);
  const int32_t dead = group_of(f.placement, fourth)[0];
  ASSERT_NE(group_of(f.placement, first)[0], dead);
  StorageClient client(f.w.env, f.w.client_host, f.backend(/*window_requests=*/1), {.name = "c"});
  Result<FileRead> read = Status::io_error("not run");
  f.w.env.spawn(f.w.client_host, "reader", [&] {
    ASSERT_TRUE(client.write_file(file, 32 * kMiB).ok());
    f.w.osds[dead]->set_available(false);  // crashes: drops what it is sent
    f.mark_down_at(dead, 0.001);           // marked down while the first object is in flight
    f.mark_up_at(dead, 60);                // bounds a stalled read (it would end after 60 s)
    read = client.read_file(file, 32 * kMiB);
  });
  f.w.env.run();
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->bytes, 32 * kMiB);
  // Eight 4 MiB objects one after the other at 2 GB/s drives: milliseconds, no wait at all.
  EXPECT_LT(read->latency_s, 0.1);
  const ClientStats st = client.stats();
  EXPECT_EQ(st.resent, 0u);  // nothing went to the dead OSD
  EXPECT_EQ(st.blocked_s, 0.0);
  EXPECT_EQ(st.requests, 8u);
}

// A request in flight to an OSD that the map then marks down is sent again to the new primary
// at the first reply or resend check after the map change, however many replies keep coming.
TEST(ReadPath, ARequestInFlightToAnOsdMarkedDownIsResentAtTheNextCheck) {
  FailoverWorld f;
  const std::string file = "train/f1";
  const int32_t dead = group_of(f.placement, rados_object_name(file, 0))[0];
  StorageClient client(f.w.env, f.w.client_host, f.backend(), {.name = "c"});
  Result<FileRead> read = Status::io_error("not run");
  f.w.env.spawn(f.w.client_host, "reader", [&] {
    ASSERT_TRUE(client.write_file(file, 32 * kMiB).ok());
    f.w.osds[dead]->set_available(false);
    f.mark_down_at(dead, 0.25);
    f.mark_up_at(dead, 60);
    read = client.read_file(file, 32 * kMiB);
  });
  f.w.env.run();
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  // Sent at 0 and dropped; the map moves at 0.25 s; the other replies are in by then, so the
  // client looks at its resend check, 1 s after the last reply: resent by about 1.01 s.
  EXPECT_GT(read->latency_s, 0.25);
  EXPECT_LT(read->latency_s, 1.1);
  const ClientStats st = client.stats();
  EXPECT_GE(st.resent, 1u);
  EXPECT_EQ(st.files_read, 1u);
}

TEST(WritePath, ReadOnlyServicesRefuseWrites) {
  test::World w(1, {.servers = 1});
  w.start_osds();
  placement::Ring ring = test::make_ring(1, 1);
  StorageClient client(
      w.env, w.client_host,
      RadosBackend{layout::RbdLayout::default_layout(), &ring, 0, {}, nullptr, 1.0}, {.name = "c"});
  Result<FileWrite> r = Status::io_error("not run");
  w.env.spawn(w.client_host, "writer", [&] { r = client.write_file("f", kMiB); });
  w.env.run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("read-only"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace granary::services

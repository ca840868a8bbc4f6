#include "engine/store/disk_store.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/services/object_backend.h"
#include "tests/engine/store/store_test_util.h"

namespace granary::store {
namespace {

using testing::payload_of;
using testing::random_bytes;
using testing::StoreWorld;

constexpr uint64_t kMiB = 1 << 20;

FormatOptions small_regions() {
  FormatOptions o;
  o.journal_bytes = 32 * 1024;
  o.checkpoint_bytes = 16 * 1024;
  return o;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::unique_ptr<DiskStore> mount_ok(Device& d) {
  Result<std::unique_ptr<DiskStore>> m = DiskStore::mount(d);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<std::byte> read_all(DiskStore& s, const std::string& name) {
  Result<uint64_t> n = s.size(name);
  EXPECT_TRUE(n.ok()) << n.status().to_string();
  if (!n.ok()) return {};
  Result<Payload> p = s.read(name, 0, *n);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? p->bytes.to_vector() : std::vector<std::byte>{};
}

TEST(DiskStore, WriteReadOverwriteHolesRemoveAndReuseSpace) {
  StoreWorld w(2 * kMiB);
  ASSERT_TRUE(
      w.run([](Device& d) {
         ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
         auto s = mount_ok(d);
         ASSERT_TRUE(s);
         const SpaceUsage empty = s->space();
         EXPECT_EQ(empty.used_bytes, 0u);
         EXPECT_EQ(empty.free_bytes, empty.data_bytes);
         Random rng(3);
         std::vector<std::byte> a = random_bytes(rng, 10000);
         ASSERT_TRUE(s->write("a", 0, payload_of(a)).ok());
         EXPECT_EQ(read_all(*s, "a"), a);
         // A partial overwrite inside one block, and one across a block boundary.
         std::vector<std::byte> p1 = random_bytes(rng, 100);
         std::vector<std::byte> p2 = random_bytes(rng, 3000);
         ASSERT_TRUE(s->write("a", 5000, payload_of(p1)).ok());
         ASSERT_TRUE(s->write("a", 7000, payload_of(p2), {.sync = false, .attrs = {}}).ok());
         std::copy(p1.begin(), p1.end(), a.begin() + 5000);
         std::copy(p2.begin(), p2.end(), a.begin() + 7000);
         EXPECT_EQ(read_all(*s, "a"), a);
         // A write past the end leaves a hole that reads as zeros and uses no block.
         std::vector<std::byte> tail = random_bytes(rng, 10);
         ASSERT_TRUE(s->write("a", 40000, payload_of(tail)).ok());
         a.resize(40000);
         a.insert(a.end(), tail.begin(), tail.end());
         EXPECT_EQ(read_all(*s, "a"), a);
         EXPECT_EQ(*s->size("a"), 40010u);
         ASSERT_TRUE(s->flush().ok());
         ASSERT_TRUE(s->flush().ok());  // the commit mark durable: freed blocks reusable
         EXPECT_EQ(s->space().used_bytes, 4 * kBlockBytes);  // blocks 0, 1, 2 and 9
         EXPECT_EQ(s->space().pending_free_bytes, 0u);
         Result<Payload> mid = s->read("a", 4990, 20);
         ASSERT_TRUE(mid.ok());
         EXPECT_EQ(mid->bytes.to_vector(),
                   std::vector<std::byte>(a.begin() + 4990, a.begin() + 5010));
         ASSERT_TRUE(s->check().ok()) << s->check().to_string();

         ASSERT_TRUE(s->remove("a").ok());
         EXPECT_EQ(s->size("a").status().code(), Status::Code::kNotFound);
         ASSERT_TRUE(s->flush().ok());
         const SpaceUsage after = s->space();
         EXPECT_EQ(after.used_bytes, 0u);
         EXPECT_EQ(after.free_bytes + after.pending_free_bytes, after.data_bytes);
         ASSERT_TRUE(s->flush().ok());
         EXPECT_EQ(s->space().free_bytes, empty.free_bytes);  // all space back
         // The space is reused: fill the whole data region twice over.
         for (int round = 0; round < 2; ++round) {
           const uint64_t n = empty.data_bytes / (64 * 1024);
           for (uint64_t i = 0; i < n; ++i) {
             Status st =
                 s->write("f" + std::to_string(i), 0, payload_of(random_bytes(rng, 64 * 1024)));
             ASSERT_TRUE(st.ok()) << st.to_string();
           }
           for (uint64_t i = 0; i < n; ++i) {
             ASSERT_TRUE(s->remove("f" + std::to_string(i)).ok());
           }
           ASSERT_TRUE(s->check().ok()) << s->check().to_string();
         }
       }).ok());
}

TEST(DiskStore, AttributesAreJournaledCheckpointedAndAtomicWithTheData) {
  StoreWorld w(4 * kMiB);
  Random rng(21);
  std::vector<std::byte> v1 = random_bytes(rng, 9000), v2 = random_bytes(rng, 9000);
  ASSERT_TRUE(w.run([&](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 WriteOptions o;
                 o.attrs = {{"version", "1"}, {"logical_size", "36000"}};
                 ASSERT_TRUE(s->write("shard", 0, payload_of(v1), o).ok());
                 EXPECT_EQ(*s->attr("shard", "version"), "1");
                 EXPECT_EQ(*s->attr("shard", "logical_size"), "36000");
                 EXPECT_EQ(s->attr("shard", "nope").status().code(), Status::Code::kNotFound);
                 EXPECT_EQ(s->attr("none", "version").status().code(), Status::Code::kNotFound);
                 // An attribute-only write creates an empty object.
                 WriteOptions only;
                 only.attrs = {{"k", std::string(1024, 'x')}};
                 ASSERT_TRUE(s->write("meta", 0, payload_of({}), only).ok());
                 EXPECT_EQ(*s->size("meta"), 0u);
                 WriteOptions bad;
                 bad.attrs = {{"", "v"}};
                 EXPECT_EQ(s->write("shard", 0, payload_of(v1), bad).code(),
                           Status::Code::kInvalidArgument);
                 bad.attrs = {{"k", std::string(1025, 'x')}};
                 EXPECT_EQ(s->write("shard", 0, payload_of(v1), bad).code(),
                           Status::Code::kInvalidArgument);
                 ASSERT_TRUE(s->checkpoint().ok());  // version 1 in the checkpoint
                 // Version 2: data and attribute in one unsynced record, then lost or kept.
                 WriteOptions o2;
                 o2.sync = false;
                 o2.attrs = {{"version", "2"}};
                 ASSERT_TRUE(s->write("shard", 0, payload_of(v2), o2).ok());
                 EXPECT_EQ(*s->attr("shard", "version"), "2");
                 EXPECT_EQ(*s->attr("shard", "logical_size"), "36000");  // others unchanged
               }).ok());
  int saw_old = 0, saw_new = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    StoreWorld c(4 * kMiB);
    ASSERT_TRUE(c.run([&](Device& d) {
                   ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                   auto s = mount_ok(d);
                   WriteOptions o;
                   o.attrs = {{"version", "1"}};
                   ASSERT_TRUE(s->write("x", 0, payload_of(v1), o).ok());
                   o.sync = false;
                   o.attrs = {{"version", "2"}};
                   ASSERT_TRUE(s->write("x", 0, payload_of(v2), o).ok());
                   // The power goes during the flush: its journal write is made, the device
                   // flush is not (so the record and the data may each survive or not).
                   c.env.cut_power_after(0, 1);
                   EXPECT_EQ(s->flush().code(), Status::Code::kIOError);
                 }).ok());
    c.env.crash_device(0, seed);
    ASSERT_TRUE(c.run([&](Device& d) {
                   auto s = mount_ok(d);
                   ASSERT_TRUE(s);
                   const std::string v = *s->attr("x", "version");
                   const std::vector<std::byte> got = read_all(*s, "x");
                   if (v == "1") {
                     ++saw_old;
                     EXPECT_EQ(got, v1) << "seed " << seed;
                   } else {
                     ++saw_new;
                     EXPECT_EQ(v, "2");
                     EXPECT_EQ(got, v2) << "seed " << seed;
                   }
                 }).ok());
  }
  EXPECT_GT(saw_old, 0);
  EXPECT_GT(saw_new, 0);
  // Everything survives a clean remount (replay of the journal after the checkpoint).
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 EXPECT_EQ(*s->attr("meta", "k"), std::string(1024, 'x'));
                 EXPECT_EQ(*s->attr("shard", "logical_size"), "36000");
               }).ok());
}

TEST(DiskStore, DeviceFullNamesTheDeviceTheRequestAndTheFreeSpace) {
  StoreWorld w(512 * 1024);
  ASSERT_TRUE(w.run([](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 Random rng(5);
                 const uint64_t data = s->space().data_bytes;  // 512 KiB - 68 KiB
                 std::vector<std::byte> big = random_bytes(rng, data - 8192);
                 ASSERT_TRUE(s->write("big", 0, payload_of(big)).ok());
                 const Status full = s->write("more", 0, payload_of(random_bytes(rng, 12288)));
                 ASSERT_EQ(full.code(), Status::Code::kNoSpace) << full.to_string();
                 EXPECT_EQ(full.to_string(),
                           "no space: device 0: writing 12288 bytes to object 'more' needs 12288 "
                           "bytes of new blocks; 8192 bytes are free of " +
                               std::to_string(data));
                 EXPECT_EQ(s->size("more").status().code(), Status::Code::kNotFound);
                 ASSERT_TRUE(s->check().ok());
                 // A write that fits still works; once full, a write gets the blocks a remove
                 // freed (a checkpoint makes them reusable at once).
                 ASSERT_TRUE(s->write("more", 0, payload_of(random_bytes(rng, 8192))).ok());
                 std::vector<std::byte> big2 = random_bytes(rng, data - 8192);
                 Status st = s->write("big", 0, payload_of(big2), {.sync = false, .attrs = {}});
                 ASSERT_EQ(st.code(), Status::Code::kNoSpace) << st.to_string();
                 ASSERT_TRUE(s->remove("more").ok());
                 st = s->write("big", 0, payload_of(random_bytes(rng, 4096)));
                 ASSERT_TRUE(st.ok()) << st.to_string();
                 EXPECT_EQ(read_all(*s, "big").size(), big.size());
                 ASSERT_TRUE(s->check().ok()) << s->check().to_string();
               }).ok());
}

TEST(DiskStore, ReadDetectsAFlippedBitAndNamesObjectAndBlock) {
  StoreWorld w(2 * kMiB);
  ASSERT_TRUE(w.run([](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 Random rng(9);
                 ASSERT_TRUE(s->write("obj", 0, payload_of(random_bytes(rng, 3 * 4096))).ok());
                 Result<std::vector<ObjectExtent>> ex = s->extents("obj");
                 ASSERT_TRUE(ex.ok());
                 ASSERT_EQ(ex->size(), 1u);
                 EXPECT_EQ((*ex)[0].length, 3 * 4096u);
                 // Flip one bit of the object's second block on the device.
                 const uint64_t at = (*ex)[0].device_offset + 4096 + 123;
                 Result<Payload> b = d.read(at, 1);
                 ASSERT_TRUE(b.ok() && b->bytes);
                 std::vector<std::byte> flipped = b->bytes.to_vector();
                 flipped[0] ^= std::byte{0x10};
                 ASSERT_TRUE(d.write(at, payload_of(flipped)).ok());
                 ASSERT_TRUE(d.flush().ok());
                 EXPECT_TRUE(s->read("obj", 0, 4096).ok());  // block 0 is intact
                 const Result<Payload> bad = s->read("obj", 0, 3 * 4096);
                 ASSERT_EQ(bad.status().code(), Status::Code::kCorruption);
                 EXPECT_TRUE(contains(
                     bad.status().message(),
                     "object 'obj' block 1 (device offset " + std::to_string(at - 123) + ")"))
                     << bad.status().to_string();
                 // A partial overwrite of the bad block needs its old content: refused too.
                 EXPECT_EQ(s->write("obj", 4096 + 10, payload_of(random_bytes(rng, 5))).code(),
                           Status::Code::kCorruption);
                 // A whole-block overwrite replaces it.
                 ASSERT_TRUE(s->write("obj", 4096, payload_of(random_bytes(rng, 4096))).ok());
                 EXPECT_TRUE(s->read("obj", 0, 3 * 4096).ok());
               }).ok());
}

// A read planned under a lock and executed without it (real mode's parallel reads): once the
// planned blocks were freed by an overwrite and reused by other writes, the execution fails its
// crc check (never returns other bytes as the object's), and StoreBackend with parallel reads
// then reads the current bytes under its lock.
TEST(DiskStore, AStalePlanFailsItsCrcAndTheBackendReadsAgain) {
  StoreWorld w(2 * kMiB);
  ASSERT_TRUE(w.run([&w](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 Random rng(11);
                 ASSERT_TRUE(s->write("a", 0, payload_of(random_bytes(rng, 8192))).ok());
                 Result<DiskStore::ReadPlan> plan = s->plan_read("a", 0, 8192);
                 ASSERT_TRUE(plan.ok());
                 ASSERT_EQ(plan->runs.size(), 1u);
                 EXPECT_TRUE(s->execute_read(*plan).ok());  // nothing moved yet
                 const std::vector<std::byte> now = random_bytes(rng, 8192);
                 ASSERT_TRUE(s->write("a", 0, payload_of(now)).ok());  // frees the planned blocks
                 const uint64_t planned = plan->runs[0].device_block * 4096;
                 bool reused = false;
                 for (int i = 0; i < 64 && !reused; ++i) {
                   const std::string name = "x" + std::to_string(i);
                   ASSERT_TRUE(s->write(name, 0, payload_of(random_bytes(rng, 8192))).ok());
                   Result<std::vector<ObjectExtent>> ex = s->extents(name);
                   ASSERT_TRUE(ex.ok());
                   for (const ObjectExtent& e : *ex) {
                     reused = reused ||
                              (e.device_offset <= planned && planned < e.device_offset + e.length);
                   }
                 }
                 ASSERT_TRUE(reused) << "the allocator never reused the freed blocks";
                 const Result<Payload> stale = s->execute_read(*plan);
                 ASSERT_EQ(stale.status().code(), Status::Code::kCorruption);
                 EXPECT_TRUE(contains(stale.status().message(), "object 'a' block 0"));
                 services::StoreBackend backend(w.env, *s, /*parallel_reads=*/true);
                 Result<Payload> got = backend.read("a", 0, 8192);
                 ASSERT_TRUE(got.ok()) << got.status().to_string();
                 EXPECT_EQ(got->bytes.to_vector(), now);
               }).ok());
}

// A Device that counts the calls that read it.
class ReadCountingDevice final : public Device {
 public:
  explicit ReadCountingDevice(Device& d) : d_(d) {}
  DeviceId id() const override { return d_.id(); }
  HostId host() const override { return d_.host(); }
  uint64_t capacity_bytes() const override { return d_.capacity_bytes(); }
  Result<Payload> read(uint64_t offset, uint64_t length) override {
    ++reads;
    return d_.read(offset, length);
  }
  Result<std::vector<Payload>> read_ranges(
      const std::vector<std::pair<uint64_t, uint64_t>>& ranges) override {
    ++range_calls;
    last_ranges = ranges.size();
    return d_.read_ranges(ranges);
  }
  Status write(uint64_t offset, const Payload& data) override { return d_.write(offset, data); }
  Status flush() override { return d_.flush(); }
  int reads = 0, range_calls = 0;
  size_t last_ranges = 0;

 private:
  Device& d_;
};

// An object whose every other block was overwritten (copy-on-write: 32 runs on the device, and
// a hole) is read with one read_ranges call of all its runs, not a device read per run
// (UringDevice serves them at once), and comes back whole.
TEST(DiskStore, AFragmentedObjectIsReadWithOneCallOfAllItsRuns) {
  StoreWorld w(4 * kMiB);
  ASSERT_TRUE(w.run([](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 ReadCountingDevice counting(d);
                 auto s = mount_ok(counting);
                 ASSERT_TRUE(s);
                 Random rng(5);
                 std::vector<std::byte> a = random_bytes(rng, 32 * 4096);
                 ASSERT_TRUE(s->write("a", 0, payload_of(a)).ok());
                 for (uint64_t b = 1; b < 32; b += 2) {
                   std::vector<std::byte> blk = random_bytes(rng, 4096);
                   ASSERT_TRUE(s->write("a", b * 4096, payload_of(blk)).ok());
                   std::copy(blk.begin(), blk.end(), a.begin() + static_cast<ptrdiff_t>(b * 4096));
                 }
                 const std::vector<std::byte> tail = random_bytes(rng, 100);
                 ASSERT_TRUE(s->write("a", 40 * 4096, payload_of(tail)).ok());  // a hole before
                 a.resize(40 * 4096);
                 a.insert(a.end(), tail.begin(), tail.end());
                 Result<DiskStore::ReadPlan> plan = s->plan_read("a", 0, a.size());
                 ASSERT_TRUE(plan.ok());
                 EXPECT_GE(plan->runs.size(), 17u);
                 counting.reads = counting.range_calls = 0;
                 Result<Payload> got = s->execute_read(*plan);
                 ASSERT_TRUE(got.ok()) << got.status().to_string();
                 EXPECT_EQ(got->bytes.to_vector(), a);
                 EXPECT_EQ(counting.range_calls, 1);
                 EXPECT_EQ(counting.reads, 0);
                 EXPECT_EQ(counting.last_ranges, plan->runs.size() - 1);  // all but the hole
               }).ok());
}

TEST(DiskStore, MountAfterCleanShutdownKeepsEverything) {
  StoreWorld w(4 * kMiB);
  std::map<std::string, std::vector<std::byte>> expect;
  Random rng(11);
  ASSERT_TRUE(w.run([&](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 for (int i = 0; i < 20; ++i) {
                   const std::string name = "obj" + std::to_string(i % 7);
                   std::vector<std::byte> b = random_bytes(rng, 1 + rng.uniform(20000));
                   ASSERT_TRUE(
                       s->write(name, 0, payload_of(b), {.sync = i % 3 == 0, .attrs = {}}).ok());
                   auto& e = expect[name];
                   if (e.size() < b.size()) e.resize(b.size());
                   std::copy(b.begin(), b.end(), e.begin());
                 }
                 ASSERT_TRUE(s->remove("obj3", {.sync = false, .attrs = {}}).ok());
                 expect.erase("obj3");
                 ASSERT_TRUE(s->flush().ok());
               }).ok());
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 EXPECT_EQ(s->mount_report().checkpoint_generation, 2u);  // from the first mount
                 EXPECT_GE(s->mount_report().records_replayed, 21u);      // ops (+ commit marks)
                 EXPECT_EQ(s->mount_report().records_discarded, 0u);
                 EXPECT_EQ(s->list().size(), expect.size());
                 for (const auto& [name, bytes] : expect) EXPECT_EQ(read_all(*s, name), bytes);
                 ASSERT_TRUE(s->check().ok()) << s->check().to_string();
               }).ok());
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto s = mount_ok(d);  // mount checkpointed: nothing to replay now
                 ASSERT_TRUE(s);
                 EXPECT_EQ(s->mount_report().records_replayed, 0u);
                 for (const auto& [name, bytes] : expect) EXPECT_EQ(read_all(*s, name), bytes);
               }).ok());
}

TEST(DiskStore, AFullJournalIsCheckpointedAndTrimmed) {
  StoreWorld w(4 * kMiB);
  FormatOptions o = small_regions();
  o.journal_bytes = 8192;
  std::vector<std::byte> last;
  ASSERT_TRUE(w.run([&](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, o).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 Random rng(2);
                 for (int i = 0; i < 100; ++i) {  // 100 records of 512 bytes: 6 journals
                   last = random_bytes(rng, 5000);
                   ASSERT_TRUE(
                       s->write("x", 0, payload_of(last), {.sync = false, .attrs = {}}).ok());
                 }
                 ASSERT_TRUE(s->flush().ok());
                 ASSERT_TRUE(s->check().ok());
               }).ok());
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 EXPECT_GE(s->mount_report().checkpoint_generation, 6u);
                 EXPECT_EQ(read_all(*s, "x"), last);
                 // The space of the 99 older versions came back.
                 ASSERT_TRUE(s->flush().ok());
                 EXPECT_EQ(s->space().used_bytes, 2 * kBlockBytes);
                 ASSERT_TRUE(s->check().ok());
               }).ok());
}

TEST(DiskStore, ACrashLosesOnlyWhatWasNotFlushed) {
  // Over seeds: a synced object always survives; an unsynced overwrite of another object whose
  // flush the power cut short is either entirely there or entirely not.
  int kept = 0, lost = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    StoreWorld w(2 * kMiB, seed);
    Random rng(seed);
    const std::vector<std::byte> a = random_bytes(rng, 9000);
    const std::vector<std::byte> b1 = random_bytes(rng, 9000);
    const std::vector<std::byte> b2 = random_bytes(rng, 9000);
    ASSERT_TRUE(w.run([&](Device& d) {
                   ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                   auto s = mount_ok(d);
                   ASSERT_TRUE(s);
                   ASSERT_TRUE(s->write("b", 0, payload_of(b1)).ok());
                   ASSERT_TRUE(s->write("a", 0, payload_of(a)).ok());
                   ASSERT_TRUE(s->write("b", 0, payload_of(b2), {.sync = false, .attrs = {}}).ok());
                   // Journal records are written by a flush: the power goes during one, after
                   // its journal write and before the device flush.
                   w.env.cut_power_after(w.dev, 1);
                   EXPECT_EQ(s->flush().code(), Status::Code::kIOError);
                 }).ok());
    w.env.crash_device(w.dev, seed);
    ASSERT_TRUE(w.run([&](Device& d) {
                   auto s = mount_ok(d);
                   ASSERT_TRUE(s);
                   EXPECT_EQ(read_all(*s, "a"), a);
                   const std::vector<std::byte> b = read_all(*s, "b");
                   EXPECT_TRUE(b == b1 || b == b2) << "seed " << seed;
                   (b == b2 ? kept : lost)++;
                   ASSERT_TRUE(s->check().ok()) << s->check().to_string();
                 }).ok());
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(lost, 0);
}

TEST(DiskStore, RefusesWhatItCannotDo) {
  StoreWorld w(2 * kMiB);
  ASSERT_TRUE(
      w.run([](Device& d) {
         // Unformatted: a size-only device, then one with bytes but no superblock.
         Result<std::unique_ptr<DiskStore>> m = DiskStore::mount(d);
         ASSERT_FALSE(m.ok());
         EXPECT_EQ(m.status().to_string(),
                   "invalid argument: device 0 keeps no data (a size-only device)");
         ASSERT_TRUE(d.write(8192, payload_of(std::vector<std::byte>(10))).ok());
         m = DiskStore::mount(d);
         EXPECT_EQ(m.status().to_string(),
                   "invalid argument: device 0 holds no store: no superblock at offset 0 "
                   "(format it)");
         FormatOptions bad;
         bad.journal_bytes = 1000;
         EXPECT_EQ(DiskStore::format(d, bad).code(), Status::Code::kInvalidArgument);
         FormatOptions huge;
         huge.journal_bytes = 4 * kMiB;
         EXPECT_EQ(DiskStore::format(d, huge).code(), Status::Code::kNoSpace);

         ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
         auto s = mount_ok(d);
         ASSERT_TRUE(s);
         EXPECT_EQ(s->write("x", 0, Payload::of_size(10)).code(), Status::Code::kInvalidArgument);
         EXPECT_EQ(s->write("", 0, payload_of(std::vector<std::byte>(1))).code(),
                   Status::Code::kInvalidArgument);
         // A write whose record would not fit the 32 KiB journal.
         const Status too_big = s->write("x", 0, payload_of(std::vector<std::byte>(8 * kMiB)));
         EXPECT_EQ(too_big.code(), Status::Code::kInvalidArgument);
         EXPECT_TRUE(contains(too_big.message(), "split the write")) << too_big.to_string();
         ASSERT_TRUE(s->write("x", 0, payload_of(std::vector<std::byte>(100))).ok());
         EXPECT_EQ(s->read("x", 50, 51).status().to_string(),
                   "invalid argument: device 0: object 'x': range [50, +51) is beyond "
                   "its size of 100 bytes");
         EXPECT_EQ(s->read("y", 0, 1).status().code(), Status::Code::kNotFound);
         EXPECT_EQ(s->remove("y").code(), Status::Code::kNotFound);
         // An empty write creates an object of the size its offset says.
         ASSERT_TRUE(s->write("z", 300, payload_of({})).ok());
         EXPECT_EQ(*s->size("z"), 300u);
         EXPECT_EQ(read_all(*s, "z"), std::vector<std::byte>(300));
       }).ok());
}

TEST(DiskStore, AfterADeviceErrorTheStoreMustBeMountedAgain) {
  StoreWorld w(2 * kMiB);
  ASSERT_TRUE(w.run([&](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d, small_regions()).ok());
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 w.env.cut_power_after(w.dev, 1);  // the data write passes, the record fails
                 const Status st = s->write("x", 0, payload_of(std::vector<std::byte>(100)));
                 EXPECT_EQ(st.code(), Status::Code::kIOError);
                 const Status again = s->flush();
                 EXPECT_EQ(again.code(), Status::Code::kIOError);
                 EXPECT_TRUE(contains(again.message(), "mount it again")) << again.to_string();
               }).ok());
  w.env.crash_device(w.dev, 3);
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto s = mount_ok(d);
                 ASSERT_TRUE(s);
                 EXPECT_TRUE(s->list().empty());
                 ASSERT_TRUE(s->check().ok());
               }).ok());
}

// A Device that counts the flushes made through it, each taking `flush_s` more (a drive with a
// volatile cache: a flush costs far more than a small write).
class CountingDevice final : public Device {
 public:
  CountingDevice(Env& env, Device& d, double flush_s) : env_(env), d_(d), flush_s_(flush_s) {}
  DeviceId id() const override { return d_.id(); }
  HostId host() const override { return d_.host(); }
  uint64_t capacity_bytes() const override { return d_.capacity_bytes(); }
  Result<Payload> read(uint64_t offset, uint64_t length) override {
    return d_.read(offset, length);
  }
  Status write(uint64_t offset, const Payload& data) override { return d_.write(offset, data); }
  Status flush() override {
    ++flushes;
    env_.sleep_s(flush_s_);
    return d_.flush();
  }
  uint64_t flushes = 0;

 private:
  Env& env_;
  Device& d_;
  const double flush_s_;
};

// Eight tasks write through one StoreBackend at once: each write returns durable (a crash
// right after loses none), yet the writes share device flushes (group commit: with 1 ms
// flushes, a task that waits for one finds its record covered by the next); and writes of
// disjoint bytes of the same blocks of one object, which the backend must not let overlap
// (each merges the block's old content), all land.
TEST(StoreBackend, ConcurrentWritesShareFlushesAndNoneLosesAnothersBytes) {
  StoreWorld w(16 * kMiB);
  std::unique_ptr<CountingDevice> device;
  std::unique_ptr<DiskStore> s;
  std::unique_ptr<services::StoreBackend> backend;
  ASSERT_TRUE(w.run([&](Device& d) {
                 ASSERT_TRUE(DiskStore::format(d).ok());
                 device = std::make_unique<CountingDevice>(w.env, d, 0.001);
                 s = mount_ok(*device);
                 ASSERT_TRUE(s);
                 backend = std::make_unique<services::StoreBackend>(w.env, *s);
               }).ok());
  const uint64_t flushes_before = device->flushes;
  constexpr int kTasks = 8, kRounds = 12;
  std::map<std::string, std::vector<std::byte>> expect;
  std::vector<std::byte> shared(3 * 4096);
  int failed = 0;
  for (int t = 0; t < kTasks; ++t) {
    w.env.spawn(w.host, "writer" + std::to_string(t), [&, t] {
      Random rng(t + 1);
      for (int j = 0; j < kRounds; ++j) {
        const std::string name = "t" + std::to_string(t) + "." + std::to_string(j);
        std::vector<std::byte> data = random_bytes(rng, 1 + rng.uniform(30000));
        if (!backend->write(name, 0, payload_of(data), 0, 1, -1, nullptr).ok()) ++failed;
        expect[name] = std::move(data);
        // 100 bytes of its own in block j % 3 of "shared".
        const uint64_t at = (j % 3) * 4096 + t * 100;
        const std::vector<std::byte> mine(100, static_cast<std::byte>(16 * t + j));
        if (!backend->write("shared", at, payload_of(mine), 0, 1, -1, nullptr).ok()) ++failed;
        std::copy(mine.begin(), mine.end(), shared.begin() + static_cast<ptrdiff_t>(at));
      }
    });
  }
  ASSERT_TRUE(w.env.run().ok());
  EXPECT_EQ(failed, 0);
  const uint64_t writes = 2 * kTasks * kRounds;
  const uint64_t flushes = device->flushes - flushes_before;
  std::printf("%llu durable writes from %d tasks took %llu device flushes\n",
              static_cast<unsigned long long>(writes), kTasks,
              static_cast<unsigned long long>(flushes));
  EXPECT_LE(flushes * 3, writes) << "writes waiting together share one flush";
  shared.resize(3 * 4096 - 4096 + kTasks * 100);  // the object ends at the last byte written
  expect["shared"] = shared;
  w.env.crash_device(w.dev, 7);  // every write returned durable: the crash loses nothing
  backend.reset();
  s.reset();
  ASSERT_TRUE(w.run([&](Device& d) {
                 auto after = mount_ok(d);
                 ASSERT_TRUE(after);
                 ASSERT_TRUE(after->check().ok()) << after->check().to_string();
                 EXPECT_EQ(after->list().size(), expect.size());
                 for (const auto& [name, data] : expect) {
                   EXPECT_EQ(read_all(*after, name), data) << name;
                 }
               }).ok());
}

}  // namespace
}  // namespace granary::store

// DiskStore: BlueStore-lite, an object store on one Device (engine/env.h). Objects are named
// byte arrays that can be written at any offset (growing them), read and removed. Everything
// the store knows is on the device, so a crash loses at most what the contract below allows.
//
// On-disk layout (4 KiB blocks; docs/ARCHITECTURE.md, "BlueStore-lite"):
//   block 0            superblock: magic, version, the offsets and sizes of the regions below,
//                      the device capacity, crc32c
//   checkpoint A, B    two slots; each holds one checkpoint of the object index (every onode)
//                      with its generation and the journal sequence number that follows it.
//                      Written alternately, so a torn checkpoint leaves the other one intact.
//   journal            write-ahead journal of metadata records (512-byte aligned): header
//                      (magic, type, generation, body length, sequence number, crc32c of
//                      header and body) and a body (a write's new block map, a remove, a
//                      commit mark)
//   data               the rest, in 4 KiB blocks, allocated by an ExtentAllocator
//
// Onodes: object name -> size in bytes, a block map (object block -> device block and the
// crc32c of that block's 4 KiB) and attributes (small key -> value strings, set by writes). A block
// of the object that has no device block (a hole) reads as zeros.
//
// Writes are copy-on-write: a write puts the new content of every 4 KiB block it touches
// (merged with the old content for partial blocks) into freshly allocated blocks, then appends
// one journal record naming those blocks and their crcs. The blocks it replaced are freed, but
// not reusable before a commit mark covering the record is durable (two device flushes later),
// so no crash can leave an older version of an object pointing at reused blocks.
//
// Durability and atomicity (what a caller may rely on):
//  - Every write() and remove() is atomic: after a crash an object reads either entirely as
//    before or entirely as after each operation (never a mix, never garbage).
//  - Operations are durable in order: after a crash the store holds the state after some
//    prefix of the operations that returned OK (and possibly the one in flight).
//  - An operation is durable once it returned OK with WriteOptions::sync (the default), or
//    once a later flush() or sync operation returned OK. Without sync, an operation is visible
//    to reads at once and may be lost in a crash.
//  - Reads verify the crc32c of every block they touch; a mismatch is a corruption Status that
//    names the object, the block and the device offset.
//  - A full data region is a no_space Status naming the device, the bytes requested and free.
//
// Mount replays the journal from the newest valid checkpoint, stopping at the first record
// that is torn, fails its crc, has the wrong magic, generation or sequence number. Records
// after the last commit mark are kept only while their data blocks match their crcs (their
// data may not have reached the disk); the first that does not ends the replay. Mount then
// writes a new checkpoint and starts a fresh journal generation. The journal is bounded: when
// a record does not fit, the store writes a checkpoint and starts the journal again.
//
// Thread-safety: none; one task at a time uses a DiskStore (the OSD of its device, through a
// lock), except execute_read(), which only reads the device and may run beside any call
// (see plan_read below).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/env.h"
#include "engine/messages.h"
#include "engine/status.h"
#include "engine/store/allocator.h"

namespace granary::store {

inline constexpr uint64_t kBlockBytes = 4096;

struct FormatOptions {
  // The journal region; the largest write a record can describe is about
  // (journal_bytes / 20) blocks.
  uint64_t journal_bytes = 4 << 20;
  // Each of the two checkpoint slots; bounds the object index (20 bytes per block, plus the
  // object's name and 14 bytes per object).
  uint64_t checkpoint_bytes = 4 << 20;
};

struct WriteOptions {
  // Durable when the call returns OK (a device flush per call). Otherwise durable at the next
  // flush() or sync operation.
  bool sync = true;
  // Attributes the write sets on the object (key -> value, BlueStore's xattrs), atomically
  // with its data: both are in the one journal record. Keys 1 to 1024 bytes, values up to
  // 1024. A write of no bytes only sets attributes (creating the object, empty, if absent).
  std::vector<std::pair<std::string, std::string>> attrs;
};

// What mount found.
struct MountReport {
  uint64_t checkpoint_generation = 0;  // the checkpoint replay started from
  uint64_t records_replayed = 0;
  uint64_t records_discarded = 0;  // valid records whose data blocks had not reached the disk
  std::string journal_end;         // why the replay stopped ("end of journal", "bad crc", ...)
};

// Where part of an object lives on the device.
struct ObjectExtent {
  uint64_t object_offset = 0;
  uint64_t device_offset = 0;
  uint64_t length = 0;
};

struct SpaceUsage {
  uint64_t data_bytes = 0;          // the data region
  uint64_t used_bytes = 0;          // blocks that objects reference
  uint64_t free_bytes = 0;          // allocatable now
  uint64_t pending_free_bytes = 0;  // freed, reusable once their commit mark is durable
};

class DiskStore {
 public:
  // Writes an empty store on `device` (superblock, an empty checkpoint) and flushes. Not
  // crash-safe itself: a device whose format did not return OK does not mount.
  static Status format(Device& device, const FormatOptions& options = {});
  // Opens the store on a formatted device, replaying the journal (see the header comment).
  static Result<std::unique_ptr<DiskStore>> mount(Device& device);

  DiskStore(const DiskStore&) = delete;
  DiskStore& operator=(const DiskStore&) = delete;

  // Writes `data` (a payload with bytes) at `offset` of `object`, creating it or growing it.
  Status write(std::string_view object, uint64_t offset, const Payload& data,
               const WriteOptions& options = {});
  // `length` bytes at `offset`; the range must lie within the object.
  Result<Payload> read(std::string_view object, uint64_t offset, uint64_t length);

  // read() in two steps, for a caller that serialises the store's other calls with a lock but
  // lets reads of the device run in parallel (real mode's OSD: io_uring serves many at once):
  // plan_read looks the range up in the index (under the caller's lock), execute_read reads the
  // device and checks every block against the crc32c the plan took (without it: it touches
  // nothing else of the store). Blocks a concurrent write or remove freed can be reused once
  // two flushes have passed, so an unlocked execution may read newer bytes than its plan: the
  // crcs catch that (a corruption Status), and the caller reads again under its lock, where a
  // mismatch is a real corruption.
  struct ReadPlan {
    std::string object;
    uint64_t offset = 0, length = 0;
    struct Run {
      uint64_t object_block = 0, blocks = 0;
      uint64_t device_block = 0;   // kHoleBlock: a hole (zeros)
      std::vector<uint32_t> crcs;  // one per block
    };
    std::vector<Run> runs;
  };
  static constexpr uint64_t kHoleBlock = ~uint64_t{0};
  Result<ReadPlan> plan_read(std::string_view object, uint64_t offset, uint64_t length) const;
  Result<Payload> execute_read(const ReadPlan& plan) const;
  // Removes `object`; its blocks are freed.
  Status remove(std::string_view object, const WriteOptions& options = {});
  // Makes every operation that returned OK durable.
  Status flush();
  // Writes the object index to a checkpoint slot and starts a fresh journal (also done when
  // the journal is full, and by mount). Makes everything durable.
  Status checkpoint();

  Result<uint64_t> size(std::string_view object) const;
  // The value of attribute `key` of `object` (not_found for no such object or attribute).
  Result<std::string> attr(std::string_view object, std::string_view key) const;
  std::vector<std::string> list() const;
  Result<std::vector<ObjectExtent>> extents(std::string_view object) const;
  SpaceUsage space() const;
  // Checks the in-memory state: every referenced block lies in the data region, belongs to
  // one object block only and is not free; used + free + pending free = the data region.
  Status check() const;
  const MountReport& mount_report() const { return mount_report_; }

 private:
  struct BlockRef {
    uint64_t device_block = 0;
    uint32_t crc = 0;
  };
  struct Onode {
    uint64_t size = 0;
    std::map<uint64_t, BlockRef> blocks;  // object block -> where it lives
    std::map<std::string, std::string, std::less<>> attrs;
  };
  struct Layout {
    uint64_t capacity = 0;
    uint64_t checkpoint_offset[2] = {0, 0};
    uint64_t checkpoint_bytes = 0;
    uint64_t journal_offset = 0;
    uint64_t journal_bytes = 0;
    uint64_t data_block = 0;  // first block of the data region
    uint64_t data_blocks = 0;
  };

  DiskStore(Device& device, const Layout& layout);

  std::string where() const;  // "device N"
  Status unusable() const;    // the error after a device failure
  Status fail(Status s);      // remembers a device failure
  // The device's bytes (zeros where it keeps none).
  Result<Buffer> read_device(uint64_t offset, uint64_t length);
  Status write_device(uint64_t offset, Buffer bytes);
  // Metadata built in a vector: copied once into aligned memory.
  Status write_device(uint64_t offset, const std::vector<std::byte>& bytes) {
    return write_device(offset, Buffer::copy_of(bytes));
  }
  Status flush_device();
  // Appends one record; `body` is its payload. Checkpoints first when it does not fit.
  Status append_record(uint16_t type, const std::vector<std::byte>& body);
  Status ensure_journal_room(uint64_t record_bytes);
  Status write_checkpoint();
  void free_later(const BlockRef& ref) { freed_unflushed_.push_back(ref.device_block); }
  void release_all_pending();
  Status replay();

  Device& device_;
  Layout layout_;
  std::map<std::string, Onode, std::less<>> onodes_;
  ExtentAllocator allocator_;
  uint64_t generation_ = 0;                   // of the checkpoint the journal continues
  int active_slot_ = 0;                       // the slot holding that checkpoint
  uint64_t journal_head_ = 0;                 // where the next record goes (bytes into the journal)
  uint64_t last_seq_ = 0;                     // the last record's sequence number
  bool dirty_ = false;                        // written since the last device flush
  std::vector<uint64_t> freed_unflushed_;     // freed by records not yet flushed
  std::vector<uint64_t> freed_await_commit_;  // flushed; their commit mark is not yet durable
  std::string failure_;  // set after a device error: the store must be mounted again
  MountReport mount_report_;
};

}  // namespace granary::store

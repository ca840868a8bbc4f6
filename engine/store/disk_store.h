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
// (merged with the old content where the old object has bytes the write does not cover: a
// rewrite of a whole object reads nothing) into freshly allocated blocks, then appends
// one journal record naming those blocks and their crcs (in memory: the next flush writes the
// records in whole blocks, then flushes the device). The blocks it replaced are freed, but
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
// lock), except execute_read(), write_data() and flush_unlocked(), which only touch the device
// (and what their argument holds) and may run beside any call: see plan_read, prepare_write
// and begin_flush below.
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
  // write() in three steps, for a caller that lets data writes run in parallel (real mode's
  // OSD): prepare_write (under the caller's lock) checks the write, merges partial blocks with
  // their old content and allocates the new blocks; write_data (without the lock) computes
  // the blocks' crc32c and writes them; commit_write (under the lock) appends the journal
  // record and updates the index, or, when `written` failed, gives the blocks back and marks
  // the store failed. Until its commit the write is invisible. While a write is prepared,
  // the caller must not prepare another write of the same object that touches one of its
  // blocks (the later one's merge would miss the earlier one's bytes), nor remove the object;
  // writes of other blocks and other objects interleave freely. The object's size at commit
  // is the larger of its size then and the write's end; the caller may replace `attrs` before
  // the commit (by no more than a few dozen bytes). `sync` is ignored: commit_write makes
  // nothing durable (flush, or begin_flush and end_flush, do).
  struct PreparedWrite {
    std::string object;
    uint64_t first_block = 0, blocks = 0, end_bytes = 0;
    std::vector<std::pair<std::string, std::string>> attrs;
    Buffer content;                    // the new content of every block touched
    std::vector<BlockExtent> extents;  // where it goes, `blocks` blocks in all
    std::vector<uint32_t> crcs;        // set by write_data, one per block
  };
  Result<PreparedWrite> prepare_write(std::string_view object, uint64_t offset, const Payload& data,
                                      const WriteOptions& options = {});
  Status write_data(PreparedWrite& prepared) const;
  Status commit_write(PreparedWrite& prepared, const Status& written);
  // Removes `object`; its blocks are freed.
  Status remove(std::string_view object, const WriteOptions& options = {});
  // Makes every operation that returned OK durable.
  Status flush();

  // Journal records are appended in memory and written by the next flush, all of them in one
  // device write of whole 4 KiB blocks (the bytes past the last record are zeros, which replay
  // reads as the journal's end; the next flush writes that block again, with the same records
  // and more).
  //
  // flush() in three steps, for group commit: a caller that serialises the store's calls with
  // a lock lets one task flush the device without it while others append records, then every
  // record the flush covered is durable at once. begin_flush (under the lock) takes the records
  // appended so far; flush_unlocked (without it) writes them and flushes the device; end_flush
  // (under it, with
  // flush_unlocked's Status) makes those records durable (durable_seq()) and appends the commit
  // mark that lets the blocks they freed be reused, covering only the records the flush made
  // durable. One flush at a time (checked).
  struct FlushTicket {
    uint64_t through_seq = 0;     // the last record the flush covers
    uint64_t generation = 0;      // the journal's generation when it began
    bool device_flush = false;    // written since the last device flush
    std::vector<uint64_t> freed;  // blocks freed by the records it covers
    uint64_t journal_offset = 0;  // where `journal` goes on the device
    Buffer journal;               // the records' 4 KiB journal blocks (none: nothing new)
  };
  FlushTicket begin_flush();
  Status flush_unlocked(const FlushTicket& ticket) const;
  Status end_flush(FlushTicket& ticket, const Status& flushed);
  // The sequence number of the last journal record appended, and of the last one durable:
  // an operation that returned OK is durable once durable_seq() reaches the last_seq() it left.
  uint64_t last_seq() const { return last_seq_; }
  uint64_t durable_seq() const { return durable_seq_; }
  // OK, or why the store must be mounted again (a device failure).
  Status health() const { return failure_.empty() ? Status::ok_status() : unusable(); }
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
  // The journal region on the device: its offset and its size in bytes.
  std::pair<uint64_t, uint64_t> journal_region() const {
    return {layout_.journal_offset, layout_.journal_bytes};
  }

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
  // replay()'s steps: the newest valid checkpoint into onodes_ (the sequence number of the
  // record that follows it in *next_seq); the journal records after it, committed or with
  // their data on the disk; the blocks the objects reference taken from the allocator.
  Status load_checkpoint(uint64_t* next_seq);
  Status replay_journal(uint64_t next_seq);
  Status take_referenced_blocks();

  Device& device_;
  Layout layout_;
  std::map<std::string, Onode, std::less<>> onodes_;
  ExtentAllocator allocator_;
  uint64_t generation_ = 0;    // of the checkpoint the journal continues
  int active_slot_ = 0;        // the slot holding that checkpoint
  uint64_t journal_head_ = 0;  // where the next record goes (bytes into the journal)
  uint64_t last_seq_ = 0;      // the last record's sequence number
  uint64_t durable_seq_ = 0;   // the last record known durable
  bool dirty_ = false;         // written since the last device flush
  bool flushing_ = false;      // between begin_flush and end_flush
  // Journal records not yet handed to a flush, from the 4 KiB-aligned journal offset
  // journal_pending_at_ (the part of that block written before, then the new records).
  uint64_t journal_pending_at_ = 0;
  std::vector<std::byte> journal_pending_;
  uint64_t journal_handed_ = 0;               // journal_head_ at the last hand-off
  uint64_t preparing_blocks_ = 0;             // allocated by prepared, uncommitted writes
  std::vector<uint64_t> freed_unflushed_;     // freed by records not yet flushed
  std::vector<uint64_t> freed_await_commit_;  // flushed; their commit mark is not yet durable
  std::string failure_;  // set after a device error: the store must be mounted again
  MountReport mount_report_;
};

}  // namespace granary::store

// ObjectBackend: where an OSD keeps the objects it serves. Two backends run through the same
// OSD code (osd.h):
//  - ExtentBackend: an ObjectIndex (object -> device ranges) over a Device, the size-only
//    world of large simulations (a 100 TiB dataset is an index computed from names, not
//    data). Reads and writes move sizes; a whole-extent read can be streamed straight from
//    the device (Env::send_from_device). With a journal device a write is durable once
//    journaled and the data device is written after the reply.
//  - StoreBackend: a store::DiskStore (BlueStore-lite: bytes, crc32c on every block verified
//    on every read, a write-ahead journal, crash replay). Payloads carry bytes; an object's
//    version and client-visible (logical) size are attributes written atomically with its
//    data. This is the real storage system, run by tests in MemoryEnv and by real mode.
//
// Object metadata an OSD keeps beside the bytes (StoreBackend only; ExtentBackend reports 0):
//  - version: the write that produced the object's current content (WriteRequest::version,
//    which the client assigns per object, increasing). Peering (engine/recovery/peering.h)
//    compares versions to find stale copies.
//  - logical size: an erasure-coded shard holds 1/k of its object; the object's size as
//    clients see it is kept on every shard.
//  - shard: which shard of its object an erasure-coded shard is (CRUSH may later move the OSD
//    to another position of the PG; the bytes it holds are still the old position's).
//
// Thread-safety: every method may be called from any task of the OSD's host; a backend
// serialises what must be (the DiskStore is used by one task at a time, behind an EnvMutex).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.h"
#include "engine/messages.h"
#include "engine/services/env_mutex.h"
#include "engine/services/object_store.h"
#include "engine/store/disk_store.h"

namespace granary::services {

// What a backend knows of an object: ObjectInfo (messages.h); ExtentBackend's are unversioned.

class ObjectBackend {
 public:
  virtual ~ObjectBackend() = default;
  virtual bool writable() const = 0;
  // Payloads carry bytes: writes need them, reads return them.
  virtual bool carries_data() const = 0;

  // not_found for an unknown object.
  virtual Result<ObjectInfo> stat(std::string_view object) = 0;
  // [offset, offset + length) of `object`, which must lie within what this OSD holds.
  virtual Result<Payload> read(std::string_view object, uint64_t offset, uint64_t length) = 0;
  // The one device range holding [offset, offset + length) of `object`, when the range can be
  // streamed straight from the device (ExtentBackend); nullopt otherwise.
  virtual std::optional<DeviceExtent> streamable(std::string_view object, uint64_t offset,
                                                 uint64_t length) = 0;
  // Writes `data` at `offset` of `object` (creating or growing it) and makes it durable;
  // `logical_end` raises the client-visible size, `version` (> 0) becomes the object's
  // version, `shard` (>= 0: an erasure-coded shard) its shard index. Device writes that may
  // follow the reply (behind a journal) are appended to `deferred`, for write_deferred().
  virtual Status write(std::string_view object, uint64_t offset, const Payload& data,
                       uint64_t logical_end, uint64_t version, int32_t shard,
                       std::vector<DeviceExtent>* deferred) = 0;
  virtual void write_deferred(const std::vector<DeviceExtent>& deferred) = 0;
  // Removes `object` (not_found if absent). invalid_argument where objects cannot be removed.
  virtual Status remove(std::string_view object) = 0;
  // Every object this OSD holds (written ones for ExtentBackend: a computed dataset index
  // cannot be listed), in name order.
  virtual Result<std::vector<ObjectListing>> list() = 0;
};

// The size-only backend over an index and a device (see the header comment). `writable` may
// be null (a read-only service); `journal` may be null; `mu` guards the index.
class ExtentBackend final : public ObjectBackend {
 public:
  ExtentBackend(Device& device, const ObjectIndex& index, WritableObjectIndex* writable,
                Device* journal, EnvMutex& mu)
      : device_(device), index_(index), writable_(writable), journal_(journal), mu_(mu) {}

  bool writable() const override { return writable_ != nullptr; }
  bool carries_data() const override { return false; }
  Result<ObjectInfo> stat(std::string_view object) override;
  Result<Payload> read(std::string_view object, uint64_t offset, uint64_t length) override;
  std::optional<DeviceExtent> streamable(std::string_view object, uint64_t offset,
                                         uint64_t length) override;
  Status write(std::string_view object, uint64_t offset, const Payload& data, uint64_t logical_end,
               uint64_t version, int32_t shard, std::vector<DeviceExtent>* deferred) override;
  void write_deferred(const std::vector<DeviceExtent>& deferred) override;
  Status remove(std::string_view object) override;
  Result<std::vector<ObjectListing>> list() override;

 private:
  Result<std::vector<DeviceExtent>> extents(std::string_view object, uint64_t offset,
                                            uint64_t length);

  Device& device_;
  const ObjectIndex& index_;
  WritableObjectIndex* writable_;
  Device* journal_;
  EnvMutex& mu_;
};

// The data-carrying backend over a mounted DiskStore (see the header comment). The store must
// outlive the backend; nothing else may use it meanwhile. Its calls are serialised by one
// lock, held only around the store's index:
//  - A write prepares under it (DiskStore::prepare_write), writes its blocks without it, and
//    commits under it, so writes overlap on the drive's queue. Writes of one object commit in
//    the order they were prepared (its size, version and client-visible size attributes are
//    set at the commit, from the object as it is then); one that touches a block of an
//    uncommitted write of the same object waits for that commit before it prepares (it
//    merges the block's old content), and so does a remove.
//  - Group commit: a write or remove returns once a device flush begun after its journal
//    record covers it. One task flushes (DiskStore::begin_flush ... end_flush) without the
//    lock while others append their records and wait; the next flush covers them all, so a
//    queue of n writes costs about one flush, not n (BlueStore's kv_sync_thread, a database's
//    group commit).
//  - With `parallel_reads` a read holds the lock only to plan (DiskStore::plan_read) and reads
//    the device without it (real mode: io_uring serves many at once); one whose blocks a
//    concurrent write reused fails its crc check and is read again under the lock.
class StoreBackend final : public ObjectBackend {
 public:
  StoreBackend(Env& env, store::DiskStore& store, bool parallel_reads = false)
      : env_(env), store_(store), mu_(env), parallel_reads_(parallel_reads) {}

  bool writable() const override { return true; }
  bool carries_data() const override { return true; }
  Result<ObjectInfo> stat(std::string_view object) override;
  Result<Payload> read(std::string_view object, uint64_t offset, uint64_t length) override;
  std::optional<DeviceExtent> streamable(std::string_view, uint64_t, uint64_t) override {
    return std::nullopt;
  }
  Status write(std::string_view object, uint64_t offset, const Payload& data, uint64_t logical_end,
               uint64_t version, int32_t shard, std::vector<DeviceExtent>* deferred) override;
  void write_deferred(const std::vector<DeviceExtent>&) override {}
  Status remove(std::string_view object) override;
  Result<std::vector<ObjectListing>> list() override;

  // write() on `store` without a backend (the caller has the store to itself: a world builder
  // laying data out before the services start); durable at once with `sync`, else at the
  // store's next flush.
  static Status write_to(store::DiskStore& store, std::string_view object, uint64_t offset,
                         const Payload& data, uint64_t logical_end, uint64_t version, int32_t shard,
                         bool sync = true);

  // The object's size, version, client-visible size and shard as `store` holds them (no lock: the
  // caller has the store to itself, or only reads its index between two of its operations).
  static Result<ObjectInfo> stat_of(store::DiskStore& store, std::string_view object);

  // Attribute keys.
  static constexpr const char* kVersionAttr = "v";
  static constexpr const char* kLogicalSizeAttr = "ls";
  static constexpr const char* kShardAttr = "sh";

 private:
  // The store options of a write: its attributes (the client-visible size, the version, the
  // shard).
  static store::WriteOptions options_for(store::DiskStore& store, std::string_view object,
                                         uint64_t offset, const Payload& data, uint64_t logical_end,
                                         uint64_t version, int32_t shard, bool sync);
  // Under the lock: waits until the store's record `seq` is durable, flushing the device (lock
  // released meanwhile) when no other task is, else waiting for the one that is.
  Status durable(std::unique_lock<EnvMutex>& lock, uint64_t seq);
  // Under the lock: waits for notify_all() (the lock released meanwhile), then re-locks.
  void wait(std::unique_lock<EnvMutex>& lock);
  void notify_all();  // under the lock
  // Under the lock: waits until no uncommitted write of `object` touches blocks
  // [first, last] (any block when `all`).
  void wait_for_blocks(std::unique_lock<EnvMutex>& lock, std::string_view object, uint64_t first,
                       uint64_t last, bool all);

  Env& env_;
  store::DiskStore& store_;
  EnvMutex mu_;
  const bool parallel_reads_;
  bool flushing_ = false;  // a task is flushing the device
  // The uncommitted writes of each object, in prepare order.
  struct InFlight {
    uint64_t first = 0, blocks = 0, id = 0;
  };
  std::map<std::string, std::deque<InFlight>, std::less<>> writing_;
  uint64_t next_write_id_ = 0;
  // Tasks in wait(), each with its own semaphore (shared: a task unwound while it waits, as a
  // cancelled one is, leaves nothing dangling for notify_all to release).
  std::vector<std::shared_ptr<Semaphore>> waiters_;
};

}  // namespace granary::services

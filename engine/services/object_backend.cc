#include "engine/services/object_backend.h"

#include <algorithm>
#include <charconv>
#include <mutex>

#include "engine/services/written_store.h"

namespace granary::services {

// ---- ExtentBackend

Result<ObjectInfo> ExtentBackend::stat(std::string_view object) {
  std::lock_guard<EnvMutex> lock(mu_);
  Result<StoredObject> o = index_.find(object);
  if (!o.ok()) return o.status();
  return ObjectInfo{o->size_bytes, o->logical_bytes, 0};
}

Result<std::vector<DeviceExtent>> ExtentBackend::extents(std::string_view object, uint64_t offset,
                                                         uint64_t length) {
  std::lock_guard<EnvMutex> lock(mu_);
  if (writable_ != nullptr) return writable_->map_range(object, offset, length);
  Result<StoredObject> o = index_.find(object);
  if (!o.ok()) return o.status();
  return std::vector<DeviceExtent>{{o->offset_bytes + offset, length}};
}

Result<Payload> ExtentBackend::read(std::string_view object, uint64_t offset, uint64_t length) {
  Result<std::vector<DeviceExtent>> ex = extents(object, offset, length);
  if (!ex.ok()) return ex.status();
  for (const auto& e : *ex) {
    Result<Payload> p = device_.read(e.offset_bytes, e.length_bytes);
    if (!p.ok()) return p.status();
  }
  return Payload::of_size(length);
}

std::optional<DeviceExtent> ExtentBackend::streamable(std::string_view object, uint64_t offset,
                                                      uint64_t length) {
  Result<std::vector<DeviceExtent>> ex = extents(object, offset, length);
  if (!ex.ok() || ex->size() != 1) return std::nullopt;
  return ex->front();
}

Status ExtentBackend::write(std::string_view object, uint64_t offset, const Payload& data,
                            uint64_t logical_end, uint64_t /*version*/, int32_t /*shard*/,
                            std::vector<DeviceExtent>* deferred) {
  if (writable_ == nullptr) return Status::invalid_argument("read-only: no writes accepted");
  const uint64_t length = data.size_bytes;
  Result<std::vector<DeviceExtent>> ex = Status::io_error("unset");
  {
    std::lock_guard<EnvMutex> lock(mu_);
    ex = writable_->write(object, offset, length, logical_end);
  }
  if (!ex.ok()) return ex.status();
  if (journal_ != nullptr) {
    // Durable once in the journal; the data device is written behind it.
    if (Status s = journal_->write(0, Payload::of_size(length)); !s.ok()) return s;
    deferred->insert(deferred->end(), ex->begin(), ex->end());
    return Status();
  }
  for (const auto& e : *ex) {
    if (Status s = device_.write(e.offset_bytes, Payload::of_size(e.length_bytes)); !s.ok()) {
      return s;
    }
  }
  return Status();
}

void ExtentBackend::write_deferred(const std::vector<DeviceExtent>& deferred) {
  for (const auto& e : deferred) {
    (void)device_.write(e.offset_bytes, Payload::of_size(e.length_bytes));
  }
}

Status ExtentBackend::remove(std::string_view object) {
  return Status::invalid_argument("cannot remove " + std::string(object) +
                                  ": a size-only object index has no delete");
}

Result<std::vector<ObjectListing>> ExtentBackend::list() {
  std::vector<ObjectListing> out;
  auto* written = dynamic_cast<WrittenObjectStore*>(writable_);
  if (written == nullptr) return out;
  std::lock_guard<EnvMutex> lock(mu_);
  written->for_each_written([&](std::string_view name, const StoredObject& o) {
    out.push_back(ObjectListing{std::string(name), ObjectInfo{o.size_bytes, o.logical_bytes, 0}});
  });
  return out;
}

// ---- StoreBackend

namespace {

uint64_t parse_u64(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

Result<ObjectInfo> StoreBackend::stat_of(store::DiskStore& store, std::string_view object) {
  Result<uint64_t> size = store.size(object);
  if (!size.ok()) return size.status();
  ObjectInfo info;
  info.size_bytes = *size;
  if (Result<std::string> v = store.attr(object, kVersionAttr); v.ok()) {
    info.version = parse_u64(*v);
  }
  if (Result<std::string> l = store.attr(object, kLogicalSizeAttr); l.ok()) {
    info.logical_bytes = parse_u64(*l);
  }
  if (Result<std::string> s = store.attr(object, kShardAttr); s.ok()) {
    info.shard = static_cast<int32_t>(parse_u64(*s));
  }
  return info;
}

Result<ObjectInfo> StoreBackend::stat(std::string_view object) {
  std::lock_guard<EnvMutex> lock(mu_);
  return stat_of(store_, object);
}

Result<Payload> StoreBackend::read(std::string_view object, uint64_t offset, uint64_t length) {
  if (parallel_reads_) {
    Result<store::DiskStore::ReadPlan> plan = Status::not_found("");
    {
      std::lock_guard<EnvMutex> lock(mu_);
      plan = store_.plan_read(object, offset, length);
    }
    if (!plan.ok()) return plan.status();
    Result<Payload> read = store_.execute_read(*plan);
    // A mismatch may be a block a concurrent write freed and reused: the locked read decides.
    if (read.ok() || read.status().code() != Status::Code::kCorruption) return read;
  }
  std::lock_guard<EnvMutex> lock(mu_);
  return store_.read(object, offset, length);
}

Status StoreBackend::write(std::string_view object, uint64_t offset, const Payload& data,
                           uint64_t logical_end, uint64_t version, int32_t shard,
                           std::vector<DeviceExtent>* /*deferred*/) {
  if (!data.bytes) {
    return Status::invalid_argument("a write of " + std::to_string(data.size_bytes) + " bytes to " +
                                    std::string(object) +
                                    " carries no bytes, and this OSD stores data");
  }
  const uint64_t first = offset / store::kBlockBytes;
  const uint64_t last = (offset + std::max<uint64_t>(data.size_bytes, 1) - 1) / store::kBlockBytes;
  std::unique_lock<EnvMutex> lock(mu_);
  wait_for_blocks(lock, object, first, last, /*all=*/false);
  Result<store::DiskStore::PreparedWrite> prepared = store_.prepare_write(
      object, offset, data,
      options_for(store_, object, offset, data, logical_end, version, shard, false));
  if (!prepared.ok()) return prepared.status();
  const uint64_t id = ++next_write_id_;
  writing_[prepared->object].push_back(InFlight{first, last - first + 1, id});
  lock.unlock();
  const Status written = store_.write_data(*prepared);
  lock.lock();
  // In prepare order: the attributes from the object as the earlier writes left it.
  auto& queue = writing_.find(prepared->object)->second;
  while (queue.front().id != id) wait(lock);
  prepared->attrs =
      options_for(store_, object, offset, data, logical_end, version, shard, false).attrs;
  const Status committed = store_.commit_write(*prepared, written);
  queue.pop_front();
  if (queue.empty()) writing_.erase(prepared->object);
  notify_all();
  if (!committed.ok()) return committed;
  return durable(lock, store_.last_seq());
}

store::WriteOptions StoreBackend::options_for(store::DiskStore& store, std::string_view object,
                                              uint64_t offset, const Payload& data,
                                              uint64_t logical_end, uint64_t version, int32_t shard,
                                              bool sync) {
  store::WriteOptions options;
  options.sync = sync;
  uint64_t logical = offset + data.size_bytes;
  if (Result<ObjectInfo> old = stat_of(store, object); old.ok()) {
    logical = std::max(logical, old->client_bytes());
  }
  logical = std::max(logical, logical_end);
  options.attrs.emplace_back(kLogicalSizeAttr, std::to_string(logical));
  if (version > 0) options.attrs.emplace_back(kVersionAttr, std::to_string(version));
  if (shard >= 0) options.attrs.emplace_back(kShardAttr, std::to_string(shard));
  return options;
}

Status StoreBackend::durable(std::unique_lock<EnvMutex>& lock, uint64_t seq) {
  for (;;) {
    if (Status h = store_.health(); !h.ok()) return h;
    if (store_.durable_seq() >= seq) return Status::ok_status();
    if (flushing_) {
      wait(lock);  // the flush under way may cover `seq`; if not, the next one will
      continue;
    }
    flushing_ = true;
    store::DiskStore::FlushTicket ticket = store_.begin_flush();
    lock.unlock();
    const Status flushed = store_.flush_unlocked(ticket);
    lock.lock();
    const Status s = store_.end_flush(ticket, flushed);
    flushing_ = false;
    notify_all();
    if (!s.ok()) return s;
  }
}

void StoreBackend::wait(std::unique_lock<EnvMutex>& lock) {
  // A semaphore per waiter: a wake-up meant for one task can never be taken by another.
  std::shared_ptr<Semaphore> woken = env_.make_semaphore(0);
  waiters_.push_back(woken);
  lock.unlock();
  woken->acquire();
  lock.lock();
}

void StoreBackend::notify_all() {
  for (const auto& w : waiters_) w->release();
  waiters_.clear();
}

void StoreBackend::wait_for_blocks(std::unique_lock<EnvMutex>& lock, std::string_view object,
                                   uint64_t first, uint64_t last, bool all) {
  for (;;) {
    auto it = writing_.find(object);
    if (it == writing_.end()) return;
    bool overlaps = all;
    for (const InFlight& w : it->second) {
      overlaps = overlaps || (w.first <= last && first < w.first + w.blocks);
    }
    if (!overlaps) return;
    wait(lock);
  }
}

Status StoreBackend::write_to(store::DiskStore& store, std::string_view object, uint64_t offset,
                              const Payload& data, uint64_t logical_end, uint64_t version,
                              int32_t shard, bool sync) {
  return store.write(object, offset, data,
                     options_for(store, object, offset, data, logical_end, version, shard, sync));
}

Status StoreBackend::remove(std::string_view object) {
  std::unique_lock<EnvMutex> lock(mu_);
  wait_for_blocks(lock, object, 0, 0, /*all=*/true);
  if (Status s = store_.remove(object, store::WriteOptions{.sync = false, .attrs = {}}); !s.ok())
    return s;
  return durable(lock, store_.last_seq());
}

Result<std::vector<ObjectListing>> StoreBackend::list() {
  std::lock_guard<EnvMutex> lock(mu_);
  std::vector<ObjectListing> out;
  for (const std::string& name : store_.list()) {
    Result<ObjectInfo> info = stat_of(store_, name);
    if (!info.ok()) return info.status();
    out.push_back(ObjectListing{name, *info});
  }
  return out;
}

}  // namespace granary::services

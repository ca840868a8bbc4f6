#include "engine/services/written_store.h"

#include <algorithm>

namespace granary::services {

WrittenObjectStore::WrittenObjectStore(uint64_t capacity_bytes, const ObjectIndex* base,
                                       WrittenObjectStoreOptions options)
    : capacity_bytes_(capacity_bytes),
      base_(base),
      options_(options),
      next_offset_bytes_(options.base_offset_bytes) {
  GRANARY_CHECK(options_.reserve_bytes > 0 && options_.alignment_bytes > 0);
}

Result<StoredObject> WrittenObjectStore::find(std::string_view name) const {
  auto it = objects_.find(name);
  if (it == objects_.end()) {
    if (base_ != nullptr) return base_->find(name);
    return Status::not_found("no object " + std::string(name));
  }
  return stored(it->second);
}

StoredObject WrittenObjectStore::stored(const Entry& e) {
  StoredObject o;
  o.offset_bytes = e.pieces.empty() ? 0 : e.pieces.front().device_offset;
  o.size_bytes = e.size;
  o.logical_bytes = std::max(e.logical, e.size);
  return o;
}

void WrittenObjectStore::for_each_written(
    const std::function<void(std::string_view name, const StoredObject& object)>& fn) const {
  for (const auto& [name, e] : objects_) fn(name, stored(e));
}

void WrittenObjectStore::clear() {
  objects_.clear();
  next_offset_bytes_ = options_.base_offset_bytes;
}

Status WrittenObjectStore::reserve(Entry& e, std::string_view name, uint64_t end) {
  if (end <= e.reserved) return Status();
  const uint64_t r = options_.reserve_bytes, a = options_.alignment_bytes;
  const uint64_t length = std::max<uint64_t>((end - e.reserved + r - 1) / r * r, r);
  const uint64_t offset = (next_offset_bytes_ + a - 1) / a * a;
  if (offset > capacity_bytes_ || length > capacity_bytes_ - offset) {
    return Status::io_error("device full: no room for " + std::to_string(length) +
                            " bytes of object " + std::string(name) + " (" +
                            std::to_string(next_offset_bytes_) + " of " +
                            std::to_string(capacity_bytes_) + " bytes used)");
  }
  e.pieces.push_back({e.reserved, offset, length});
  e.reserved += length;
  next_offset_bytes_ = offset + length;
  return Status();
}

std::vector<DeviceExtent> WrittenObjectStore::extents(const Entry& e, uint64_t offset,
                                                      uint64_t length) {
  std::vector<DeviceExtent> out;
  const uint64_t end = offset + length;
  for (const Piece& p : e.pieces) {
    const uint64_t lo = std::max(offset, p.object_offset);
    const uint64_t hi = std::min(end, p.object_offset + p.length);
    if (hi <= lo) continue;
    out.push_back({p.device_offset + (lo - p.object_offset), hi - lo});
  }
  return out;
}

Result<std::vector<DeviceExtent>> WrittenObjectStore::write(std::string_view object,
                                                            uint64_t offset, uint64_t length,
                                                            uint64_t logical_end_bytes) {
  auto it = objects_.find(object);
  if (it == objects_.end()) {
    Entry fresh;
    if (base_ != nullptr) {
      // Copy-on-write of a base object: the new reservation covers all of it.
      if (auto b = base_->find(object); b.ok()) {
        fresh.size = b->size_bytes;
        fresh.logical = b->client_bytes();
      }
    }
    it = objects_.emplace(std::string(object), std::move(fresh)).first;
  }
  Entry& e = it->second;
  const uint64_t end = offset + length;
  if (Status s = reserve(e, object, std::max(end, e.size)); !s.ok()) return s;
  e.size = std::max(e.size, end);
  e.logical = std::max({e.logical, logical_end_bytes, end});
  return extents(e, offset, length);
}

Result<std::vector<DeviceExtent>> WrittenObjectStore::map_range(std::string_view object,
                                                                uint64_t offset,
                                                                uint64_t length) const {
  auto it = objects_.find(object);
  if (it == objects_.end()) {
    if (base_ == nullptr) return Status::not_found("no object " + std::string(object));
    auto b = base_->find(object);
    if (!b.ok()) return b.status();
    if (offset > b->size_bytes || length > b->size_bytes - offset) {
      return Status::invalid_argument("range past the end of " + std::string(object));
    }
    return std::vector<DeviceExtent>{{b->offset_bytes + offset, length}};
  }
  if (offset > it->second.size || length > it->second.size - offset) {
    return Status::invalid_argument("range past the end of " + std::string(object));
  }
  return extents(it->second, offset, length);
}

}  // namespace granary::services

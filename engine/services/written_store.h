// WrittenObjectStore: the objects a storage device receives by writes (checkpoints, block
// volumes, recovered copies), layered over a read-only index of what it held before the run
// (a dataset's objects).
//
// Allocation: an object's bytes live in pieces, each a contiguous device range covering a
// contiguous range of the object; the first write of an object reserves
// max(write end, reserve_bytes) and a write past the reservation adds a piece for the
// missing range rounded up to reserve_bytes. Pieces are bump-allocated from the end of the
// space in use, aligned; nothing is freed (a run writes, it does not delete). A write to an
// object the base index holds is redirected to a new reservation covering the whole object
// (copy-on-write: the OSD reads nothing, the base object's old bytes are dead).
//
// Thread-safety: not thread-safe; an OSD guards it with its mutex. find() and map_range() are
// const and may run concurrently with each other, not with write().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/services/object_store.h"

namespace granary::services {

struct WrittenObjectStoreOptions {
  uint64_t reserve_bytes = 4ull << 20;  // > 0: the least a new object or piece reserves
  uint64_t alignment_bytes = 4096;      // > 0
  uint64_t base_offset_bytes = 0;       // device offset where written objects start
};

class WrittenObjectStore final : public WritableObjectIndex {
 public:
  // `base` (may be null) answers for objects never written; it must outlive the store.
  WrittenObjectStore(uint64_t capacity_bytes, const ObjectIndex* base,
                     WrittenObjectStoreOptions options = {});

  Result<StoredObject> find(std::string_view name) const override;
  Result<std::vector<DeviceExtent>> write(std::string_view object, uint64_t offset, uint64_t length,
                                          uint64_t logical_end_bytes) override;
  Result<std::vector<DeviceExtent>> map_range(std::string_view object, uint64_t offset,
                                              uint64_t length) const override;

  uint64_t used_bytes() const { return next_offset_bytes_; }
  size_t written_objects() const { return objects_.size(); }
  // Calls fn(name, object) for every written object (not the base's), in name order.
  void for_each_written(
      const std::function<void(std::string_view name, const StoredObject& object)>& fn) const;
  // Forgets every written object and frees their space (the drive was replaced by an empty
  // one); the base index still answers for its objects.
  void clear();

 private:
  struct Piece {
    uint64_t object_offset = 0;
    uint64_t device_offset = 0;
    uint64_t length = 0;
  };
  struct Entry {
    std::vector<Piece> pieces;  // contiguous in the object from 0
    uint64_t reserved = 0;      // object bytes the pieces cover
    uint64_t size = 0;          // bytes written (the highest end)
    uint64_t logical = 0;
  };
  Status reserve(Entry& e, std::string_view name, uint64_t end);
  static StoredObject stored(const Entry& e);
  static std::vector<DeviceExtent> extents(const Entry& e, uint64_t offset, uint64_t length);

  uint64_t capacity_bytes_;
  const ObjectIndex* base_;
  WrittenObjectStoreOptions options_;
  uint64_t next_offset_bytes_;
  std::map<std::string, Entry, std::less<>> objects_;
};

}  // namespace granary::services

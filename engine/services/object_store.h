// ObjectStore: where each object of one storage server's device lives (object name ->
// extent), and the functions that fill the stores of a cluster with a dataset's objects.
//
// Allocation is a deterministic bump allocator: objects are laid out in the order they are
// put, each starting at the next multiple of alignment_bytes after the previous one; there is
// no deletion (a training dataset is written once, then read). The extent is what the OSD
// hands to Device reads, so a read of an object becomes a read of its device range.
//
// Populating (populate_rados, populate_pfs, populate_nfs) puts every object that a design
// stores for each file of a dataset (file_mapping.h) into the stores of the devices that hold
// it, in dataset file order, so the same dataset and layout give the same extents.
//
// Thread-safety: put() and the populate functions are for building the world, before the
// services run. After that a store is read-only and find() may be called from any task.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/layout/rbd.h"
#include "engine/placement/placement.h"
#include "engine/services/dataset.h"
#include "engine/services/file_mapping.h"
#include "engine/status.h"

namespace granary::services {

struct StoredObject {
  uint64_t offset_bytes = 0;  // on the device (of the object's first byte)
  uint64_t size_bytes = 0;    // bytes this device holds of the object
  // The object's size as clients see it: size_bytes, except for a shard of an erasure-coded
  // object, which holds 1/k of it (0 means size_bytes).
  uint64_t logical_bytes = 0;

  uint64_t client_bytes() const { return logical_bytes > 0 ? logical_bytes : size_bytes; }
};

// A range of a device.
struct DeviceExtent {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
};

struct ObjectStoreOptions {
  uint64_t alignment_bytes = 4096;  // > 0: objects start on multiples of this
  uint64_t base_offset_bytes = 0;   // the first object starts here (room for a superblock)
};

// Where an object lives on a device: what an OSD asks when serving a read.
class ObjectIndex {
 public:
  virtual ~ObjectIndex() = default;
  // not_found for an unknown name.
  virtual Result<StoredObject> find(std::string_view name) const = 0;
};

// An ObjectIndex that objects can be written to (written_store.h).
class WritableObjectIndex : public ObjectIndex {
 public:
  // Records a write of [offset, offset + length) of `object` (created if absent, grown if the
  // write goes past its end) and returns the device ranges the bytes go to, in object order.
  // `logical_end_bytes` (0: offset + length) raises the object's client-visible size.
  // io_error when the device is full.
  virtual Result<std::vector<DeviceExtent>> write(std::string_view object, uint64_t offset,
                                                  uint64_t length, uint64_t logical_end_bytes) = 0;
  // The device ranges holding [offset, offset + length) of `object` (not_found for an unknown
  // object, invalid_argument past its end).
  virtual Result<std::vector<DeviceExtent>> map_range(std::string_view object, uint64_t offset,
                                                      uint64_t length) const = 0;
};

class ObjectStore final : public ObjectIndex {
 public:
  explicit ObjectStore(uint64_t capacity_bytes, ObjectStoreOptions options = {});

  // Adds an object. invalid_argument if the name exists; io_error when the device is full.
  Status put(std::string_view name, uint64_t size_bytes);
  // not_found for an unknown name.
  Result<StoredObject> find(std::string_view name) const override;

  uint64_t capacity_bytes() const { return capacity_bytes_; }
  uint64_t used_bytes() const { return next_offset_bytes_; }  // end of the last extent
  size_t object_count() const { return objects_.size(); }

 private:
  uint64_t capacity_bytes_;
  ObjectStoreOptions options_;
  uint64_t next_offset_bytes_;
  std::map<std::string, StoredObject, std::less<>> objects_;
};

// The objects of a dataset worked out from their names, with no table: for datasets too large
// to list object by object (a 100 TiB epoch is 26 million 4 MiB objects). Names follow
// file_mapping.h: rados "<file>.<object_no as 16 hex>" (the object's share of the file under
// `rbd`), pfs "<file>.stripe<i>" (the stripe object's size under the file's layout), nfs
// "<file>" (the whole file). Every object is at device offset 0: the simulated devices have no
// seek model, so where an object sits does not matter; real mode uses ObjectStore. It does not
// check that the asking server is the one placement chose (the client computed that).
// Immutable; the dataset (and pfs layouts) must outlive it.
class DatasetObjectIndex final : public ObjectIndex {
 public:
  enum class Naming { kRados, kPfs, kNfs };
  DatasetObjectIndex(const Dataset& dataset, Naming naming,
                     layout::RbdLayout rbd = layout::RbdLayout::default_layout(),
                     const PfsLayouts* pfs_layouts = nullptr);
  Result<StoredObject> find(std::string_view name) const override;

 private:
  const Dataset& dataset_;
  Naming naming_;
  layout::RbdLayout rbd_;
  const PfsLayouts* pfs_layouts_;
};

// Several read-only indexes side by side (a dataset's objects and block volume images): find()
// answers from the first that knows the name. The indexes must outlive it.
class UnionObjectIndex final : public ObjectIndex {
 public:
  explicit UnionObjectIndex(std::vector<const ObjectIndex*> indexes)
      : indexes_(std::move(indexes)) {}
  Result<StoredObject> find(std::string_view name) const override;

 private:
  std::vector<const ObjectIndex*> indexes_;
};

// Stores keyed by what holds them: OSD id (rados), OST index (pfs) or head (nfs).
using ObjectStores = std::map<int32_t, ObjectStore>;

// rados: each data object into the store of every device of its group. not_found when a
// holder has no store.
Status populate_rados(const Dataset& dataset, const layout::RbdLayout& layout,
                      placement::Placement& placement, ObjectStores& osd_stores);
// pfs: each stripe object into its OST's store; every file needs a layout.
Status populate_pfs(const Dataset& dataset, const PfsLayouts& layouts, ObjectStores& ost_stores);
// nfs: each file, whole, into the store of its head (nfs_head_of over heads 0 .. n-1, n =
// the number of stores, which must be keyed 0 .. n-1).
Status populate_nfs(const Dataset& dataset, ObjectStores& head_stores);

}  // namespace granary::services

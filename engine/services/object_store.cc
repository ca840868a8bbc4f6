#include "engine/services/object_store.h"

namespace granary::services {

ObjectStore::ObjectStore(uint64_t capacity_bytes, ObjectStoreOptions options)
    : capacity_bytes_(capacity_bytes),
      options_(options),
      next_offset_bytes_(options.base_offset_bytes) {
  GRANARY_CHECK(options_.alignment_bytes > 0);
}

Status ObjectStore::put(std::string_view name, uint64_t size_bytes) {
  if (objects_.find(name) != objects_.end()) {
    return Status::invalid_argument("object store: object " + std::string(name) +
                                    " exists already");
  }
  const uint64_t a = options_.alignment_bytes;
  const uint64_t offset = (next_offset_bytes_ + a - 1) / a * a;
  if (offset < next_offset_bytes_ || offset > capacity_bytes_ ||
      size_bytes > capacity_bytes_ - offset) {
    return Status::io_error("object store: no space for object " + std::string(name) + " of " +
                            std::to_string(size_bytes) +
                            " bytes: " + std::to_string(next_offset_bytes_) + " of " +
                            std::to_string(capacity_bytes_) + " bytes used");
  }
  objects_.emplace(std::string(name), StoredObject{offset, size_bytes});
  next_offset_bytes_ = offset + size_bytes;
  return Status::ok_status();
}

Result<StoredObject> ObjectStore::find(std::string_view name) const {
  auto it = objects_.find(name);
  if (it == objects_.end()) return Status::not_found("no object " + std::string(name));
  return it->second;
}

namespace {

Status put_all(const std::vector<StoredObjectSpec>& objects, ObjectStores& stores,
               const char* holder_kind) {
  for (const StoredObjectSpec& o : objects) {
    for (int32_t holder : o.holders) {
      auto it = stores.find(holder);
      if (it == stores.end()) {
        return Status::not_found("object " + o.object + " belongs on " + holder_kind + "." +
                                 std::to_string(holder) + ", which has no object store");
      }
      if (Status s = it->second.put(o.object, o.size_bytes); !s.ok()) {
        return Status::io_error(std::string(holder_kind) + "." + std::to_string(holder) + ": " +
                                s.message());
      }
    }
  }
  return Status::ok_status();
}

}  // namespace

Status populate_rados(const Dataset& dataset, const layout::RbdLayout& layout,
                      placement::Placement& placement, ObjectStores& osd_stores) {
  for (const DatasetFile& f : dataset.files()) {
    Result<std::vector<StoredObjectSpec>> objects =
        rados_objects(layout, placement, f.path, f.size_bytes);
    if (!objects.ok()) return objects.status();
    if (Status s = put_all(*objects, osd_stores, "osd"); !s.ok()) return s;
  }
  return Status::ok_status();
}

Status populate_pfs(const Dataset& dataset, const PfsLayouts& layouts, ObjectStores& ost_stores) {
  for (const DatasetFile& f : dataset.files()) {
    auto it = layouts.find(f.path);
    if (it == layouts.end()) return Status::not_found("no pfs layout for file " + f.path);
    if (Status s = put_all(pfs_objects(it->second, f.path, f.size_bytes), ost_stores, "ost");
        !s.ok()) {
      return s;
    }
  }
  return Status::ok_status();
}

Status populate_nfs(const Dataset& dataset, ObjectStores& head_stores) {
  const auto heads = static_cast<int32_t>(head_stores.size());
  if (heads == 0 || head_stores.begin()->first != 0 || head_stores.rbegin()->first != heads - 1) {
    return Status::invalid_argument("nfs: head stores must be keyed 0 .. n-1");
  }
  for (const DatasetFile& f : dataset.files()) {
    const std::vector<StoredObjectSpec> objects{
        StoredObjectSpec{f.path, f.size_bytes, {nfs_head_of(f.path, heads)}}};
    if (Status s = put_all(objects, head_stores, "nfs"); !s.ok()) return s;
  }
  return Status::ok_status();
}

}  // namespace granary::services

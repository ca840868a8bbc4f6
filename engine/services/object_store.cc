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

namespace granary::services {

DatasetObjectIndex::DatasetObjectIndex(const Dataset& dataset, Naming naming, layout::RbdLayout rbd,
                                       const PfsLayouts* pfs_layouts)
    : dataset_(dataset), naming_(naming), rbd_(rbd), pfs_layouts_(pfs_layouts) {
  GRANARY_CHECK(naming != Naming::kPfs || pfs_layouts != nullptr);
}

Result<StoredObject> UnionObjectIndex::find(std::string_view name) const {
  for (const ObjectIndex* index : indexes_) {
    Result<StoredObject> found = index->find(name);
    if (found.ok() || found.status().code() != Status::Code::kNotFound) return found;
  }
  return Status::not_found("no object '" + std::string(name) + "'");
}

Result<StoredObject> DatasetObjectIndex::find(std::string_view name) const {
  auto unknown = [&] { return Status::not_found("no object '" + std::string(name) + "'"); };
  // The file part: "<dataset>/file_<digits>".
  const std::string prefix = dataset_.spec().name + "/file_";
  if (name.substr(0, prefix.size()) != prefix) return unknown();
  size_t end = prefix.size();
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == prefix.size()) return unknown();
  const std::string_view digits = name.substr(prefix.size(), end - prefix.size());
  uint64_t index = 0;
  for (char c : digits) index = index * 10 + static_cast<uint64_t>(c - '0');
  if (index >= dataset_.files().size()) return unknown();
  const DatasetFile& file = dataset_.files()[index];
  if (file.path.size() != end) return unknown();  // e.g. leading zeros that do not match
  const std::string_view rest = name.substr(end);
  switch (naming_) {
    case Naming::kNfs:
      if (!rest.empty()) return unknown();
      return StoredObject{0, file.size_bytes};
    case Naming::kRados: {
      if (rest.size() != 17 || rest[0] != '.') return unknown();
      uint64_t object_no = 0;
      for (char c : rest.substr(1)) {
        const int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (v < 0) return unknown();
        object_no = object_no * 16 + static_cast<uint64_t>(v);
      }
      if (object_no >= rbd_.num_objects(file.size_bytes)) return unknown();
      // The object's size: up to its last byte that holds file data (ranges come in object
      // order, so a range's object offset is the length of the ranges before it).
      auto images = rbd_.object_to_image(object_no, 0, rbd_.spec().object_size_bytes);
      if (!images.ok()) return images.status();
      uint64_t size = 0, object_offset = 0;
      for (const layout::ByteRange& r : *images) {
        if (r.offset_bytes < file.size_bytes) {
          size = object_offset + std::min(r.length_bytes, file.size_bytes - r.offset_bytes);
        }
        object_offset += r.length_bytes;
      }
      if (size == 0) return unknown();
      return StoredObject{0, size};
    }
    case Naming::kPfs: {
      constexpr std::string_view kStripe = ".stripe";
      if (rest.substr(0, kStripe.size()) != kStripe || rest.size() == kStripe.size())
        return unknown();
      uint64_t stripe = 0;
      for (char c : rest.substr(kStripe.size())) {
        if (c < '0' || c > '9') return unknown();
        stripe = stripe * 10 + static_cast<uint64_t>(c - '0');
      }
      auto it = pfs_layouts_->find(file.path);
      if (it == pfs_layouts_->end() || stripe >= it->second.stripe_count()) return unknown();
      const uint64_t size =
          it->second.object_size_bytes(file.size_bytes, static_cast<uint32_t>(stripe));
      return StoredObject{0, size};
    }
  }
  return unknown();
}

}  // namespace granary::services

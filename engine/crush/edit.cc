#include "engine/crush/edit.h"

#include <set>

namespace granary::crush {

Result<int32_t> add_bucket_like(CrushMap& map, std::string_view like, const std::string& new_name) {
  auto like_id = map.item_id(like);
  if (!like_id || *like_id >= 0 || map.is_shadow(*like_id)) {
    return Status::invalid_argument("no bucket named '" + std::string(like) + "' to copy");
  }
  const Bucket model = *map.bucket(*like_id);
  for (int32_t item : model.items) {
    if (item < 0) {
      return Status::invalid_argument(
          "bucket '" + std::string(like) +
          "' holds buckets; only a bucket of devices (a host) can be copied");
    }
  }
  const auto parent = map.parent_of(*like_id);

  // New devices after the highest id in use, named osd.N.
  Bucket b;
  b.type = model.type;
  b.alg = model.alg;
  b.hash = model.hash;
  int32_t next = map.max_devices();
  for (size_t i = 0; i < model.items.size(); ++i, ++next) {
    const auto cls = map.device_class(model.items[i]);
    const std::string cls_name = cls ? map.class_names().at(*cls) : std::string();
    if (Status s = map.add_device(next, "osd." + std::to_string(next), cls_name); !s.ok()) return s;
    b.items.push_back(next);
    b.item_weights.push_back(model.item_weights[i]);
  }
  // The lowest free bucket id that no shadow bucket has claimed.
  std::set<int32_t> reserved;
  for (const auto& [orig, per_class] : map.class_bucket_ids()) {
    for (const auto& [c, id] : per_class) reserved.insert(id);
  }
  int32_t id = -1;
  while (map.bucket_exists(id) || reserved.count(id)) --id;
  b.id = id;
  if (Status s = map.add_bucket(std::move(b), new_name); !s.ok()) return s;
  if (parent) {
    if (Status s = map.add_bucket_item(*parent, id, 0); !s.ok()) return s;
    if (Status s = map.set_item_weight_up_tree(id, map.bucket(id)->weight); !s.ok()) return s;
  }
  if (!map.class_names().empty()) {
    if (Status s = map.populate_classes(); !s.ok()) return s;
  }
  map.finalize();
  return id;
}

}  // namespace granary::crush

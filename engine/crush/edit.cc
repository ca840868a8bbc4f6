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

Result<CrushMap> generate_host_map(const GeneratedMapSpec& spec) {
  if (spec.hosts < 1 || spec.devices_per_host < 1) {
    return Status::invalid_argument(
        "a generated CRUSH map needs at least one host and one device per host");
  }
  // Sizes first (crush_map.h's limits), before anything is built or a product can overflow.
  const uint64_t devices = uint64_t(spec.hosts) * uint64_t(spec.devices_per_host);
  if (devices > uint64_t{kMaxDeviceId} + 1) {
    return Status::invalid_argument(
        "expected a generated CRUSH map of at most " + std::to_string(kMaxDeviceId + 1) +
        " devices, found " + std::to_string(spec.hosts) + " hosts x " +
        std::to_string(spec.devices_per_host) + " devices = " + std::to_string(devices));
  }
  const uint64_t buckets = (uint64_t(spec.hosts) + 1) * (spec.device_class.empty() ? 1 : 2);
  if (buckets > uint64_t(-int64_t{kMinBucketId})) {
    return Status::invalid_argument(
        "expected a generated CRUSH map of at most " + std::to_string(-int64_t{kMinBucketId}) +
        " buckets (hosts + root, twice with a device class), found " + std::to_string(buckets));
  }
  if (uint64_t{spec.device_weight} * devices > kMaxBucketWeight) {
    return Status::invalid_argument("the generated CRUSH map would weigh more than 65535");
  }
  std::vector<GeneratedHost> hosts(static_cast<size_t>(spec.hosts));
  int32_t osd = 0;
  for (int h = 0; h < spec.hosts; ++h) {
    hosts[h].name = spec.host_prefix + std::to_string(h);
    for (int d = 0; d < spec.devices_per_host; ++d)
      hosts[h].devices.emplace_back(osd++, spec.device_weight);
  }
  return generate_map_of_hosts(hosts, spec.device_class);
}

namespace {

// generate_map_of_hosts' checks, before anything is built.
Status check_generated_hosts(const std::vector<GeneratedHost>& hosts, bool with_class) {
  if (hosts.empty()) return Status::invalid_argument("a generated CRUSH map needs a host");
  if ((hosts.size() + 1) * (with_class ? 2 : 1) > uint64_t(-int64_t{kMinBucketId})) {
    return Status::invalid_argument("a generated CRUSH map of " + std::to_string(hosts.size()) +
                                    " hosts has too many buckets");
  }
  std::set<int32_t> ids;
  std::set<std::string> names;
  uint64_t total = 0;
  for (const GeneratedHost& h : hosts) {
    if (h.name.empty() || !names.insert(h.name).second) {
      return Status::invalid_argument("host name \"" + h.name + "\" is empty or repeated");
    }
    if (h.devices.empty()) return Status::invalid_argument("host " + h.name + " has no device");
    for (const auto& [id, weight] : h.devices) {
      if (id < 0 || id > kMaxDeviceId || !ids.insert(id).second) {
        return Status::invalid_argument("host " + h.name + ": device id " + std::to_string(id) +
                                        " is repeated or outside 0.." +
                                        std::to_string(kMaxDeviceId));
      }
      if (weight == 0) {
        return Status::invalid_argument("host " + h.name + ": osd." + std::to_string(id) +
                                        " has weight 0");
      }
      total += weight;
    }
  }
  if (total > kMaxBucketWeight) {
    return Status::invalid_argument("the generated CRUSH map would weigh more than 65535");
  }
  return Status();
}

}  // namespace

Result<CrushMap> generate_map_of_hosts(const std::vector<GeneratedHost>& hosts,
                                       const std::string& device_class) {
  if (Status s = check_generated_hosts(hosts, !device_class.empty()); !s.ok()) return s;
  CrushMap map;
  map.set_tunables(*Tunables::profile("optimal"));
  const char* types[] = {"osd", "host", "chassis",    "rack", "row",    "pdu",
                         "pod", "room", "datacenter", "zone", "region", "root"};
  for (int32_t i = 0; i < 12; ++i) {
    if (Status s = map.add_type(i, types[i]); !s.ok()) return s;
  }
  Bucket root;
  root.id = -1;
  root.type = 11;
  root.alg = BucketAlg::kStraw2;
  for (size_t h = 0; h < hosts.size(); ++h) {
    Bucket host;
    host.id = -2 - static_cast<int32_t>(h);
    host.type = 1;
    host.alg = BucketAlg::kStraw2;
    uint32_t host_weight = 0;
    for (const auto& [id, weight] : hosts[h].devices) {
      if (Status s = map.add_device(id, "osd." + std::to_string(id), device_class); !s.ok())
        return s;
      host.items.push_back(id);
      host.item_weights.push_back(weight);
      host_weight += weight;
    }
    root.items.push_back(host.id);
    root.item_weights.push_back(host_weight);
    if (Status s = map.add_bucket(std::move(host), hosts[h].name); !s.ok()) return s;
  }
  if (Status s = map.add_bucket(std::move(root), "default"); !s.ok()) return s;
  Rule rep;
  rep.id = 0;
  rep.name = "replicated_host";
  rep.steps = {{RuleOp::kTake, -1, 0}, {RuleOp::kChooseLeafFirstN, 0, 1}, {RuleOp::kEmit, 0, 0}};
  if (Status s = map.add_rule(rep); !s.ok()) return s;
  Rule ec;
  ec.id = 1;
  ec.name = "erasure_host";
  ec.type = kRuleErasure;
  ec.min_size = 3;
  ec.max_size = 20;
  ec.steps = {{RuleOp::kSetChooseLeafTries, 5, 0},
              {RuleOp::kSetChooseTries, 100, 0},
              {RuleOp::kTake, -1, 0},
              {RuleOp::kChooseLeafIndep, 0, 1},
              {RuleOp::kEmit, 0, 0}};
  if (Status s = map.add_rule(ec); !s.ok()) return s;
  if (!device_class.empty()) {
    if (Status s = map.populate_classes(); !s.ok()) return s;
  }
  map.finalize();
  return map;
}

}  // namespace granary::crush

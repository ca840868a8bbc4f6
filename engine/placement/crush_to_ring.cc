#include "engine/placement/crush_to_ring.h"

#include <functional>
#include <map>
#include <set>

namespace granary::placement {

Result<RingBuilder> ring_builder_from_crush(const crush::CrushMap& map, int32_t rule_id,
                                            const RingOptions& options) {
  const crush::Rule* rule = map.rule(rule_id);
  if (!rule) return Status::invalid_argument("the CRUSH map has no rule " + std::to_string(rule_id));
  auto builder = RingBuilder::create(options);
  if (!builder.ok()) return builder;
  std::map<int32_t, int32_t> zone_ids;  // grandparent bucket -> dense zone number
  std::set<int32_t> seen;
  // Walk each take item; remember the path so that a device's host and zone are known.
  std::vector<int32_t> path;
  Status status;
  std::function<void(int32_t, uint32_t)> walk = [&](int32_t item, uint32_t weight) {
    if (!status.ok()) return;
    if (item >= 0) {
      if (!seen.insert(item).second) return;
      RingDevice d;
      d.id = item;
      d.weight = static_cast<double>(weight) / crush::kWeightOne;
      const int32_t host = path.empty() ? item : path.back();
      const int32_t zone = path.size() >= 2 ? path[path.size() - 2] : 0;
      d.zone = zone_ids.emplace(zone, static_cast<int32_t>(zone_ids.size())).first->second;
      const std::string* host_name = path.empty() ? nullptr : map.item_name(host);
      d.host = host_name ? *host_name : "device" + std::to_string(item);
      // A shadow (device-class) host is named "host~class": use the real host's name.
      if (auto tilde = d.host.find('~'); tilde != std::string::npos) d.host.resize(tilde);
      if (d.weight > 0) status = builder->add_device(d);
      return;
    }
    const crush::Bucket* b = map.bucket(item);
    if (!b) return;
    path.push_back(item);
    for (int32_t i = 0; i < b->size(); ++i) walk(b->items[i], b->item_weights[i]);
    path.pop_back();
  };
  for (const crush::RuleStep& s : rule->steps) {
    if (s.op == crush::RuleOp::kTake) walk(s.arg1, crush::kWeightOne);
  }
  if (!status.ok()) return status;
  return builder;
}

}  // namespace granary::placement

#include "engine/placement/crush_to_ring.h"

#include <map>
#include <set>

namespace granary::placement {

Result<RingBuilder> ring_builder_from_crush(const crush::CrushMap& map, int32_t rule_id,
                                            const RingOptions& options) {
  const crush::Rule* rule = map.rule(rule_id);
  if (!rule)
    return Status::invalid_argument("the CRUSH map has no rule " + std::to_string(rule_id));
  auto builder = RingBuilder::create(options);
  if (!builder.ok()) return builder;
  std::map<int32_t, int32_t> zone_ids;  // grandparent bucket -> dense zone number
  std::set<int32_t> seen;
  Status status;
  crush::for_each_rule_device(
      map, *rule, [&](int32_t item, uint32_t weight, const std::vector<int32_t>& path) {
        if (!status.ok() || !seen.insert(item).second) return;
        RingDevice d;
        d.id = item;
        d.weight = static_cast<double>(weight) / crush::kWeightOne;
        if (d.weight <= 0) return;
        const int32_t zone = path.size() >= 2 ? path[path.size() - 2] : 0;
        d.zone = zone_ids.emplace(zone, static_cast<int32_t>(zone_ids.size())).first->second;
        const std::string* host_name = path.empty() ? nullptr : map.item_name(path.back());
        d.host = host_name ? *host_name : "device" + std::to_string(item);
        // A shadow (device-class) host is named "host~class": use the real host's name.
        if (auto tilde = d.host.find('~'); tilde != std::string::npos) d.host.resize(tilde);
        status = builder->add_device(d);
      });
  if (!status.ok()) return status;
  return builder;
}

}  // namespace granary::placement

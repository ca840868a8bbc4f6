// What-if edits of a CRUSH map, the way an operator would make them with Ceph's tools.
// Functions mutate the map they are given (copy it first to keep the original); not
// thread-safe on that map.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/crush/crush_map.h"
#include "engine/status.h"

namespace granary::crush {

// Adds a new bucket shaped like the existing bucket `like` (same type, algorithm, number of
// devices, device weights and classes), under the same parent, with new devices numbered
// from max_devices(). Ancestor weights grow accordingly and device-class shadow trees are
// rebuilt. Returns the new bucket's id. `like` must hold devices only (a host).
Result<int32_t> add_bucket_like(CrushMap& map, std::string_view like, const std::string& new_name);

struct GeneratedMapSpec {
  int hosts = 1;
  int devices_per_host = 1;
  uint32_t device_weight = kWeightOne;  // 16.16; Ceph's convention is the capacity in TiB
  std::string device_class;             // empty: no class
  std::string host_prefix = "storage";  // hosts are named <prefix><i>
};

// A map as `ceph osd crush` builds one for a simple cluster: root "default" (straw2) holding
// hosts (straw2) holding devices osd.<n> numbered host by host; jewel tunables; rule 0
// "replicated_host" (chooseleaf firstn 0 type host) and rule 1 "erasure_host"
// (set_chooseleaf_tries 5, set_choose_tries 100, chooseleaf indep 0 type host).
Result<CrushMap> generate_host_map(const GeneratedMapSpec& spec);

// One host of generate_map_of_hosts: its bucket's name and its devices (id, 16.16 weight).
struct GeneratedHost {
  std::string name;
  std::vector<std::pair<int32_t, uint32_t>> devices;
};

// The same map (root "default", the two rules, optimal tunables) for hosts of any sizes and
// devices of any weights and ids (a real-mode cluster's hosts and OSDs, realmode/README.md).
// Errors: no host, a host without devices, a device id repeated or outside 0..kMaxDeviceId, a
// weight of 0, a host name repeated or empty, a total weight above 65535.
Result<CrushMap> generate_map_of_hosts(const std::vector<GeneratedHost>& hosts,
                                       const std::string& device_class = "");

}  // namespace granary::crush

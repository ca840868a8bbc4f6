// What-if edits of a CRUSH map, the way an operator would make them with Ceph's tools.
// Functions mutate the map they are given (copy it first to keep the original); not
// thread-safe on that map.
#pragma once

#include <string>
#include <string_view>

#include "engine/crush/crush_map.h"
#include "engine/status.h"

namespace granary::crush {

// Adds a new bucket shaped like the existing bucket `like` (same type, algorithm, number of
// devices, device weights and classes), under the same parent, with new devices numbered
// from max_devices(). Ancestor weights grow accordingly and device-class shadow trees are
// rebuilt. Returns the new bucket's id. `like` must hold devices only (a host).
Result<int32_t> add_bucket_like(CrushMap& map, std::string_view like, const std::string& new_name);

}  // namespace granary::crush

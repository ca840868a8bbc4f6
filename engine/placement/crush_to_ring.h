// Builds a consistent-hash ring over the devices a CRUSH rule can reach, so that the two
// placement policies can be compared on the same hardware: each device keeps its CRUSH weight,
// its host is its parent bucket, its zone the parent's parent (a rack, typically). Not
// thread-safe on the map (read only) is not an issue: the map is only read.
#pragma once

#include <cstdint>
#include <string>

#include "engine/crush/crush_map.h"
#include "engine/placement/ring.h"
#include "engine/status.h"

namespace granary::placement {

// A RingBuilder holding every device under rule `rule`'s take steps (device ids kept), not
// yet rebalanced.
Result<RingBuilder> ring_builder_from_crush(const crush::CrushMap& map, int32_t rule,
                                            const RingOptions& options);

}  // namespace granary::placement

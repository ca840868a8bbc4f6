// Placement quality figures for any Placement policy:
//  - utilisation: shards per device against the weight-proportional ideal (mean, standard
//    deviation, extremes), groups left short of devices, failure-domain violations;
//  - movement: shards that change device between two placements (an OSD marked out, a host
//    added), against the minimum any placement would have to move.
// Pure functions over the policies (which they drive, so not thread-safe on the same
// objects).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/placement/placement.h"

namespace granary::placement {

struct UtilizationReport {
  uint32_t groups = 0;
  int replicas = 0;
  uint64_t shards = 0;               // placed shards (holes excluded)
  uint64_t short_groups = 0;         // groups that got fewer devices than replicas
  uint64_t domain_violations = 0;    // groups with two shards in one failure domain
  int32_t devices_with_target = 0;   // devices whose ideal share is > 0
  std::vector<uint64_t> per_device;  // shards on each device
  std::vector<double> expected;      // ideal shards on each device (share * shards)
  // Over devices with an ideal share: deviation (actual / ideal - 1).
  double deviation_stddev = 0;
  double deviation_max = 0;  // most over-full
  double deviation_min = 0;  // most under-full (negative)
  int32_t most_loaded = -1;
  int32_t least_loaded = -1;
  // Shards on devices that should hold none (out, or outside the rule's tree).
  uint64_t shards_off_target = 0;
};

UtilizationReport analyze_utilization(Placement& placement);

struct MovementReport {
  uint32_t groups = 0;
  uint64_t shards_before = 0;
  // Shards that must be copied to a device that did not hold them: for positional
  // (erasure) placements every position whose device changed, otherwise every device of the
  // new set that was not in the old set.
  uint64_t shards_moved = 0;
  uint64_t groups_changed = 0;
  // The least any placement must move: the shift of the ideal distribution,
  // shards * sum over devices of max(0, share_after - share_before).
  double minimum_moved = 0;
  // shards_moved / minimum_moved (1.0 is optimal); 0 when nothing had to move.
  double ratio() const { return minimum_moved > 0 ? shards_moved / minimum_moved : 0.0; }
};

struct MovementOptions {
  bool positional = false;  // erasure coding: a shard's position matters
};

// Compares two placements of the same groups (same num_groups()).
MovementReport compare_placements(Placement& before, Placement& after,
                                  const MovementOptions& options);

}  // namespace granary::placement

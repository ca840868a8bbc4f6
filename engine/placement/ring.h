// The consistent-hash ring: Granary's second placement policy, modelled on OpenStack Swift's
// ring and RingBuilder (written from the algorithm's description, not from Swift's code).
//
// Lookup (Ring): an object name hashes to a 32-bit value whose top part_power bits are its
// partition; a fixed table replica2part2dev[replica][partition] gives the device of each
// replica. Swift hashes the object path with md5 (plus a cluster-wide salt); Granary uses
// crush::str_hash_rjenkins (Ceph's object-name hash), so no crypto dependency is needed. The
// partition of a name depends only on part_power, never on the devices.
//
// Building (RingBuilder) is separate from lookup: the builder holds the devices and the
// table, and rebalance() changes the table; build() snapshots it as an immutable Ring.
//
// Rebalance algorithm. A device's dispersion key for a replica of partition p is (p's other
// replicas in the device's region, in its zone, on its host), compared lexicographically: lower
// is further apart. "As widely as possible" means no replica has a device with a lower key.
//  1. Targets. Weights become 16.16 fixed point. The P * R partition-replicas (P =
//     2^part_power, R = replicas) are split down the tier tree region > zone > host > device.
//     Dispersion bounds each node: in the widest spread of one partition, a node holds between
//     `fewest` and `most` replicas (a device at most 1); e.g. with R zones every zone holds
//     exactly one. A node's total is its weight-proportional share of its parent's total,
//     clamped to [P * fewest, P * most], the surplus re-split by weight over the unclamped
//     siblings; integers by largest remainder, ties to the lower index. Integer arithmetic
//     throughout. Dispersion therefore wins over weight: a zone with more than 1/R of the weight
//     in a ring of R zones still holds one replica of each partition (Ceph's choice; Swift's
//     "overload" knob is not modelled). When the weights allow the widest spread, each target
//     is the weight-proportional share up to rounding (one rounding per tier, so under 2 off
//     in theory; within 0.5 in the tests).
//  2. Replicas on devices that were removed or have weight 0 are unassigned.
//  3. Partition by partition: each unassigned replica goes to the device with the lowest key,
//     then the furthest below its target, remaining ties drawn from the caller's Random; then,
//     while some replica has a device with a lower key (after a device or host was added), the
//     most crowded such replica moves to the best device the same way.
//  4. Balance. Replicas move from devices over target to devices under it, never to a higher
//     key: directly where possible (in an order drawn from the Random), otherwise along a chain
//     over devices at target (a breadth-first augmenting path), until every device is on target
//     or no such move exists.
//  Nothing else moves: a replica stays unless its device is gone, its partition can be spread
//  wider, or its device is over target. Rebalancing again without a change moves nothing.
//
// Cost: a first build is O(P * R * devices * R): about 2 s for 2^16 partitions x 3 over 1,024
// devices; a rebalance after a change is dominated by a walk over P * R * hosts.
//
// Thread-safety: RingBuilder is a plain value, not thread-safe. A Ring is immutable after
// build(); as for every Placement, use one object per thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/placement/placement.h"
#include "engine/random.h"
#include "engine/status.h"

namespace granary::placement {

// Device ids range over [0, kRingMaxDeviceId].
constexpr int32_t kRingMaxDeviceId = (1 << 24) - 1;
// Largest accepted weight (weights are stored as 16.16 fixed point).
constexpr double kRingMaxWeight = 1e6;

struct RingDevice {
  int32_t id = 0;
  // Relative capacity, >= 0 (0: drain, holds nothing after the next rebalance). Quantized to
  // 1/65536; a positive weight below that is an error.
  double weight = 1.0;
  int32_t region = 0;  // >= 0
  int32_t zone = 0;    // >= 0; zones are numbered within their region
  std::string host;    // non-empty; hosts are named within their zone
};

struct RingOptions {
  int part_power = 10;  // 2^part_power partitions, 1..24
  int replicas = 3;     // 1..64, at most the number of devices with nonzero weight
};

// What one rebalance did. Counts are partition-replicas.
struct RebalanceReport {
  int64_t placed = 0;            // had no usable device (new ring, removed or drained device)
  int64_t dispersion_moves = 0;  // moved to spread a partition's replicas further apart
  int64_t balance_moves = 0;     // moved from a device over its target to one under it
  int64_t changed = 0;           // entries of the table that differ from before
  int64_t max_off_target = 0;    // largest |assigned - target| over the devices afterwards
};

class Ring;

class RingBuilder {
 public:
  // Checks part_power and replicas. The table starts empty (every entry kNoDevice).
  static Result<RingBuilder> create(const RingOptions& options);

  // Errors: id out of range or already present, weight negative / not finite / too small /
  // too large, region or zone negative, empty host.
  Status add_device(const RingDevice& device);
  // The device's replicas are reassigned by the next rebalance. Error if the id is unknown.
  Status remove_device(int32_t id);
  Status set_weight(int32_t id, double weight);

  // Recomputes targets and moves as few partition-replicas as possible (see the header
  // comment). Errors: no devices, fewer devices with nonzero weight than replicas. On error
  // the table is unchanged.
  Result<RebalanceReport> rebalance(Random& random);

  // An immutable snapshot of the current table and devices. Error before the first rebalance.
  // Entries on devices removed or drained since then are skipped by Ring::devices_of.
  Result<Ring> build() const;

  const RingOptions& options() const { return options_; }
  uint32_t num_partitions() const { return 1u << options_.part_power; }
  // The devices by id.
  const std::map<int32_t, RingDevice>& devices() const { return devices_; }
  // replica2part2dev()[replica][partition]: a device id, or kNoDevice before the first rebalance.
  const std::vector<std::vector<int32_t>>& replica2part2dev() const { return table_; }
  // Partition-replicas each device should hold, from the last rebalance (by device id;
  // absent ids are 0).
  const std::map<int32_t, int64_t>& target_counts() const { return targets_; }
  // Partition-replicas each device holds now, by device id (devices holding none are absent).
  std::map<int32_t, int64_t> assigned_counts() const;

 private:
  explicit RingBuilder(const RingOptions& options);

  RingOptions options_;
  std::map<int32_t, RingDevice> devices_;
  std::map<int32_t, uint64_t> weights_16_;  // 16.16 fixed point, by device id
  std::vector<std::vector<int32_t>> table_;
  std::map<int32_t, int64_t> targets_;
  bool rebalanced_ = false;
};

// The lookup side: an immutable replica2part2dev table. Build one with RingBuilder::build().
class Ring final : public Placement {
 public:
  // "ring 2^10 partitions x 3 replicas, 12 devices in 3 zones"
  std::string describe() const override;
  uint32_t num_groups() const override { return 1u << part_power_; }
  // Top part_power bits of str_hash_rjenkins(object_name).
  uint32_t group_of(std::string_view object_name) const override;
  // The replicas' devices in replica order (primary first), skipping devices that were
  // removed or drained (weight 0) after the table was computed.
  void devices_of(uint32_t partition, std::vector<int32_t>& out) override;
  int replicas() const override { return static_cast<int>(table_.size()); }
  int32_t device_id_bound() const override { return static_cast<int32_t>(weights_16_.size()); }
  // Weight / total weight for each device id (0 for absent or drained devices). Where
  // dispersion overrides weight, the table deviates; RingBuilder::target_counts() has the
  // counts it actually aims for.
  std::vector<double> target_shares() const override;
  // The device's zone as an opaque id, (region << 32) | zone; -1 for unknown devices.
  int64_t failure_domain(int32_t device) const override;

  int part_power() const { return part_power_; }
  const std::vector<std::vector<int32_t>>& replica2part2dev() const { return table_; }

 private:
  friend class RingBuilder;
  Ring() = default;

  int part_power_ = 0;
  std::vector<std::vector<int32_t>> table_;
  std::vector<uint64_t> weights_16_;  // by device id; 0 = absent or drained
  std::vector<int64_t> zone_of_;      // by device id; -1 = absent
};

}  // namespace granary::placement

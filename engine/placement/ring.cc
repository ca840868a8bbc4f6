#include "engine/placement/ring.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

#include "engine/crush/hash.h"

namespace granary::placement {

namespace {

using Int128 = __int128;

constexpr int kLevelRegion = 0;
constexpr int kLevelZone = 1;
constexpr int kLevelHost = 2;
constexpr int kLevelDevice = 3;

std::string device_name(int32_t id) {
  return "device " + std::to_string(id);
}

std::string format_weight(double weight) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", weight);
  return buf;
}

Result<uint64_t> weight_to_16_16(int32_t id, double weight) {
  if (!std::isfinite(weight) || weight < 0) {
    return Status::invalid_argument(
        device_name(id) + ": weight must be a finite number >= 0, got " + format_weight(weight));
  }
  if (weight > kRingMaxWeight) {
    return Status::invalid_argument(device_name(id) + ": weight must be at most " +
                                    format_weight(kRingMaxWeight) + ", got " +
                                    format_weight(weight));
  }
  const auto w = static_cast<uint64_t>(std::llround(weight * 65536.0));
  if (weight > 0 && w == 0) {
    return Status::invalid_argument(device_name(id) + ": weight " + format_weight(weight) +
                                    " is below the 1/65536 resolution of ring weights");
  }
  return w;
}

// One usable device (nonzero weight) as the rebalance sees it.
struct UsableDevice {
  int32_t id;
  int32_t region;
  int32_t zone;
  const std::string* host;
  uint64_t weight_16;
};

bool same_node(const UsableDevice& a, const UsableDevice& b, int level) {
  switch (level) {
    case kLevelRegion:
      return a.region == b.region;
    case kLevelZone:
      return a.region == b.region && a.zone == b.zone;
    case kLevelHost:
      return a.region == b.region && a.zone == b.zone && *a.host == *b.host;
    default:
      return a.id == b.id;
  }
}

// The children of the node at `level` holding devs[begin, end), as ranges of devs.
std::vector<std::pair<size_t, size_t>> children_of(const std::vector<UsableDevice>& devs,
                                                   size_t begin, size_t end, int level) {
  std::vector<std::pair<size_t, size_t>> children;
  for (size_t i = begin; i < end;) {
    size_t j = i;
    while (j < end && same_node(devs[i], devs[j], level + 1)) ++j;
    children.emplace_back(i, j);
    i = j;
  }
  return children;
}

// Dispersion keys, as in Rebalancer::key: a lower key is further apart. The keys of the
// replicas of one partition that a node (at `level`, devices devs[begin, end)) holds, in the
// order the widest spread fills it: for its j-th replica (j = 0, 1, ...), the number its child
// already holds in the top 8 bits, then that child's key for its own replica one level down.
// Nondecreasing; only the first `limit` matter.
std::vector<uint32_t> replica_keys(const std::vector<UsableDevice>& devs, size_t begin, size_t end,
                                   int level, size_t limit) {
  if (level == kLevelDevice) return {0};
  const int shift = 8 * (kLevelDevice - 1 - level);  // bits taken by a child's keys
  std::vector<uint32_t> keys;
  for (const auto& [b, e] : children_of(devs, begin, end, level)) {
    const std::vector<uint32_t> child = replica_keys(devs, b, e, level + 1, limit);
    for (uint32_t j = 0; j < child.size(); ++j) keys.push_back((j << shift) | child[j]);
  }
  std::sort(keys.begin(), keys.end());
  if (keys.size() > limit) keys.resize(limit);
  return keys;
}

// Spreading m replicas of one partition over children whose j-th replica has key keys[i][j]
// as widely as possible takes the m smallest keys; children tied for the last ones may or may
// not get one. Returns the fewest (fewest=true) or the most replicas each child gets.
std::vector<int64_t> widest_split(int64_t m, const std::vector<std::vector<uint32_t>>& keys,
                                  bool fewest) {
  std::vector<int64_t> out(keys.size(), 0);
  if (m == 0) return out;
  std::vector<uint32_t> all;
  for (const auto& k : keys) all.insert(all.end(), k.begin(), k.end());
  GRANARY_CHECK(static_cast<int64_t>(all.size()) >= m);
  std::nth_element(all.begin(), all.begin() + (m - 1), all.end());
  const uint32_t last = all[m - 1];
  std::vector<int64_t> tied(keys.size(), 0);
  int64_t below = 0, tied_total = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (uint32_t k : keys[i]) {
      out[i] += k < last;
      tied[i] += k == last;
    }
    below += out[i];
    tied_total += tied[i];
  }
  const int64_t need = m - below;  // 1..tied_total of the tied keys are taken
  for (size_t i = 0; i < keys.size(); ++i) {
    out[i] +=
        fewest ? std::max<int64_t>(0, need - (tied_total - tied[i])) : std::min(tied[i], need);
  }
  return out;
}

// Integers x[i] in [lo[i], hi[i]] summing to `total`, proportional to weight[i] (> 0) as far as
// the bounds allow: x = clamp(lambda * weight, lo, hi) for the lambda that makes the sum right,
// rounded by largest remainder (ties to the lower index).
std::vector<int64_t> apportion(int64_t total, const std::vector<uint64_t>& weight,
                               const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  const size_t n = weight.size();
  GRANARY_CHECK(std::accumulate(lo.begin(), lo.end(), int64_t{0}) <= total);
  GRANARY_CHECK(std::accumulate(hi.begin(), hi.end(), int64_t{0}) >= total);
  std::vector<int64_t> x(n, 0);
  std::vector<bool> fixed(n, false);
  for (;;) {
    int64_t rest = total;
    Int128 free_weight = 0;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) {
        rest -= x[i];
      } else {
        free_weight += weight[i];
      }
    }
    if (free_weight == 0) {
      GRANARY_CHECK(rest == 0);
      return x;
    }
    // ideal[i] = rest * weight[i] / free_weight; compare in units of 1/free_weight.
    Int128 excess = 0;
    Int128 deficit = 0;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      const Int128 scaled = static_cast<Int128>(rest) * weight[i];
      if (scaled > static_cast<Int128>(hi[i]) * free_weight) {
        excess += scaled - static_cast<Int128>(hi[i]) * free_weight;
      } else if (scaled < static_cast<Int128>(lo[i]) * free_weight) {
        deficit += static_cast<Int128>(lo[i]) * free_weight - scaled;
      }
    }
    if (excess == 0 && deficit == 0) {
      std::vector<std::pair<Int128, size_t>> remainders;  // (-remainder, index)
      int64_t left = rest;
      for (size_t i = 0; i < n; ++i) {
        if (fixed[i]) continue;
        const Int128 scaled = static_cast<Int128>(rest) * weight[i];
        x[i] = static_cast<int64_t>(scaled / free_weight);
        left -= x[i];
        remainders.emplace_back(-(scaled % free_weight), i);
      }
      std::sort(remainders.begin(), remainders.end());
      GRANARY_CHECK(left >= 0 && left <= static_cast<int64_t>(remainders.size()));
      for (int64_t k = 0; k < left; ++k) ++x[remainders[k].second];
      return x;
    }
    // If clamping the over-full children leaves the sum short, lambda only grows, so they stay
    // clamped at hi; otherwise the under-full ones stay clamped at lo.
    const bool clamp_high = excess >= deficit;
    for (size_t i = 0; i < n; ++i) {
      if (fixed[i]) continue;
      const Int128 scaled = static_cast<Int128>(rest) * weight[i];
      if (clamp_high && scaled > static_cast<Int128>(hi[i]) * free_weight) {
        x[i] = hi[i];
        fixed[i] = true;
      } else if (!clamp_high && scaled < static_cast<Int128>(lo[i]) * free_weight) {
        x[i] = lo[i];
        fixed[i] = true;
      }
    }
  }
}

// Splits `total` partition-replicas over devs[begin, end), the devices of one node at `level`
// whose per-partition replica count lies in [fewest, most]; writes device targets.
void split_targets(const std::vector<UsableDevice>& devs, size_t begin, size_t end, int level,
                   int64_t total, int64_t fewest, int64_t most, int64_t partitions,
                   std::map<int32_t, int64_t>& targets) {
  if (level == kLevelDevice) {
    GRANARY_CHECK(end - begin == 1);
    targets[devs[begin].id] = total;
    return;
  }
  const int child_level = level + 1;
  const int shift = 8 * (kLevelDevice - 1 - level);
  const auto children = children_of(devs, begin, end, level);
  std::vector<std::vector<uint32_t>> keys;
  std::vector<uint64_t> weight;
  for (const auto& [b, e] : children) {
    std::vector<uint32_t> k = replica_keys(devs, b, e, child_level, static_cast<size_t>(most));
    for (uint32_t j = 0; j < k.size(); ++j) k[j] |= j << shift;
    keys.push_back(std::move(k));
    uint64_t w = 0;
    for (size_t i = b; i < e; ++i) w += devs[i].weight_16;
    weight.push_back(w);
  }
  const std::vector<int64_t> child_fewest = widest_split(fewest, keys, /*fewest=*/true);
  const std::vector<int64_t> child_most = widest_split(most, keys, /*fewest=*/false);
  std::vector<int64_t> lo(children.size());
  std::vector<int64_t> hi(children.size());
  for (size_t c = 0; c < children.size(); ++c) {
    lo[c] = child_fewest[c] * partitions;
    hi[c] = child_most[c] * partitions;
  }
  const std::vector<int64_t> x = apportion(total, weight, lo, hi);
  for (size_t c = 0; c < children.size(); ++c) {
    split_targets(devs, children[c].first, children[c].second, child_level, x[c], child_fewest[c],
                  child_most[c], partitions, targets);
  }
}

// The working state of one rebalance.
class Rebalancer {
 public:
  // A dispersion key: (other replicas in the same region, zone, host), packed so that a lower
  // key means further apart. kHoldsPartition: the device already holds another replica.
  static constexpr uint32_t kHoldsPartition = 0xffffffffu;

  Rebalancer(std::vector<std::vector<int32_t>>& table, const std::vector<UsableDevice>& devs,
             const std::map<int32_t, int64_t>& targets, int32_t id_bound, Random& random)
      : table_(table), devs_(devs), random_(random) {
    region_.assign(id_bound, -1);
    zone_.assign(id_bound, -1);
    host_.assign(id_bound, -1);
    target_.assign(id_bound, 0);
    assigned_.assign(id_bound, 0);
    int32_t r = -1, z = -1, h = -1;
    for (size_t i = 0; i < devs.size(); ++i) {
      if (i == 0 || !same_node(devs[i - 1], devs[i], kLevelRegion)) ++r;
      if (i == 0 || !same_node(devs[i - 1], devs[i], kLevelZone)) ++z;
      if (i == 0 || !same_node(devs[i - 1], devs[i], kLevelHost)) ++h;
      region_[devs[i].id] = r;
      zone_[devs[i].id] = z;
      host_[devs[i].id] = h;
      if (hosts_.size() <= static_cast<size_t>(h)) hosts_.push_back({devs[i].id, 0});
      ++hosts_[h].devices;
    }
    for (const auto& [id, t] : targets) target_[id] = t;
  }

  bool usable(int32_t dev) const {
    return dev >= 0 && dev < static_cast<int32_t>(region_.size()) && region_[dev] >= 0;
  }

  uint32_t key(uint32_t part, size_t skip_replica, int32_t dev) const {
    uint32_t in_region = 0, in_zone = 0, in_host = 0;
    for (size_t r = 0; r < table_.size(); ++r) {
      if (r == skip_replica) continue;
      const int32_t other = table_[r][part];
      if (other == kNoDevice) continue;
      if (other == dev) return kHoldsPartition;
      in_region += region_[other] == region_[dev];
      in_zone += zone_[other] == zone_[dev];
      in_host += host_[other] == host_[dev];
    }
    return (in_region << 16) | (in_zone << 8) | in_host;
  }

  // The lowest key any device offers replica `skip_replica` of `part`. The devices of a host
  // share their key, so this walks the hosts.
  uint32_t best_key(uint32_t part, size_t skip_replica) const {
    uint32_t best = kHoldsPartition;
    for (const Host& host : hosts_) {
      const int32_t dev = host.first_device;
      uint32_t in_region = 0, in_zone = 0, in_host = 0;
      for (size_t r = 0; r < table_.size(); ++r) {
        if (r == skip_replica) continue;
        const int32_t other = table_[r][part];
        if (other == kNoDevice) continue;
        in_region += region_[other] == region_[dev];
        in_zone += zone_[other] == zone_[dev];
        in_host += host_[other] == host_[dev];
      }
      // The other replicas are on distinct devices: they fill the host if as many as its devices.
      if (in_host >= host.devices) continue;
      best = std::min(best, (in_region << 16) | (in_zone << 8) | in_host);
    }
    return best;
  }

  int64_t wanted(int32_t dev) const { return target_[dev] - assigned_[dev]; }

  enum class Candidates { kAll, kUnderTarget };

  // The device for replica `replica` of `part` with the lowest key (at most max_key), then the
  // furthest below its target; ties drawn from the Random. kNoDevice if there is none.
  int32_t pick_device(uint32_t part, size_t replica, uint32_t max_key, Candidates candidates) {
    int32_t best = kNoDevice;
    uint32_t best_key = 0;
    int64_t best_wanted = 0;
    uint64_t ties = 0;
    for (const UsableDevice& d : devs_) {
      const int64_t w = wanted(d.id);
      if (candidates == Candidates::kUnderTarget && w <= 0) continue;
      const uint32_t k = key(part, replica, d.id);
      if (k == kHoldsPartition || k > max_key) continue;
      if (best == kNoDevice || k < best_key || (k == best_key && w > best_wanted)) {
        best = d.id;
        best_key = k;
        best_wanted = w;
        ties = 1;
      } else if (k == best_key && w == best_wanted && random_.uniform(++ties) == 0) {
        best = d.id;
      }
    }
    return best;
  }

  // Phase 2: unassigns the replicas on devices that are gone or drained.
  void unassign_unusable() {
    for (auto& part2dev : table_) {
      for (int32_t& dev : part2dev) {
        if (dev != kNoDevice && !usable(dev)) dev = kNoDevice;
        if (dev != kNoDevice) ++assigned_[dev];
      }
    }
  }

  // Phase 3, one partition at a time: places its unassigned replicas, then moves any replica
  // for which another device keeps the replicas further apart (the most crowded replica first,
  // among those the one on the device furthest over target), until none can improve.
  void place_and_disperse(RebalanceReport& report) {
    const size_t replicas = table_.size();
    for (uint32_t p = 0; p < table_[0].size(); ++p) {
      for (size_t r = 0; r < replicas; ++r) {
        if (table_[r][p] != kNoDevice) continue;
        const int32_t dev = pick_device(p, r, kHoldsPartition, Candidates::kAll);
        GRANARY_CHECK(dev != kNoDevice);
        table_[r][p] = dev;
        ++assigned_[dev];
        ++report.placed;
      }
      // Each move lowers the crowding of the partition; the bound only guards against a bug.
      for (size_t moves = 0; moves < replicas * replicas * 4; ++moves) {
        size_t worst = replicas;
        uint32_t worst_key = 0;
        for (size_t r = 0; r < replicas; ++r) {
          const int32_t dev = table_[r][p];
          const uint32_t current = key(p, r, dev);
          if (current == 0) continue;  // alone in its region: nothing is further apart
          if (worst < replicas &&
              (current < worst_key ||
               (current == worst_key && wanted(dev) >= wanted(table_[worst][p])))) {
            continue;
          }
          if (best_key(p, r) < current) {
            worst = r;
            worst_key = current;
          }
        }
        if (worst == replicas) break;
        const int32_t from = table_[worst][p];
        const int32_t to = pick_device(p, worst, kHoldsPartition, Candidates::kAll);
        move({p, worst}, from, to);
        ++report.dispersion_moves;
      }
    }
  }

  // Phase 4: moves replicas from devices over target to devices under it, never closer
  // together: direct moves while any helps, then one chain of moves through devices at their
  // target (an augmenting path), and again, until nothing helps or every device is on target.
  void balance(RebalanceReport& report) {
    for (;;) {
      while (direct_moves(report)) {
      }
      if (max_off_target() == 0 || !chain_move(report)) return;
    }
  }

  int64_t max_off_target() const {
    int64_t worst = 0;
    for (size_t d = 0; d < target_.size(); ++d) {
      worst = std::max(worst, std::abs(target_[d] - assigned_[d]));
    }
    return worst;
  }

 private:
  using Slot = std::pair<uint32_t, size_t>;  // (partition, replica)

  std::vector<std::vector<Slot>> slots_by_device(bool only_over) const {
    std::vector<std::vector<Slot>> slots(target_.size());
    for (size_t r = 0; r < table_.size(); ++r) {
      for (uint32_t p = 0; p < table_[r].size(); ++p) {
        const int32_t dev = table_[r][p];
        if (!only_over || wanted(dev) < 0) slots[dev].emplace_back(p, r);
      }
    }
    return slots;
  }

  void move(const Slot& slot, int32_t from, int32_t to) {
    GRANARY_CHECK(table_[slot.second][slot.first] == from);
    table_[slot.second][slot.first] = to;
    --assigned_[from];
    ++assigned_[to];
  }

  // One pass of moves from over-target devices straight to under-target ones. True if any.
  bool direct_moves(RebalanceReport& report) {
    std::vector<std::vector<Slot>> slots = slots_by_device(/*only_over=*/true);
    bool moved = false;
    for (const UsableDevice& over : devs_) {
      std::vector<Slot>& mine = slots[over.id];
      for (size_t i = mine.size(); i > 1; --i) std::swap(mine[i - 1], mine[random_.uniform(i)]);
      for (const Slot& slot : mine) {
        if (wanted(over.id) >= 0) break;
        const auto [p, r] = slot;
        const int32_t best = pick_device(p, r, key(p, r, over.id), Candidates::kUnderTarget);
        if (best == kNoDevice) continue;
        move(slot, over.id, best);
        ++report.balance_moves;
        moved = true;
      }
    }
    return moved;
  }

  // A breadth-first search from the over-target devices for a chain s -> v1 -> ... -> vk where
  // each hop moves one replica (of a partition not moved earlier in the chain) without bringing
  // it closer to its partition's other replicas and vk is under target. Applies the first chain
  // found and returns true; false if there is none.
  bool chain_move(RebalanceReport& report) {
    const std::vector<std::vector<Slot>> slots = slots_by_device(/*only_over=*/false);
    struct Hop {
      int32_t from = kNoDevice;
      Slot slot;
    };
    std::vector<Hop> parent(target_.size());
    std::vector<bool> visited(target_.size(), false);
    std::vector<int32_t> queue;
    for (const UsableDevice& d : devs_) {
      if (wanted(d.id) < 0) {
        visited[d.id] = true;
        queue.push_back(d.id);
      }
    }
    auto on_path = [&](int32_t dev, uint32_t part) {
      for (; parent[dev].from != kNoDevice; dev = parent[dev].from) {
        if (parent[dev].slot.first == part) return true;
      }
      return false;
    };
    for (size_t head = 0; head < queue.size(); ++head) {
      const int32_t u = queue[head];
      for (const Slot& slot : slots[u]) {
        const auto [p, r] = slot;
        const uint32_t current = key(p, r, u);
        if (on_path(u, p)) continue;
        for (const UsableDevice& d : devs_) {
          const int32_t v = d.id;
          if (visited[v] || key(p, r, v) > current) continue;
          visited[v] = true;
          parent[v] = {u, slot};
          if (wanted(v) > 0) {
            for (int32_t at = v; parent[at].from != kNoDevice; at = parent[at].from) {
              move(parent[at].slot, parent[at].from, at);
              ++report.balance_moves;
            }
            return true;
          }
          queue.push_back(v);
        }
      }
    }
    return false;
  }

  std::vector<std::vector<int32_t>>& table_;
  const std::vector<UsableDevice>& devs_;
  Random& random_;
  struct Host {
    int32_t first_device;
    uint32_t devices;  // usable devices on the host
  };
  std::vector<Host> hosts_;                    // by dense host index
  std::vector<int32_t> region_, zone_, host_;  // dense tier indices by device id; -1 unusable
  std::vector<int64_t> target_, assigned_;     // by device id
};

}  // namespace

RingBuilder::RingBuilder(const RingOptions& options)
    : options_(options),
      table_(options.replicas, std::vector<int32_t>(1u << options.part_power, kNoDevice)) {}

Result<RingBuilder> RingBuilder::create(const RingOptions& options) {
  if (options.part_power < 1 || options.part_power > 24) {
    return Status::invalid_argument("ring part_power must be 1..24, got " +
                                    std::to_string(options.part_power));
  }
  if (options.replicas < 1 || options.replicas > 64) {
    return Status::invalid_argument("ring replicas must be 1..64, got " +
                                    std::to_string(options.replicas));
  }
  return RingBuilder(options);
}

Status RingBuilder::add_device(const RingDevice& device) {
  if (device.id < 0 || device.id > kRingMaxDeviceId) {
    return Status::invalid_argument("device id must be 0.." + std::to_string(kRingMaxDeviceId) +
                                    ", got " + std::to_string(device.id));
  }
  if (devices_.count(device.id)) {
    return Status::invalid_argument("duplicate " + device_name(device.id) + " (host '" +
                                    device.host + "'): already on host '" +
                                    devices_.at(device.id).host + "'");
  }
  Result<uint64_t> w = weight_to_16_16(device.id, device.weight);
  if (!w.ok()) return w.status();
  if (device.region < 0 || device.zone < 0) {
    return Status::invalid_argument(
        device_name(device.id) + ": region and zone must be >= 0, got region " +
        std::to_string(device.region) + " zone " + std::to_string(device.zone));
  }
  if (device.host.empty()) {
    return Status::invalid_argument(device_name(device.id) + ": host must not be empty");
  }
  devices_[device.id] = device;
  weights_16_[device.id] = *w;
  return Status::ok_status();
}

Status RingBuilder::remove_device(int32_t id) {
  if (!devices_.erase(id)) {
    return Status::not_found("cannot remove " + device_name(id) + ": no such device in the ring");
  }
  weights_16_.erase(id);
  return Status::ok_status();
}

Status RingBuilder::set_weight(int32_t id, double weight) {
  auto it = devices_.find(id);
  if (it == devices_.end()) {
    return Status::not_found("cannot set the weight of " + device_name(id) +
                             ": no such device in the ring");
  }
  Result<uint64_t> w = weight_to_16_16(id, weight);
  if (!w.ok()) return w.status();
  it->second.weight = weight;
  weights_16_[id] = *w;
  return Status::ok_status();
}

std::map<int32_t, int64_t> RingBuilder::assigned_counts() const {
  std::map<int32_t, int64_t> counts;
  for (const auto& part2dev : table_) {
    for (int32_t dev : part2dev) {
      if (dev != kNoDevice) ++counts[dev];
    }
  }
  return counts;
}

Result<RebalanceReport> RingBuilder::rebalance(Random& random) {
  if (devices_.empty()) return Status::invalid_argument("cannot rebalance a ring with no devices");
  std::vector<UsableDevice> devs;
  for (const auto& [id, d] : devices_) {
    const uint64_t w = weights_16_.at(id);
    if (w > 0) devs.push_back({id, d.region, d.zone, &d.host, w});
  }
  if (devs.size() < static_cast<size_t>(options_.replicas)) {
    return Status::invalid_argument(
        "the ring's " + std::to_string(options_.replicas) +
        " replicas of a partition need as many distinct devices with nonzero weight, but only " +
        std::to_string(devs.size()) + " of its " + std::to_string(devices_.size()) +
        " devices have one");
  }
  std::sort(devs.begin(), devs.end(), [](const UsableDevice& a, const UsableDevice& b) {
    return std::tie(a.region, a.zone, *a.host, a.id) < std::tie(b.region, b.zone, *b.host, b.id);
  });

  // 1. Targets: the root (level -1) holds exactly `replicas` of every partition.
  const int64_t partitions = num_partitions();
  std::map<int32_t, int64_t> targets;
  split_targets(devs, 0, devs.size(), /*level=*/-1, partitions * options_.replicas,
                options_.replicas, options_.replicas, partitions, targets);

  int32_t id_bound = devices_.rbegin()->first + 1;
  for (const auto& part2dev : table_) {
    for (int32_t dev : part2dev) {
      if (dev != kNoDevice) id_bound = std::max(id_bound, dev + 1);
    }
  }
  const std::vector<std::vector<int32_t>> before = table_;
  RebalanceReport report;
  Rebalancer rebalancer(table_, devs, targets, id_bound, random);
  rebalancer.unassign_unusable();         // 2
  rebalancer.place_and_disperse(report);  // 3
  rebalancer.balance(report);             // 4
  report.max_off_target = rebalancer.max_off_target();
  for (size_t r = 0; r < table_.size(); ++r) {
    for (size_t p = 0; p < table_[r].size(); ++p) report.changed += table_[r][p] != before[r][p];
  }
  targets_ = std::move(targets);
  rebalanced_ = true;
  return report;
}

Result<Ring> RingBuilder::build() const {
  if (!rebalanced_) return Status::invalid_argument("the ring has no table yet: rebalance first");
  Ring ring;
  ring.part_power_ = options_.part_power;
  ring.table_ = table_;
  int32_t id_bound = devices_.empty() ? 0 : devices_.rbegin()->first + 1;
  for (const auto& part2dev : table_) {
    for (int32_t dev : part2dev) {
      if (dev != kNoDevice) id_bound = std::max(id_bound, dev + 1);
    }
  }
  ring.weights_16_.assign(id_bound, 0);
  ring.zone_of_.assign(id_bound, -1);
  for (const auto& [id, d] : devices_) {
    ring.weights_16_[id] = weights_16_.at(id);
    ring.zone_of_[id] = (static_cast<int64_t>(d.region) << 32) | static_cast<uint32_t>(d.zone);
  }
  return ring;
}

std::string Ring::describe() const {
  int64_t devices = 0;
  std::set<int64_t> zones;
  for (size_t id = 0; id < weights_16_.size(); ++id) {
    if (weights_16_[id] == 0) continue;
    ++devices;
    zones.insert(zone_of_[id]);
  }
  return "ring 2^" + std::to_string(part_power_) + " partitions x " + std::to_string(replicas()) +
         " replicas, " + std::to_string(devices) + " devices in " + std::to_string(zones.size()) +
         " zones";
}

uint32_t Ring::group_of(std::string_view object_name) const {
  return crush::str_hash_rjenkins(object_name) >> (32 - part_power_);
}

void Ring::devices_of(uint32_t partition, std::vector<int32_t>& out) {
  out.clear();
  if (partition >= num_groups()) return;
  for (const auto& part2dev : table_) {
    const int32_t dev = part2dev[partition];
    if (dev >= 0 && dev < device_id_bound() && weights_16_[dev] > 0) out.push_back(dev);
  }
}

std::vector<double> Ring::target_shares() const {
  std::vector<double> share(weights_16_.size(), 0.0);
  uint64_t total = 0;
  for (uint64_t w : weights_16_) total += w;
  if (total == 0) return share;
  for (size_t id = 0; id < share.size(); ++id) {
    share[id] = static_cast<double>(weights_16_[id]) / static_cast<double>(total);
  }
  return share;
}

int64_t Ring::failure_domain(int32_t device) const {
  if (device < 0 || device >= device_id_bound()) return -1;
  return zone_of_[device];
}

}  // namespace granary::placement

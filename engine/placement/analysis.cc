#include "engine/placement/analysis.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/status.h"

namespace granary::placement {

UtilizationReport analyze_utilization(Placement& p) {
  UtilizationReport r;
  r.groups = p.num_groups();
  r.replicas = p.replicas();
  const int32_t bound = p.device_id_bound();
  r.per_device.assign(bound, 0);
  std::vector<int32_t> devs;
  std::vector<int64_t> domains;
  for (uint32_t g = 0; g < r.groups; ++g) {
    p.devices_of(g, devs);
    uint32_t placed = 0;
    domains.clear();
    for (int32_t d : devs) {
      if (d == kNoDevice || d < 0 || d >= bound) continue;
      ++r.per_device[d];
      ++placed;
      domains.push_back(p.failure_domain(d));
    }
    r.shards += placed;
    if (static_cast<int>(placed) < r.replicas) ++r.short_groups;
    std::sort(domains.begin(), domains.end());
    if (std::adjacent_find(domains.begin(), domains.end()) != domains.end()) ++r.domain_violations;
  }
  const std::vector<double> share = p.target_shares();
  GRANARY_CHECK(static_cast<int32_t>(share.size()) == bound);
  r.expected.assign(bound, 0.0);
  double sum_sq = 0;
  bool first = true;
  for (int32_t d = 0; d < bound; ++d) {
    r.expected[d] = share[d] * static_cast<double>(r.shards);
    if (share[d] <= 0) {
      r.shards_off_target += r.per_device[d];
      continue;
    }
    ++r.devices_with_target;
    const double dev = static_cast<double>(r.per_device[d]) / r.expected[d] - 1.0;
    sum_sq += dev * dev;
    if (first || dev > r.deviation_max) {
      r.deviation_max = dev;
      r.most_loaded = d;
    }
    if (first || dev < r.deviation_min) {
      r.deviation_min = dev;
      r.least_loaded = d;
    }
    first = false;
  }
  if (r.devices_with_target > 0) r.deviation_stddev = std::sqrt(sum_sq / r.devices_with_target);
  return r;
}

MovementReport compare_placements(Placement& before, Placement& after, const MovementOptions& o) {
  GRANARY_CHECK(before.num_groups() == after.num_groups());
  MovementReport r;
  r.groups = before.num_groups();
  std::vector<int32_t> a, b;
  for (uint32_t g = 0; g < r.groups; ++g) {
    before.devices_of(g, a);
    after.devices_of(g, b);
    uint64_t moved = 0;
    for (int32_t d : a) r.shards_before += (d != kNoDevice);
    if (o.positional) {
      for (size_t i = 0; i < b.size(); ++i) {
        if (b[i] != kNoDevice && (i >= a.size() || a[i] != b[i])) ++moved;
      }
    } else {
      for (int32_t d : b) {
        if (d != kNoDevice && std::find(a.begin(), a.end(), d) == a.end()) ++moved;
      }
    }
    r.shards_moved += moved;
    r.groups_changed += (a != b);
  }
  const std::vector<double> s0 = before.target_shares();
  const std::vector<double> s1 = after.target_shares();
  double shift = 0;
  for (size_t d = 0; d < std::max(s0.size(), s1.size()); ++d) {
    const double x = d < s0.size() ? s0[d] : 0.0;
    const double y = d < s1.size() ? s1[d] : 0.0;
    shift += std::max(0.0, y - x);
  }
  r.minimum_moved = shift * static_cast<double>(r.shards_before);
  return r;
}

}  // namespace granary::placement

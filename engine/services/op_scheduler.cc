#include "engine/services/op_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace granary::services {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// ---- WPQ

WpqScheduler::WpqScheduler(WpqOptions options, uint64_t seed) : options_(options), random_(seed) {}

const OpItem& WpqScheduler::SubQueue::head() const {
  auto it = owners.lower_bound(next);
  if (it == owners.end()) it = owners.begin();
  return it->second.front();
}

OpItem WpqScheduler::SubQueue::pop() {
  auto it = owners.lower_bound(next);
  if (it == owners.end()) it = owners.begin();
  OpItem item = it->second.front();
  it->second.pop_front();
  next = it->first + 1;  // the next owner's turn
  if (it->second.empty()) owners.erase(it);
  return item;
}

void WpqScheduler::enqueue(const OpItem& item) {
  ++size_;
  if (item.priority >= options_.cut_off) {  // WPQ knows priorities only, not classes
    strict_[item.priority].owners[item.owner].push_back(item);
    return;
  }
  auto [it, inserted] = normal_.try_emplace(item.priority);
  if (inserted) total_priority_ += item.priority;
  it->second.owners[item.owner].push_back(item);
  max_cost_ = std::max(max_cost_, item.cost);  // never lowered, as in Ceph
}

std::optional<OpItem> WpqScheduler::dequeue(double /*now_s*/, double* ready_at_s) {
  if (ready_at_s != nullptr) *ready_at_s = kInf;
  if (size_ == 0) return std::nullopt;
  --size_;
  if (!strict_.empty()) {
    auto it = std::prev(strict_.end());  // highest priority first
    OpItem item = it->second.pop();
    if (it->second.owners.empty()) strict_.erase(it);
    return item;
  }
  auto it = std::prev(normal_.end());
  if (normal_.size() > 1) {
    for (;;) {
      // A priority drawn in proportion to its value, then a coin that favours cheap ops.
      uint64_t pick = random_.uniform(total_priority_) + 1;
      uint64_t rest = total_priority_ - it->first;
      while (pick <= rest) {
        --it;
        rest -= it->first;
      }
      const uint64_t cost = it->second.head().cost;
      if (max_cost_ == 0 || random_.uniform(max_cost_) <= max_cost_ - (cost * 9) / 10) break;
      it = std::prev(normal_.end());
    }
  }
  OpItem item = it->second.pop();
  if (it->second.owners.empty()) {
    total_priority_ -= it->first;
    normal_.erase(it);
  }
  return item;
}

// ---- mClock allocations

MclockAllocations mclock_allocations(MclockAllocationSet set, MclockProfile profile) {
  if (set == MclockAllocationSet::kQuincyDev) {
    switch (profile) {
      case MclockProfile::kHighClientOps:
        return {{0.50, 2, 0}, {0.25, 1, 1.0}, {0.25, 2, 0}};
      case MclockProfile::kBalanced:
        return {{0.40, 1, 1.0}, {0.40, 1, 1.5}, {0.20, 2, 0}};
      case MclockProfile::kHighRecoveryOps:
        // Best effort's reservation is Ceph's default_min, 1 IOPS: none, in effect.
        return {{0.30, 1, 0.8}, {0.60, 2, 2.0}, {0, 2, 0}};
    }
  }
  switch (profile) {
    case MclockProfile::kHighClientOps:
      return {{0.6, 2, 0}, {0.4, 1, 0}, {0, 1, 0.7}};
    case MclockProfile::kBalanced:
      return {{0.5, 1, 0}, {0.5, 1, 0}, {0, 1, 0.9}};
    case MclockProfile::kHighRecoveryOps:
      return {{0.3, 1, 0}, {0.7, 2, 0}, {0, 1, 0}};
  }
  return {};
}

std::string_view mclock_profile_name(MclockProfile profile) {
  switch (profile) {
    case MclockProfile::kHighClientOps:
      return "high_client_ops";
    case MclockProfile::kBalanced:
      return "balanced";
    case MclockProfile::kHighRecoveryOps:
      return "high_recovery_ops";
  }
  return "";
}

std::string_view mclock_allocation_set_name(MclockAllocationSet set) {
  return set == MclockAllocationSet::kQuincyDev ? "quincy-17.0.0-dev" : "reef";
}

std::optional<MclockProfile> parse_mclock_profile(std::string_view name) {
  for (auto p :
       {MclockProfile::kHighClientOps, MclockProfile::kBalanced, MclockProfile::kHighRecoveryOps}) {
    if (mclock_profile_name(p) == name) return p;
  }
  return std::nullopt;
}

std::optional<MclockAllocationSet> parse_mclock_allocation_set(std::string_view name) {
  for (auto s : {MclockAllocationSet::kQuincyDev, MclockAllocationSet::kReef}) {
    if (mclock_allocation_set_name(s) == name) return s;
  }
  return std::nullopt;
}

MclockOptions MclockOptions::for_device(bool rotational, MclockCostModel model) {
  MclockOptions o;
  o.cost_model = model;
  // osd_op_num_shards_hdd 5 / _ssd 8; osd_mclock_max_capacity_iops_hdd 315 / _ssd 21500;
  // osd_mclock_max_sequential_bandwidth_hdd 150 MiB / _ssd 1200 MiB (osd.yaml.in).
  o.shards = rotational ? 5 : 8;
  o.capacity_iops = rotational ? 315 : 21500;
  o.sequential_bytes_per_s = rotational ? 150.0 * (1 << 20) : 1200.0 * (1 << 20);
  // osd_mclock_cost_per_io_usec_hdd 25000 / _ssd 50, osd_mclock_cost_per_byte_usec_hdd 5.2 /
  // _ssd 0.011; mClockScheduler divided the HDD values by 10^6 and the SSD ones by 1000.
  o.legacy_cost_per_io = rotational ? 25000e-6 : 50e-3;
  o.legacy_cost_per_byte = rotational ? 5.2e-6 : 0.011e-3;
  return o;
}

double MclockOptions::capacity_per_shard() const {
  const double total = cost_model == MclockCostModel::kLegacyIops
                           ? std::max(1.0, capacity_iops)
                           : std::max(1.0, sequential_bytes_per_s);
  return total / std::max(1, shards);
}

double MclockOptions::scaled_cost(uint64_t item_cost) const {
  if (cost_model == MclockCostModel::kLegacyIops) {
    return std::max(1.0, std::round(legacy_cost_per_io +
                                    legacy_cost_per_byte * static_cast<double>(item_cost)));
  }
  const double per_io = std::floor(std::max(1.0, sequential_bytes_per_s) /
                                   std::max(1.0, capacity_iops));  // bytes per I/O
  return std::max(std::max(1.0, static_cast<double>(item_cost)), per_io);
}

// ---- mClock

MclockScheduler::MclockScheduler(MclockOptions options) : options_(options) {
  const double cap = options_.capacity_per_shard();
  const ClassQos* qos[3] = {&options_.allocations.client, &options_.allocations.background_recovery,
                            &options_.allocations.background_best_effort};
  for (int c = 0; c < 3; ++c) {
    GRANARY_CHECK(qos[c]->reservation >= 0 && qos[c]->weight > 0 && qos[c]->limit >= 0);
    classes_[c].res_rate = qos[c]->reservation * cap;
    classes_[c].wgt_rate = qos[c]->weight;
    classes_[c].lim_rate = qos[c]->limit * cap;
  }
}

namespace {
int class_index(OpClass c) {
  return c == OpClass::kClient ? 0 : c == OpClass::kBackgroundRecovery ? 1 : 2;
}
}  // namespace

void MclockScheduler::enqueue(const OpItem& item) {
  ++size_;
  if (item.op_class == OpClass::kImmediate || item.priority >= options_.cut_off) {
    strict_[item.priority].push_back(item);
    return;
  }
  ClassQueue& q = classes_[class_index(item.op_class)];
  if (q.ops.empty()) q.was_idle = true;
  q.ops.push_back(item);
  q.costs.push_back(options_.scaled_cost(item.cost));
}

void MclockScheduler::tag_head(ClassQueue& q, double now_s) {
  if (q.head_tagged || q.ops.empty()) return;
  const double cost = q.costs.front();
  Tags t;
  t.r = q.res_rate > 0 ? std::max(now_s, q.prev.r + cost / q.res_rate) : kInf;
  t.p = std::max(now_s, q.prev.p + cost / q.wgt_rate);
  t.l = q.lim_rate > 0 ? std::max(now_s, q.prev.l + cost / q.lim_rate) : 0;
  // A class that was idle starts level with the busiest (dmclock's prop_delta), so that an
  // idle spell neither banks nor loses weight-based service.
  if (q.was_idle) {
    double lowest = kInf;
    for (auto& other : classes_) {
      if (&other != &q && other.head_tagged) lowest = std::min(lowest, other.head.p);
    }
    if (lowest < kInf) t.p = std::max(t.p, lowest);
    q.was_idle = false;
  }
  q.head = t;
  q.head_tagged = true;
}

OpItem MclockScheduler::pop(ClassQueue& q, double now_s, bool by_weight) {
  OpItem item = q.ops.front();
  const double cost = q.costs.front();
  q.ops.pop_front();
  q.costs.pop_front();
  q.prev = q.head;
  // Served by weight: its reservation was not used (dmclock's reduce_reservation_tags).
  if (by_weight && q.res_rate > 0) q.prev.r -= cost / q.res_rate;
  q.head_tagged = false;
  tag_head(q, now_s);
  --size_;
  return item;
}

std::optional<OpItem> MclockScheduler::dequeue(double now_s, double* ready_at_s) {
  if (ready_at_s != nullptr) *ready_at_s = kInf;
  if (size_ == 0) return std::nullopt;
  if (!strict_.empty()) {
    auto it = std::prev(strict_.end());
    OpItem item = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) strict_.erase(it);
    --size_;
    return item;
  }
  for (auto& q : classes_) tag_head(q, now_s);
  // Reservation first: the smallest R that is due.
  ClassQueue* best = nullptr;
  for (auto& q : classes_) {
    if (q.ops.empty() || q.head.r > now_s) continue;
    if (best == nullptr || q.head.r < best->head.r) best = &q;
  }
  if (best != nullptr) return pop(*best, now_s, false);
  // Then weight, among the classes within their limit.
  for (auto& q : classes_) {
    if (q.ops.empty() || q.head.l > now_s) continue;
    if (best == nullptr || q.head.p < best->head.p) best = &q;
  }
  if (best != nullptr) return pop(*best, now_s, true);
  // Everything is over its limit (AtLimit::Wait): the first time one becomes eligible.
  double next = kInf;
  for (auto& q : classes_) {
    if (q.ops.empty()) continue;
    next = std::min({next, q.head.r, q.head.l});
  }
  if (ready_at_s != nullptr) *ready_at_s = next;
  return std::nullopt;
}

std::unique_ptr<OpScheduler> make_scheduler(const SchedulerOptions& options, uint64_t seed) {
  if (options.kind == SchedulerKind::kMclock) {
    return std::make_unique<MclockScheduler>(options.mclock);
  }
  return std::make_unique<WpqScheduler>(options.wpq, seed);
}

}  // namespace granary::services

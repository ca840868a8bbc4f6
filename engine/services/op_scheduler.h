// OpScheduler: the order in which an OSD's op shard serves the ops queued on it, as Ceph's
// OSD schedulers do (ceph/ceph src/osd/scheduler/OpScheduler.h). Two are built:
//
//  - WpqScheduler: Ceph's WeightedPriorityQueue (src/common/WeightedPriorityQueue.h). It knows
//    priorities only (an op's class does not matter). Ops of priority >= the cut-off
//    (osd_op_queue_cut_off "high": 196) go to a strict queue, served first, highest priority first.
//    The others are served by priority-weighted round robin: a priority p is drawn with probability
//    p / (sum of the priorities queued), then a coin that favours cheap ops — the head of that
//    priority passes when uniform(0, max_cost) <= max_cost - 0.9 * cost (max_cost: the largest cost
//    queued so far), else a priority is drawn again. Within a priority, owners (Ceph's "klass": a
//    client, a PG) take turns. Ceph draws with rand(); here the draws come from a seeded Random.
//
//  - MclockScheduler: Ceph's mClockScheduler over the dmclock library (ceph/dmclock
//    src/dmclock_server.h, PullPriorityQueue with AtLimit::Wait): each class (client, background
//    recovery, background best effort) has a reservation r, a weight w and a limit l. Each op
//    gets three tags when it reaches the head of its class's queue:
//      R = max(now, R_prev + cost / r), P = max(now, P_prev + cost / w),
//      L = max(now, L_prev + cost / l)   (no r: R = inf; no l: L = 0).
//    An op is served by reservation if its R <= now (smallest R first), else by weight among
//    the classes whose L <= now (smallest P first; the class's later R tags are then moved back
//    by cost / r, so weight-based service does not use up its reservation); when every queued
//    op is over its limit, nothing is served until the earliest L (dequeue() says when).
//    Immediate ops (and any of priority >= the cut-off) bypass mClock in a strict queue.
//    Two cost models, as Ceph changed them (docs/models.md, "The OSD op queue"):
//      kLegacyIops (Ceph 17.0.0-dev .. 17.2.5): capacity in IOPS per shard
//        (osd_mclock_max_capacity_iops_[hdd|ssd] / shards), cost
//        max(1, round(cost_per_io + cost_per_byte * item_cost)) with Ceph's unit conversions.
//      kBandwidth (Ceph >= 17.2.6, Reef, Squid; ceph/ceph PR #49975): capacity in bytes/s per
//        shard (osd_mclock_max_sequential_bandwidth_[hdd|ssd] / shards), cost
//        max(item_cost, bandwidth / capacity_iops).
//    The profiles' allocations (fractions of the capacity) are mclock_allocations(); Ceph
//    changed them too, so both sets are available, named by version.
//
// Both are pure and deterministic (no clock: the caller passes now). Not thread-safe: an
// OsdOpQueue (op_queue.h) guards its shards' schedulers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/random.h"
#include "engine/status.h"

namespace granary::services {

// Ceph's op_scheduler_class.
enum class OpClass { kImmediate, kClient, kBackgroundRecovery, kBackgroundBestEffort };

// Ceph's priorities (src/common/options/osd.yaml.in, src/include/msgr.h).
inline constexpr unsigned kClientOpPriority = 63;    // osd_client_op_priority
inline constexpr unsigned kRecoveryOpPriority = 3;   // osd_recovery_op_priority (pushes)
inline constexpr unsigned kRecoveryPriority = 5;     // osd_recovery_priority (PGRecovery items)
inline constexpr unsigned kOpQueueCutOffHigh = 196;  // osd_op_queue_cut_off = high
// osd_recovery_cost: the cost of a PGRecovery item under WPQ (and, before the 2023 rework,
// under mClock too).
inline constexpr uint64_t kOsdRecoveryCostBytes = 20ull << 20;

struct OpItem {
  uint64_t id = 0;  // the caller's; unique among the items queued
  OpClass op_class = OpClass::kClient;
  unsigned priority = kClientOpPriority;
  uint64_t cost = 0;   // Ceph's item cost: bytes (osd_recovery_cost for a PGRecovery item)
  uint64_t owner = 0;  // WPQ's klass: ops of one owner are served in order
};

class OpScheduler {
 public:
  virtual ~OpScheduler() = default;
  virtual void enqueue(const OpItem& item) = 0;
  virtual bool empty() const = 0;
  virtual size_t size() const = 0;
  // The next op to serve at `now_s`. None when the queue is empty, or (mClock) when every
  // queued op is over its limit: then *ready_at_s is when the first becomes eligible.
  virtual std::optional<OpItem> dequeue(double now_s, double* ready_at_s) = 0;
};

struct WpqOptions {
  unsigned cut_off = kOpQueueCutOffHigh;
};

class WpqScheduler final : public OpScheduler {
 public:
  WpqScheduler(WpqOptions options, uint64_t seed);
  void enqueue(const OpItem& item) override;
  bool empty() const override { return size_ == 0; }
  size_t size() const override { return size_; }
  std::optional<OpItem> dequeue(double now_s, double* ready_at_s) override;

 private:
  // One priority's owners, served round robin from `next`.
  struct SubQueue {
    std::map<uint64_t, std::deque<OpItem>> owners;
    uint64_t next = 0;  // the owner whose turn it is (the first >= next)
    const OpItem& head() const;
    OpItem pop();
  };
  WpqOptions options_;
  Random random_;
  std::map<unsigned, SubQueue> strict_, normal_;  // by priority
  uint64_t total_priority_ = 0;                   // of normal_'s priorities
  uint64_t max_cost_ = 0;
  size_t size_ = 0;
};

// One class's dmclock allocation, as fractions of the shard's capacity; 0 reservation: none,
// 0 limit: none (Ceph's "MAX").
struct ClassQos {
  double reservation = 0;
  double weight = 1;
  double limit = 0;
};

struct MclockAllocations {
  ClassQos client, background_recovery, background_best_effort;
};

enum class MclockProfile { kHighClientOps, kBalanced, kHighRecoveryOps };
// Which Ceph version's allocations a profile means.
enum class MclockAllocationSet {
  // Ceph 17.0.0-dev .. 17.2.x before the rework (the QoS study, ceph/ceph
  // doc/dev/osd_internals/mclock_wpq_cmp_study.rst; src/osd/scheduler/mClockScheduler.cc of
  // that time): high_client_ops client 50%/2/max, recovery 25%/1/100%, best effort 25%/2/max;
  // balanced 40%/1/100%, 40%/1/150%, 20%/2/max; high_recovery_ops 30%/1/80%, 60%/2/200%,
  // min/2/max.
  kQuincyDev,
  // Ceph >= 17.2.6, Reef 18.2, Squid 19.2 (ceph/ceph src/osd/scheduler/mClockScheduler.cc,
  // MclockConfig::set_config_defaults_from_profile): high_client_ops client 60%/2/max,
  // recovery 40%/1/max, best effort 0/1/70%; balanced 50%/1/max, 50%/1/max, 0/1/90%;
  // high_recovery_ops 30%/1/max, 70%/2/max, 0/1/max.
  kReef,
};

MclockAllocations mclock_allocations(MclockAllocationSet set, MclockProfile profile);
std::string_view mclock_profile_name(MclockProfile profile);
std::string_view mclock_allocation_set_name(MclockAllocationSet set);
std::optional<MclockProfile> parse_mclock_profile(std::string_view name);
std::optional<MclockAllocationSet> parse_mclock_allocation_set(std::string_view name);

enum class MclockCostModel { kLegacyIops, kBandwidth };

struct MclockOptions {
  MclockAllocations allocations{};
  MclockCostModel cost_model = MclockCostModel::kBandwidth;
  int shards = 8;                     // osd_op_num_shards_[hdd|ssd]
  double capacity_iops = 21500;       // osd_mclock_max_capacity_iops_[hdd|ssd]
  double sequential_bytes_per_s = 0;  // osd_mclock_max_sequential_bandwidth_[hdd|ssd]
  // kLegacyIops: the cost per I/O and per byte after Ceph's conversions (SSD: usec / 1000,
  // HDD: usec / 10^6; src/osd/scheduler/mClockScheduler.cc of 17.0.0).
  double legacy_cost_per_io = 0.05;
  double legacy_cost_per_byte = 0.011e-3;
  unsigned cut_off = kOpQueueCutOffHigh;

  // Ceph's defaults per device class for a cost model.
  static MclockOptions for_device(bool rotational, MclockCostModel model);
  // The capacity of one shard (IOPS or bytes/s) and the cost of an item (in its units).
  double capacity_per_shard() const;
  double scaled_cost(uint64_t item_cost) const;
};

class MclockScheduler final : public OpScheduler {
 public:
  explicit MclockScheduler(MclockOptions options);
  void enqueue(const OpItem& item) override;
  bool empty() const override { return size_ == 0; }
  size_t size() const override { return size_; }
  std::optional<OpItem> dequeue(double now_s, double* ready_at_s) override;

 private:
  struct Tags {
    double r = 0, p = 0, l = 0;
  };
  struct ClassQueue {
    double res_rate = 0, wgt_rate = 0, lim_rate = 0;  // per second, in cost units
    std::deque<OpItem> ops;
    std::deque<double> costs;  // scaled
    Tags prev{};               // the last tags given
    bool head_tagged = false;
    bool was_idle = true;  // the head arrived to an empty queue
    Tags head{};
  };
  void tag_head(ClassQueue& q, double now_s);
  OpItem pop(ClassQueue& q, double now_s, bool by_weight);

  MclockOptions options_;
  std::map<unsigned, std::deque<OpItem>> strict_;  // immediate and >= cut-off, by priority
  ClassQueue classes_[3];                          // client, recovery, best effort
  size_t size_ = 0;
};

enum class SchedulerKind { kWpq, kMclock };

struct SchedulerOptions {
  SchedulerKind kind = SchedulerKind::kWpq;
  WpqOptions wpq{};
  MclockOptions mclock{};
};

std::unique_ptr<OpScheduler> make_scheduler(const SchedulerOptions& options, uint64_t seed);

}  // namespace granary::services

// The CRUSH map: devices, bucket hierarchy, rules and tunables, as Ceph defines them.
//
// A CrushMap is built once (by text_format.h's parser or by calling the mutators below) and then
// only read: the mapper (mapper.h) takes a const reference, and any number of threads may map
// against the same CrushMap concurrently. Mutators are not thread-safe.
//
// Identifiers follow Ceph: devices (OSDs) have ids >= 0, buckets ids <= -1, stored at index
// -1-id. Weights are 16.16 fixed point (0x10000 = 1.0). Derived per-algorithm data (list
// prefix sums, tree node weights, straw lengths) is computed when a bucket is added, with
// Ceph's exact arithmetic, so that placements are bit-identical to Ceph's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"

namespace granary::crush {

constexpr uint32_t kWeightOne = 0x10000;    // 1.0 in 16.16
constexpr int32_t kItemNone = 0x7fffffff;   // an indep position that could not be filled
constexpr int32_t kItemUndef = 0x7ffffffe;  // internal: a position not chosen yet
constexpr uint32_t kMaxDeviceWeight = 100u * kWeightOne;    // Ceph's CRUSH_MAX_DEVICE_WEIGHT
constexpr uint32_t kMaxBucketWeight = 65535u * kWeightOne;  // Ceph's CRUSH_MAX_BUCKET_WEIGHT

// Limits of what a CrushMap may hold (docs/placement.md, "Limits"). Ceph's own limits where it
// has them (rule ids, the u8 rule fields, weights); elsewhere bounds on what arrays indexed by
// id may cost, far above real clusters (Ceph's mon_max_osd defaults to 10000).
constexpr int32_t kMaxDeviceId = (1 << 20) - 1;   // device ids 0..1048575
constexpr int32_t kMinBucketId = -(1 << 18);      // bucket ids -1..-262144 (shadows included)
constexpr int32_t kMaxRuleId = 255;               // Ceph's CRUSH_MAX_RULES - 1
constexpr int32_t kMaxRuleSize = 255;             // rule min_size/max_size/type: u8 in Ceph
constexpr int32_t kMaxChooseCount = 255;          // |N| of "step choose firstn N"
constexpr int32_t kMaxTries = 1000;               // choose_total_tries, set_choose(leaf)_tries
constexpr int32_t kMaxLocalTries = 100;           // choose_local_(fallback_)tries
constexpr int32_t kMaxVaryR = 31;                 // chooseleaf_vary_r shifts r by vary_r - 1
constexpr int kMaxHierarchyDepth = 64;            // bucket nesting levels
constexpr uint64_t kMaxExpandedItems = 1u << 24;  // items seen walking every path of the tree
constexpr int kMaxDeviceClasses = 256;
constexpr uint64_t kMaxShadowItems = 1u << 24;  // classes x (buckets + bucket items)
constexpr int kMaxChooseArgsSets = 1024;
constexpr uint64_t kMaxChooseArgsSlots = 1u << 21;  // choose_args sets x bucket slots
constexpr int32_t kMaxWeightSetPositions = 255;
constexpr size_t kMaxNameBytes = 256;  // device, bucket, type, class and rule names

// `text` quoted for a one-line error message: non-printable and non-ASCII bytes escaped
// (\x00), and past 60 characters shortened with its length ('aaaa…' (1048576 bytes)).
std::string quote_for_message(std::string_view text);

enum class BucketAlg : uint8_t { kUniform = 1, kList = 2, kTree = 3, kStraw = 4, kStraw2 = 5 };
std::string_view bucket_alg_name(BucketAlg alg);
std::optional<BucketAlg> bucket_alg_from_name(std::string_view name);

// Rule types as Ceph numbers them (pg_pool_t).
constexpr int32_t kRuleReplicated = 1;
constexpr int32_t kRuleErasure = 3;

// The knobs that change how CRUSH retries; every Ceph tunables profile is one value of this.
struct Tunables {
  uint32_t choose_local_tries = 2;
  uint32_t choose_local_fallback_tries = 5;
  uint32_t choose_total_tries = 19;
  uint32_t chooseleaf_descend_once = 0;
  uint32_t chooseleaf_vary_r = 0;
  uint32_t chooseleaf_stable = 0;
  uint32_t straw_calc_version = 0;
  uint32_t allowed_bucket_algs = (1u << 1) | (1u << 2) | (1u << 4);  // uniform, list, straw

  // Profiles by Ceph's names: legacy (= argonaut, with straw_calc_version 0), argonaut,
  // bobtail, firefly, hammer, jewel, optimal (= jewel with straw_calc_version 1), default.
  // Profiles other than legacy/optimal/default leave straw_calc_version at `straw_calc_version`.
  static std::optional<Tunables> profile(std::string_view name, uint32_t straw_calc_version = 0);
  // The name of the profile these tunables equal, or "" when none does.
  std::string profile_name() const;

  bool operator==(const Tunables&) const = default;
};

struct Bucket {
  int32_t id = 0;    // <= -1
  int32_t type = 0;  // a type id from the map's types (> 0 for buckets)
  BucketAlg alg = BucketAlg::kStraw2;
  uint8_t hash = 0;     // 0 = rjenkins1
  uint32_t weight = 0;  // sum of item weights (what a parent sees unless told otherwise)
  std::vector<int32_t> items;
  std::vector<uint32_t> item_weights;
  // Derived data, filled in by the map when the bucket is added:
  std::vector<uint32_t> sum_weights;   // list: prefix sums of item_weights
  std::vector<uint32_t> node_weights;  // tree: weights of the implicit binary tree's nodes
  std::vector<uint32_t> straws;        // straw: straw lengths (16.16 scaled)

  int32_t size() const { return static_cast<int32_t>(items.size()); }
};

enum class RuleOp : int32_t {
  kNoop = 0,
  kTake = 1,
  kChooseFirstN = 2,
  kChooseIndep = 3,
  kEmit = 4,
  kChooseLeafFirstN = 6,
  kChooseLeafIndep = 7,
  kSetChooseTries = 8,
  kSetChooseLeafTries = 9,
  kSetChooseLocalTries = 10,
  kSetChooseLocalFallbackTries = 11,
  kSetChooseLeafVaryR = 12,
  kSetChooseLeafStable = 13,
};

struct RuleStep {
  RuleOp op = RuleOp::kNoop;
  int32_t arg1 = 0;  // take: item; choose*: count (<= 0 means result_max + count); set_*: value
  int32_t arg2 = 0;  // choose*: bucket type
};

struct Rule {
  int32_t id = 0;
  std::string name;
  int32_t type = kRuleReplicated;
  int32_t min_size = 1;
  int32_t max_size = 10;
  std::vector<RuleStep> steps;
};

// Per-bucket overrides for straw2 draws ("choose_args", Ceph's weight sets): weights per
// result position, and/or replacement ids fed to the hash. Empty vectors mean "use the
// bucket's own".
struct ChooseArg {
  std::vector<std::vector<uint32_t>> weight_set;  // [position][item]
  std::vector<int32_t> ids;                       // [item]
};
// One set of choose_args, indexed by -1-bucket_id (entries for absent buckets are empty).
using ChooseArgs = std::vector<ChooseArg>;

class CrushMap {
 public:
  CrushMap() = default;

  // ---- reading (thread-safe on a map no longer being mutated)
  const Tunables& tunables() const { return tunables_; }
  // One past the largest device id that is named or sits in a bucket.
  int32_t max_devices() const { return max_devices_; }
  // Number of bucket slots: bucket ids range over [-max_buckets(), -1].
  int32_t max_buckets() const { return static_cast<int32_t>(buckets_.size()); }
  const Bucket* bucket(int32_t id) const {
    const int32_t idx = -1 - id;
    return (idx >= 0 && idx < max_buckets() && buckets_[idx]) ? &*buckets_[idx] : nullptr;
  }
  bool bucket_exists(int32_t id) const { return bucket(id) != nullptr; }
  int32_t max_rules() const { return static_cast<int32_t>(rules_.size()); }
  const Rule* rule(int32_t id) const {
    return (id >= 0 && id < max_rules() && rules_[id]) ? &*rules_[id] : nullptr;
  }
  std::optional<int32_t> rule_id(std::string_view name) const;

  // Names of devices and buckets; nullptr when the item has none.
  const std::string* item_name(int32_t id) const;
  std::optional<int32_t> item_id(std::string_view name) const;
  const std::map<int32_t, std::string>& item_names() const { return item_names_; }
  const std::map<int32_t, std::string>& type_names() const { return type_names_; }
  std::optional<int32_t> type_id(std::string_view name) const;

  // Device classes. A device has at most one class; class ids are dense from 0.
  const std::map<int32_t, std::string>& class_names() const { return class_names_; }
  std::optional<int32_t> class_id(std::string_view name) const;
  std::optional<int32_t> device_class(int32_t device) const;
  // The shadow bucket holding only `class_id` devices below bucket `id` (Ceph "id~class").
  std::optional<int32_t> class_bucket(int32_t id, int32_t class_id) const;
  // For a shadow bucket, its original bucket and class; nullopt for a normal bucket.
  std::optional<std::pair<int32_t, int32_t>> shadow_origin(int32_t id) const;
  // Shadow ids requested per bucket and class (what the text format's "id N class C" says).
  const std::map<int32_t, std::map<int32_t, int32_t>>& class_bucket_ids() const {
    return class_bucket_;
  }
  bool is_shadow(int32_t id) const { return shadow_origin(id).has_value(); }

  // Weight sets, by index (a pool id, or -1 for the compat set).
  const std::map<int64_t, ChooseArgs>& choose_args() const { return choose_args_; }
  // The set Ceph would use for `index`: that one, else the -1 set, else nullptr.
  const ChooseArgs* choose_args_for(int64_t index) const;

  // The parent bucket of an item (the first bucket that lists it), nullopt for roots.
  std::optional<int32_t> parent_of(int32_t item) const;
  // Buckets no other non-shadow bucket contains, ascending ids.
  std::vector<int32_t> roots() const;
  // Devices below `id` (a device id returns itself), depth first in item order.
  std::vector<int32_t> devices_under(int32_t id) const;

  // ---- building (not thread-safe)
  void set_tunables(const Tunables& t) { tunables_ = t; }
  Status add_type(int32_t id, std::string name);
  // Declares a device; `device_class` may be empty.
  Status add_device(int32_t id, std::string name, std::string_view device_class = {});
  Result<int32_t> get_or_create_class(std::string_view name);
  // Adds a bucket with the given items and weights (one per item) and computes its derived
  // data. `bucket.id` must be a free id <= -1. Items must already exist.
  Status add_bucket(Bucket bucket, std::string name);
  // Asks that the shadow copy of `bucket_id` for `class_id` get id `shadow_id`.
  Status reserve_class_bucket_id(int32_t bucket_id, int32_t class_id, int32_t shadow_id);
  // Builds the shadow hierarchies ("root~ssd") of every class from every root, as Ceph does
  // when a map is compiled. Replaces existing shadow buckets.
  Status populate_classes();
  Status add_rule(Rule rule);
  Status set_choose_args(int64_t index, ChooseArgs args);
  // Sets the weight of `item` in bucket `bucket_id` and recomputes derived data (and the
  // bucket's own weight). Does not propagate up the tree.
  Status set_item_weight(int32_t bucket_id, int32_t item, uint32_t weight);
  // Appends `item` with `weight` to bucket `bucket_id` (the bucket's own weight grows; its
  // parents are not changed: see set_item_weight_up_tree).
  Status add_bucket_item(int32_t bucket_id, int32_t item, uint32_t weight);
  // Sets `item`'s weight in every non-shadow bucket that lists it and carries each changed
  // bucket's new total up to its own parents, as Ceph's adjust_item_weight does.
  Status set_item_weight_up_tree(int32_t item, uint32_t weight);
  // Recomputes max_devices after devices or buckets changed.
  void finalize();

 private:
  Status check_new_item_name(const std::string& name) const;
  Result<int32_t> clone_for_class(int32_t original, int32_t class_id,
                                  const std::map<int32_t, std::map<int32_t, int32_t>>& requested,
                                  const std::vector<bool>& reserved);
  void remove_shadow_buckets();
  void store_bucket(Bucket bucket);
  // Levels of the hierarchy from `b` down to devices (1 for a bucket of devices).
  int height(const Bucket& b) const;

  Tunables tunables_;
  int32_t max_devices_ = 0;
  std::vector<std::optional<Bucket>> buckets_;
  std::vector<std::optional<Rule>> rules_;
  std::map<int32_t, std::string> item_names_;
  std::map<std::string, int32_t, std::less<>> item_ids_;
  std::map<int32_t, std::string> type_names_;
  std::map<int32_t, std::string> class_names_;
  std::map<int32_t, int32_t> device_classes_;                     // device -> class
  std::map<int32_t, std::map<int32_t, int32_t>> class_bucket_;    // bucket -> class -> shadow
  std::map<int32_t, std::pair<int32_t, int32_t>> shadow_origin_;  // shadow -> (bucket, class)
  std::map<int64_t, ChooseArgs> choose_args_;
};

// Calls fn(device, weight, path) for every device below the take steps of `rule`, depth first
// in item order: `weight` is the device's weight in its bucket, `path` the buckets from the
// take item down to that bucket. A device listed under two buckets is visited twice.
void for_each_rule_device(
    const CrushMap& map, const Rule& rule,
    const std::function<void(int32_t, uint32_t, const std::vector<int32_t>&)>& fn);

// Derived data of one bucket from its items and weights (Ceph's builder arithmetic).
// `straw_calc_version` selects the straw length algorithm (0: original, 1: fixed).
void compute_bucket_derived(Bucket& bucket, uint32_t straw_calc_version);

}  // namespace granary::crush

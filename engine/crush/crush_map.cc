#include "engine/crush/crush_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace granary::crush {

std::string quote_for_message(std::string_view text) {
  constexpr size_t kShown = 60;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\') {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kShown) {
    out += "\u2026' (" + std::to_string(text.size()) + " bytes)";
  } else {
    out += "'";
  }
  return out;
}

std::string_view bucket_alg_name(BucketAlg alg) {
  switch (alg) {
    case BucketAlg::kUniform:
      return "uniform";
    case BucketAlg::kList:
      return "list";
    case BucketAlg::kTree:
      return "tree";
    case BucketAlg::kStraw:
      return "straw";
    case BucketAlg::kStraw2:
      return "straw2";
  }
  return "unknown";
}

std::optional<BucketAlg> bucket_alg_from_name(std::string_view name) {
  for (BucketAlg a : {BucketAlg::kUniform, BucketAlg::kList, BucketAlg::kTree, BucketAlg::kStraw,
                      BucketAlg::kStraw2}) {
    if (bucket_alg_name(a) == name) return a;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- tunables

namespace {
constexpr uint32_t kLegacyAlgs = (1u << 1) | (1u << 2) | (1u << 4);
constexpr uint32_t kHammerAlgs = kLegacyAlgs | (1u << 5);

Tunables make_tunables(uint32_t local, uint32_t fallback, uint32_t total, uint32_t descend_once,
                       uint32_t vary_r, uint32_t stable, uint32_t algs, uint32_t straw_calc) {
  Tunables t;
  t.choose_local_tries = local;
  t.choose_local_fallback_tries = fallback;
  t.choose_total_tries = total;
  t.chooseleaf_descend_once = descend_once;
  t.chooseleaf_vary_r = vary_r;
  t.chooseleaf_stable = stable;
  t.allowed_bucket_algs = algs;
  t.straw_calc_version = straw_calc;
  return t;
}
}  // namespace

std::optional<Tunables> Tunables::profile(std::string_view name, uint32_t straw_calc_version) {
  const uint32_t s = straw_calc_version;
  if (name == "legacy") return make_tunables(2, 5, 19, 0, 0, 0, kLegacyAlgs, 0);
  if (name == "argonaut") return make_tunables(2, 5, 19, 0, 0, 0, kLegacyAlgs, s);
  if (name == "bobtail") return make_tunables(0, 0, 50, 1, 0, 0, kLegacyAlgs, s);
  if (name == "firefly") return make_tunables(0, 0, 50, 1, 1, 0, kLegacyAlgs, s);
  if (name == "hammer") return make_tunables(0, 0, 50, 1, 1, 0, kHammerAlgs, s);
  if (name == "jewel") return make_tunables(0, 0, 50, 1, 1, 1, kHammerAlgs, s);
  if (name == "optimal" || name == "default")
    return make_tunables(0, 0, 50, 1, 1, 1, kHammerAlgs, 1);
  return std::nullopt;
}

std::string Tunables::profile_name() const {
  for (const char* n : {"legacy", "argonaut", "bobtail", "firefly", "hammer", "jewel", "optimal"}) {
    if (*profile(n, straw_calc_version) == *this) return n;
  }
  return "";
}

// ---------------------------------------------------------------- derived bucket data

namespace {

// Tree buckets lay items on the odd nodes of an implicit binary tree: item i sits at node
// 2i+1; a node's height is its number of trailing zero bits.
int tree_height(int n) {
  int h = 0;
  while ((n & 1) == 0) {
    ++h;
    n >>= 1;
  }
  return h;
}
int tree_parent(int n) {
  const int h = tree_height(n);
  return (n & (1 << (h + 1))) ? n - (1 << h) : n + (1 << h);
}
int tree_depth(int size) {
  if (size == 0) return 0;
  int depth = 1;
  for (int t = size - 1; t != 0; t >>= 1) ++depth;
  return depth;
}

// Straw lengths (Ceph's builder): items sorted by weight; each straw is scaled so that the
// probability of the longest draw is proportional to weight. Version 0 has the original
// (skewed) accounting of items left; version 1 fixes it. Double precision as in Ceph.
void compute_straws(Bucket& b, uint32_t straw_calc_version) {
  const int size = b.size();
  const std::vector<uint32_t>& w = b.item_weights;
  b.straws.assign(size, 0);
  // Stable ascending order by weight (insertion order among equals).
  std::vector<int> order(size);
  for (int i = 0; i < size; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return w[a] < w[c]; });

  int numleft = size;
  double straw = 1.0, wbelow = 0, lastw = 0;
  for (int i = 0; i < size;) {
    const int cur = order[i];
    if (w[cur] == 0) {
      b.straws[cur] = 0;
      ++i;
      if (straw_calc_version >= 1) --numleft;
      continue;
    }
    b.straws[cur] = static_cast<uint32_t>(straw * 0x10000);
    ++i;
    if (i == size) break;
    const int next = order[i], prev = order[i - 1];
    if (straw_calc_version == 0) {
      if (w[next] == w[prev]) continue;  // same weight: same straw
      wbelow += (static_cast<double>(w[prev]) - lastw) * numleft;
      for (int j = i; j < size && w[order[j]] == w[next]; ++j) --numleft;
    } else {
      // Version 1 steps through equal weights too (wnext is then 0 and the straw stays).
      wbelow += (static_cast<double>(w[prev]) - lastw) * numleft;
      --numleft;
    }
    // Unsigned 32-bit product, as in Ceph (it wraps for very large weights).
    const uint32_t wnext_u = static_cast<uint32_t>(numleft) * (w[next] - w[prev]);
    const double wnext = wnext_u;
    const double pbelow = wbelow / (wbelow + wnext);
    straw *= std::pow(1.0 / pbelow, 1.0 / static_cast<double>(numleft));
    lastw = w[prev];
  }
}

}  // namespace

void compute_bucket_derived(Bucket& b, uint32_t straw_calc_version) {
  const int size = b.size();
  b.weight = 0;
  for (uint32_t w : b.item_weights) b.weight += w;
  b.sum_weights.clear();
  b.node_weights.clear();
  b.straws.clear();
  switch (b.alg) {
    case BucketAlg::kUniform:
    case BucketAlg::kStraw2:
      break;
    case BucketAlg::kList: {
      uint32_t sum = 0;
      for (uint32_t w : b.item_weights) b.sum_weights.push_back(sum += w);
      break;
    }
    case BucketAlg::kTree: {
      const int depth = tree_depth(size);
      b.node_weights.assign(depth == 0 ? 0 : (1u << depth), 0);
      for (int i = 0; i < size; ++i) {
        int node = 2 * i + 1;
        b.node_weights[node] = b.item_weights[i];
        for (int j = 1; j < depth; ++j) {
          node = tree_parent(node);
          b.node_weights[node] += b.item_weights[i];
        }
      }
      break;
    }
    case BucketAlg::kStraw:
      compute_straws(b, straw_calc_version);
      break;
  }
}

// ---------------------------------------------------------------- reading

void for_each_rule_device(
    const CrushMap& map, const Rule& rule,
    const std::function<void(int32_t, uint32_t, const std::vector<int32_t>&)>& fn) {
  std::vector<int32_t> path;
  std::function<void(int32_t, uint32_t)> walk = [&](int32_t item, uint32_t weight) {
    if (item >= 0) {
      fn(item, weight, path);
      return;
    }
    const Bucket* b = map.bucket(item);
    if (!b) return;
    path.push_back(item);
    for (int32_t i = 0; i < b->size(); ++i) walk(b->items[i], b->item_weights[i]);
    path.pop_back();
  };
  for (const RuleStep& s : rule.steps) {
    if (s.op == RuleOp::kTake) walk(s.arg1, kWeightOne);
  }
}

std::optional<int32_t> CrushMap::rule_id(std::string_view name) const {
  for (const auto& r : rules_) {
    if (r && r->name == name) return r->id;
  }
  return std::nullopt;
}

const std::string* CrushMap::item_name(int32_t id) const {
  auto it = item_names_.find(id);
  return it == item_names_.end() ? nullptr : &it->second;
}

std::optional<int32_t> CrushMap::item_id(std::string_view name) const {
  auto it = item_ids_.find(name);
  if (it == item_ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> CrushMap::type_id(std::string_view name) const {
  for (const auto& [id, n] : type_names_) {
    if (n == name) return id;
  }
  return std::nullopt;
}

std::optional<int32_t> CrushMap::class_id(std::string_view name) const {
  for (const auto& [id, n] : class_names_) {
    if (n == name) return id;
  }
  return std::nullopt;
}

std::optional<int32_t> CrushMap::device_class(int32_t device) const {
  auto it = device_classes_.find(device);
  if (it == device_classes_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> CrushMap::class_bucket(int32_t id, int32_t cls) const {
  auto it = class_bucket_.find(id);
  if (it == class_bucket_.end()) return std::nullopt;
  auto jt = it->second.find(cls);
  if (jt == it->second.end() || !bucket_exists(jt->second)) return std::nullopt;
  return jt->second;
}

std::optional<std::pair<int32_t, int32_t>> CrushMap::shadow_origin(int32_t id) const {
  auto it = shadow_origin_.find(id);
  if (it == shadow_origin_.end()) return std::nullopt;
  return it->second;
}

const ChooseArgs* CrushMap::choose_args_for(int64_t index) const {
  auto it = choose_args_.find(index);
  if (it == choose_args_.end()) it = choose_args_.find(-1);
  return it == choose_args_.end() ? nullptr : &it->second;
}

std::optional<int32_t> CrushMap::parent_of(int32_t item) const {
  for (const auto& b : buckets_) {
    if (!b || is_shadow(b->id)) continue;
    if (std::find(b->items.begin(), b->items.end(), item) != b->items.end()) return b->id;
  }
  return std::nullopt;
}

std::vector<int32_t> CrushMap::roots() const {
  std::vector<bool> contained(buckets_.size(), false);
  for (const auto& b : buckets_) {
    if (!b) continue;
    for (int32_t item : b->items) {
      if (item < 0 && -1 - item < max_buckets()) contained[-1 - item] = true;
    }
  }
  std::vector<int32_t> out;
  for (int32_t idx = max_buckets() - 1; idx >= 0; --idx) {
    if (buckets_[idx] && !contained[idx] && !is_shadow(-1 - idx)) out.push_back(-1 - idx);
  }
  return out;
}

std::vector<int32_t> CrushMap::devices_under(int32_t id) const {
  std::vector<int32_t> out;
  if (id >= 0) {
    out.push_back(id);
    return out;
  }
  const Bucket* b = bucket(id);
  if (!b) return out;
  for (int32_t item : b->items) {
    auto sub = devices_under(item);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

// ---------------------------------------------------------------- building

Status CrushMap::check_new_item_name(const std::string& name) const {
  if (name.empty()) return Status::invalid_argument("an item name must not be empty");
  if (name.size() > kMaxNameBytes) {
    return Status::invalid_argument("expected an item name of at most " +
                                    std::to_string(kMaxNameBytes) + " bytes, found " +
                                    quote_for_message(name));
  }
  if (item_ids_.count(name)) {
    return Status::invalid_argument("item name " + quote_for_message(name) + " is already used");
  }
  return Status();
}

Status CrushMap::add_type(int32_t id, std::string name) {
  if (id < 0) return Status::invalid_argument("type id must be >= 0, got " + std::to_string(id));
  if (type_names_.count(id)) {
    return Status::invalid_argument("type id " + std::to_string(id) + " is already defined as " +
                                    quote_for_message(type_names_[id]));
  }
  type_names_[id] = std::move(name);
  return Status();
}

Result<int32_t> CrushMap::get_or_create_class(std::string_view name) {
  if (auto id = class_id(name)) return *id;
  if (name.empty()) return Status::invalid_argument("a device class name must not be empty");
  if (name.size() > kMaxNameBytes) {
    return Status::invalid_argument("expected a device class name of at most " +
                                    std::to_string(kMaxNameBytes) + " bytes, found " +
                                    quote_for_message(name));
  }
  if (class_names_.size() >= static_cast<size_t>(kMaxDeviceClasses)) {
    return Status::invalid_argument("expected at most " + std::to_string(kMaxDeviceClasses) +
                                    " device classes, found one more: " + quote_for_message(name));
  }
  const int32_t id = class_names_.empty() ? 0 : class_names_.rbegin()->first + 1;
  class_names_[id] = std::string(name);
  return id;
}

Status CrushMap::add_device(int32_t id, std::string name, std::string_view device_class) {
  if (id < 0 || id > kMaxDeviceId) {
    return Status::invalid_argument("expected a device id 0.." + std::to_string(kMaxDeviceId) +
                                    ", found " + std::to_string(id));
  }
  if (item_names_.count(id)) {
    return Status::invalid_argument("device id " + std::to_string(id) + " is already defined as " +
                                    quote_for_message(item_names_[id]));
  }
  if (Status s = check_new_item_name(name); !s.ok()) return s;
  if (!device_class.empty()) {
    auto cls = get_or_create_class(device_class);
    if (!cls.ok()) return cls.status();
    device_classes_[id] = *cls;
  }
  item_ids_[name] = id;
  item_names_[id] = std::move(name);
  max_devices_ = std::max(max_devices_, id + 1);
  return Status();
}

void CrushMap::store_bucket(Bucket bucket) {
  const int32_t idx = -1 - bucket.id;
  if (idx >= max_buckets()) buckets_.resize(idx + 1);
  for (int32_t item : bucket.items) {
    if (item >= 0) max_devices_ = std::max(max_devices_, item + 1);
  }
  buckets_[idx] = std::move(bucket);
}

Status CrushMap::add_bucket(Bucket bucket, std::string name) {
  const std::string what = "bucket " + quote_for_message(name);
  if (bucket.id >= 0 || bucket.id < kMinBucketId) {
    return Status::invalid_argument(what + ": expected a bucket id " +
                                    std::to_string(kMinBucketId) + "..-1, found " +
                                    std::to_string(bucket.id));
  }
  if (bucket_exists(bucket.id)) {
    return Status::invalid_argument(what + ": id " + std::to_string(bucket.id) +
                                    " is already used by " +
                                    quote_for_message(*item_name(bucket.id)));
  }
  if (Status s = check_new_item_name(name); !s.ok())
    return Status::invalid_argument(what + ": " + s.message());
  if (!type_names_.count(bucket.type)) {
    return Status::invalid_argument(what + ": type " + std::to_string(bucket.type) +
                                    " is not defined");
  }
  if (bucket.item_weights.size() != bucket.items.size()) {
    return Status::invalid_argument(what + ": " + std::to_string(bucket.items.size()) +
                                    " items but " + std::to_string(bucket.item_weights.size()) +
                                    " weights");
  }
  uint64_t total = 0;
  for (size_t i = 0; i < bucket.items.size(); ++i) {
    const int32_t item = bucket.items[i];
    if (item >= 0 ? !item_names_.count(item) : !bucket_exists(item)) {
      return Status::invalid_argument(what + ": item " + std::to_string(item) + " is not defined");
    }
    if (item == bucket.id) return Status::invalid_argument(what + ": contains itself");
    total += bucket.item_weights[i];
  }
  if (const int h = height(bucket); h > kMaxHierarchyDepth) {
    return Status::invalid_argument(what + ": expected a hierarchy at most " +
                                    std::to_string(kMaxHierarchyDepth) + " levels deep, found " +
                                    std::to_string(h));
  }
  if (total > 0xffffffffull) {
    return Status::invalid_argument(what + ": item weights sum to more than 65535.99998");
  }
  if (bucket.alg == BucketAlg::kUniform) {
    for (uint32_t w : bucket.item_weights) {
      if (w != bucket.item_weights.front()) {
        return Status::invalid_argument(what +
                                        ": uniform bucket items must all have the same weight");
      }
    }
  }
  compute_bucket_derived(bucket, tunables_.straw_calc_version);
  item_ids_[name] = bucket.id;
  item_names_[bucket.id] = std::move(name);
  store_bucket(std::move(bucket));
  return Status();
}

int CrushMap::height(const Bucket& b) const {
  // Levels from `b` down to its devices; memoised so that shared subtrees count once.
  std::map<int32_t, int> memo;
  std::function<int(const Bucket&)> h = [&](const Bucket& x) {
    if (auto it = memo.find(x.id); it != memo.end()) return it->second;
    int best = 1;
    for (int32_t item : x.items) {
      if (const Bucket* c = item < 0 ? bucket(item) : nullptr) best = std::max(best, 1 + h(*c));
    }
    memo[x.id] = best;
    return best;
  };
  return h(b);
}

Status CrushMap::reserve_class_bucket_id(int32_t bucket_id, int32_t cls, int32_t shadow_id) {
  if (shadow_id >= 0 || shadow_id < kMinBucketId) {
    return Status::invalid_argument("expected a shadow bucket id " + std::to_string(kMinBucketId) +
                                    "..-1, found " + std::to_string(shadow_id));
  }
  auto& per_class = class_bucket_[bucket_id];
  if (per_class.count(cls)) {
    return Status::invalid_argument("duplicate device class " +
                                    quote_for_message(class_names_[cls]) + " for bucket " +
                                    std::to_string(bucket_id));
  }
  per_class[cls] = shadow_id;
  return Status();
}

void CrushMap::remove_shadow_buckets() {
  for (const auto& [id, origin] : shadow_origin_) {
    buckets_[-1 - id].reset();
    item_ids_.erase(item_names_[id]);
    item_names_.erase(id);
  }
  shadow_origin_.clear();
  while (!buckets_.empty() && !buckets_.back()) buckets_.pop_back();
}

Result<int32_t> CrushMap::clone_for_class(
    int32_t original, int32_t cls, const std::map<int32_t, std::map<int32_t, int32_t>>& requested,
    const std::vector<bool>& reserved) {
  const std::string copy_name = *item_name(original) + "~" + class_names_[cls];
  if (auto existing = item_id(copy_name)) return *existing;

  const Bucket orig = *bucket(original);  // copy: cloning children may grow buckets_
  Bucket copy;
  copy.type = orig.type;
  copy.alg = orig.alg;
  copy.hash = orig.hash;
  for (int32_t i = 0; i < orig.size(); ++i) {
    const int32_t item = orig.items[i];
    if (item >= 0) {
      if (device_class(item) != cls) continue;
      copy.items.push_back(item);
      copy.item_weights.push_back(orig.item_weights[i]);
    } else {
      auto child = clone_for_class(item, cls, requested, reserved);
      if (!child.ok()) return child;
      copy.items.push_back(*child);
      copy.item_weights.push_back(bucket(*child)->weight);
    }
  }
  // Ceph builds a shadow bucket empty and adds items one by one; a uniform bucket created
  // empty has item weight 0 and refuses any other weight, so such a shadow cannot exist.
  if (copy.alg == BucketAlg::kUniform) {
    for (uint32_t w : copy.item_weights) {
      if (w != 0) {
        return Status::invalid_argument(
            "bucket '" + *item_name(original) + "' uses alg uniform, which device class '" +
            class_names_[cls] + "' cannot shadow (Ceph refuses it too)");
      }
    }
  }
  int32_t id = 0;
  if (auto it = requested.find(original); it != requested.end() && it->second.count(cls)) {
    id = it->second.at(cls);
    if (bucket_exists(id)) {
      return Status::invalid_argument("shadow id " + std::to_string(id) + " requested for " +
                                      copy_name + " is already used by '" + *item_name(id) + "'");
    }
  } else {
    id = -1;
    while (id >= kMinBucketId &&
           (bucket_exists(id) ||
            (-1 - id < static_cast<int32_t>(reserved.size()) && reserved[-1 - id])))
      --id;
    if (id < kMinBucketId) {
      return Status::invalid_argument("no bucket id left in " + std::to_string(kMinBucketId) +
                                      "..-1 for the shadow bucket " + quote_for_message(copy_name));
    }
  }
  copy.id = id;
  compute_bucket_derived(copy, tunables_.straw_calc_version);
  item_ids_[copy_name] = id;
  item_names_[id] = copy_name;
  store_bucket(std::move(copy));
  class_bucket_[original][cls] = id;
  shadow_origin_[id] = {original, cls};
  return id;
}

Status CrushMap::populate_classes() {
  remove_shadow_buckets();
  // Every class gets a copy of every bucket below a root: bound the copies before making them.
  uint64_t entries = 0;
  for (const auto& b : buckets_) {
    if (b) entries += 1 + b->items.size();
  }
  if (!class_names_.empty() && entries * class_names_.size() > kMaxShadowItems) {
    return Status::invalid_argument(
        "expected at most " + std::to_string(kMaxShadowItems) +
        " shadow bucket entries (device classes x (buckets + bucket items)), found " +
        std::to_string(class_names_.size()) + " x " + std::to_string(entries));
  }
  const auto requested = class_bucket_;
  class_bucket_.clear();
  std::vector<bool> reserved;
  for (const auto& [b, per_class] : requested) {
    for (const auto& [c, shadow] : per_class) {
      const int32_t idx = -1 - shadow;
      if (idx >= static_cast<int32_t>(reserved.size())) reserved.resize(idx + 1, false);
      reserved[idx] = true;
    }
  }
  for (int32_t root : roots()) {
    for (const auto& [cls, name] : class_names_) {
      auto r = clone_for_class(root, cls, requested, reserved);
      if (!r.ok()) {
        // Keep what was requested so that a later attempt (or a writer) still knows the ids.
        for (const auto& [b, per_class] : requested) {
          for (const auto& [c, shadow] : per_class) class_bucket_[b].emplace(c, shadow);
        }
        return r.status();
      }
    }
  }
  // Requested ids for buckets that no longer exist are dropped, as Ceph does.
  finalize();
  return Status();
}

Status CrushMap::add_rule(Rule rule) {
  if (rule.id < 0 || rule.id > kMaxRuleId) {
    return Status::invalid_argument("expected a rule id 0.." + std::to_string(kMaxRuleId) +
                                    ", found " + std::to_string(rule.id));
  }
  if (this->rule(rule.id)) {
    return Status::invalid_argument("rule id " + std::to_string(rule.id) + " is already used by " +
                                    quote_for_message(rules_[rule.id]->name));
  }
  if (!rule.name.empty() && rule_id(rule.name)) {
    return Status::invalid_argument("rule name " + quote_for_message(rule.name) +
                                    " is already used");
  }
  if (rule.id >= max_rules()) rules_.resize(rule.id + 1);
  rules_[rule.id] = std::move(rule);
  return Status();
}

Status CrushMap::set_choose_args(int64_t index, ChooseArgs args) {
  if (static_cast<int32_t>(args.size()) > max_buckets()) {
    return Status::invalid_argument("choose_args " + std::to_string(index) + " has entries for " +
                                    std::to_string(args.size()) + " buckets, the map has " +
                                    std::to_string(max_buckets()));
  }
  if (!choose_args_.count(index)) {
    const uint64_t sets = choose_args_.size() + 1;
    if (sets > static_cast<uint64_t>(kMaxChooseArgsSets) ||
        sets * static_cast<uint64_t>(max_buckets()) > kMaxChooseArgsSlots) {
      return Status::invalid_argument(
          "expected at most " + std::to_string(kMaxChooseArgsSets) + " choose_args sets and " +
          std::to_string(kMaxChooseArgsSlots) + " set x bucket slots, found " +
          std::to_string(sets) + " sets x " + std::to_string(max_buckets()) + " buckets");
    }
  }
  args.resize(max_buckets());
  for (int32_t idx = 0; idx < max_buckets(); ++idx) {
    const ChooseArg& a = args[idx];
    if (a.weight_set.empty() && a.ids.empty()) continue;
    const Bucket* b = buckets_[idx] ? &*buckets_[idx] : nullptr;
    const std::string where =
        "choose_args " + std::to_string(index) + " bucket_id " + std::to_string(-1 - idx);
    if (!b) return Status::invalid_argument(where + ": no such bucket");
    if (a.weight_set.size() > static_cast<size_t>(kMaxWeightSetPositions)) {
      return Status::invalid_argument(
          where + ": expected at most " + std::to_string(kMaxWeightSetPositions) +
          " weight_set positions, found " + std::to_string(a.weight_set.size()));
    }
    for (const auto& ws : a.weight_set) {
      if (static_cast<int32_t>(ws.size()) != b->size()) {
        return Status::invalid_argument(where + ": needs exactly " + std::to_string(b->size()) +
                                        " weights but got " + std::to_string(ws.size()));
      }
    }
    if (!a.ids.empty() && static_cast<int32_t>(a.ids.size()) != b->size()) {
      return Status::invalid_argument(where + ": needs exactly " + std::to_string(b->size()) +
                                      " ids but got " + std::to_string(a.ids.size()));
    }
  }
  choose_args_[index] = std::move(args);
  return Status();
}

Status CrushMap::set_item_weight(int32_t bucket_id, int32_t item, uint32_t weight) {
  if (!bucket_exists(bucket_id)) {
    return Status::invalid_argument("no bucket with id " + std::to_string(bucket_id));
  }
  Bucket& b = *buckets_[-1 - bucket_id];
  auto it = std::find(b.items.begin(), b.items.end(), item);
  if (it == b.items.end()) {
    return Status::invalid_argument("item " + std::to_string(item) + " is not in bucket " +
                                    std::to_string(bucket_id));
  }
  b.item_weights[it - b.items.begin()] = weight;
  compute_bucket_derived(b, tunables_.straw_calc_version);
  return Status();
}

Status CrushMap::add_bucket_item(int32_t bucket_id, int32_t item, uint32_t weight) {
  if (!bucket_exists(bucket_id))
    return Status::invalid_argument("no bucket with id " + std::to_string(bucket_id));
  if (item >= 0 ? !item_names_.count(item) : !bucket_exists(item)) {
    return Status::invalid_argument("item " + std::to_string(item) + " is not defined");
  }
  Bucket& b = *buckets_[-1 - bucket_id];
  if (std::find(b.items.begin(), b.items.end(), item) != b.items.end()) {
    return Status::invalid_argument("item " + std::to_string(item) + " is already in bucket " +
                                    std::to_string(bucket_id));
  }
  if (b.alg == BucketAlg::kUniform && !b.items.empty() && weight != b.item_weights.front()) {
    return Status::invalid_argument("uniform bucket " + std::to_string(bucket_id) +
                                    " items must all have the same weight");
  }
  if (uint64_t{b.weight} + weight > 0xffffffffull) {
    return Status::invalid_argument("bucket " + std::to_string(bucket_id) +
                                    " would weigh more than 65535");
  }
  b.items.push_back(item);
  b.item_weights.push_back(weight);
  compute_bucket_derived(b, tunables_.straw_calc_version);
  if (item >= 0) max_devices_ = std::max(max_devices_, item + 1);
  return Status();
}

Status CrushMap::set_item_weight_up_tree(int32_t item, uint32_t weight) {
  bool found = false;
  for (int32_t idx = 0; idx < max_buckets(); ++idx) {
    if (!buckets_[idx] || is_shadow(-1 - idx)) continue;
    Bucket& b = *buckets_[idx];
    auto it = std::find(b.items.begin(), b.items.end(), item);
    if (it == b.items.end()) continue;
    found = true;
    b.item_weights[it - b.items.begin()] = weight;
    compute_bucket_derived(b, tunables_.straw_calc_version);
    if (Status s = set_item_weight_up_tree(b.id, b.weight); !s.ok() && parent_of(b.id)) return s;
  }
  return found ? Status() : Status::not_found("item " + std::to_string(item) + " is in no bucket");
}

void CrushMap::finalize() {
  int32_t m = 0;
  for (const auto& b : buckets_) {
    if (!b) continue;
    for (int32_t item : b->items) m = std::max(m, item + 1);
  }
  if (!item_names_.empty()) m = std::max(m, item_names_.rbegin()->first + 1);
  max_devices_ = m;
}

}  // namespace granary::crush

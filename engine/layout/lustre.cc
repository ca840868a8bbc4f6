#include "engine/layout/lustre.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace granary::layout {

namespace {

void append_range(std::vector<ByteRange>& ranges, uint64_t offset_bytes, uint64_t length_bytes) {
  if (!ranges.empty() && ranges.back().end_bytes() == offset_bytes) {
    ranges.back().length_bytes += length_bytes;
  } else {
    ranges.push_back({offset_bytes, length_bytes});
  }
}

Status check_stripe_size(uint64_t stripe_size_bytes) {
  if (stripe_size_bytes == 0 || stripe_size_bytes % kLustreStripeAlignBytes != 0 ||
      stripe_size_bytes > kLustreMaxStripeSizeBytes) {
    return Status::invalid_argument("Lustre stripe_size_bytes " +
                                    std::to_string(stripe_size_bytes) +
                                    ": expected a non-zero multiple of 64 KiB (65536) no larger "
                                    "than 4 GiB - 64 KiB");
  }
  return Status::ok_status();
}

constexpr uint32_t kMiBShift = 20;

}  // namespace

Status check_lustre_layout_spec(const LustreLayoutSpec& spec) {
  if (Status s = check_stripe_size(spec.stripe_size_bytes); !s.ok()) return s;
  if (spec.stripe_count != kStripeCountAll &&
      (spec.stripe_count < 1 || spec.stripe_count > kLustreMaxStripeCount)) {
    return Status::invalid_argument("Lustre stripe_count " + std::to_string(spec.stripe_count) +
                                    ": expected 1 .. " + std::to_string(kLustreMaxStripeCount) +
                                    ", or -1 for all OSTs");
  }
  if (spec.start_ost_index != kStartOstAny &&
      (spec.start_ost_index < 0 ||
       static_cast<uint32_t>(spec.start_ost_index) > kLustreMaxOstIndex)) {
    return Status::invalid_argument("Lustre start_ost_index " +
                                    std::to_string(spec.start_ost_index) +
                                    ": expected an OST index 0 .. 65535, or -1 to let the "
                                    "allocator choose");
  }
  return Status::ok_status();
}

// ---- LustreFileLayout -------------------------------------------------------------------------

Result<LustreFileLayout> LustreFileLayout::create(uint64_t stripe_size_bytes,
                                                  std::vector<uint32_t> ost_indices) {
  if (Status s = check_stripe_size(stripe_size_bytes); !s.ok()) return s;
  if (ost_indices.empty() || ost_indices.size() > static_cast<size_t>(kLustreMaxStripeCount)) {
    return Status::invalid_argument("Lustre layout with " + std::to_string(ost_indices.size()) +
                                    " OSTs: expected 1 .. " +
                                    std::to_string(kLustreMaxStripeCount));
  }
  std::set<uint32_t> seen;
  for (uint32_t ost : ost_indices) {
    if (!seen.insert(ost).second) {
      return Status::invalid_argument("Lustre layout lists OST " + std::to_string(ost) +
                                      " twice (overstriping is not modelled)");
    }
  }
  return LustreFileLayout(stripe_size_bytes, std::move(ost_indices));
}

StripePosition LustreFileLayout::locate(uint64_t file_offset_bytes) const {
  const uint64_t ss = stripe_size_bytes_;
  const uint64_t count = ost_indices_.size();
  const uint64_t k = file_offset_bytes / ss;
  const auto stripe_index = static_cast<uint32_t>(k % count);
  // (k / count) * ss <= k * ss <= file_offset: no overflow.
  return {stripe_index, ost_indices_[stripe_index], (k / count) * ss + file_offset_bytes % ss};
}

Result<std::vector<StripeExtent>> LustreFileLayout::file_to_objects(uint64_t file_offset_bytes,
                                                                    uint64_t length_bytes) const {
  if (length_bytes > UINT64_MAX - file_offset_bytes) {
    return Status::invalid_argument("Lustre file range at offset " +
                                    std::to_string(file_offset_bytes) + " with length " +
                                    std::to_string(length_bytes) + " overflows 64-bit offsets");
  }
  const uint64_t ss = stripe_size_bytes_;
  std::map<uint32_t, std::vector<StripeExtent>> by_stripe;
  uint64_t cur = file_offset_bytes;
  uint64_t left = length_bytes;
  while (left > 0) {
    const StripePosition pos = locate(cur);
    const uint64_t piece = std::min(left, ss - cur % ss);
    std::vector<StripeExtent>& extents = by_stripe[pos.stripe_index];
    if (extents.empty() || extents.back().object_offset_bytes + extents.back().length_bytes !=
                               pos.object_offset_bytes) {
      extents.push_back({pos.stripe_index, pos.ost_index, pos.object_offset_bytes, 0, {}});
    }
    StripeExtent& ex = extents.back();
    ex.length_bytes += piece;
    append_range(ex.file_ranges, cur, piece);
    cur += piece;
    left -= piece;
  }
  std::vector<StripeExtent> out;
  for (auto& [stripe_index, extents] : by_stripe) {
    for (StripeExtent& ex : extents) out.push_back(std::move(ex));
  }
  return out;
}

Result<std::vector<ByteRange>> LustreFileLayout::object_to_file(uint32_t stripe_index,
                                                                uint64_t object_offset_bytes,
                                                                uint64_t length_bytes) const {
  const uint64_t count = ost_indices_.size();
  if (stripe_index >= count) {
    return Status::invalid_argument("Lustre stripe index " + std::to_string(stripe_index) +
                                    " of a layout with " + std::to_string(count) + " stripes");
  }
  const uint64_t ss = stripe_size_bytes_;
  std::vector<ByteRange> out;
  uint64_t off = object_offset_bytes;
  uint64_t left = length_bytes;
  while (left > 0) {
    // k = (off / ss) * count + stripe_index; file offset = k * ss + off % ss (checked).
    const uint64_t piece = std::min(left, ss - off % ss);
    uint64_t k = 0, file_off = 0;
    if (__builtin_mul_overflow(off / ss, count, &k) ||
        __builtin_add_overflow(k, uint64_t{stripe_index}, &k) ||
        __builtin_mul_overflow(k, ss, &file_off) ||
        __builtin_add_overflow(file_off, off % ss, &file_off) || piece > UINT64_MAX - file_off ||
        piece > UINT64_MAX - off) {
      return Status::invalid_argument("Lustre stripe " + std::to_string(stripe_index) +
                                      " object offset " + std::to_string(off) +
                                      " maps past the largest 64-bit file offset");
    }
    append_range(out, file_off, piece);
    off += piece;
    left -= piece;
  }
  return out;
}

uint64_t LustreFileLayout::object_size_bytes(uint64_t file_size_bytes,
                                             uint32_t stripe_index) const {
  GRANARY_CHECK(stripe_index < ost_indices_.size());
  const uint64_t ss = stripe_size_bytes_;
  const uint64_t row = ss * ost_indices_.size();  // < 2^32 * 2000: fits
  const uint64_t full_rows = file_size_bytes / row;
  const uint64_t rem = file_size_bytes % row;
  const uint64_t before = uint64_t{stripe_index} * ss;
  const uint64_t tail = rem <= before ? 0 : std::min(ss, rem - before);
  return full_rows * ss + tail;
}

// ---- OstAllocator -----------------------------------------------------------------------------

const char* to_string(AllocationPolicy policy) {
  switch (policy) {
    case AllocationPolicy::kSpecific:
      return "specific";
    case AllocationPolicy::kRoundRobin:
      return "round-robin";
    case AllocationPolicy::kQos:
      return "qos";
  }
  return "?";
}

Result<OstAllocator> OstAllocator::create(std::vector<Ost> pool,
                                          const OstAllocatorOptions& options) {
  if (pool.empty()) return Status::invalid_argument("OST pool is empty");
  std::sort(pool.begin(), pool.end(), [](const Ost& a, const Ost& b) { return a.index < b.index; });
  for (size_t i = 0; i < pool.size(); ++i) {
    const Ost& o = pool[i];
    const std::string name = "OST " + std::to_string(o.index);
    if (o.index > kLustreMaxOstIndex) {
      return Status::invalid_argument(name + ": index above " + std::to_string(kLustreMaxOstIndex));
    }
    if (i > 0 && pool[i - 1].index == o.index) {
      return Status::invalid_argument(name + " appears twice in the pool");
    }
    if (o.capacity_bytes == 0) return Status::invalid_argument(name + ": capacity_bytes is 0");
    if (o.free_bytes > o.capacity_bytes) {
      return Status::invalid_argument(name + ": free_bytes " + std::to_string(o.free_bytes) +
                                      " exceeds capacity_bytes " +
                                      std::to_string(o.capacity_bytes));
    }
  }
  if (options.qos_threshold_rr_percent > 100) {
    return Status::invalid_argument("qos_threshold_rr_percent " +
                                    std::to_string(options.qos_threshold_rr_percent) +
                                    ": expected 0 .. 100");
  }
  if (options.qos_prio_free_percent > 100) {
    return Status::invalid_argument("qos_prio_free_percent " +
                                    std::to_string(options.qos_prio_free_percent) +
                                    ": expected 0 .. 100");
  }
  if (options.reserved_free_permille >= 1000) {
    return Status::invalid_argument("reserved_free_permille " +
                                    std::to_string(options.reserved_free_permille) +
                                    ": expected 0 .. 999");
  }
  return OstAllocator(std::move(pool), options);
}

OstAllocator::OstAllocator(std::vector<Ost> pool, const OstAllocatorOptions& options)
    : osts_(std::move(pool)), options_(options), ost_penalty_(osts_.size(), 0) {
  rebuild();
}

bool OstAllocator::eligible(const Ost& ost) const {
  if (ost.state != OstState::kActive) return false;
  const unsigned __int128 free_scaled = static_cast<unsigned __int128>(ost.free_bytes) * 1000;
  const unsigned __int128 reserve_scaled =
      static_cast<unsigned __int128>(ost.capacity_bytes) * options_.reserved_free_permille;
  return free_scaled > reserve_scaled;
}

void OstAllocator::rebuild() {
  eligible_.clear();
  oss_avail_mib_.clear();
  oss_eligible_count_.clear();
  std::map<uint32_t, std::vector<size_t>> by_oss;  // ascending OSS id, ascending OST index
  for (size_t pos = 0; pos < osts_.size(); ++pos) {
    const Ost& o = osts_[pos];
    if (!eligible(o)) continue;
    eligible_.push_back(pos);
    by_oss[o.oss].push_back(pos);
    oss_avail_mib_[o.oss] += o.free_bytes >> kMiBShift;
    oss_eligible_count_[o.oss] += 1;
  }
  const size_t n = eligible_.size();
  constexpr size_t kEmpty = SIZE_MAX;
  rr_.assign(n, kEmpty);
  for (const auto& [oss, members] : by_oss) {
    for (size_t j = 0; j < members.size(); ++j) {
      size_t slot = j * n / members.size();
      while (rr_[slot] != kEmpty) slot = (slot + 1) % n;
      rr_[slot] = members[j];
    }
  }
}

std::vector<uint32_t> OstAllocator::eligible_osts() const {
  std::vector<uint32_t> out;
  for (size_t pos : eligible_) out.push_back(osts_[pos].index);
  return out;
}

std::vector<uint32_t> OstAllocator::rr_order() const {
  std::vector<uint32_t> out;
  for (size_t pos : rr_) out.push_back(osts_[pos].index);
  return out;
}

bool OstAllocator::balanced() const {
  if (eligible_.size() < 2) return true;
  uint64_t max_free = 0, min_free = UINT64_MAX;
  for (size_t pos : eligible_) {
    max_free = std::max(max_free, osts_[pos].free_bytes);
    min_free = std::min(min_free, osts_[pos].free_bytes);
  }
  return static_cast<unsigned __int128>(max_free - min_free) * 100 <=
         static_cast<unsigned __int128>(max_free) * options_.qos_threshold_rr_percent;
}

uint64_t OstAllocator::weight(size_t pos) const {
  const Ost& o = osts_[pos];
  const uint64_t avail = o.free_bytes >> kMiBShift;
  const auto it = oss_penalty_.find(o.oss);
  const uint64_t penalty = ost_penalty_[pos] + (it == oss_penalty_.end() ? 0 : it->second);
  return avail - std::min(avail, penalty);
}

std::vector<uint64_t> OstAllocator::qos_weights() const {
  std::vector<uint64_t> out;
  for (size_t pos : eligible_) out.push_back(weight(pos));
  return out;
}

Status OstAllocator::set_free_bytes(uint32_t ost_index, uint64_t free_bytes) {
  for (Ost& o : osts_) {
    if (o.index != ost_index) continue;
    if (free_bytes > o.capacity_bytes) {
      return Status::invalid_argument("OST " + std::to_string(ost_index) + ": free_bytes " +
                                      std::to_string(free_bytes) + " exceeds capacity_bytes " +
                                      std::to_string(o.capacity_bytes));
    }
    o.free_bytes = free_bytes;
    rebuild();
    return Status::ok_status();
  }
  return Status::not_found("OST " + std::to_string(ost_index) + " is not in the pool");
}

Status OstAllocator::set_state(uint32_t ost_index, OstState state) {
  for (Ost& o : osts_) {
    if (o.index != ost_index) continue;
    o.state = state;
    rebuild();
    return Status::ok_status();
  }
  return Status::not_found("OST " + std::to_string(ost_index) + " is not in the pool");
}

Result<OstAllocation> OstAllocator::allocate(const LustreLayoutSpec& spec, Random& rng) {
  if (Status s = check_lustre_layout_spec(spec); !s.ok()) return s;
  size_t start_pos = SIZE_MAX;
  if (spec.start_ost_index != kStartOstAny) {
    const auto want = static_cast<uint32_t>(spec.start_ost_index);
    const auto it = std::lower_bound(osts_.begin(), osts_.end(), want,
                                     [](const Ost& o, uint32_t idx) { return o.index < idx; });
    if (it == osts_.end() || it->index != want) {
      return Status::invalid_argument("Lustre start_ost_index " + std::to_string(want) +
                                      " is not in the OST pool");
    }
    start_pos = static_cast<size_t>(it - osts_.begin());
  }
  const auto n = static_cast<uint32_t>(eligible_.size());
  if (n == 0) {
    return Status::not_found("no OST can take a new object: all " + std::to_string(osts_.size()) +
                             " are inactive or below the free-space reserve");
  }
  // -1 stripes over every OST, as Lustre does up to its LOV_MAX_STRIPE_COUNT.
  const uint32_t count = spec.stripe_count == kStripeCountAll
                             ? std::min(n, static_cast<uint32_t>(kLustreMaxStripeCount))
                             : std::min(n, static_cast<uint32_t>(spec.stripe_count));
  std::vector<uint32_t> chosen;
  chosen.reserve(count);
  AllocationPolicy policy;
  if (start_pos != SIZE_MAX) {
    policy = AllocationPolicy::kSpecific;
    allocate_specific(start_pos, count, chosen);
  } else if (balanced() || n < 2 || count >= n) {
    policy = AllocationPolicy::kRoundRobin;
    allocate_rr(count, rng, chosen);
  } else {
    policy = AllocationPolicy::kQos;
    allocate_qos(count, rng, chosen);
  }
  GRANARY_CHECK(chosen.size() == count);
  Result<LustreFileLayout> layout = LustreFileLayout::create(spec.stripe_size_bytes, chosen);
  GRANARY_CHECK(layout.ok());
  return OstAllocation{std::move(layout).value(), policy};
}

void OstAllocator::allocate_specific(size_t start_pos, uint32_t count,
                                     std::vector<uint32_t>& out) const {
  for (size_t i = 0; i < osts_.size() && out.size() < count; ++i) {
    const Ost& o = osts_[(start_pos + i) % osts_.size()];
    if (eligible(o)) out.push_back(o.index);
  }
}

void OstAllocator::allocate_rr(uint32_t count, Random& rng, std::vector<uint32_t>& out) {
  const uint64_t n = rr_.size();
  const bool reseed =
      !rr_started_ || (options_.rr_random_start && options_.rr_reseed_interval_files != 0 &&
                       rr_files_since_seed_ >= options_.rr_reseed_interval_files);
  if (reseed) {
    rr_cursor_ = options_.rr_random_start ? rng.uniform(n) : 0;
    rr_files_since_seed_ = 0;
    rr_started_ = true;
  } else if (rr_cursor_ >= n || count >= n) {
    rr_cursor_ %= n;
    if (count > 1 && n % count != 1) rr_offset_ = (rr_offset_ + 1) % n;
  }
  ++rr_files_since_seed_;

  // Stripes of this file per OSS, and eligible OSTs of each OSS not yet in the file.
  std::map<uint32_t, uint32_t> load;
  std::map<uint32_t, uint32_t> unused = oss_eligible_count_;
  const auto min_load = [&] {
    uint32_t m = UINT32_MAX;
    for (const auto& [oss, left] : unused) {
      if (left > 0) m = std::min(m, load[oss]);
    }
    return m;
  };
  std::vector<bool> used(n, false);
  uint32_t floor_load = 0;  // min load over OSSes with unused OSTs
  while (out.size() < count) {
    const uint64_t slot = (rr_cursor_ + rr_offset_) % n;
    ++rr_cursor_;
    if (used[slot]) continue;
    const Ost& o = osts_[rr_[slot]];
    if (load[o.oss] > floor_load) continue;
    used[slot] = true;
    out.push_back(o.index);
    load[o.oss] += 1;
    unused[o.oss] -= 1;
    floor_load = min_load();
  }
}

void OstAllocator::allocate_qos(uint32_t count, Random& rng, std::vector<uint32_t>& out) {
  for (uint64_t& p : ost_penalty_) p >>= 1;
  for (auto& [oss, p] : oss_penalty_) p >>= 1;
  const uint64_t wide = 100 - options_.qos_prio_free_percent;
  std::vector<size_t> candidates = eligible_;  // ascending OST index
  while (out.size() < count) {
    uint64_t total = 0;
    for (size_t pos : candidates) total += weight(pos);
    size_t pick = 0;  // index into candidates
    if (total == 0) {
      pick = static_cast<size_t>(rng.uniform(candidates.size()));
    } else {
      const uint64_t r = rng.uniform(total);
      uint64_t sum = 0;
      for (pick = 0; pick < candidates.size(); ++pick) {
        sum += weight(candidates[pick]);
        if (r < sum) break;
      }
      GRANARY_CHECK(pick < candidates.size());
    }
    const size_t pos = candidates[pick];
    candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
    const Ost& o = osts_[pos];
    out.push_back(o.index);
    ost_penalty_[pos] += (o.free_bytes >> kMiBShift) * wide / 200;
    oss_penalty_[o.oss] += oss_avail_mib_[o.oss] / oss_eligible_count_[o.oss] * wide / 100;
  }
}

}  // namespace granary::layout

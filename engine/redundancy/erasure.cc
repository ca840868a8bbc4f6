#include "engine/redundancy/erasure.h"

#include <algorithm>
#include <string>

namespace granary::redundancy {

Status ErasureProfile::check() const {
  if (k < 1 || m < 0 || k + m > 256) {
    return Status::invalid_argument("erasure code " + std::to_string(k) + "+" + std::to_string(m) +
                                    ": expected k >= 1, m >= 0 and k + m <= 256");
  }
  if (stripe_unit_bytes == 0)
    return Status::invalid_argument("erasure code: stripe unit of 0 bytes");
  return Status();
}

uint64_t shard_bytes(const ErasureProfile& p, uint64_t object_bytes) {
  const uint64_t w = p.stripe_bytes();
  return (object_bytes + w - 1) / w * p.stripe_unit_bytes;
}

uint64_t total_bytes(const std::vector<ShardExtent>& extents) {
  uint64_t n = 0;
  for (const auto& e : extents) n += e.length_bytes;
  return n;
}

namespace {

// The part of data shard i holding object bytes [a, b), as a shard range [start, end).
void shard_range(const ErasureProfile& p, int i, uint64_t a, uint64_t b, uint64_t& start,
                 uint64_t& end) {
  const uint64_t su = p.stripe_unit_bytes, w = p.stripe_bytes();
  const uint64_t lo = static_cast<uint64_t>(i) * su, hi = lo + su;  // chunk i within a stripe
  {
    const uint64_t s = a / w, r = a % w;
    if (r >= hi) {
      start = (s + 1) * su;
    } else if (r >= lo) {
      start = s * su + (r - lo);
    } else {
      start = s * su;
    }
  }
  {
    const uint64_t t = (b - 1) / w, r = (b - 1) % w;
    if (r >= hi) {
      end = t * su + su;
    } else if (r >= lo) {
      end = t * su + (r - lo) + 1;
    } else {
      end = t * su;
    }
  }
}

}  // namespace

std::vector<ShardExtent> data_extents(const ErasureProfile& p, uint64_t offset_bytes,
                                      uint64_t length_bytes) {
  std::vector<ShardExtent> out;
  if (length_bytes == 0) return out;
  for (int i = 0; i < p.k; ++i) {
    uint64_t start = 0, end = 0;
    shard_range(p, i, offset_bytes, offset_bytes + length_bytes, start, end);
    if (end > start) out.push_back({i, start, end - start});
  }
  return out;
}

Result<ReadPlan> plan_read(const ErasureProfile& p, uint64_t offset_bytes, uint64_t length_bytes,
                           const std::vector<bool>& available) {
  ReadPlan plan;
  const auto data = data_extents(p, offset_bytes, length_bytes);
  auto up = [&](int shard) {
    return static_cast<size_t>(shard) < available.size() && available[shard];
  };
  int missing = 0;
  for (const auto& e : data) missing += up(e.shard) ? 0 : 1;
  if (missing == 0) {
    plan.reads = data;
    return plan;
  }
  std::vector<int> sources;
  for (int s = 0; s < p.shards() && static_cast<int>(sources.size()) < p.k; ++s) {
    if (up(s)) sources.push_back(s);
  }
  if (static_cast<int>(sources.size()) < p.k) {
    return Status::invalid_argument("erasure code " + std::to_string(p.k) + "+" +
                                    std::to_string(p.m) + ": only " +
                                    std::to_string(sources.size()) + " shards available, " +
                                    std::to_string(p.k) + " needed to decode");
  }
  const uint64_t w = p.stripe_bytes(), su = p.stripe_unit_bytes;
  const uint64_t s0 = offset_bytes / w, s1 = (offset_bytes + length_bytes - 1) / w;
  const uint64_t span = (s1 - s0 + 1) * su;
  for (int s : sources) plan.reads.push_back({s, s0 * su, span});
  plan.decode_bytes = static_cast<uint64_t>(missing) * span;
  return plan;
}

WritePlan plan_write(const ErasureProfile& p, uint64_t object_bytes, uint64_t offset_bytes,
                     uint64_t length_bytes) {
  WritePlan plan;
  if (length_bytes == 0) return plan;
  const uint64_t su = p.stripe_unit_bytes, w = p.stripe_bytes();
  const uint64_t a = offset_bytes, b = offset_bytes + length_bytes;
  const uint64_t s0 = a / w, s1 = (b - 1) / w;
  plan.stripes = s1 - s0 + 1;
  plan.encode_bytes = plan.stripes * w;
  // Old data a partly overwritten stripe needs: its chunks not wholly overwritten that hold
  // bytes of the object.
  std::vector<ShardExtent> reads;
  auto rmw = [&](uint64_t s) {
    bool any = false;
    for (int i = 0; i < p.k; ++i) {
      const uint64_t c0 = s * w + static_cast<uint64_t>(i) * su, c1 = c0 + su;
      if (c0 >= a && c1 <= b) continue;  // overwritten
      if (c0 >= object_bytes) continue;  // nothing there yet
      reads.push_back({i, s * su, su});
      any = true;
    }
    if (any) ++plan.partial_stripes;
  };
  rmw(s0);
  if (s1 != s0) rmw(s1);
  std::stable_sort(reads.begin(), reads.end(),
                   [](const ShardExtent& x, const ShardExtent& y) { return x.shard < y.shard; });
  plan.reads = std::move(reads);
  // Data chunks touched, whole, then every coding chunk of the touched stripes.
  for (const auto& e : data_extents(p, a, length_bytes)) {
    const uint64_t start = e.offset_bytes / su * su;
    const uint64_t end = (e.offset_bytes + e.length_bytes + su - 1) / su * su;
    plan.writes.push_back({e.shard, start, end - start});
  }
  for (int j = 0; j < p.m; ++j) plan.writes.push_back({p.k + j, s0 * su, plan.stripes * su});
  return plan;
}

}  // namespace granary::redundancy

// Lustre-style file layouts (a plain LOV/LOD RAID-0 layout, one component) and the allocator
// that picks OSTs for a new file.
//
// Mapping (LustreFileLayout): a file with stripe size S and OSTs o[0..c-1]. Byte `off` is in
// stripe k = off / S of the file, which is stored on
//   stripe_index = k % c,  OST o[stripe_index],
//   object offset = (k / c) * S + off % S.
// A byte range maps to one StripeExtent per contiguous piece of a stripe object (adjacent pieces
// merge; a contiguous file range gives at most one extent per object), ordered by stripe index
// then object offset, each listing the file ranges it holds (absolute, in file order, adjacent
// ranges merged). Cost: O(length / stripe size + extents).
//
// Allocation (OstAllocator::allocate), for LustreLayoutSpec {stripe size, count, start OST}:
//  - Eligible OSTs: state kActive and free_bytes > capacity_bytes * reserved_free_permille/1000
//    (Lustre's reserved_mb_low, without its hysteresis). N = number of eligible OSTs.
//  - Stripe count: -1 means N; a larger count is reduced to N (Lustre does the same); no
//    eligible OST is a not_found error. An OST never holds two stripes of one file.
//  - Start OST given (>= 0, must be in the pool): "specific" allocation; stripes go to eligible
//    OSTs in ascending OST index order starting at that OST, wrapping around.
//  - Start OST -1: balanced iff (max_free - min_free) * 100 <= qos_threshold_rr_percent *
//    max_free over eligible OSTs (absolute free bytes; default threshold 17%, Lustre's
//    qos_threshold_rr). Round-robin when balanced, when N < 2, or when count == N; weighted
//    (QoS) otherwise.
//  - Round robin. The RR array is built from the eligible OSTs: OSSes in ascending id, each
//    OSS's n OSTs in ascending index; its j-th OST goes to slot floor(j * N / n), or the next
//    free slot after it (wrapping), so the OSTs of one OSS are spread evenly over the array and
//    neighbouring slots tend to belong to different OSSes (Lustre's lod_qos_calc_rr idea). A
//    cursor persists between files. Per file: on the first RR file the cursor is set to
//    rng.uniform(N) (0 when rr_random_start is false) and again every rr_reseed_interval_files
//    RR files (0: never again); otherwise, if the cursor ran past the array end or count >= N,
//    it wraps (cursor %= N) and, when count > 1 and N % count != 1, a precession offset grows
//    by one so that stripe 0 of successive files moves over all OSTs. The walk then visits
//    slot (cursor + offset) % N, cursor += 1, and takes the OST there unless it is already in
//    the file or its OSS already holds more stripes of this file than some other OSS that
//    still has an unused eligible OST. Thus consecutive stripes land on distinct OSSes where
//    possible (a Granary rule; Lustre relies on the array order alone).
//  - QoS (weighted random). Free space in MiB: avail_i = free_bytes_i >> 20; an OSS's avail is
//    the sum over its eligible OSTs, n_s how many it has. Each OST and OSS carries a penalty;
//    weight_i = avail_i - min(avail_i, penalty_i + penalty_oss(i)). Every QoS file first halves
//    all penalties (the engine has no clock: the decay is per file, not Lustre's per
//    qos_maxage). Stripe by stripe: total = sum of candidate weights (eligible, not yet in the
//    file); if total > 0, r = rng.uniform(total) and the first candidate in ascending OST index
//    whose running weight sum exceeds r is taken; if total == 0, a candidate is taken uniformly
//    (rng.uniform(count of candidates)). After each take, with w = 100 - qos_prio_free_percent
//    (Lustre's qos_prio_free, default 91%): penalty_i += avail_i * w / 200 and
//    penalty_oss += (oss avail / n_s) * w / 100. With prio_free 100% only free space counts;
//    lower values push a file's stripes (and the next files) onto other OSTs and OSSes; at 0%
//    an OSS that just took a stripe has about zero weight for the rest of the file.
// RR and specific allocation never draw from the Random except for the RR start (above).
// All arithmetic is integer (divisions round down). Any pool change (set_free_bytes,
// set_state) recomputes the eligible set and the RR array; the RR cursor and the penalties
// carry over.
//
// Thread-safety: LustreFileLayout is an immutable value. OstAllocator is mutable state (RR
// cursor, penalties, pool); one per simulated MDS, used from one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "engine/layout/extent.h"
#include "engine/random.h"
#include "engine/status.h"

namespace granary::layout {

constexpr uint64_t kLustreStripeAlignBytes = uint64_t{64} << 10;  // stripe sizes: multiples
constexpr uint64_t kLustreMaxStripeSizeBytes = (uint64_t{4} << 30) - kLustreStripeAlignBytes;
constexpr int32_t kLustreMaxStripeCount = 2000;  // LOV_MAX_STRIPE_COUNT
constexpr int32_t kStripeCountAll = -1;          // lfs setstripe -c -1
constexpr int32_t kStartOstAny = -1;             // lfs setstripe -i -1
constexpr uint32_t kLustreMaxOstIndex = 65535;

struct LustreLayoutSpec {
  uint64_t stripe_size_bytes = uint64_t{1} << 20;  // multiple of 64 KiB, <= 4 GiB - 64 KiB
  int32_t stripe_count = 1;                        // 1 .. 2000, or kStripeCountAll
  int32_t start_ost_index = kStartOstAny;          // an OST of the pool, or kStartOstAny
};

// Checks the ranges above (not whether the start OST is in a pool; allocate does that).
Status check_lustre_layout_spec(const LustreLayoutSpec& spec);

// Where one file byte lives.
struct StripePosition {
  uint32_t stripe_index = 0;
  uint32_t ost_index = 0;
  uint64_t object_offset_bytes = 0;
  bool operator==(const StripePosition&) const = default;
};

// A contiguous byte range of one stripe object and the file ranges stored there.
struct StripeExtent {
  uint32_t stripe_index = 0;
  uint32_t ost_index = 0;
  uint64_t object_offset_bytes = 0;
  uint64_t length_bytes = 0;
  std::vector<ByteRange> file_ranges;  // in file order; lengths sum to length_bytes
  bool operator==(const StripeExtent&) const = default;
};

// One file's layout: stripe size and the OST of each stripe index.
class LustreFileLayout {
 public:
  // Stripe size as in LustreLayoutSpec; 1 .. 2000 distinct OST indices (no overstriping).
  static Result<LustreFileLayout> create(uint64_t stripe_size_bytes,
                                         std::vector<uint32_t> ost_indices);

  uint64_t stripe_size_bytes() const { return stripe_size_bytes_; }
  uint32_t stripe_count() const { return static_cast<uint32_t>(ost_indices_.size()); }
  const std::vector<uint32_t>& ost_indices() const { return ost_indices_; }

  StripePosition locate(uint64_t file_offset_bytes) const;

  // Empty for length 0; error if offset + length overflows 64 bits.
  Result<std::vector<StripeExtent>> file_to_objects(uint64_t file_offset_bytes,
                                                    uint64_t length_bytes) const;

  // The file ranges held by bytes [object_offset, object_offset + length) of the object of
  // `stripe_index`, in object order, adjacent ranges merged. Error for a stripe index >= count
  // or a file offset past 64 bits.
  Result<std::vector<ByteRange>> object_to_file(uint32_t stripe_index, uint64_t object_offset_bytes,
                                                uint64_t length_bytes) const;

  // Size of the object of `stripe_index` when the file is `file_size_bytes` long and dense.
  uint64_t object_size_bytes(uint64_t file_size_bytes, uint32_t stripe_index) const;

 private:
  LustreFileLayout(uint64_t stripe_size_bytes, std::vector<uint32_t> ost_indices)
      : stripe_size_bytes_(stripe_size_bytes), ost_indices_(std::move(ost_indices)) {}

  uint64_t stripe_size_bytes_;
  std::vector<uint32_t> ost_indices_;
};

enum class OstState { kActive, kInactive };

struct Ost {
  uint32_t index = 0;  // 0 .. kLustreMaxOstIndex, unique in a pool
  uint32_t oss = 0;    // id of the OSS serving it
  uint64_t capacity_bytes = 0;
  uint64_t free_bytes = 0;  // <= capacity_bytes
  OstState state = OstState::kActive;
};

struct OstAllocatorOptions {
  uint32_t qos_threshold_rr_percent = 17;  // 0 .. 100
  uint32_t qos_prio_free_percent = 91;     // 0 .. 100
  uint32_t reserved_free_permille = 1;     // 0 .. 999; Lustre reserves 0.1% by default
  bool rr_random_start = true;             // false: the RR cursor starts at slot 0
  uint64_t rr_reseed_interval_files = 0;   // 0: draw the RR start once, at the first file
};

enum class AllocationPolicy { kSpecific, kRoundRobin, kQos };
const char* to_string(AllocationPolicy policy);

struct OstAllocation {
  LustreFileLayout layout;
  AllocationPolicy policy;
};

class OstAllocator {
 public:
  // Checks the pool (non-empty, unique indices <= 65535, 0 < capacity, free <= capacity)
  // and the options.
  static Result<OstAllocator> create(std::vector<Ost> pool, const OstAllocatorOptions& options);

  // OSTs for a new file, by the rules in the header comment.
  Result<OstAllocation> allocate(const LustreLayoutSpec& spec, Random& rng);

  // Pool changes (free space as reported by statfs; activation). Unknown OST: not_found.
  Status set_free_bytes(uint32_t ost_index, uint64_t free_bytes);
  Status set_state(uint32_t ost_index, OstState state);

  const std::vector<Ost>& osts() const { return osts_; }  // ascending index
  std::vector<uint32_t> eligible_osts() const;            // ascending index
  // Whether free space is balanced (round-robin) per qos_threshold_rr.
  bool balanced() const;
  // The RR array: eligible OST indices in slot order.
  std::vector<uint32_t> rr_order() const;
  // Current QoS weight of each eligible OST (ascending index), penalties included.
  std::vector<uint64_t> qos_weights() const;

 private:
  OstAllocator(std::vector<Ost> pool, const OstAllocatorOptions& options);

  bool eligible(const Ost& ost) const;
  void rebuild();  // eligible set, RR array, OSS avail after any pool change
  uint64_t weight(size_t pos) const;
  void allocate_specific(size_t start_pos, uint32_t count, std::vector<uint32_t>& out) const;
  void allocate_rr(uint32_t count, Random& rng, std::vector<uint32_t>& out);
  void allocate_qos(uint32_t count, Random& rng, std::vector<uint32_t>& out);

  std::vector<Ost> osts_;
  OstAllocatorOptions options_;
  std::vector<size_t> eligible_;  // positions in osts_, ascending index
  std::vector<size_t> rr_;        // positions in osts_, slot order
  std::map<uint32_t, uint64_t> oss_avail_mib_;
  std::map<uint32_t, uint32_t> oss_eligible_count_;
  std::vector<uint64_t> ost_penalty_;  // per position in osts_
  std::map<uint32_t, uint64_t> oss_penalty_;
  bool rr_started_ = false;
  uint64_t rr_cursor_ = 0;
  uint64_t rr_offset_ = 0;
  uint64_t rr_files_since_seed_ = 0;
};

}  // namespace granary::layout

// Erasure-code arithmetic: how a k+m coded object's bytes map to its shards, and what a
// read or a (partial-stripe) write costs in shard I/O. The same arithmetic serves the
// simulation (sizes only) and real mode (which runs ISA-L's Reed-Solomon over the same
// extents).
//
// Layout (Ceph's ECUtil::stripe_info_t): an object is cut into stripes of k * stripe_unit
// bytes; stripe s holds object bytes [s*k*su, (s+1)*k*su); its data chunk i (0 <= i < k),
// object bytes [s*k*su + i*su, +su), is stored on shard i at shard offset s*su; shards k ..
// k+m-1 hold the m coding chunks of every stripe at the same shard offsets. A shard of an
// object of n bytes holds ceil(n / (k*su)) * su bytes.
//
// Writes (Ceph with allow_ec_overwrites): a stripe entirely overwritten is encoded from the
// new data alone; a stripe partly overwritten is read first — the old contents of its data
// chunks that the write does not cover, as far as the object extends — then re-encoded. Every
// touched stripe rewrites the data chunks the write touches and all m coding chunks.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/status.h"

namespace granary::redundancy {

struct ErasureProfile {
  int k = 0;                          // data chunks per stripe (>= 1)
  int m = 0;                          // coding chunks per stripe (>= 0)
  uint64_t stripe_unit_bytes = 4096;  // bytes of one chunk of one stripe (Ceph's stripe_unit)

  int shards() const { return k + m; }
  uint64_t stripe_bytes() const { return stripe_unit_bytes * static_cast<uint64_t>(k); }
  // invalid_argument unless k >= 1, m >= 0, k + m <= 256 (Reed-Solomon over GF(2^8)) and
  // stripe_unit_bytes > 0.
  Status check() const;
};

// A range of one shard.
struct ShardExtent {
  int shard = 0;
  uint64_t offset_bytes = 0;  // within the shard
  uint64_t length_bytes = 0;
};

// Bytes each shard holds for an object of `object_bytes`.
uint64_t shard_bytes(const ErasureProfile& p, uint64_t object_bytes);

// The data chunks holding object bytes [offset, offset + length), one extent per shard
// (merged over stripes: a shard's pieces of consecutive stripes are contiguous in the shard
// and are returned as one extent covering them), in shard order.
std::vector<ShardExtent> data_extents(const ErasureProfile& p, uint64_t offset_bytes,
                                      uint64_t length_bytes);

// What a read of object bytes [offset, offset + length) costs when some shards are missing.
struct ReadPlan {
  std::vector<ShardExtent> reads;  // shard ranges to fetch, in shard order
  uint64_t decode_bytes = 0;       // bytes the decoder must rebuild (0: no shard missing)
};
// `available[i]` says whether shard i can be read. With every data shard needed available,
// the plan reads just the data extents. Otherwise it reads the whole stripe units of the
// touched stripes from the first k available shards (data shards first) and rebuilds the
// missing data: decode_bytes = the missing shards' share of those stripes. invalid_argument
// when fewer than k shards are available.
Result<ReadPlan> plan_read(const ErasureProfile& p, uint64_t offset_bytes, uint64_t length_bytes,
                           const std::vector<bool>& available);

// What a write of object bytes [offset, offset + length) costs.
struct WritePlan {
  std::vector<ShardExtent> reads;   // old data to read before encoding (partial stripes)
  std::vector<ShardExtent> writes;  // shard ranges written (data touched + all coding)
  uint64_t encode_bytes = 0;        // data bytes fed to the encoder (k * su per stripe)
  uint64_t stripes = 0;             // stripes touched
  uint64_t partial_stripes = 0;     // of which read-modify-write
};
// `object_bytes` is the object's size before the write (nothing beyond it is read).
WritePlan plan_write(const ErasureProfile& p, uint64_t object_bytes, uint64_t offset_bytes,
                     uint64_t length_bytes);

// Sum of the extents' lengths.
uint64_t total_bytes(const std::vector<ShardExtent>& extents);

}  // namespace granary::redundancy

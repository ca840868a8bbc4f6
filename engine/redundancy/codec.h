// The k+m Reed-Solomon erasure codec: real coding chunks over GF(2^8), computed by ISA-L
// (Intel's Intelligent Storage Acceleration Library, as Ceph's `isa` erasure-code plugin does),
// laid out in Ceph's ECUtil stripe format (engine/redundancy/erasure.h says which shard ranges a
// read or a write touches; this file computes their bytes).
//
// The code is systematic: data chunk i of a stripe is stored unchanged on shard i; coding chunk
// j (shard k + j) holds, at every byte position t, sum_i G[k + j][i] * data_i[t] in GF(2^8)
// (polynomial 0x11d), where G is the (k + m) x k generator whose top k rows are the identity.
// Every byte position is coded independently, so the consecutive stripe units of a shard (which
// are contiguous in the shard) encode or decode in one call over the whole range.
//
// Decoding from any k chunks (sources) inverts the k x k submatrix of G of their rows and
// multiplies: a missing data chunk i is row i of the inverse applied to the sources, a missing
// coding chunk k + j is row k + j of G times the inverse.
//
// A ReedSolomon and an ErasureDecoder are immutable once built: thread-safe. Bad input (sizes
// that do not match the profile, fewer than k chunks) gets a Status, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/buffer.h"
#include "engine/redundancy/erasure.h"
#include "engine/status.h"

namespace granary::redundancy {

// The generator below the identity (docs/ARCHITECTURE.md, "Erasure codec").
enum class CodingMatrix {
  // ISA-L gf_gen_cauchy1_matrix: G[r][c] = 1 / (r xor c) for r >= k (Ceph's `isa` plugin with
  // technique=cauchy). Every square submatrix of a Cauchy matrix is nonsingular, so every
  // k-subset of the k + m chunks decodes, for every k + m <= 256. The default.
  kCauchy,
  // ISA-L gf_gen_rs_matrix: G[k + j][c] = 2^(j * c) (row k all ones: its first coding chunk is
  // the XOR of the data), Ceph's `isa` default technique=reed_sol_van. Not invertable for every
  // subset of every k, m, so accepted only within the bounds Ceph's plugin verified: k <= 32,
  // m <= 4, and k <= 21 when m = 4.
  kVandermonde,
};

struct CodecOptions {
  CodingMatrix matrix = CodingMatrix::kCauchy;
};

// Rebuilds a fixed set of chunks (targets) from a fixed set of k chunks (sources); built once
// per pattern of missing chunks (Ceph's ISA plugin caches these tables the same way).
class ErasureDecoder {
 public:
  const std::vector<int>& sources() const { return sources_; }  // k shard indices, ascending
  const std::vector<int>& targets() const { return targets_; }  // shard indices rebuilt

  // `sources[i]` holds the bytes of shard sources()[i], `targets[j]` receives those of shard
  // targets()[j]; all of one length (any length: a range of whole stripe units of a shard, or
  // a part of one at the same offset in every shard). invalid_argument on a count or length
  // mismatch.
  Status decode(std::span<const std::span<const uint8_t>> sources,
                std::span<const std::span<uint8_t>> targets) const;

 private:
  friend class ReedSolomon;
  int k_ = 0;
  std::vector<int> sources_, targets_;
  std::vector<uint8_t> tables_;  // ISA-L's expanded tables: 32 bytes per coefficient
};

class ReedSolomon {
 public:
  // invalid_argument when the profile fails ErasureProfile::check() or the matrix cannot serve
  // it (kVandermonde beyond Ceph's bounds).
  static Result<ReedSolomon> create(const ErasureProfile& profile, CodecOptions options = {});

  const ErasureProfile& profile() const { return profile_; }
  CodingMatrix matrix_kind() const { return options_.matrix; }
  // The (k + m) x k generator, row-major; rows 0..k-1 are the identity.
  const std::vector<uint8_t>& generator() const { return generator_; }

  // The m coding chunks of `data` (k chunks): coding[j] receives chunk k + j. All chunks of one
  // length. invalid_argument on a count or length mismatch.
  Status encode(std::span<const std::span<const uint8_t>> data,
                std::span<const std::span<uint8_t>> coding) const;

  // A decoder from the shards `sources` (k distinct indices in [0, k + m)) to `targets`
  // (distinct indices not among the sources). invalid_argument otherwise.
  Result<ErasureDecoder> decoder(std::vector<int> sources, std::vector<int> targets) const;

  // Rebuilds in place every chunk i with !present[i] from the first k present ones (data
  // chunks first, as plan_read chooses). `chunks`: k + m spans of one length; `present`: k + m
  // flags. invalid_argument with fewer than k present.
  Status decode(std::span<const std::span<uint8_t>> chunks, const std::vector<bool>& present) const;

 private:
  ErasureProfile profile_;
  CodecOptions options_;
  std::vector<uint8_t> generator_;
  std::vector<uint8_t> encode_tables_;  // ISA-L tables of the m coding rows
};

// ---- Whole objects and ranges, over ECUtil's layout (erasure.h) ----

// The k + m shards of an object: shard i holds shard_bytes(profile, object.size()) bytes (the
// last stripe zero-padded), data shards per the layout, coding shards encoded.
Result<std::vector<std::vector<uint8_t>>> encode_object(const ReedSolomon& codec,
                                                        std::span<const uint8_t> object);

// Object bytes [offset, offset + length) from what `plan` (plan_read of the same range) reads:
// `fetched[i]` holds the bytes of plan.reads[i]. Without a missing data shard the plan reads
// the data extents and they are copied out; otherwise it reads whole stripe units of the
// touched stripes from k shards, and the missing data chunks are decoded. Bytes past the
// object's end within its last stripe read as the shards hold them (zero padding).
// invalid_argument when the plan is not plan_read's for this range or a buffer's length is not
// its extent's.
// The result is new aligned memory (engine/buffer.h).
Result<Buffer> read_range(const ReedSolomon& codec, uint64_t offset_bytes, uint64_t length_bytes,
                          const ReadPlan& plan, std::span<const std::span<const uint8_t>> fetched);

// New contents of one shard range.
struct ShardWrite {
  ShardExtent extent;
  // extent.length_bytes of them: a slice of the aligned memory the stripes were encoded in (the
  // writes of one call share it; none is copied).
  Buffer bytes;
};

// The shard writes of writing `data` at `offset_bytes` into an object of `object_bytes` (its
// size before the write): exactly plan_write(profile, object_bytes, offset, data.size()).writes,
// in order — the touched data chunks (whole stripe units) and all m coding chunks of every
// touched stripe. `old[i]` holds the bytes of that plan's reads[i] (the old data chunks of the
// partly overwritten stripes); a chunk that starts at or past the object's end is taken as
// zeros. Shards of an object written this way equal encode_object of the new object (a hole
// left by writing past the end encodes as zeros, whose coding is zeros). A degraded write
// rebuilds an old chunk on a missing shard with an ErasureDecoder over the same shard range of
// k available shards, and skips the writes to missing shards. invalid_argument when `old` does
// not match the plan's reads.
Result<std::vector<ShardWrite>> write_range(const ReedSolomon& codec, uint64_t object_bytes,
                                            uint64_t offset_bytes, std::span<const uint8_t> data,
                                            std::span<const std::span<const uint8_t>> old);

}  // namespace granary::redundancy

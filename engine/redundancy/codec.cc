#include "engine/redundancy/codec.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace granary::redundancy {

namespace {

// ec_encode_data takes an int length; longer chunks go through in pieces of this many bytes
// (each byte position is coded independently).
constexpr uint64_t kMaxPieceBytes = uint64_t{1} << 30;

std::string code_name(const ErasureProfile& p) {
  return "erasure code " + std::to_string(p.k) + "+" + std::to_string(p.m);
}

// out[r][t] = sum_i rows-table[r][i] * in[i][t] over `bytes` bytes, in pieces.
void apply(int k, int rows, const std::vector<uint8_t>& tables,
           std::span<const std::span<const uint8_t>> in, std::span<const std::span<uint8_t>> out,
           uint64_t bytes) {
  if (rows == 0 || bytes == 0) return;
  std::vector<unsigned char*> src(k), dst(rows);
  // ISA-L reads the tables and the sources only; its prototype is not const-qualified.
  auto* tbl = const_cast<unsigned char*>(tables.data());
  for (uint64_t done = 0; done < bytes; done += kMaxPieceBytes) {
    const uint64_t n = std::min(kMaxPieceBytes, bytes - done);
    for (int i = 0; i < k; ++i) src[i] = const_cast<unsigned char*>(in[i].data() + done);
    for (int r = 0; r < rows; ++r) dst[r] = out[r].data() + done;
    ec_encode_data(static_cast<int>(n), k, rows, tbl, src.data(), dst.data());
  }
}

// invalid_argument unless every span has `want` spans of one length; sets `bytes`.
template <typename Span>
Status same_lengths(const ErasureProfile& p, const char* what, std::span<const Span> chunks,
                    size_t want, uint64_t& bytes) {
  if (chunks.size() != want) {
    return Status::invalid_argument(code_name(p) + ": expected " + std::to_string(want) + " " +
                                    what + " chunks, found " + std::to_string(chunks.size()));
  }
  bytes = chunks.empty() ? 0 : chunks[0].size();
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].size() != bytes) {
      return Status::invalid_argument(code_name(p) + ": " + what + " chunk " + std::to_string(i) +
                                      " has " + std::to_string(chunks[i].size()) +
                                      " bytes, expected " + std::to_string(bytes) +
                                      " like chunk 0");
    }
  }
  return Status();
}

}  // namespace

Result<ReedSolomon> ReedSolomon::create(const ErasureProfile& profile, CodecOptions options) {
  if (Status s = profile.check(); !s.ok()) return s;
  const int k = profile.k, m = profile.m, n = profile.shards();
  if (options.matrix == CodingMatrix::kVandermonde && (k > 32 || m > 4 || (m == 4 && k > 21))) {
    return Status::invalid_argument(
        code_name(profile) +
        ": the Vandermonde (reed_sol_van) matrix decodes every subset only for k <= 32, m <= 4 "
        "and k <= 21 when m = 4 (Ceph's isa plugin bounds); use the Cauchy matrix");
  }
  ReedSolomon rs;
  rs.profile_ = profile;
  rs.options_ = options;
  rs.generator_.assign(static_cast<size_t>(n) * k, 0);
  if (options.matrix == CodingMatrix::kCauchy) {
    gf_gen_cauchy1_matrix(rs.generator_.data(), n, k);
  } else {
    gf_gen_rs_matrix(rs.generator_.data(), n, k);
  }
  rs.encode_tables_.assign(static_cast<size_t>(32) * k * m, 0);
  if (m > 0) {
    ec_init_tables(k, m, rs.generator_.data() + static_cast<size_t>(k) * k,
                   rs.encode_tables_.data());
  }
  return rs;
}

Status ReedSolomon::encode(std::span<const std::span<const uint8_t>> data,
                           std::span<const std::span<uint8_t>> coding) const {
  uint64_t bytes = 0, coding_bytes = 0;
  if (Status s = same_lengths(profile_, "data", data, profile_.k, bytes); !s.ok()) return s;
  if (Status s = same_lengths(profile_, "coding", coding, profile_.m, coding_bytes); !s.ok()) {
    return s;
  }
  if (profile_.m > 0 && coding_bytes != bytes) {
    return Status::invalid_argument(code_name(profile_) + ": coding chunks of " +
                                    std::to_string(coding_bytes) + " bytes for data chunks of " +
                                    std::to_string(bytes));
  }
  apply(profile_.k, profile_.m, encode_tables_, data, coding, bytes);
  return Status();
}

Result<ErasureDecoder> ReedSolomon::decoder(std::vector<int> sources,
                                            std::vector<int> targets) const {
  const int k = profile_.k, n = profile_.shards();
  std::vector<int> role(n, 0);  // 1: source, 2: target
  std::sort(sources.begin(), sources.end());
  if (static_cast<int>(sources.size()) != k) {
    return Status::invalid_argument(code_name(profile_) + ": decoding needs " + std::to_string(k) +
                                    " source chunks, given " + std::to_string(sources.size()));
  }
  for (int s : sources) {
    if (s < 0 || s >= n || role[s] != 0) {
      return Status::invalid_argument(code_name(profile_) + ": source shard " + std::to_string(s) +
                                      " is out of range [0, " + std::to_string(n) +
                                      ") or repeated");
    }
    role[s] = 1;
  }
  for (int t : targets) {
    if (t < 0 || t >= n || role[t] != 0) {
      return Status::invalid_argument(code_name(profile_) + ": target shard " + std::to_string(t) +
                                      " is out of range [0, " + std::to_string(n) +
                                      "), repeated or a source");
    }
    role[t] = 2;
  }
  // B: the sources' rows of G; B^-1 maps the sources to the data chunks.
  std::vector<uint8_t> b(static_cast<size_t>(k) * k), inv(static_cast<size_t>(k) * k);
  for (int r = 0; r < k; ++r) {
    std::memcpy(&b[static_cast<size_t>(r) * k], &generator_[static_cast<size_t>(sources[r]) * k],
                k);
  }
  if (gf_invert_matrix(b.data(), inv.data(), k) != 0) {
    // Cannot happen with the Cauchy matrix, nor with Vandermonde within the accepted bounds.
    return Status::invalid_argument(code_name(profile_) +
                                    ": the generator rows of the source shards are singular");
  }
  // Row for target t: data chunk t is row t of B^-1; coding chunk t is G[t] x B^-1.
  const int rows = static_cast<int>(targets.size());
  std::vector<uint8_t> d(static_cast<size_t>(rows) * k, 0);
  for (int r = 0; r < rows; ++r) {
    uint8_t* out = &d[static_cast<size_t>(r) * k];
    const int t = targets[r];
    if (t < k) {
      std::memcpy(out, &inv[static_cast<size_t>(t) * k], k);
      continue;
    }
    for (int c = 0; c < k; ++c) {
      uint8_t acc = 0;
      for (int i = 0; i < k; ++i) {
        acc ^=
            gf_mul(generator_[static_cast<size_t>(t) * k + i], inv[static_cast<size_t>(i) * k + c]);
      }
      out[c] = acc;
    }
  }
  ErasureDecoder dec;
  dec.k_ = k;
  dec.sources_ = std::move(sources);
  dec.targets_ = std::move(targets);
  dec.tables_.assign(static_cast<size_t>(32) * k * rows, 0);
  if (rows > 0) ec_init_tables(k, rows, d.data(), dec.tables_.data());
  return dec;
}

Status ErasureDecoder::decode(std::span<const std::span<const uint8_t>> sources,
                              std::span<const std::span<uint8_t>> targets) const {
  const ErasureProfile p{k_, 0, 1};
  uint64_t bytes = 0, target_bytes = 0;
  if (Status s = same_lengths(p, "source", sources, sources_.size(), bytes); !s.ok()) return s;
  if (Status s = same_lengths(p, "target", targets, targets_.size(), target_bytes); !s.ok()) {
    return s;
  }
  if (!targets.empty() && target_bytes != bytes) {
    return Status::invalid_argument("erasure decode: target chunks of " +
                                    std::to_string(target_bytes) + " bytes for sources of " +
                                    std::to_string(bytes));
  }
  apply(k_, static_cast<int>(targets_.size()), tables_, sources, targets, bytes);
  return Status();
}

Status ReedSolomon::decode(std::span<const std::span<uint8_t>> chunks,
                           const std::vector<bool>& present) const {
  const int n = profile_.shards();
  uint64_t bytes = 0;
  if (Status s = same_lengths(profile_, "shard", chunks, n, bytes); !s.ok()) return s;
  if (present.size() != static_cast<size_t>(n)) {
    return Status::invalid_argument(code_name(profile_) + ": expected " + std::to_string(n) +
                                    " presence flags, found " + std::to_string(present.size()));
  }
  std::vector<int> sources, targets;
  for (int i = 0; i < n; ++i) {
    if (present[i] && static_cast<int>(sources.size()) < profile_.k) {
      sources.push_back(i);
    } else if (!present[i]) {
      targets.push_back(i);
    }
  }
  if (static_cast<int>(sources.size()) < profile_.k) {
    return Status::invalid_argument(code_name(profile_) + ": only " +
                                    std::to_string(sources.size()) + " chunks present, " +
                                    std::to_string(profile_.k) + " needed to decode");
  }
  if (targets.empty()) return Status();
  auto dec = decoder(sources, targets);
  if (!dec.ok()) return dec.status();
  std::vector<std::span<const uint8_t>> in;
  std::vector<std::span<uint8_t>> out;
  for (int s : dec->sources()) in.emplace_back(chunks[s]);
  for (int t : dec->targets()) out.push_back(chunks[t]);
  return dec->decode(in, out);
}

// ---- Objects and ranges ----

namespace {

// Calls f(stripe, chunk, object_offset, shard_offset, bytes) for every run of object bytes
// [a, b) that lies in one data chunk (ECUtil: chunk i of stripe s is object bytes
// [s*w + i*su, +su) at shard i offset s*su).
template <typename F>
void for_each_chunk_run(const ErasureProfile& p, uint64_t a, uint64_t b, F f) {
  const uint64_t su = p.stripe_unit_bytes, w = p.stripe_bytes();
  for (uint64_t x = a; x < b;) {
    const uint64_t s = x / w, i = (x % w) / su, t = x % su;
    const uint64_t n = std::min(su - t, b - x);
    f(s, static_cast<int>(i), x, s * su + t, n);
    x += n;
  }
}

bool same_extents(const std::vector<ShardExtent>& x, const std::vector<ShardExtent>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].shard != y[i].shard || x[i].offset_bytes != y[i].offset_bytes ||
        x[i].length_bytes != y[i].length_bytes) {
      return false;
    }
  }
  return true;
}

Status check_buffers(const ErasureProfile& p, const char* what,
                     const std::vector<ShardExtent>& extents,
                     std::span<const std::span<const uint8_t>> buffers) {
  if (buffers.size() != extents.size()) {
    return Status::invalid_argument(code_name(p) + ": " + std::to_string(buffers.size()) + " " +
                                    what + " buffers for the plan's " +
                                    std::to_string(extents.size()) + " shard ranges");
  }
  for (size_t i = 0; i < extents.size(); ++i) {
    if (buffers[i].size() != extents[i].length_bytes) {
      return Status::invalid_argument(code_name(p) + ": " + what + " buffer " + std::to_string(i) +
                                      " (shard " + std::to_string(extents[i].shard) + ") has " +
                                      std::to_string(buffers[i].size()) + " bytes, expected " +
                                      std::to_string(extents[i].length_bytes));
    }
  }
  return Status();
}

std::vector<std::span<const uint8_t>> const_spans(const std::vector<std::vector<uint8_t>>& v,
                                                  size_t from, size_t count) {
  std::vector<std::span<const uint8_t>> out;
  for (size_t i = from; i < from + count; ++i) out.emplace_back(v[i]);
  return out;
}

std::vector<std::span<uint8_t>> spans(std::vector<std::vector<uint8_t>>& v, size_t from,
                                      size_t count) {
  std::vector<std::span<uint8_t>> out;
  for (size_t i = from; i < from + count; ++i) out.emplace_back(v[i]);
  return out;
}

}  // namespace

Result<std::vector<std::vector<uint8_t>>> encode_object(const ReedSolomon& codec,
                                                        std::span<const uint8_t> object) {
  const ErasureProfile& p = codec.profile();
  const uint64_t per_shard = shard_bytes(p, object.size());
  std::vector<std::vector<uint8_t>> shards(p.shards(), std::vector<uint8_t>(per_shard, 0));
  for_each_chunk_run(p, 0, object.size(), [&](uint64_t, int i, uint64_t x, uint64_t o, uint64_t n) {
    std::memcpy(shards[i].data() + o, object.data() + x, n);
  });
  if (Status s = codec.encode(const_spans(shards, 0, p.k), spans(shards, p.k, p.m)); !s.ok()) {
    return s;
  }
  return shards;
}

Result<Buffer> read_range(const ReedSolomon& codec, uint64_t offset_bytes, uint64_t length_bytes,
                          const ReadPlan& plan, std::span<const std::span<const uint8_t>> fetched) {
  const ErasureProfile& p = codec.profile();
  const uint64_t su = p.stripe_unit_bytes, w = p.stripe_bytes();
  const uint64_t a = offset_bytes, b = offset_bytes + length_bytes;
  if (b < a) return Status::invalid_argument(code_name(p) + ": read range overflows");
  if (Status s = check_buffers(p, "fetched", plan.reads, fetched); !s.ok()) return s;
  MutableBuffer buffer(length_bytes);
  uint8_t* out = reinterpret_cast<uint8_t*>(buffer.data());
  if (length_bytes == 0) return std::move(buffer).freeze();

  if (plan.decode_bytes == 0) {
    if (!same_extents(plan.reads, data_extents(p, a, length_bytes))) {
      return Status::invalid_argument(code_name(p) +
                                      ": the read plan does not read the data extents of [" +
                                      std::to_string(a) + ", " + std::to_string(b) + ")");
    }
    // Shard i's extent starts at its first byte of the range.
    std::vector<int> index(p.k, -1);
    for (size_t r = 0; r < plan.reads.size(); ++r) index[plan.reads[r].shard] = static_cast<int>(r);
    for_each_chunk_run(p, a, b, [&](uint64_t, int i, uint64_t x, uint64_t o, uint64_t n) {
      const ShardExtent& e = plan.reads[index[i]];
      std::memcpy(out + (x - a), fetched[index[i]].data() + (o - e.offset_bytes), n);
    });
    return std::move(buffer).freeze();
  }

  // Degraded: whole stripe units of stripes s0..s1 from k shards.
  const uint64_t s0 = a / w, s1 = (b - 1) / w, span = (s1 - s0 + 1) * su;
  std::vector<int> sources;
  for (const ShardExtent& e : plan.reads) {
    if (e.offset_bytes != s0 * su || e.length_bytes != span ||
        (!sources.empty() && e.shard <= sources.back())) {
      return Status::invalid_argument(
          code_name(p) + ": the degraded read plan must read stripe units [" +
          std::to_string(s0 * su) + ", " + std::to_string(s0 * su + span) +
          ") of k shards in ascending order; found shard " + std::to_string(e.shard) + " [" +
          std::to_string(e.offset_bytes) + ", +" + std::to_string(e.length_bytes) + ")");
    }
    sources.push_back(e.shard);
  }
  std::vector<int> targets;
  std::vector<int> source_of(p.k, -1);
  for (size_t r = 0; r < sources.size(); ++r) {
    if (sources[r] < p.k) source_of[sources[r]] = static_cast<int>(r);
  }
  for (int i = 0; i < p.k; ++i) {
    if (source_of[i] < 0) targets.push_back(i);
  }
  auto dec = codec.decoder(sources, targets);
  if (!dec.ok()) return dec.status();
  std::vector<std::vector<uint8_t>> rebuilt(targets.size(), std::vector<uint8_t>(span));
  if (Status s = dec->decode(fetched, spans(rebuilt, 0, rebuilt.size())); !s.ok()) return s;
  std::vector<const uint8_t*> chunk(p.k);
  for (int i = 0; i < p.k; ++i) {
    if (source_of[i] >= 0) chunk[i] = fetched[source_of[i]].data();
  }
  for (size_t t = 0; t < targets.size(); ++t) chunk[targets[t]] = rebuilt[t].data();
  for_each_chunk_run(p, a, b, [&](uint64_t, int i, uint64_t x, uint64_t o, uint64_t n) {
    std::memcpy(out + (x - a), chunk[i] + (o - s0 * su), n);
  });
  return std::move(buffer).freeze();
}

Result<std::vector<ShardWrite>> write_range(const ReedSolomon& codec, uint64_t object_bytes,
                                            uint64_t offset_bytes, std::span<const uint8_t> data,
                                            std::span<const std::span<const uint8_t>> old) {
  const ErasureProfile& p = codec.profile();
  const uint64_t su = p.stripe_unit_bytes, w = p.stripe_bytes();
  const uint64_t a = offset_bytes, b = offset_bytes + data.size();
  if (b < a) return Status::invalid_argument(code_name(p) + ": write range overflows");
  const WritePlan plan = plan_write(p, object_bytes, a, data.size());
  if (Status s = check_buffers(p, "old data", plan.reads, old); !s.ok()) return s;
  std::vector<ShardWrite> writes;
  if (data.empty()) return writes;

  // The touched stripes' k data chunks, each shard's stripe units contiguous: old data where
  // the plan read it, then the new data over it; zeros elsewhere.
  const uint64_t s0 = a / w, s1 = (b - 1) / w, span = (s1 - s0 + 1) * su;
  // One aligned allocation for all shards (shard i at i * span), sliced into the writes.
  MutableBuffer memory(static_cast<size_t>(p.shards()) * span);
  auto chunk = [&](int i) { return reinterpret_cast<uint8_t*>(memory.data()) + i * span; };
  for (size_t r = 0; r < plan.reads.size(); ++r) {
    const ShardExtent& e = plan.reads[r];
    std::memcpy(chunk(e.shard) + (e.offset_bytes - s0 * su), old[r].data(), e.length_bytes);
  }
  for_each_chunk_run(p, a, b, [&](uint64_t, int i, uint64_t x, uint64_t o, uint64_t n) {
    std::memcpy(chunk(i) + (o - s0 * su), data.data() + (x - a), n);
  });
  std::vector<std::span<const uint8_t>> in;
  std::vector<std::span<uint8_t>> out;
  for (int i = 0; i < p.k; ++i) in.emplace_back(chunk(i), span);
  for (int i = p.k; i < p.shards(); ++i) out.emplace_back(chunk(i), span);
  if (Status s = codec.encode(in, out); !s.ok()) return s;
  const Buffer all = std::move(memory).freeze();
  for (const ShardExtent& e : plan.writes) {
    writes.push_back({e, all.slice(e.shard * span + (e.offset_bytes - s0 * su), e.length_bytes)});
  }
  return writes;
}

}  // namespace granary::redundancy

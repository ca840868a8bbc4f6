// Benchmark: the erasure codec (engine/redundancy/codec.h), one thread, so each rate is per
// core. Run by tests/bench/codec_bench.sh; docs/models.md ("Writes and erasure coding") holds
// the figures and sim/runner.cc's kEcBytesPerCoreSecond cites them.
//
// Encode: the m coding chunks of one stripe (k data chunks of stripe_unit bytes) per call;
// bytes/s counts the data bytes encoded (k * su per stripe, what the simulator charges as
// encode_bytes). Decode: `missing` data chunks of one stripe rebuilt from k others (the decoder
// prepared once per erasure pattern, as Ceph's isa plugin caches its tables); bytes/s counts the
// rebuilt bytes (the simulator's decode_bytes) and stripe_bytes/s the stripe's data bytes.
// "cold" walks a 64 MiB pool of stripes (the data comes from memory), "hot" reuses one stripe
// (it stays in L1/L2).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "engine/random.h"
#include "engine/redundancy/codec.h"

namespace granary::redundancy {
namespace {

constexpr uint64_t kColdPoolBytes = uint64_t{64} << 20;

struct Pool {
  std::vector<std::vector<uint8_t>> stripes;  // each: k + m chunks of su, back to back
  uint64_t su = 0;
  int n = 0;
};

Pool make_pool(const ErasureProfile& p, bool cold) {
  Pool pool;
  pool.su = p.stripe_unit_bytes;
  pool.n = p.shards();
  const uint64_t stripe = pool.su * pool.n;
  const uint64_t count = cold ? std::max<uint64_t>(1, kColdPoolBytes / stripe) : 1;
  Random rng(42);
  pool.stripes.assign(count, std::vector<uint8_t>(stripe));
  for (auto& s : pool.stripes) {
    for (auto& b : s) b = static_cast<uint8_t>(rng.next_u64());
  }
  return pool;
}

ReedSolomon make_codec(const ErasureProfile& p) {
  auto rs = ReedSolomon::create(p);
  if (!rs.ok()) std::abort();
  return std::move(rs).value();
}

// Args: k, m, stripe unit KiB, cold (0/1).
void BM_Encode(benchmark::State& state) {
  const ErasureProfile p{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                         static_cast<uint64_t>(state.range(2)) << 10};
  const ReedSolomon rs = make_codec(p);
  Pool pool = make_pool(p, state.range(3) != 0);
  std::vector<std::span<const uint8_t>> data(p.k);
  std::vector<std::span<uint8_t>> coding(p.m);
  size_t next = 0;
  for (auto _ : state) {
    uint8_t* base = pool.stripes[next].data();
    next = next + 1 == pool.stripes.size() ? 0 : next + 1;
    for (int i = 0; i < p.k; ++i) data[i] = {base + i * pool.su, pool.su};
    for (int j = 0; j < p.m; ++j) coding[j] = {base + (p.k + j) * pool.su, pool.su};
    if (!rs.encode(data, coding).ok()) state.SkipWithError("encode failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(p.stripe_bytes()));
}

// Args: k, m, stripe unit KiB, missing data chunks.
void BM_Decode(benchmark::State& state) {
  const ErasureProfile p{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                         static_cast<uint64_t>(state.range(2)) << 10};
  const int missing = static_cast<int>(state.range(3));
  const ReedSolomon rs = make_codec(p);
  Pool pool = make_pool(p, true);
  std::vector<std::span<const uint8_t>> data(p.k);
  std::vector<std::span<uint8_t>> coding(p.m);
  for (auto& s : pool.stripes) {
    uint8_t* base = s.data();
    for (int i = 0; i < p.k; ++i) data[i] = {base + i * pool.su, pool.su};
    for (int j = 0; j < p.m; ++j) coding[j] = {base + (p.k + j) * pool.su, pool.su};
    if (!rs.encode(data, coding).ok()) std::abort();
  }
  // Data chunks 0..missing-1 lost; sources: the rest of the data and the first coding chunks.
  std::vector<int> sources, targets;
  for (int i = 0; i < p.shards() && static_cast<int>(sources.size()) < p.k; ++i) {
    (i < missing ? targets : sources).push_back(i);
  }
  auto dec = rs.decoder(sources, targets);
  if (!dec.ok()) std::abort();
  std::vector<std::vector<uint8_t>> out(missing, std::vector<uint8_t>(pool.su));
  std::vector<std::span<const uint8_t>> in(p.k);
  std::vector<std::span<uint8_t>> rebuilt;
  for (auto& o : out) rebuilt.emplace_back(o);
  size_t next = 0;
  for (auto _ : state) {
    const uint8_t* base = pool.stripes[next].data();
    next = next + 1 == pool.stripes.size() ? 0 : next + 1;
    for (int r = 0; r < p.k; ++r) in[r] = {base + sources[r] * pool.su, pool.su};
    if (!dec->decode(in, rebuilt).ok()) state.SkipWithError("decode failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * missing *
                          static_cast<int64_t>(pool.su));
  state.counters["stripe_bytes/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * p.stripe_bytes(), benchmark::Counter::kIsRate);
}

// Building a decoder (k x k inversion + ISA-L tables) for one erasure pattern. Args: k, m.
void BM_DecoderSetup(benchmark::State& state) {
  const ErasureProfile p{static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 4096};
  const ReedSolomon rs = make_codec(p);
  // The m first data chunks lost, rebuilt from the other data chunks and the m coding chunks.
  std::vector<int> sources, targets;
  for (int i = 0; i < p.shards(); ++i) (i < p.m ? targets : sources).push_back(i);
  for (auto _ : state) {
    auto dec = rs.decoder(sources, targets);
    benchmark::DoNotOptimize(dec);
  }
}

BENCHMARK(BM_Encode)
    ->ArgNames({"k", "m", "su_kib", "cold"})
    ->ArgsProduct({{4}, {2}, {4, 64}, {0, 1}})
    ->ArgsProduct({{8}, {3}, {4, 64}, {0, 1}});
BENCHMARK(BM_Decode)
    ->ArgNames({"k", "m", "su_kib", "missing"})
    ->Args({4, 2, 4, 1})
    ->Args({4, 2, 4, 2})
    ->Args({4, 2, 64, 1})
    ->Args({4, 2, 64, 2})
    ->Args({8, 3, 4, 1})
    ->Args({8, 3, 4, 3})
    ->Args({8, 3, 64, 1})
    ->Args({8, 3, 64, 3});
BENCHMARK(BM_DecoderSetup)->ArgNames({"k", "m"})->Args({4, 2})->Args({8, 3});

}  // namespace
}  // namespace granary::redundancy

BENCHMARK_MAIN();

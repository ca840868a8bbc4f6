// The deterministic random source of engine/: every random choice in Granary's logic draws
// from a Random passed in by the caller, seeded once per run and logged, so that the same seed
// gives the same run (FoundationDB's DeterministicRandom, SimGrid's xbt::random).
//
// The generator is xoshiro256** (Blackman & Vigna), seeded through SplitMix64. Sequences are
// fixed for all time: changing them changes every golden file. Not thread-safe; one per
// simulated world or per thread.
#pragma once

#include <cstdint>

#include "engine/status.h"

namespace granary {

class Random {
 public:
  explicit Random(uint64_t seed) : seed_(seed) {
    uint64_t x = seed;
    for (uint64_t& w : s_) w = splitmix64(x);
  }

  uint64_t seed() const { return seed_; }

  // Uniform 64-bit value.
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, bound), bound >= 1, without modulo bias (Lemire's multiply-shift with
  // rejection).
  uint64_t uniform(uint64_t bound) {
    GRANARY_CHECK(bound >= 1);
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Uniform integer in [lo, hi], lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    GRANARY_CHECK(lo <= hi);
    return lo + static_cast<int64_t>(uniform(static_cast<uint64_t>(hi - lo) + 1));
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // A generator for an independent stream (e.g. one per simulated actor), derived from this
  // one's next output.
  Random fork() { return Random(next_u64()); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace granary

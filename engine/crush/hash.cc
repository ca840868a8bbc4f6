#include "engine/crush/hash.h"

#include <cstring>

namespace granary::crush {
namespace {

// Robert Jenkins' reversible 96-bit mix (lookup2.c, 1996): three rounds of subtract, subtract,
// xor-shift on each of the three words. T is uint32_t or a GCC vector of them.
template <typename T>
inline void jenkins_mix(T& a, T& b, T& c) {
  // clang-format off
  a -= b; a -= c; a ^= c >> 13;
  b -= c; b -= a; b ^= a << 8;
  c -= a; c -= b; c ^= b >> 13;
  a -= b; a -= c; a ^= c >> 12;
  b -= c; b -= a; b ^= a << 16;
  c -= a; c -= b; c ^= b >> 5;
  a -= b; a -= c; a ^= c >> 3;
  b -= c; b -= a; b ^= a << 10;
  c -= a; c -= b; c ^= b >> 15;
  // clang-format on
}

// Seed and filler words of the rjenkins1 CRUSH hash family.
constexpr uint32_t kSeed = 1315423911u;
constexpr uint32_t kFillX = 231232u;
constexpr uint32_t kFillY = 1232u;

}  // namespace

uint32_t crush_hash32(uint32_t a) {
  uint32_t h = kSeed ^ a;
  uint32_t b = a, x = kFillX, y = kFillY;
  jenkins_mix(b, x, h);
  jenkins_mix(y, a, h);
  return h;
}

uint32_t crush_hash32_2(uint32_t a, uint32_t b) {
  uint32_t h = kSeed ^ a ^ b;
  uint32_t x = kFillX, y = kFillY;
  jenkins_mix(a, b, h);
  jenkins_mix(x, a, h);
  jenkins_mix(b, y, h);
  return h;
}

uint32_t crush_hash32_3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = kSeed ^ a ^ b ^ c;
  uint32_t x = kFillX, y = kFillY;
  jenkins_mix(a, b, h);
  jenkins_mix(c, x, h);
  jenkins_mix(y, a, h);
  jenkins_mix(b, x, h);
  jenkins_mix(y, c, h);
  return h;
}

uint32_t crush_hash32_4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  uint32_t h = kSeed ^ a ^ b ^ c ^ d;
  uint32_t x = kFillX, y = kFillY;
  jenkins_mix(a, b, h);
  jenkins_mix(c, d, h);
  jenkins_mix(a, x, h);
  jenkins_mix(y, b, h);
  jenkins_mix(c, x, h);
  jenkins_mix(y, d, h);
  return h;
}

uint32_t crush_hash32_5(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e) {
  uint32_t h = kSeed ^ a ^ b ^ c ^ d ^ e;
  uint32_t x = kFillX, y = kFillY;
  jenkins_mix(a, b, h);
  jenkins_mix(c, d, h);
  jenkins_mix(e, x, h);
  jenkins_mix(y, a, h);
  jenkins_mix(b, x, h);
  jenkins_mix(y, c, h);
  jenkins_mix(d, x, h);
  jenkins_mix(y, e, h);
  return h;
}

// Eight lanes of crush_hash32_3 with GCC vector extensions: compiled for AVX2 where the CPU has
// it and as pairs of SSE2 operations otherwise. Bit-identical to the scalar function.
typedef uint32_t V8 __attribute__((vector_size(32)));

// ThreadSanitizer instruments the clones' ifunc resolver, which the dynamic loader runs before
// the sanitizer's runtime is up (a crash at start): a TSan build (make tsan) has one version.
#if defined(__SANITIZE_THREAD__)
#define GRANARY_AVX2_CLONES
#else
#define GRANARY_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

GRANARY_AVX2_CLONES void crush_hash32_3_x8(uint32_t a, const int32_t* b, uint32_t c,
                                           uint32_t* out) {
  V8 va = {a, a, a, a, a, a, a, a};
  V8 vb;
  std::memcpy(&vb, b, sizeof vb);
  V8 vc = {c, c, c, c, c, c, c, c};
  V8 h = kSeed ^ va ^ vb ^ vc;
  V8 x = {kFillX, kFillX, kFillX, kFillX, kFillX, kFillX, kFillX, kFillX};
  V8 y = {kFillY, kFillY, kFillY, kFillY, kFillY, kFillY, kFillY, kFillY};
  jenkins_mix(va, vb, h);
  jenkins_mix(vc, x, h);
  jenkins_mix(y, va, h);
  jenkins_mix(vb, x, h);
  jenkins_mix(y, vc, h);
  std::memcpy(out, &h, sizeof h);
}

uint32_t str_hash_rjenkins(std::string_view name) {
  const auto* k = reinterpret_cast<const unsigned char*>(name.data());
  size_t len = name.size();
  auto word = [](const unsigned char* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  };
  uint32_t a = 0x9e3779b9u;  // the golden ratio
  uint32_t b = a;
  uint32_t c = 0;
  while (len >= 12) {
    a += word(k);
    b += word(k + 4);
    c += word(k + 8);
    jenkins_mix(a, b, c);
    k += 12;
    len -= 12;
  }
  // The tail: up to 11 bytes spread over a, b and the upper three bytes of c; the low byte of c
  // carries the total length (mod 2^32).
  c += static_cast<uint32_t>(name.size());
  for (size_t i = 0; i < len; ++i) {
    const uint32_t byte = k[i];
    if (i < 4) {
      a += byte << (8 * i);
    } else if (i < 8) {
      b += byte << (8 * (i - 4));
    } else {
      c += byte << (8 * (i - 7));
    }
  }
  jenkins_mix(a, b, c);
  return c;
}

}  // namespace granary::crush

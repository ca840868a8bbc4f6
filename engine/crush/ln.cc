#include "engine/crush/ln.h"

#include "engine/status.h"

namespace granary::crush {
namespace {
#include "engine/crush/ln_table.inc"
}  // namespace

uint64_t crush_ln(uint32_t u) {
  GRANARY_CHECK(u <= 0xffff);
  // log2(x) for x = u + 1 in [1, 2^16]: write x = 2^e * m with m in [2^15, 2^16), then
  // log2(m) = log2(hi) + log2(m / hi), where hi = the top 8 bits of m (table RH/LH, indexed
  // by hi), and m / hi = 1 + f with f < 2^-7 (table LL, indexed by the low 8 bits of
  // 2^15 * m / hi). The result has 44 fractional bits.
  uint32_t x = u + 1;
  int exponent = 15;
  if ((x & 0x18000) == 0) {
    const int shift = __builtin_clz(x) - 16;
    x <<= shift;
    exponent -= shift;
  }
  const int hi = static_cast<int>(x >> 8) * 2 - 256;  // even index into kRhLh
  const int64_t reciprocal = kRhLh[hi];               // ~ 2^56 / (x >> 8)
  const int64_t log_hi = kRhLh[hi + 1];               // ~ 2^48 * log2((x >> 8) / 128)
  // Unsigned product: for x = 2^16 it is 2^63, one past the signed range.
  const uint64_t scaled = (uint64_t{x} * static_cast<uint64_t>(reciprocal)) >> 48;
  const int64_t log_lo = kLl[scaled & 0xff];  // ~ 2^48 * log2(1 + f)
  return (static_cast<uint64_t>(exponent) << 44) + (static_cast<uint64_t>(log_hi + log_lo) >> 4);
}

}  // namespace granary::crush

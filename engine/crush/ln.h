// Fixed-point logarithm used by straw2 buckets, bit-compatible with Ceph's crush_ln.
// Pure function; safe from any thread.
#pragma once

#include <cstdint>

namespace granary::crush {

// 2^44 * log2(u + 1) for u in [0, 0xffff], computed with Ceph's lookup tables (so the
// result, and every straw2 placement built on it, is exactly Ceph's).
uint64_t crush_ln(uint32_t u);

}  // namespace granary::crush

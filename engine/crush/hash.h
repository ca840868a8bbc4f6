// The hash functions of CRUSH placement, bit-compatible with Ceph.
//
// - crush_hash32{,_2,_3,_4,_5}: the "rjenkins1" family (CRUSH_HASH_RJENKINS1, hash id 0), built
//   from Robert Jenkins' 96-bit mix. CRUSH uses them to draw straws, walk trees and lists,
//   permute uniform buckets and reject reweighted devices.
// - str_hash_rjenkins: Jenkins' lookup2 hash of a byte string, which Ceph applies to an object
//   name to find its placement group.
// Pure functions of their arguments; safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace granary::crush {

// The only hash algorithm CRUSH defines today (bucket "hash 0").
constexpr int kHashRjenkins1 = 0;

uint32_t crush_hash32(uint32_t a);
uint32_t crush_hash32_2(uint32_t a, uint32_t b);
uint32_t crush_hash32_3(uint32_t a, uint32_t b, uint32_t c);
uint32_t crush_hash32_4(uint32_t a, uint32_t b, uint32_t c, uint32_t d);
uint32_t crush_hash32_5(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e);

// out[i] = crush_hash32_3(a, b[i], c) for i in 0..7, computed eight at a time (SIMD). The
// straw and straw2 draws of a bucket differ only in the item id, so this batches them.
void crush_hash32_3_x8(uint32_t a, const int32_t* b, uint32_t c, uint32_t* out);

// Ceph's ceph_str_hash_rjenkins over the bytes of `name` (no namespace, no locator key).
uint32_t str_hash_rjenkins(std::string_view name);

}  // namespace granary::crush

// crc32c: the Castagnoli CRC (iSCSI, RFC 3720) that engine/store/ puts on every 4 KiB block,
// journal record and checkpoint, computed by ISA-L's crc32_iscsi (SSE4.2/PCLMUL when the CPU
// has them). Conventional form: initial value ~0 and a final inversion, so
// crc32c("123456789") == 0xE3069283 (the check value of the CRC catalogue), and
// crc32c_extend(crc32c(a), b) == crc32c(a + b). Thread-safe (pure functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace granary::store {

// The crc32c of `data`.
uint32_t crc32c(std::span<const std::byte> data);
// The crc32c of the concatenation of the bytes whose crc32c is `crc` and `data`.
uint32_t crc32c_extend(uint32_t crc, std::span<const std::byte> data);

}  // namespace granary::store

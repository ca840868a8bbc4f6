// Wire primitives (wire.h).
#include "realmode/wire.h"

#include <algorithm>
#include <bit>
#include <type_traits>

namespace granary::realmode {

void WireWriter::put(uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

void WireWriter::f64(double v) {
  u64(std::bit_cast<uint64_t>(v));
}

void WireWriter::string(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out_.insert(out_.end(), p, p + s.size());
}

void WireWriter::strings(const std::vector<std::string>& list) {
  u32(static_cast<uint32_t>(list.size()));
  for (const std::string& s : list) string(s);
}

bool WireReader::fail(const char* field, std::string what) {
  if (status_.ok()) status_ = Status::invalid_argument(std::string(field) + ": " + what);
  return false;
}

bool WireReader::get(const char* field, size_t n, uint64_t* v) {
  if (!status_.ok()) return false;
  if (remaining() < n) {
    return fail(field, "truncated: expected " + std::to_string(n) + " bytes at offset " +
                           std::to_string(at_) + ", found " + std::to_string(remaining()));
  }
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) x |= static_cast<uint64_t>(in_[at_ + i]) << (8 * i);
  at_ += n;
  *v = x;
  return true;
}

template <typename T>
bool WireReader::fixed(const char* field, T* v) {
  uint64_t x;
  if (!get(field, sizeof(T), &x)) return false;
  if constexpr (std::is_same_v<T, double>) {
    *v = std::bit_cast<double>(x);
  } else {
    *v = static_cast<T>(x);  // the two's complement bits for int64_t
  }
  return true;
}

bool WireReader::u8(const char* field, uint8_t* v) {
  return fixed(field, v);
}
bool WireReader::u16(const char* field, uint16_t* v) {
  return fixed(field, v);
}
bool WireReader::u32(const char* field, uint32_t* v) {
  return fixed(field, v);
}
bool WireReader::u64(const char* field, uint64_t* v) {
  return fixed(field, v);
}
bool WireReader::i32(const char* field, int32_t* v) {
  uint32_t x;
  if (!fixed(field, &x)) return false;
  *v = static_cast<int32_t>(x);  // two's complement
  return true;
}
bool WireReader::i64(const char* field, int64_t* v) {
  return fixed(field, v);
}
bool WireReader::f64(const char* field, double* v) {
  return fixed(field, v);
}

bool WireReader::boolean(const char* field, bool* v) {
  uint64_t x;
  if (!get(field, 1, &x)) return false;
  if (x > 1) return fail(field, "expected a boolean (0 or 1), found " + std::to_string(x));
  *v = x == 1;
  return true;
}

bool WireReader::string(const char* field, std::string* v, uint32_t max_bytes) {
  uint32_t n;
  if (!u32(field, &n)) return false;
  if (n > max_bytes) {
    return fail(field, "a string of " + std::to_string(n) + " bytes, more than the limit of " +
                           std::to_string(max_bytes));
  }
  if (remaining() < n) {
    return fail(field, "truncated: a string of " + std::to_string(n) + " bytes, found " +
                           std::to_string(remaining()));
  }
  v->assign(reinterpret_cast<const char*>(in_.data() + at_), n);
  at_ += n;
  return true;
}

bool WireReader::count(const char* field, uint32_t* n, size_t min_item_bytes, uint32_t max_items) {
  uint32_t c;
  if (!u32(field, &c)) return false;
  if (c > max_items) {
    return fail(field, "a list of " + std::to_string(c) + " items, more than the limit of " +
                           std::to_string(max_items));
  }
  // A count the bytes cannot hold is refused before anything is reserved.
  if (remaining() / std::max<size_t>(1, min_item_bytes) < c) {
    return fail(field, "truncated: a list of " + std::to_string(c) + " items in " +
                           std::to_string(remaining()) + " bytes");
  }
  *n = c;
  return true;
}

bool WireReader::strings(const char* field, std::vector<std::string>* v) {
  uint32_t n;
  if (!count(field, &n, 4)) return false;  // each item takes at least its 4-byte length
  std::vector<std::string> out(n);
  for (std::string& s : out) {
    if (!string(field, &s)) return false;
  }
  *v = std::move(out);
  return true;
}

Status WireReader::finish() {
  if (status_.ok() && remaining() > 0) {
    status_ = Status::invalid_argument("body: " + std::to_string(remaining()) +
                                       " bytes after the last field (another layout?)");
  }
  return status_;
}

}  // namespace granary::realmode

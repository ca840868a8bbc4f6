// The primitives real-mode message bodies are serialised with (issue 13): fixed-width
// little-endian integers, IEEE-754 doubles by their bits, booleans as one byte 0 or 1, and
// strings and lists as a u32 count then their elements. WireWriter appends; WireReader reads
// from a body that came in a checked frame (frame.h) and trusts nothing in it: every read is
// bounded by the bytes left, a count by the reader's limits, and the first problem is kept as
// a Status naming the field ("ReadRequest.object: ...") and ends the reading.
//
// Thread-safety: one writer or reader per thread; no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

class WireWriter {
 public:
  void u8(uint8_t v) { put(v, 1); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void f64(double v);
  void boolean(bool v) { u8(v ? 1 : 0); }
  void string(const std::string& s);
  void strings(const std::vector<std::string>& list);

  const std::vector<std::byte>& bytes() const { return out_; }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  void put(uint64_t v, size_t n);
  std::vector<std::byte> out_;
};

class WireReader {
 public:
  struct Limits {
    uint32_t max_string_bytes = 4096;  // an object name, a path, an endpoint, an error line
    uint32_t max_list_items = 4096;    // shards, replicas, ...
  };
  explicit WireReader(std::span<const std::byte> body) : WireReader(body, Limits{}) {}
  WireReader(std::span<const std::byte> body, Limits limits) : in_(body), limits_(limits) {}

  // Each reads the next field into *v (left unchanged after a problem) and returns ok();
  // `field` names it in the error.
  bool u8(const char* field, uint8_t* v);
  bool u16(const char* field, uint16_t* v);
  bool u32(const char* field, uint32_t* v);
  bool u64(const char* field, uint64_t* v);
  bool i32(const char* field, int32_t* v);
  bool i64(const char* field, int64_t* v);
  bool f64(const char* field, double* v);
  bool boolean(const char* field, bool* v);
  bool string(const char* field, std::string* v) {
    return string(field, v, limits_.max_string_bytes);
  }
  // A string of at most `max_bytes` (a serialised map: more than a name's limit).
  bool string(const char* field, std::string* v, uint32_t max_bytes);
  bool strings(const char* field, std::vector<std::string>* v);
  // A list's u32 count, refused over the list limit or when the bytes left cannot hold that
  // many items of at least `min_item_bytes` each (so a caller may reserve n items).
  bool count(const char* field, uint32_t* n, size_t min_item_bytes) {
    return count(field, n, min_item_bytes, limits_.max_list_items);
  }
  bool count(const char* field, uint32_t* n, size_t min_item_bytes, uint32_t max_items);
  // Refuses the field for a reason of the caller's (a value out of range); false.
  bool refuse(const char* field, std::string what) { return fail(field, std::move(what)); }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  size_t remaining() const { return in_.size() - at_; }
  // The status once every field was read: also refuses bytes left over (a body longer than
  // its type's fields is a peer speaking another layout).
  Status finish();

 private:
  bool get(const char* field, size_t n, uint64_t* v);
  template <typename T>
  bool fixed(const char* field, T* v);  // a sizeof(T)-byte field
  bool fail(const char* field, std::string what);
  std::span<const std::byte> in_;
  Limits limits_;
  size_t at_ = 0;
  Status status_;
};

}  // namespace granary::realmode

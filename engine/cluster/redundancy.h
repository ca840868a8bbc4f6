// Redundancy: how a pool keeps its data, as the PG state logic and the recovery planner see it.
//
// A replicated pool keeps `size` full copies of every object; an erasure-coded pool splits an
// object into k data chunks and adds m coding chunks (size = k + m), one chunk per OSD of the
// placement group's set, and needs any k of them to read or rebuild the object. Both are
// described by (size, data_chunks): replication is data_chunks = 1, so "copies needed to read"
// is data_chunks in both cases.
//
// Ceph's default min_size (the copies a PG needs to accept I/O), from src/mon/OSDMonitor.cc
// prepare_pool_size(): replicated size - size/2 (osd_pool_default_min_size = 0 means that;
// ceph/ceph PR #20555), erasure k + min(1, m - 1), i.e. k + 1 whenever m >= 2.
//
// Plain value; thread-safe to share once built.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/status.h"

namespace granary::cluster {

struct Redundancy {
  bool erasure = false;
  int size = 3;         // copies, or k + m chunks
  int data_chunks = 1;  // k for erasure coding; 1 for replication

  static Redundancy replicated(int copies) { return Redundancy{false, copies, 1}; }
  static Redundancy erasure_coded(int k, int m) { return Redundancy{true, k + m, k}; }

  int coding_chunks() const { return size - data_chunks; }
  // Copies (chunks) from which an object can be read or rebuilt: 1, or k.
  int needed_to_read() const { return data_chunks; }
  // Ceph's default min_size for this redundancy (see the header comment).
  int default_min_size() const {
    return erasure ? data_chunks + std::min(1, coding_chunks() - 1) : size - size / 2;
  }
  // What one OSD of the set stores of `logical_bytes` of objects: all of it (a copy) or one
  // chunk, ceil(logical / k).
  uint64_t shard_bytes(uint64_t logical_bytes) const {
    const auto k = static_cast<uint64_t>(data_chunks);
    return erasure ? (logical_bytes + k - 1) / k : logical_bytes;
  }

  Status validate() const {
    if (size < 1 || size > 64) {
      return Status::invalid_argument("redundancy size must be 1..64, got " + std::to_string(size));
    }
    if (erasure ? (data_chunks < 1 || data_chunks >= size) : data_chunks != 1) {
      return Status::invalid_argument(
          erasure ? "erasure coding needs 1 <= k < k + m, got k = " + std::to_string(data_chunks) +
                        " of " + std::to_string(size) + " chunks"
                  : "a replicated pool has data_chunks = 1, got " + std::to_string(data_chunks));
    }
    return Status::ok_status();
  }
  bool operator==(const Redundancy&) const = default;
};

}  // namespace granary::cluster

// A simulated cluster that carries and verifies bytes (simulation.carry_data; docs/models.md,
// "Real data and modelled cost"). When the plan carries data (cluster_plan.h, CarryDataPlan):
//  - every device keeps its bytes (SimEnv::keep_device_bytes) and every OSD keeps its objects in
//    a store::DiskStore on its device, through the OSD's StoreBackend (object_backend.h),
//    instead of the size-only index;
//  - the stores are formatted, and a training read's dataset is written into them, before the
//    clock starts (the devices untimed: setup costs no simulated time, as the size-only world
//    starts with the dataset in place); each file's content is content_of(seed, path, offset);
//  - every file a loader or a checkpoint rank reads is compared with that content, and a
//    checkpoint's writes carry it;
//  - after the run a deep scrub (engine/recovery/peering.h) reads and checks every copy or
//    shard of every PG, repairing what is bad.
// The report's `carry_data` section counts all of it (docs/report-format.md).
//
// Thread-safety: simulation only (one task at a time), like SimEnv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/env.h"
#include "engine/layout/rbd.h"
#include "engine/placement/placement.h"
#include "engine/recovery/peering.h"
#include "engine/services/dataset.h"
#include "engine/store/disk_store.h"
#include "sim/sim_env.h"

namespace granary::sim {

// Byte t of a carried file `path` is a function of (seed, path, t): fills `out` with bytes
// [offset, offset + out.size()) of it.
void fill_content(uint64_t seed, std::string_view path, uint64_t offset, std::span<std::byte> out);
// The whole content of a file of `size_bytes`, as a payload with bytes.
Payload content_payload(uint64_t seed, std::string_view path, uint64_t size_bytes);
// OK when `data` is the whole content of file `path` of `size_bytes`, else a corruption
// Status naming the file and the first byte that differs (its value read and written).
// Thread-safe (pure).
Status check_content(uint64_t seed, std::string_view path, uint64_t size_bytes,
                     std::span<const std::byte> data);

// What a run that carries data did, for the report.
struct CarryCounts {
  uint64_t objects_written = 0;  // objects (replicated: each with all its copies; coded: shards)
  uint64_t copies_written = 0;   // copies or shards written into the stores
  uint64_t files_written = 0;    // files written with their bytes (the dataset, a checkpoint's)
  uint64_t bytes_written = 0;    // their bytes (client bytes, before copies)
  uint64_t reads_verified = 0;   // file reads compared with the content
  uint64_t bytes_verified = 0;
  uint64_t mismatches = 0;  // reads whose bytes differed (each fails the run)
  bool scrubbed = false;    // the deep scrub ran (not after a run stopped early)
  recovery::PeeringReport scrub;
  std::string scrub_error;  // the scrub could not finish: why
};

// The carried data of a world: the stores, the content's seed and the counts.
class CarriedData {
 public:
  explicit CarriedData(uint64_t seed) : seed_(seed) {}

  uint64_t seed() const { return seed_; }
  // One store per drive, [drive]; set by the world builder.
  std::vector<std::unique_ptr<store::DiskStore>>& stores() { return stores_; }
  const std::vector<std::unique_ptr<store::DiskStore>>& stores() const { return stores_; }

  // Compares `data`, a read of the whole file `path` of `size_bytes`, with its content and
  // counts it: OK, or a corruption Status naming the file and the first byte that differs.
  Status verify(std::string_view path, uint64_t size_bytes, std::span<const std::byte> data);
  // Counts a file written with its content.
  void wrote_file(uint64_t bytes) {
    ++counts_.files_written;
    counts_.bytes_written += bytes;
  }

  CarryCounts& counts() { return counts_; }
  const CarryCounts& counts() const { return counts_; }

 private:
  uint64_t seed_;
  std::vector<std::unique_ptr<store::DiskStore>> stores_;
  CarryCounts counts_;
};

// World building, before the simulation runs. Makes `env`'s devices keep bytes, and formats and
// mounts a DiskStore on each of the first `drives` devices, untimed (no simulated time).
Status mount_stores(SimEnv& env, int drives, CarriedData& carried);
// Writes every file of `dataset` into the stores, untimed: its objects as `layout` cuts it
// (services::rados_object_name), each held by the devices `placement` gives its group — whole
// on each replica, or as the k + m shards of a k+m code (`ec`, Ceph's ECUtil layout, ISA-L
// coding chunks) — with version 1 and the object's size as the OSD's StoreBackend keeps them.
Status write_dataset(SimEnv& env, const services::Dataset& dataset, const layout::RbdLayout& layout,
                     placement::Placement& placement, const ErasureCoding& ec,
                     CarriedData& carried);
// From a task on `host`: deep-scrubs every placement group of `placement` (its OSDs
// services::osd_endpoint_name(device)) and records the report in carried.counts().
void scrub(Env& env, HostId host, placement::Placement& placement, const ErasureCoding& ec,
           CarriedData& carried);

// The report's `carry_data` section of a run that carried data.
// A drive replaced by a new one (drive_replace): every object removed from its store, at no
// simulated cost.
Status empty_store(SimEnv& env, store::DiskStore& store);

nlohmann::json carry_data_json(const CarryCounts& counts);

}  // namespace granary::sim

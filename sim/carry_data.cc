#include "sim/carry_data.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "engine/redundancy/codec.h"
#include "engine/services/file_mapping.h"
#include "engine/services/object_backend.h"

namespace granary::sim {

namespace {

// SplitMix64's finaliser: a bijection of 64-bit words that mixes every input bit.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The key of a file's content: the seed and the path (FNV-1a), mixed.
uint64_t content_key(uint64_t seed, std::string_view path) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : path) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return mix(seed ^ mix(h));
}

// The store format of a carrying OSD: room in the checkpoint slots for the object index of a
// drive holding up to about 3 GiB (20 bytes per 4 KiB block), beyond the 1 GiB a run carries.
store::FormatOptions format_options() {
  store::FormatOptions f;
  f.journal_bytes = 8 << 20;
  f.checkpoint_bytes = 16 << 20;
  return f;
}

std::string hex_byte(std::byte b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(b));
  return buf;
}

}  // namespace

void fill_content(uint64_t seed, std::string_view path, uint64_t offset, std::span<std::byte> out) {
  const uint64_t key = content_key(seed, path);
  uint64_t t = offset;
  size_t i = 0;
  while (i < out.size()) {
    const uint64_t word = mix(key + t / 8);
    const uint64_t in_word = t % 8;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(8 - in_word, out.size() - i));
    for (size_t j = 0; j < n; ++j) {
      out[i + j] = static_cast<std::byte>(word >> (8 * (in_word + j)));
    }
    i += n;
    t += n;
  }
}

Payload content_payload(uint64_t seed, std::string_view path, uint64_t size_bytes) {
  MutableBuffer bytes(size_bytes);
  fill_content(seed, path, 0, bytes.span());
  return Payload::of(std::move(bytes).freeze());
}

Status check_content(uint64_t seed, std::string_view path, uint64_t size_bytes,
                     std::span<const std::byte> data) {
  std::vector<std::byte> want(std::min<uint64_t>(size_bytes, 1 << 20));
  uint64_t at = 0;
  std::string problem;
  if (data.size() != size_bytes) {
    problem = "the read returned " + std::to_string(data.size()) + " bytes, the file has " +
              std::to_string(size_bytes);
  }
  while (problem.empty() && at < size_bytes) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want.size(), size_bytes - at));
    fill_content(seed, path, at, std::span(want.data(), n));
    if (std::memcmp(want.data(), data.data() + at, n) != 0) {
      size_t j = 0;
      while (want[j] == data[at + j]) ++j;
      problem = "byte " + std::to_string(at + j) + " reads " + hex_byte(data[at + j]) +
                ", written " + hex_byte(want[j]);
      break;
    }
    at += n;
  }
  if (!problem.empty()) {
    return Status::corruption("carried data: " + std::string(path) + ": " + problem);
  }
  return Status::ok_status();
}

Status CarriedData::verify(std::string_view path, uint64_t size_bytes,
                           std::span<const std::byte> data) {
  ++counts_.reads_verified;
  Status s = check_content(seed_, path, size_bytes, data);
  if (!s.ok()) {
    ++counts_.mismatches;
    return s;
  }
  counts_.bytes_verified += size_bytes;
  return s;
}

Status mount_stores(SimEnv& env, int drives, CarriedData& carried) {
  env.keep_device_bytes();
  env.set_devices_untimed(true);
  Status result;
  for (int d = 0; d < drives && result.ok(); ++d) {
    Device& device = env.device(d);
    if (Status s = store::DiskStore::format(device, format_options()); !s.ok()) {
      result = s;
      break;
    }
    Result<std::unique_ptr<store::DiskStore>> mounted = store::DiskStore::mount(device);
    if (!mounted.ok()) {
      result = mounted.status();
      break;
    }
    carried.stores().push_back(std::move(*mounted));
  }
  env.set_devices_untimed(false);
  return result;
}

Status write_dataset(SimEnv& env, const services::Dataset& dataset, const layout::RbdLayout& layout,
                     placement::Placement& placement, const ErasureCoding& ec,
                     CarriedData& carried) {
  const redundancy::ErasureProfile profile{ec.k, ec.m, ec.stripe_unit_bytes};
  std::optional<redundancy::ReedSolomon> rs;
  if (ec.k > 0) {
    Result<redundancy::ReedSolomon> made = redundancy::ReedSolomon::create(profile);
    if (!made.ok()) return made.status();
    rs.emplace(std::move(*made));
  }
  auto& stores = carried.stores();
  CarryCounts& counts = carried.counts();
  env.set_devices_untimed(true);
  // Writes one copy or shard (`shard` >= 0: that shard).
  auto put = [&](int32_t device, const std::string& name, std::vector<std::byte> bytes,
                 uint64_t object_bytes, int32_t shard) -> Status {
    if (device < 0 || static_cast<size_t>(device) >= stores.size()) {
      return Status::ok_status();  // a position no device fills (kNoDevice)
    }
    const Payload p = Payload::of(Buffer::copy_of(bytes));
    ++counts.copies_written;
    return services::StoreBackend::write_to(*stores[static_cast<size_t>(device)], name, 0, p,
                                            object_bytes, /*version=*/1, shard, /*sync=*/false);
  };
  Status result;
  std::vector<int32_t> devices;
  for (const services::DatasetFile& file : dataset.files()) {
    Result<std::vector<layout::ObjectExtent>> extents = layout.image_to_objects(0, file.size_bytes);
    if (!extents.ok()) {
      result = extents.status();
      break;
    }
    // Each object's bytes, from the file ranges it holds.
    std::map<uint64_t, std::vector<std::byte>> objects;
    for (const layout::ObjectExtent& e : *extents) {
      std::vector<std::byte>& o = objects[e.object_no];
      if (o.size() < e.object_offset_bytes + e.length_bytes) {
        o.resize(e.object_offset_bytes + e.length_bytes);
      }
      uint64_t at = e.object_offset_bytes;
      for (const layout::ByteRange& r : e.image_ranges) {
        fill_content(carried.seed(), file.path, r.offset_bytes,
                     std::span(o.data() + at, r.length_bytes));
        at += r.length_bytes;
      }
    }
    for (auto& [object_no, bytes] : objects) {
      const std::string name = services::rados_object_name(file.path, object_no);
      devices.clear();
      placement.devices_of(placement.group_of(name), devices);
      const uint64_t n = bytes.size();
      ++counts.objects_written;
      if (!rs) {
        for (int32_t d : devices) {
          if (result = put(d, name, bytes, n, -1); !result.ok()) break;
        }
      } else {
        // Ceph's ECUtil layout (erasure.h): data chunk i of stripe s at shard offset s * su.
        const uint64_t su = profile.stripe_unit_bytes;
        const uint64_t shard = redundancy::shard_bytes(profile, n);
        std::vector<std::vector<uint8_t>> chunks(static_cast<size_t>(profile.shards()),
                                                 std::vector<uint8_t>(shard, 0));
        for (uint64_t s = 0; s * su < shard; ++s) {
          for (int i = 0; i < ec.k; ++i) {
            const uint64_t from = s * profile.stripe_bytes() + static_cast<uint64_t>(i) * su;
            if (from >= n) break;
            std::memcpy(chunks[static_cast<size_t>(i)].data() + s * su, bytes.data() + from,
                        std::min(su, n - from));
          }
        }
        std::vector<std::span<const uint8_t>> data;
        std::vector<std::span<uint8_t>> coding;
        for (int i = 0; i < profile.shards(); ++i) {
          if (i < ec.k) {
            data.emplace_back(chunks[static_cast<size_t>(i)]);
          } else {
            coding.emplace_back(chunks[static_cast<size_t>(i)]);
          }
        }
        if (result = rs->encode(data, coding); !result.ok()) break;
        for (int i = 0; i < profile.shards() && i < static_cast<int>(devices.size()); ++i) {
          const auto& c = chunks[static_cast<size_t>(i)];
          std::vector<std::byte> shard_bytes(shard);
          std::memcpy(shard_bytes.data(), c.data(), shard);
          if (result = put(devices[static_cast<size_t>(i)], name, std::move(shard_bytes), n, i);
              !result.ok()) {
            break;
          }
        }
      }
      if (!result.ok()) break;
    }
    if (!result.ok()) break;
    carried.wrote_file(file.size_bytes);
  }
  for (auto& s : stores) {
    if (!result.ok()) break;
    result = s->flush();
  }
  env.set_devices_untimed(false);
  return result;
}

void scrub(Env& env, HostId host, placement::Placement& placement, const ErasureCoding& ec,
           CarriedData& carried) {
  const std::vector<recovery::PgMembers> pgs = recovery::pg_members(placement);
  recovery::PeeringOptions o;
  o.ec = ec;
  o.reply_endpoint = "scrub";
  o.deep = true;
  o.pg_of = [&placement](const std::string& name) { return placement.group_of(name); };
  Result<recovery::PeeringReport> r = recovery::peer(env, host, pgs, o);
  CarryCounts& counts = carried.counts();
  counts.scrubbed = true;
  if (!r.ok()) {
    counts.scrub_error = r.status().to_string();
    return;
  }
  counts.scrub = *r;
}

Status empty_store(SimEnv& env, store::DiskStore& store) {
  const bool untimed = env.devices_untimed();
  env.set_devices_untimed(true);
  Status result;
  for (const std::string& name : store.list()) {
    if (result = store.remove(name); !result.ok()) break;
  }
  if (result.ok()) result = store.flush();
  env.set_devices_untimed(untimed);
  return result;
}

nlohmann::json carry_data_json(const CarryCounts& c) {
  nlohmann::json j = {{"objects_written", c.objects_written},
                      {"copies_written", c.copies_written},
                      {"files_written", c.files_written},
                      {"bytes_written", c.bytes_written},
                      {"reads_verified", c.reads_verified},
                      {"bytes_verified", c.bytes_verified},
                      {"mismatches", c.mismatches}};
  nlohmann::json s = {{"ran", c.scrubbed}};
  if (c.scrubbed && c.scrub_error.empty()) {
    s["pgs"] = c.scrub.pgs;
    s["objects"] = c.scrub.objects;
    s["copies_checked"] = c.scrub.scrubbed_copies;
    s["errors_found"] = c.scrub.scrub_errors;
    s["errors_repaired"] = c.scrub.pushes;
    s["stale_copies"] = c.scrub.stale_copies;
    s["unrecoverable"] = c.scrub.unrecoverable.size();
  }
  if (!c.scrub_error.empty()) s["error"] = c.scrub_error;
  j["scrub"] = s;
  return j;
}

}  // namespace granary::sim

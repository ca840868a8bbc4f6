#include "engine/services/file_mapping.h"

#include <charconv>
#include <cstdio>
#include <map>

#include "engine/crush/hash.h"

namespace granary::services {

std::string osd_endpoint_name(int32_t osd) {
  return "osd." + std::to_string(osd);
}
std::string ost_endpoint_name(uint32_t ost) {
  return "ost." + std::to_string(ost);
}
std::string nfs_endpoint_name(int32_t head) {
  return "nfs." + std::to_string(head);
}
std::string mds_endpoint_name(int32_t mds) {
  return "mds." + std::to_string(mds);
}

std::string rados_object_name(std::string_view file, uint64_t object_no) {
  char buf[20];
  std::snprintf(buf, sizeof buf, ".%016llx", static_cast<unsigned long long>(object_no));
  return std::string(file) + buf;
}

std::string lustre_object_name(std::string_view file, uint32_t stripe_index) {
  return std::string(file) + ".stripe" + std::to_string(stripe_index);
}

Result<std::vector<layout::ByteRange>> pfs_file_ranges(const layout::LustreFileLayout& layout,
                                                       std::string_view file,
                                                       const ObjectRead& read) {
  const std::string prefix = std::string(file) + ".stripe";
  std::string_view name = read.object;
  uint32_t stripe = 0;
  const auto parsed =
      name.starts_with(prefix) && name.size() > prefix.size()
          ? std::from_chars(name.data() + prefix.size(), name.data() + name.size(), stripe)
          : std::from_chars_result{name.data(), std::errc::invalid_argument};
  if (parsed.ec != std::errc() || parsed.ptr != name.data() + name.size()) {
    return Status::invalid_argument(read.object + " is not a stripe object of " +
                                    std::string(file));
  }
  return layout.object_to_file(stripe, read.offset_bytes, read.length_bytes);
}

int32_t nfs_head_of(std::string_view file, int32_t heads) {
  GRANARY_CHECK(heads >= 1);
  return static_cast<int32_t>(crush::str_hash_rjenkins(file) % static_cast<uint32_t>(heads));
}

namespace {

Result<int32_t> primary_of(placement::Placement& placement, const std::string& object,
                           std::vector<int32_t>& scratch) {
  const uint32_t group = placement.group_of(object);
  scratch.clear();
  placement.devices_of(group, scratch);
  for (int32_t d : scratch) {
    if (d != placement::kNoDevice) return d;
  }
  return Status::not_found("object " + object + ": group " + std::to_string(group) + " of " +
                           placement.describe() + " has no device");
}

}  // namespace

Result<std::vector<ObjectRead>> rados_reads(const layout::RbdLayout& layout,
                                            placement::Placement& placement, std::string_view file,
                                            uint64_t offset_bytes, uint64_t length_bytes,
                                            bool with_group) {
  Result<std::vector<layout::ObjectExtent>> extents =
      layout.image_to_objects(offset_bytes, length_bytes);
  if (!extents.ok()) return extents.status();
  std::vector<ObjectRead> reads;
  reads.reserve(extents->size());
  std::vector<int32_t> scratch;
  for (const layout::ObjectExtent& e : *extents) {
    std::string object = rados_object_name(file, e.object_no);
    Result<int32_t> osd = primary_of(placement, object, scratch);
    if (!osd.ok()) return osd.status();
    reads.push_back(ObjectRead{
        osd_endpoint_name(*osd), std::move(object), e.object_offset_bytes, e.length_bytes, {}});
    if (with_group) {
      for (int32_t d : scratch) {
        reads.back().group.push_back(d == placement::kNoDevice ? std::string()
                                                               : osd_endpoint_name(d));
      }
    }
  }
  return reads;
}

Result<std::vector<ObjectRead>> rados_object_request(placement::Placement& placement,
                                                     const ObjectRead& read, bool with_group) {
  std::vector<int32_t> scratch;
  Result<int32_t> osd = primary_of(placement, read.object, scratch);
  if (!osd.ok()) return osd.status();
  ObjectRead r{osd_endpoint_name(*osd), read.object, read.offset_bytes, read.length_bytes, {}};
  if (with_group) {
    for (int32_t d : scratch) {
      r.group.push_back(d == placement::kNoDevice ? std::string() : osd_endpoint_name(d));
    }
  }
  return std::vector<ObjectRead>{std::move(r)};
}

Result<std::vector<ObjectRead>> pfs_reads(const layout::LustreFileLayout& layout,
                                          std::string_view file, uint64_t offset_bytes,
                                          uint64_t length_bytes, uint64_t max_request_bytes) {
  GRANARY_CHECK(max_request_bytes > 0);
  Result<std::vector<layout::StripeExtent>> extents =
      layout.file_to_objects(offset_bytes, length_bytes);
  if (!extents.ok()) return extents.status();
  // Pieces of one stripe object that follow each other merge, as a Lustre client fills an RPC
  // with contiguous pages of one object; then each object's run is cut into RPCs of at most
  // max_request_bytes, and the RPCs are issued in the order of their first byte in the file.
  struct Run {
    uint64_t file_offset, stripe, object_offset, length;
    uint32_t ost;
  };
  std::vector<Run> runs;
  std::map<uint32_t, size_t> last_run;  // stripe index -> its latest run
  uint64_t file_offset = offset_bytes;
  for (const layout::StripeExtent& e : *extents) {
    auto it = last_run.find(e.stripe_index);
    if (it != last_run.end()) {
      Run& r = runs[it->second];
      if (r.object_offset + r.length == e.object_offset_bytes) {
        r.length += e.length_bytes;
        file_offset += e.length_bytes;
        continue;
      }
    }
    last_run[e.stripe_index] = runs.size();
    runs.push_back(
        {file_offset, e.stripe_index, e.object_offset_bytes, e.length_bytes, e.ost_index});
    file_offset += e.length_bytes;
  }
  struct Piece {
    uint64_t order;
    ObjectRead read;
  };
  std::vector<Piece> pieces;
  for (const Run& r : runs) {
    const std::string endpoint = ost_endpoint_name(r.ost);
    const std::string object = lustre_object_name(file, static_cast<uint32_t>(r.stripe));
    for (uint64_t done = 0; done < r.length; done += max_request_bytes) {
      pieces.push_back(
          {r.file_offset + done, ObjectRead{endpoint,
                                            object,
                                            r.object_offset + done,
                                            std::min(max_request_bytes, r.length - done),
                                            {}}});
    }
  }
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.order < b.order; });
  std::vector<ObjectRead> reads;
  reads.reserve(pieces.size());
  for (Piece& p : pieces) reads.push_back(std::move(p.read));
  return reads;
}

std::vector<ObjectRead> nfs_reads(std::string_view file, int32_t head, uint64_t offset_bytes,
                                  uint64_t length_bytes, uint64_t rsize_bytes) {
  GRANARY_CHECK(rsize_bytes > 0 && head >= 0);
  const std::string endpoint = nfs_endpoint_name(head);
  std::vector<ObjectRead> reads;
  for (uint64_t done = 0; done < length_bytes; done += rsize_bytes) {
    reads.push_back(ObjectRead{endpoint,
                               std::string(file),
                               offset_bytes + done,
                               std::min(rsize_bytes, length_bytes - done),
                               {}});
  }
  return reads;
}

Result<std::vector<StoredObjectSpec>> rados_objects(const layout::RbdLayout& layout,
                                                    placement::Placement& placement,
                                                    std::string_view file, uint64_t size_bytes) {
  Result<std::vector<layout::ObjectExtent>> extents = layout.image_to_objects(0, size_bytes);
  if (!extents.ok()) return extents.status();
  std::map<uint64_t, uint64_t> object_size;  // object_no -> bytes up to its last data byte
  for (const layout::ObjectExtent& e : *extents) {
    uint64_t& s = object_size[e.object_no];
    s = std::max(s, e.object_offset_bytes + e.length_bytes);
  }
  std::vector<StoredObjectSpec> objects;
  std::vector<int32_t> devices;
  for (const auto& [object_no, size] : object_size) {
    StoredObjectSpec o{rados_object_name(file, object_no), size, {}};
    const uint32_t group = placement.group_of(o.object);
    devices.clear();
    placement.devices_of(group, devices);
    for (int32_t d : devices) {
      if (d != placement::kNoDevice) o.holders.push_back(d);
    }
    if (o.holders.empty()) {
      return Status::not_found("object " + o.object + ": group " + std::to_string(group) + " of " +
                               placement.describe() + " has no device");
    }
    objects.push_back(std::move(o));
  }
  return objects;
}

std::vector<StoredObjectSpec> pfs_objects(const layout::LustreFileLayout& layout,
                                          std::string_view file, uint64_t size_bytes) {
  std::vector<StoredObjectSpec> objects;
  for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
    objects.push_back(StoredObjectSpec{lustre_object_name(file, i),
                                       layout.object_size_bytes(size_bytes, i),
                                       {static_cast<int32_t>(layout.ost_indices()[i])}});
  }
  return objects;
}

Result<PfsLayouts> allocate_pfs_layouts(const Dataset& dataset, layout::OstAllocator& allocator,
                                        const layout::LustreLayoutSpec& spec, Random& rng) {
  PfsLayouts layouts;
  for (const DatasetFile& f : dataset.files()) {
    Result<layout::OstAllocation> a = allocator.allocate(spec, rng);
    if (!a.ok()) return Status(a.status());
    layouts.emplace(f.path, a->layout);
  }
  return layouts;
}

}  // namespace granary::services

// How a file of a dataset becomes requests to storage servers, for the three storage designs,
// and the names of the servers' endpoints. Shared by the client (which reads) and by the
// functions that populate the servers' object stores (object_store.h), so both always agree.
//
//  - rados: the file is striped like an RBD image (layout::RbdLayout); its data object
//    `object_no` is called "<file>.<object_no as 16 lower-case hex digits>" (RBD format 2
//    style, with the file path in place of "rbd_data.<image id>"), e.g.
//    "unet3d/file_00000042.0000000000000003". Object -> group -> devices via a
//    placement::Placement; reads go to the primary (first device), endpoint "osd.<id>".
//  - pfs: the file has a layout::LustreFileLayout; the object of stripe index i lives on OST
//    o[i] and is called "<file>.stripe<i>" (decimal), endpoint "ost.<OST index>". A stripe
//    extent is cut into requests of at most max_request_bytes (Lustre's RPC size).
//  - nfs: the file lives whole on one filer head, head = str_hash_rjenkins(path) % heads,
//    endpoint "nfs.<head>", object name = the path; it is read in requests of rsize bytes.
//
// Thread-safety: free functions; rados_reads uses the Placement, which is not thread-safe
// (callers serialise access to it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/layout/lustre.h"
#include "engine/layout/rbd.h"
#include "engine/placement/placement.h"
#include "engine/random.h"
#include "engine/services/dataset.h"
#include "engine/status.h"

namespace granary::services {

std::string osd_endpoint_name(int32_t osd);   // "osd.<id>"
std::string ost_endpoint_name(uint32_t ost);  // "ost.<index>"
std::string nfs_endpoint_name(int32_t head);  // "nfs.<head>"
std::string mds_endpoint_name(int32_t mds);   // "mds.<id>"

std::string rados_object_name(std::string_view file, uint64_t object_no);
std::string lustre_object_name(std::string_view file, uint32_t stripe_index);
int32_t nfs_head_of(std::string_view file, int32_t heads);  // heads >= 1

// One request: `length_bytes` at `offset_bytes` of `object` on the server at `endpoint`.
// (Also one write: the same addressing.)
struct ObjectRead {
  std::string endpoint;
  std::string object;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  // rados with `with_group`: the endpoints of every position of the object's group, primary
  // first, "" for a position no device fills (erasure-coded pools keep positions).
  std::vector<std::string> group;
};

// rados: one request per object extent of [offset, offset + length), to the primary (the
// first device of the group). not_found when the placement has no device for an object's group.
Result<std::vector<ObjectRead>> rados_reads(const layout::RbdLayout& layout,
                                            placement::Placement& placement, std::string_view file,
                                            uint64_t offset_bytes, uint64_t length_bytes,
                                            bool with_group = false);
// rados: `read` (one extent of one object) addressed anew by the placement: its primary now
// (and with `with_group` every position). not_found when the group has no device.
Result<std::vector<ObjectRead>> rados_object_request(placement::Placement& placement,
                                                     const ObjectRead& read, bool with_group);
// pfs: the stripe extents of the range, each cut into requests of <= max_request_bytes (> 0).
Result<std::vector<ObjectRead>> pfs_reads(const layout::LustreFileLayout& layout,
                                          std::string_view file, uint64_t offset_bytes,
                                          uint64_t length_bytes, uint64_t max_request_bytes);
// pfs: the file ranges request `read` (one of pfs_reads' for `file`) carries, in its object's
// order: what a write with data cuts from the file's bytes, and where a read's bytes go.
// invalid_argument when `read` is not a stripe object of `file` under `layout`.
Result<std::vector<layout::ByteRange>> pfs_file_ranges(const layout::LustreFileLayout& layout,
                                                       std::string_view file,
                                                       const ObjectRead& read);
// nfs: requests of rsize_bytes (> 0; the last one shorter) to the file's head (nfs_head_of,
// or a node's own head in design local).
std::vector<ObjectRead> nfs_reads(std::string_view file, int32_t head, uint64_t offset_bytes,
                                  uint64_t length_bytes, uint64_t rsize_bytes);

// An object a design stores for a file, with its size and the devices (OSD ids, OST indices or
// heads) that hold a copy.
struct StoredObjectSpec {
  std::string object;
  uint64_t size_bytes = 0;
  std::vector<int32_t> holders;
};

// rados: the data objects of a file of `size_bytes`, held by every device the placement lists
// for their group (replicated pools: each replica holds the whole object; kNoDevice skipped).
Result<std::vector<StoredObjectSpec>> rados_objects(const layout::RbdLayout& layout,
                                                    placement::Placement& placement,
                                                    std::string_view file, uint64_t size_bytes);
// pfs: one object per stripe index (possibly empty for a short file), held by its OST.
std::vector<StoredObjectSpec> pfs_objects(const layout::LustreFileLayout& layout,
                                          std::string_view file, uint64_t size_bytes);

using PfsLayouts = std::map<std::string, layout::LustreFileLayout, std::less<>>;

// pfs: a layout for every file of the dataset, allocated in file order by `allocator`.
Result<PfsLayouts> allocate_pfs_layouts(const Dataset& dataset, layout::OstAllocator& allocator,
                                        const layout::LustreLayoutSpec& spec, Random& rng);

}  // namespace granary::services

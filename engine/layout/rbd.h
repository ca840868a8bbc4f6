// RBD-style striping: an image's byte range -> extents of RADOS objects, with the semantics of
// Ceph's Striper (file_layout_t: object_size, stripe_unit, stripe_count), and the object names
// of RBD image format 2.
//
// The image is cut into stripe units; unit `blockno` = off / stripe_unit goes to
//
//   stripeno           = blockno / stripe_count          (row of the stripe)
//   stripepos          = blockno % stripe_count          (column: object within its set)
//   stripes_per_object = object_size / stripe_unit
//   objectsetno        = stripeno / stripes_per_object
//   object_no          = objectsetno * stripe_count + stripepos
//   object offset      = (stripeno % stripes_per_object) * stripe_unit + off % stripe_unit
//
// A range maps to one ObjectExtent per contiguous piece of an object (pieces that are adjacent
// in the same object merge, as Ceph does), ordered by object number, then object offset. Each
// extent lists the image ranges it holds, in image order, with adjacent ranges merged; they
// are absolute image offsets (Ceph's buffer_extents are relative to the request; subtract the
// request offset to get those). Cost: O(length / stripe_unit + extents).
//
// Data object names (format 2): "rbd_data.<image id>.<object_no as %016llx>".
//
// Thread-safety: RbdLayout is an immutable value once created; share it freely.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/layout/extent.h"
#include "engine/status.h"

namespace granary::layout {

// The three striping parameters. Defaults: RBD's default layout (4 MiB objects, no striping).
struct RbdLayoutSpec {
  uint64_t object_size_bytes = uint64_t{4} << 20;  // power of two, 1 B .. 2 GiB
  uint64_t stripe_unit_bytes = uint64_t{4} << 20;  // > 0, divides object_size_bytes
  uint64_t stripe_count = 1;                       // 1 .. 2^32 - 1
};

// Where one image byte lives.
struct ObjectPosition {
  uint64_t object_no = 0;
  uint64_t object_offset_bytes = 0;
  bool operator==(const ObjectPosition&) const = default;
};

// A contiguous byte range of one object and the image ranges stored there.
struct ObjectExtent {
  uint64_t object_no = 0;
  uint64_t object_offset_bytes = 0;
  uint64_t length_bytes = 0;
  // Image ranges, in image order, whose lengths sum to length_bytes; the first byte of the
  // first range is at object_offset_bytes, and so on in order.
  std::vector<ByteRange> image_ranges;
  bool operator==(const ObjectExtent&) const = default;
};

class RbdLayout {
 public:
  // Checks the spec: object size a power of two <= 2 GiB, stripe unit > 0 dividing it,
  // 1 <= stripe_count < 2^32 (the limits of Ceph's 32-bit file_layout_t fields).
  static Result<RbdLayout> create(const RbdLayoutSpec& spec);
  // The layout `rbd create` makes by default: 4 MiB objects, stripe unit = object size, count 1.
  static RbdLayout default_layout();

  const RbdLayoutSpec& spec() const { return spec_; }
  uint64_t stripes_per_object() const { return spec_.object_size_bytes / spec_.stripe_unit_bytes; }
  // Bytes in one object set (stripe_count objects filled together): object_size * stripe_count.
  uint64_t object_set_bytes() const { return spec_.object_size_bytes * spec_.stripe_count; }

  // The object and offset of one image byte.
  ObjectPosition locate(uint64_t image_offset_bytes) const;

  // Ceph's Striper::file_to_extents. Empty for length 0. Error if offset + length overflows
  // 64 bits.
  Result<std::vector<ObjectExtent>> image_to_objects(uint64_t image_offset_bytes,
                                                     uint64_t length_bytes) const;

  // Ceph's Striper::extent_to_file: the image ranges held by bytes
  // [object_offset, object_offset + length) of object `object_no`, in object order, adjacent
  // ranges merged. Error if the range leaves the object or an image offset overflows 64 bits.
  Result<std::vector<ByteRange>> object_to_image(uint64_t object_no, uint64_t object_offset_bytes,
                                                 uint64_t length_bytes) const;

  // Ceph's Striper::get_num_objects: the objects 0 .. n-1 an image of this size touches
  // (every one of them holds data once the image is fully written).
  uint64_t num_objects(uint64_t image_size_bytes) const;

 private:
  explicit RbdLayout(const RbdLayoutSpec& spec) : spec_(spec) {}

  RbdLayoutSpec spec_;
};

// "rbd_data." + image_id + "." + object_no as 16 lower-case hex digits, e.g.
// rbd_data.283f.0000000000000e62. The image id must be non-empty and made of lower-case letters
// and digits (librbd generates lower-case hex ids).
Result<std::string> rbd_data_object_name(std::string_view image_id, uint64_t object_no);

struct RbdDataObject {
  std::string image_id;
  uint64_t object_no = 0;
  bool operator==(const RbdDataObject&) const = default;
};
// The inverse of rbd_data_object_name; invalid_argument for any other name.
Result<RbdDataObject> parse_rbd_data_object_name(std::string_view name);

}  // namespace granary::layout

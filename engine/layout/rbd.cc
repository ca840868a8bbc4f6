#include "engine/layout/rbd.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace granary::layout {

namespace {

constexpr uint64_t kMaxObjectSizeBytes = uint64_t{1} << 31;
constexpr uint64_t kMaxStripeCount = (uint64_t{1} << 32) - 1;
constexpr std::string_view kDataPrefix = "rbd_data.";
constexpr int kObjectNoHexDigits = 16;

bool is_power_of_two(uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// Appends [offset, offset + length) to `ranges`, merging with the last range when adjacent.
void append_range(std::vector<ByteRange>& ranges, uint64_t offset_bytes, uint64_t length_bytes) {
  if (!ranges.empty() && ranges.back().end_bytes() == offset_bytes) {
    ranges.back().length_bytes += length_bytes;
  } else {
    ranges.push_back({offset_bytes, length_bytes});
  }
}

bool is_id_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
}

}  // namespace

Result<RbdLayout> RbdLayout::create(const RbdLayoutSpec& spec) {
  const std::string where = "RBD layout (object_size_bytes " +
                            std::to_string(spec.object_size_bytes) + ", stripe_unit_bytes " +
                            std::to_string(spec.stripe_unit_bytes) + ", stripe_count " +
                            std::to_string(spec.stripe_count) + "): ";
  if (!is_power_of_two(spec.object_size_bytes) || spec.object_size_bytes > kMaxObjectSizeBytes) {
    return Status::invalid_argument(where +
                                    "object_size_bytes must be a power of two between 1 and 2 GiB");
  }
  if (spec.stripe_unit_bytes == 0) {
    return Status::invalid_argument(where + "stripe_unit_bytes must be > 0");
  }
  if (spec.object_size_bytes % spec.stripe_unit_bytes != 0) {
    return Status::invalid_argument(where + "stripe_unit_bytes must divide object_size_bytes");
  }
  if (spec.stripe_count == 0 || spec.stripe_count > kMaxStripeCount) {
    return Status::invalid_argument(where + "stripe_count must be between 1 and 2^32 - 1");
  }
  return RbdLayout(spec);
}

RbdLayout RbdLayout::default_layout() {
  return RbdLayout(RbdLayoutSpec{});
}

ObjectPosition RbdLayout::locate(uint64_t image_offset_bytes) const {
  const uint64_t su = spec_.stripe_unit_bytes;
  const uint64_t count = spec_.stripe_count;
  const uint64_t spo = stripes_per_object();
  const uint64_t blockno = image_offset_bytes / su;
  const uint64_t stripeno = blockno / count;
  const uint64_t stripepos = blockno % count;
  const uint64_t objectsetno = stripeno / spo;
  // objectsetno * count + stripepos <= blockno: no overflow.
  return {objectsetno * count + stripepos, (stripeno % spo) * su + image_offset_bytes % su};
}

Result<std::vector<ObjectExtent>> RbdLayout::image_to_objects(uint64_t image_offset_bytes,
                                                              uint64_t length_bytes) const {
  if (length_bytes > UINT64_MAX - image_offset_bytes) {
    return Status::invalid_argument("RBD image range at offset " +
                                    std::to_string(image_offset_bytes) + " with length " +
                                    std::to_string(length_bytes) + " overflows 64-bit offsets");
  }
  const uint64_t su = spec_.stripe_unit_bytes;
  // Per object, its extents in the order they were made (object offsets increase with image
  // offsets within one object, so a new piece can only continue the last extent).
  std::map<uint64_t, std::vector<ObjectExtent>> by_object;
  uint64_t cur = image_offset_bytes;
  uint64_t left = length_bytes;
  while (left > 0) {
    const ObjectPosition pos = locate(cur);
    const uint64_t piece = std::min(left, su - cur % su);
    std::vector<ObjectExtent>& extents = by_object[pos.object_no];
    if (extents.empty() || extents.back().object_offset_bytes + extents.back().length_bytes !=
                               pos.object_offset_bytes) {
      extents.push_back({pos.object_no, pos.object_offset_bytes, 0, {}});
    }
    ObjectExtent& ex = extents.back();
    ex.length_bytes += piece;
    append_range(ex.image_ranges, cur, piece);
    cur += piece;
    left -= piece;
  }
  std::vector<ObjectExtent> out;
  for (auto& [object_no, extents] : by_object) {
    for (ObjectExtent& ex : extents) out.push_back(std::move(ex));
  }
  return out;
}

Result<std::vector<ByteRange>> RbdLayout::object_to_image(uint64_t object_no,
                                                          uint64_t object_offset_bytes,
                                                          uint64_t length_bytes) const {
  const uint64_t os = spec_.object_size_bytes;
  if (object_offset_bytes > os || length_bytes > os - object_offset_bytes) {
    return Status::invalid_argument(
        "RBD object " + std::to_string(object_no) + " range at offset " +
        std::to_string(object_offset_bytes) + " with length " + std::to_string(length_bytes) +
        " leaves the object (object_size_bytes " + std::to_string(os) + ")");
  }
  const uint64_t su = spec_.stripe_unit_bytes;
  const uint64_t count = spec_.stripe_count;
  const uint64_t spo = stripes_per_object();
  const uint64_t stripepos = object_no % count;
  const uint64_t objectsetno = object_no / count;
  std::vector<ByteRange> out;
  uint64_t off = object_offset_bytes;
  uint64_t left = length_bytes;
  while (left > 0) {
    // stripeno = objectsetno * spo + off / su; blockno = stripeno * count + stripepos;
    // image offset = blockno * su + off % su. Checked: a huge object number has no image.
    uint64_t stripeno = 0, blockno = 0, image_off = 0;
    const uint64_t piece = std::min(left, su - off % su);
    if (__builtin_mul_overflow(objectsetno, spo, &stripeno) ||
        __builtin_add_overflow(stripeno, off / su, &stripeno) ||
        __builtin_mul_overflow(stripeno, count, &blockno) ||
        __builtin_add_overflow(blockno, stripepos, &blockno) ||
        __builtin_mul_overflow(blockno, su, &image_off) ||
        __builtin_add_overflow(image_off, off % su, &image_off) || piece > UINT64_MAX - image_off) {
      return Status::invalid_argument("RBD object " + std::to_string(object_no) + " offset " +
                                      std::to_string(off) +
                                      " maps past the largest 64-bit image offset");
    }
    append_range(out, image_off, piece);
    off += piece;
    left -= piece;
  }
  return out;
}

uint64_t RbdLayout::num_objects(uint64_t image_size_bytes) const {
  const uint64_t su = spec_.stripe_unit_bytes;
  const uint64_t count = spec_.stripe_count;
  const uint64_t period = object_set_bytes();  // <= 2^31 * (2^32 - 1): no overflow
  const uint64_t num_periods = image_size_bytes / period + (image_size_bytes % period != 0);
  const uint64_t remainder_bytes = image_size_bytes % period;
  uint64_t missing = 0;  // objects of the last, partial set that no byte reaches
  if (remainder_bytes > 0 && remainder_bytes < count * su) {
    missing = count - (remainder_bytes + su - 1) / su;
  }
  // num_periods * count <= image_size / object_size + count: fits.
  return num_periods * count - missing;
}

Result<std::string> rbd_data_object_name(std::string_view image_id, uint64_t object_no) {
  if (image_id.empty()) return Status::invalid_argument("RBD image id is empty");
  for (char c : image_id) {
    if (!is_id_char(c)) {
      return Status::invalid_argument("RBD image id \"" + std::string(image_id) +
                                      "\": expected lower-case letters and digits only");
    }
  }
  char hex[kObjectNoHexDigits + 1];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(object_no));
  std::string name;
  name.reserve(kDataPrefix.size() + image_id.size() + 1 + kObjectNoHexDigits);
  name.append(kDataPrefix).append(image_id).append(".").append(hex);
  return name;
}

Result<RbdDataObject> parse_rbd_data_object_name(std::string_view name) {
  const auto bad = [&](const char* why) {
    return Status::invalid_argument("RBD data object name \"" + std::string(name) + "\": " + why +
                                    " (expected rbd_data.<image id>.<16 lower-case hex digits>)");
  };
  if (!name.starts_with(kDataPrefix)) return bad("missing the rbd_data. prefix");
  const std::string_view rest = name.substr(kDataPrefix.size());
  const size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos) return bad("missing the object number");
  const std::string_view id = rest.substr(0, dot);
  const std::string_view hex = rest.substr(dot + 1);
  if (id.empty()) return bad("empty image id");
  for (char c : id) {
    if (!is_id_char(c)) return bad("image id has a character other than [0-9a-z]");
  }
  if (hex.size() != kObjectNoHexDigits) return bad("object number is not 16 hex digits");
  uint64_t object_no = 0;
  for (char c : hex) {
    uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<uint64_t>(c - 'a' + 10);
    } else {
      return bad("object number has a character other than [0-9a-f]");
    }
    object_no = (object_no << 4) | digit;
  }
  return RbdDataObject{std::string(id), object_no};
}

}  // namespace granary::layout

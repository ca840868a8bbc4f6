#include "engine/layout/rbd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "engine/random.h"

namespace granary::layout {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;

RbdLayout make(uint64_t object_size_bytes, uint64_t stripe_unit_bytes, uint64_t stripe_count) {
  Result<RbdLayout> layout =
      RbdLayout::create({object_size_bytes, stripe_unit_bytes, stripe_count});
  EXPECT_TRUE(layout.ok()) << layout.status().to_string();
  return std::move(layout).value();
}

RbdLayout make(const RbdLayoutSpec& spec) {
  return make(spec.object_size_bytes, spec.stripe_unit_bytes, spec.stripe_count);
}

std::vector<ObjectExtent> map_ok(const RbdLayout& layout, uint64_t offset, uint64_t length) {
  Result<std::vector<ObjectExtent>> r = layout.image_to_objects(offset, length);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : std::vector<ObjectExtent>{};
}

// ---- Known answers, computed by hand ----------------------------------------------------------

// object_size 4 MiB, stripe_unit 1 MiB, stripe_count 4: stripes_per_object = 4.
// Byte 5 MiB + 10: blockno 5, stripeno 5/4 = 1, stripepos 5%4 = 1, objectset 1/4 = 0,
// object 0*4 + 1 = 1, offset (1%4)*1 MiB + 10 = 1 MiB + 10.
TEST(RbdLayout, StripedByteKnownAnswer) {
  const RbdLayout layout = make(4 * kMiB, kMiB, 4);
  EXPECT_EQ(layout.stripes_per_object(), 4u);
  EXPECT_EQ(layout.object_set_bytes(), 16 * kMiB);
  EXPECT_EQ(layout.locate(5 * kMiB + 10), (ObjectPosition{1, kMiB + 10}));
  EXPECT_EQ(map_ok(layout, 5 * kMiB + 10, 1),
            (std::vector<ObjectExtent>{{1, kMiB + 10, 1, {{5 * kMiB + 10, 1}}}}));
  // Byte 16 MiB: blockno 16, stripeno 4, pos 0, objectset 1 -> object 4 at offset 0.
  EXPECT_EQ(layout.locate(16 * kMiB), (ObjectPosition{4, 0}));
  // Byte 17 MiB + 5: blockno 17, stripeno 4, pos 1, objectset 1 -> object 5 at offset 5.
  EXPECT_EQ(layout.locate(17 * kMiB + 5), (ObjectPosition{5, 5}));
  // Byte 20 MiB: blockno 20, stripeno 5, pos 0, objectset 1 -> object 4 at (5%4)*1 MiB.
  EXPECT_EQ(layout.locate(20 * kMiB), (ObjectPosition{4, kMiB}));
  // Byte 15 MiB + 7: blockno 15, stripeno 3, pos 3 -> object 3 at 3 MiB + 7.
  EXPECT_EQ(layout.locate(15 * kMiB + 7), (ObjectPosition{3, 3 * kMiB + 7}));
}

// 16 MiB from 0 is one full object set: blocks 0..15, block b in object b%4, row b/4. Each of
// objects 0..3 is filled entirely; object p holds image MiBs p, p+4, p+8, p+12.
TEST(RbdLayout, FullObjectSetTouchesEachObjectOnce) {
  const RbdLayout layout = make(4 * kMiB, kMiB, 4);
  const std::vector<ObjectExtent> got = map_ok(layout, 0, 16 * kMiB);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t p = 0; p < 4; ++p) {
    EXPECT_EQ(got[p].object_no, p);
    EXPECT_EQ(got[p].object_offset_bytes, 0u);
    EXPECT_EQ(got[p].length_bytes, 4 * kMiB);
    EXPECT_EQ(got[p].image_ranges, (std::vector<ByteRange>{{p * kMiB, kMiB},
                                                           {(p + 4) * kMiB, kMiB},
                                                           {(p + 8) * kMiB, kMiB},
                                                           {(p + 12) * kMiB, kMiB}}));
  }
}

// 4 MiB objects, 1 MiB units, 2 objects per set; range [512 KiB, 3 MiB):
//   block 0 [512K,1M) -> object 0 @ 512K; block 1 [1M,2M) -> object 1 @ 0;
//   block 2 [2M,3M) -> stripeno 1, pos 0 -> object 0 @ 1M (continues the first piece).
TEST(RbdLayout, PiecesOfOneObjectMerge) {
  const RbdLayout layout = make(4 * kMiB, kMiB, 2);
  EXPECT_EQ(map_ok(layout, 512 * kKiB, 3 * kMiB - 512 * kKiB),
            (std::vector<ObjectExtent>{
                {0, 512 * kKiB, kMiB + 512 * kKiB, {{512 * kKiB, 512 * kKiB}, {2 * kMiB, kMiB}}},
                {1, 0, kMiB, {{kMiB, kMiB}}}}));
}

// Default layout (stripe unit = object size, count 1): object n = off / object_size.
// [3 MiB, 9 MiB) -> object 0 [3M,4M), object 1 [0,4M), object 2 [0,1M).
TEST(RbdLayout, DefaultLayoutIsOffsetOverObjectSize) {
  const RbdLayout layout = RbdLayout::default_layout();
  EXPECT_EQ(layout.spec().object_size_bytes, 4 * kMiB);
  EXPECT_EQ(layout.spec().stripe_unit_bytes, 4 * kMiB);
  EXPECT_EQ(layout.spec().stripe_count, 1u);
  for (uint64_t off :
       {uint64_t{0}, 4 * kMiB - 1, 4 * kMiB, uint64_t{123456789}, uint64_t{1} << 40}) {
    EXPECT_EQ(layout.locate(off), (ObjectPosition{off / (4 * kMiB), off % (4 * kMiB)}));
  }
  EXPECT_EQ(map_ok(layout, 3 * kMiB, 6 * kMiB),
            (std::vector<ObjectExtent>{{0, 3 * kMiB, kMiB, {{3 * kMiB, kMiB}}},
                                       {1, 0, 4 * kMiB, {{4 * kMiB, 4 * kMiB}}},
                                       {2, 0, kMiB, {{8 * kMiB, kMiB}}}}));
  // A stripe unit smaller than the object with count 1 changes nothing.
  EXPECT_EQ(map_ok(make(4 * kMiB, kMiB, 1), 3 * kMiB, 6 * kMiB),
            map_ok(layout, 3 * kMiB, 6 * kMiB));
}

TEST(RbdLayout, EmptyRangeHasNoExtents) {
  EXPECT_TRUE(map_ok(make(4 * kMiB, kMiB, 4), 12345, 0).empty());
}

// Object 5 with 4 MiB / 1 MiB / 4: objectset 1, stripepos 1; its rows are stripes 4..7, so
// its four MiBs are image blocks 4*4+1 = 17, 21, 25, 29.
TEST(RbdLayout, ObjectToImageKnownAnswer) {
  const RbdLayout layout = make(4 * kMiB, kMiB, 4);
  Result<std::vector<ByteRange>> r = layout.object_to_image(5, 0, 4 * kMiB);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(*r, (std::vector<ByteRange>{
                    {17 * kMiB, kMiB}, {21 * kMiB, kMiB}, {25 * kMiB, kMiB}, {29 * kMiB, kMiB}}));
  r = layout.object_to_image(1, kMiB + 10, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{5 * kMiB + 10, 1}}));
  // Count 1: the whole object is one image range.
  r = make(4 * kMiB, kMiB, 1).object_to_image(3, 0, 4 * kMiB);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<ByteRange>{{12 * kMiB, 4 * kMiB}}));
}

TEST(RbdLayout, NumObjectsKnownAnswers) {
  const RbdLayout plain = RbdLayout::default_layout();
  EXPECT_EQ(plain.num_objects(0), 0u);
  EXPECT_EQ(plain.num_objects(1), 1u);
  EXPECT_EQ(plain.num_objects(4 * kMiB), 1u);
  EXPECT_EQ(plain.num_objects(4 * kMiB + 1), 2u);
  EXPECT_EQ(plain.num_objects(uint64_t{1} << 40), uint64_t{1} << 18);  // 1 TiB / 4 MiB
  const RbdLayout striped = make(4 * kMiB, kMiB, 4);
  EXPECT_EQ(striped.num_objects(kMiB), 1u);      // block 0 only
  EXPECT_EQ(striped.num_objects(kMiB + 1), 2u);  // blocks 0, 1
  EXPECT_EQ(striped.num_objects(3 * kMiB), 3u);
  EXPECT_EQ(striped.num_objects(5 * kMiB), 4u);  // block 4 is object 0's second row
  EXPECT_EQ(striped.num_objects(16 * kMiB), 4u);
  EXPECT_EQ(striped.num_objects(16 * kMiB + 1), 5u);  // object 4 starts the next set
  EXPECT_EQ(striped.num_objects(UINT64_MAX), UINT64_MAX / (4 * kMiB) + 1);
}

TEST(RbdLayout, BadParametersAreRejected) {
  const auto bad = [](RbdLayoutSpec spec, const std::string& needle) {
    Result<RbdLayout> r = RbdLayout::create(spec);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
  };
  bad({0, kMiB, 1}, "power of two");
  bad({3 * kMiB, kMiB, 1}, "power of two");
  bad({uint64_t{4} << 30, kMiB, 1}, "power of two");  // 4 GiB > 2 GiB
  bad({4 * kMiB, 0, 1}, "stripe_unit_bytes must be > 0");
  bad({4 * kMiB, 3 * kMiB, 1}, "divide");
  bad({4 * kMiB, 8 * kMiB, 1}, "divide");
  bad({4 * kMiB, kMiB, 0}, "stripe_count");
  bad({4 * kMiB, kMiB, uint64_t{1} << 32}, "stripe_count");
  EXPECT_TRUE(RbdLayout::create({uint64_t{1} << 31, 1, (uint64_t{1} << 32) - 1}).ok());
  EXPECT_TRUE(RbdLayout::create({1, 1, 1}).ok());
}

TEST(RbdLayout, RangesPastSixtyFourBitsAreRejected) {
  const RbdLayout layout = make(4 * kMiB, kMiB, 4);
  EXPECT_FALSE(layout.image_to_objects(UINT64_MAX, 2).ok());
  EXPECT_FALSE(layout.image_to_objects(2, UINT64_MAX).ok());
  EXPECT_FALSE(layout.image_to_objects(UINT64_MAX - 9, 10).ok());              // would end at 2^64
  const std::vector<ObjectExtent> last = map_ok(layout, UINT64_MAX - 10, 10);  // ends at 2^64-1
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].image_ranges, (std::vector<ByteRange>{{UINT64_MAX - 10, 10}}));
  // Leaving the object.
  EXPECT_FALSE(layout.object_to_image(0, 4 * kMiB - 1, 2).ok());
  EXPECT_FALSE(layout.object_to_image(0, 4 * kMiB + 1, 0).ok());
  EXPECT_TRUE(layout.object_to_image(0, 4 * kMiB, 0).ok());
  // An object number whose bytes would sit past 2^64.
  Result<std::vector<ByteRange>> r = layout.object_to_image(UINT64_MAX, 0, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("64-bit"), std::string::npos);
}

// ---- Object names -----------------------------------------------------------------------------

TEST(RbdLayout, DataObjectNamesHaveSixteenLowerCaseHexDigits) {
  EXPECT_EQ(*rbd_data_object_name("283f", 0xe62), "rbd_data.283f.0000000000000e62");
  EXPECT_EQ(*rbd_data_object_name("10074b0dc51", 0), "rbd_data.10074b0dc51.0000000000000000");
  EXPECT_EQ(*rbd_data_object_name("ab", 0xABCDEF), "rbd_data.ab.0000000000abcdef");
  EXPECT_EQ(*rbd_data_object_name("ab", UINT64_MAX), "rbd_data.ab.ffffffffffffffff");
  EXPECT_EQ(*rbd_data_object_name("ab", 0x1234567890abcdefull), "rbd_data.ab.1234567890abcdef");
  EXPECT_EQ(rbd_data_object_name("", 1).status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(rbd_data_object_name("28 3f", 1).ok());
  EXPECT_FALSE(rbd_data_object_name("283F", 1).ok());
  EXPECT_FALSE(rbd_data_object_name("a.b", 1).ok());
}

TEST(RbdLayout, DataObjectNamesParseBack) {
  Result<RbdDataObject> p = parse_rbd_data_object_name("rbd_data.283f.0000000000000e62");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(*p, (RbdDataObject{"283f", 0xe62}));
  Random rng(7);
  for (int i = 0; i < 200; ++i) {
    const uint64_t object_no = rng.next_u64() >> rng.uniform(64);
    const std::string name = *rbd_data_object_name("5e1d2c", object_no);
    ASSERT_EQ(name.size(), std::string("rbd_data.5e1d2c.").size() + 16) << name;
    EXPECT_EQ(*parse_rbd_data_object_name(name), (RbdDataObject{"5e1d2c", object_no}));
  }
  for (const char* bad : {"rbd_data.283f.0000000000000E62", "rbd_data.283f.000000000000e62",
                          "rbd_data.283f.00000000000000e62", "rbd_data..0000000000000e62",
                          "rbd_header.283f", "rb.0.283f.0000000000000e62",
                          "rbd_data.283f0000000000000e62", "rbd_data.283f.000000000000xe62"}) {
    Result<RbdDataObject> r = parse_rbd_data_object_name(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
  }
}

// ---- Properties over random layouts and ranges ------------------------------------------------

RbdLayoutSpec random_spec(Random& rng) {
  RbdLayoutSpec spec;
  const int object_bits = static_cast<int>(rng.uniform_int(0, 22));
  spec.object_size_bytes = uint64_t{1} << object_bits;
  spec.stripe_unit_bytes = spec.object_size_bytes >> rng.uniform_int(0, object_bits);
  spec.stripe_count = rng.uniform(4) == 0 ? static_cast<uint64_t>(rng.uniform_int(1, 1000))
                                          : static_cast<uint64_t>(rng.uniform_int(1, 8));
  return spec;
}

// Checks every invariant of image_to_objects for one range.
void check_range(const RbdLayout& layout, uint64_t offset, uint64_t length) {
  SCOPED_TRACE("object_size " + std::to_string(layout.spec().object_size_bytes) + " su " +
               std::to_string(layout.spec().stripe_unit_bytes) + " count " +
               std::to_string(layout.spec().stripe_count) + " range " + std::to_string(offset) +
               "+" + std::to_string(length));
  const uint64_t os = layout.spec().object_size_bytes;
  const uint64_t su = layout.spec().stripe_unit_bytes;
  const std::vector<ObjectExtent> extents = map_ok(layout, offset, length);
  uint64_t total = 0;
  std::vector<ByteRange> image;
  for (size_t i = 0; i < extents.size(); ++i) {
    const ObjectExtent& ex = extents[i];
    ASSERT_GT(ex.length_bytes, 0u);
    ASSERT_LE(ex.object_offset_bytes + ex.length_bytes, os);  // inside the object
    if (i > 0) {  // ordered by object, then offset, no overlap
      const ObjectExtent& prev = extents[i - 1];
      ASSERT_TRUE(prev.object_no < ex.object_no ||
                  (prev.object_no == ex.object_no &&
                   prev.object_offset_bytes + prev.length_bytes < ex.object_offset_bytes));
    }
    uint64_t sum = 0;
    uint64_t obj_off = ex.object_offset_bytes;
    for (size_t j = 0; j < ex.image_ranges.size(); ++j) {
      const ByteRange& r = ex.image_ranges[j];
      ASSERT_GT(r.length_bytes, 0u);
      if (j > 0) {
        ASSERT_LT(ex.image_ranges[j - 1].end_bytes(), r.offset_bytes);  // adjacent ones merged
      }
      // Every stripe-unit piece of the range lands where the formulas say.
      for (uint64_t p = r.offset_bytes; p < r.end_bytes();) {
        const uint64_t piece = std::min(r.end_bytes() - p, su - p % su);
        ASSERT_EQ(layout.locate(p), (ObjectPosition{ex.object_no, obj_off}));
        ASSERT_EQ(layout.locate(p + piece - 1),
                  (ObjectPosition{ex.object_no, obj_off + piece - 1}));
        obj_off += piece;
        p += piece;
      }
      sum += r.length_bytes;
      image.push_back(r);
    }
    ASSERT_EQ(sum, ex.length_bytes);
    total += ex.length_bytes;
    // Reverse mapping round-trips.
    Result<std::vector<ByteRange>> back =
        layout.object_to_image(ex.object_no, ex.object_offset_bytes, ex.length_bytes);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    ASSERT_EQ(*back, ex.image_ranges);
  }
  ASSERT_EQ(total, length);
  // The image ranges tile [offset, offset + length) exactly once.
  std::sort(image.begin(), image.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset_bytes < b.offset_bytes; });
  uint64_t next = offset;
  for (const ByteRange& r : image) {
    ASSERT_EQ(r.offset_bytes, next);
    next += r.length_bytes;
  }
  ASSERT_EQ(next - offset, length);
  // Objects touched by an image of size offset + length are all below num_objects.
  if (length > 0 && offset <= UINT64_MAX - length) {
    const uint64_t n = layout.num_objects(offset + length);
    for (const ObjectExtent& ex : extents) ASSERT_LT(ex.object_no, n);
    if (offset == 0) {  // a fully written image touches exactly objects 0 .. n-1
      std::set<uint64_t> objs;
      for (const ObjectExtent& ex : extents) objs.insert(ex.object_no);
      ASSERT_EQ(objs.size(), n);
      ASSERT_EQ(*objs.rbegin(), n - 1);
    }
  }
}

TEST(RbdLayout, RandomRangesAreCoveredExactlyOnce) {
  Random rng(20240611);
  for (int set = 0; set < 300; ++set) {
    const RbdLayout layout = make(random_spec(rng));
    const uint64_t su = layout.spec().stripe_unit_bytes;
    const uint64_t period = layout.object_set_bytes();
    for (int i = 0; i < 20; ++i) {
      // At most ~3000 stripe units per range keeps the test fast.
      const uint64_t length = rng.uniform(std::min<uint64_t>(3000 * su, 3 * period) + 1);
      uint64_t offset = 0;
      switch (rng.uniform(4)) {
        case 0:
          offset = 0;
          break;
        case 1:
          offset = rng.uniform(4 * period);
          break;
        case 2:
          offset = rng.next_u64() >> rng.uniform(64);
          offset = std::min(offset, UINT64_MAX - length);
          break;
        default:
          offset = UINT64_MAX - length - rng.uniform(2 * period);  // near the 64-bit end
          if (offset > UINT64_MAX - length) offset = UINT64_MAX - length;
          break;
      }
      check_range(layout, offset, length);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(RbdLayout, RandomObjectRangesRoundTrip) {
  Random rng(99);
  for (int set = 0; set < 300; ++set) {
    const RbdLayout layout = make(random_spec(rng));
    const uint64_t os = layout.spec().object_size_bytes;
    for (int i = 0; i < 20; ++i) {
      const uint64_t object_no = rng.uniform(3) == 0 ? rng.uniform(1u << 20) : rng.uniform(64);
      const uint64_t off = rng.uniform(os + 1);
      const uint64_t len =
          rng.uniform(std::min<uint64_t>(os - off, 2000 * layout.spec().stripe_unit_bytes) + 1);
      Result<std::vector<ByteRange>> image = layout.object_to_image(object_no, off, len);
      ASSERT_TRUE(image.ok()) << image.status().to_string();
      uint64_t obj_off = off;
      for (const ByteRange& r : *image) {
        const std::vector<ObjectExtent> back = map_ok(layout, r.offset_bytes, r.length_bytes);
        ASSERT_EQ(back.size(), 1u);
        EXPECT_EQ(back[0].object_no, object_no);
        EXPECT_EQ(back[0].object_offset_bytes, obj_off);
        EXPECT_EQ(back[0].length_bytes, r.length_bytes);
        obj_off += r.length_bytes;
      }
      ASSERT_EQ(obj_off, off + len);
    }
  }
}

}  // namespace
}  // namespace granary::layout

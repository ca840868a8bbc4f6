// Wire primitives: every type reads back what was written; truncations, oversized strings and
// lists, a non-boolean byte and bytes left over are refused naming the field.
#include "realmode/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace granary::realmode {
namespace {

std::vector<std::byte> sample() {
  WireWriter w;
  w.u8(0xAB);
  w.u16(0xBEEF);
  w.u32(0xDEADBEEF);
  w.u64(0x0123456789ABCDEFull);
  w.i64(-42);
  w.f64(-0.125);
  w.f64(std::numeric_limits<double>::quiet_NaN());
  w.boolean(true);
  w.string("pool.7/objects/a");
  w.strings({"osd.1", "", "osd.12"});
  return w.take();
}

TEST(Wire, ReadsBackWhatWasWritten) {
  const auto bytes = sample();
  EXPECT_EQ(bytes.size(), 1 + 2 + 4 + 8 + 8 + 8 + 8 + 1 + (4 + 16) + (4 + 4 + 5 + 4 + 0 + 4 + 6));
  EXPECT_EQ(bytes[1], std::byte{0xEF});  // little-endian
  WireReader r(bytes);
  uint8_t a = 0;
  uint16_t b = 0;
  uint32_t c = 0;
  uint64_t d = 0;
  int64_t e = 0;
  double f = 0, nan = 0;
  bool g = false;
  std::string s;
  std::vector<std::string> list;
  EXPECT_TRUE(r.u8("a", &a) && r.u16("b", &b) && r.u32("c", &c) && r.u64("d", &d) &&
              r.i64("e", &e) && r.f64("f", &f) && r.f64("nan", &nan) && r.boolean("g", &g) &&
              r.string("s", &s) && r.strings("list", &list));
  EXPECT_TRUE(r.finish().ok()) << r.status().message();
  EXPECT_EQ(a, 0xAB);
  EXPECT_EQ(b, 0xBEEF);
  EXPECT_EQ(c, 0xDEADBEEFu);
  EXPECT_EQ(d, 0x0123456789ABCDEFull);
  EXPECT_EQ(e, -42);
  EXPECT_EQ(f, -0.125);
  EXPECT_TRUE(std::isnan(nan));
  EXPECT_TRUE(g);
  EXPECT_EQ(s, "pool.7/objects/a");
  EXPECT_EQ(list, (std::vector<std::string>{"osd.1", "", "osd.12"}));
}

// Reading the sample's fields from every prefix of it fails cleanly, naming a field.
TEST(Wire, EveryTruncationIsRefused) {
  const auto bytes = sample();
  for (size_t n = 0; n < bytes.size(); ++n) {
    WireReader r(std::span<const std::byte>(bytes).first(n));
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    int64_t e;
    double f;
    bool g;
    std::string s;
    std::vector<std::string> list;
    const bool all = r.u8("a", &a) && r.u16("b", &b) && r.u32("c", &c) && r.u64("d", &d) &&
                     r.i64("e", &e) && r.f64("f", &f) && r.f64("nan", &f) && r.boolean("g", &g) &&
                     r.string("s", &s) && r.strings("list", &list);
    EXPECT_FALSE(all) << n;
    EXPECT_NE(r.status().message().find("truncated"), std::string::npos)
        << n << ": " << r.status().message();
  }
  WireReader r(std::span<const std::byte>(bytes).first(2));
  uint8_t a;
  uint16_t b;
  EXPECT_TRUE(r.u8("a", &a));
  EXPECT_FALSE(r.u16("ReadRequest.id", &b));
  EXPECT_EQ(r.status().message(),
            "ReadRequest.id: truncated: expected 2 bytes at offset 1, found 1");
}

TEST(Wire, OversizedStringsAndListsAreRefusedBeforeAllocating) {
  WireWriter w;
  w.string(std::string(100, 'x'));
  WireReader small(w.bytes(), {.max_string_bytes = 64, .max_list_items = 8});
  std::string s;
  EXPECT_FALSE(small.string("ReadRequest.object", &s));
  EXPECT_EQ(small.status().message(),
            "ReadRequest.object: a string of 100 bytes, more than the limit of 64");
  // A count of 4 billion items in a few bytes: refused from the count.
  WireWriter l;
  l.u32(0xFFFFFFFF);
  std::vector<std::string> list;
  WireReader big(l.bytes(), {.max_string_bytes = 64, .max_list_items = 0xFFFFFFFF});
  EXPECT_FALSE(big.strings("shards", &list));
  EXPECT_EQ(big.status().message(), "shards: truncated: a list of 4294967295 items in 0 bytes");
  WireReader limited(l.bytes());
  EXPECT_FALSE(limited.strings("shards", &list));
  EXPECT_EQ(limited.status().message(),
            "shards: a list of 4294967295 items, more than the limit of 4096");
  // A string length past the end.
  WireWriter t;
  t.u32(10);
  WireReader tr(t.bytes());
  EXPECT_FALSE(tr.string("error", &s));
  EXPECT_EQ(tr.status().message(), "error: truncated: a string of 10 bytes, found 0");
}

TEST(Wire, NonBooleanBytesAndLeftoversAreRefused) {
  WireWriter w;
  w.u8(2);
  bool b = false;
  WireReader r(w.bytes());
  EXPECT_FALSE(r.boolean("ReadReply.ok", &b));
  EXPECT_EQ(r.status().message(), "ReadReply.ok: expected a boolean (0 or 1), found 2");
  WireWriter x;
  x.u32(7);
  x.u8(0);
  WireReader rx(x.bytes());
  uint32_t v = 0;
  EXPECT_TRUE(rx.u32("n", &v));
  EXPECT_EQ(rx.finish().message(), "body: 1 bytes after the last field (another layout?)");
  // After the first problem nothing more is read.
  WireReader after(x.bytes());
  uint64_t big = 0;
  uint8_t small = 9;
  EXPECT_FALSE(after.u64("n", &big));
  EXPECT_FALSE(after.u8("m", &small));
  EXPECT_EQ(small, 9);
  EXPECT_EQ(after.status().message().rfind("n: truncated", 0), 0u);
}

}  // namespace
}  // namespace granary::realmode

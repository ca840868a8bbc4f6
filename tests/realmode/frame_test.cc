// Real-mode frames: a frame decodes to what was encoded; every single-byte corruption, every
// truncation, an oversized length, another version and random bytes are refused with a Status
// (never a crash or an allocation of the claimed size).
#include "realmode/frame.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "engine/store/crc32c.h"

namespace granary::realmode {
namespace {

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = static_cast<std::byte>(s[i]);
  return out;
}

std::string text_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

TEST(Frame, DecodesWhatWasEncoded) {
  const auto body = bytes_of("read pg 1.7f object a/b/c");
  const auto payload = bytes_of(std::string(5000, 'x') + "end");
  const auto frame = encode_frame(12, 41, body, payload);
  ASSERT_EQ(frame.size(), kFrameHeaderBytes + body.size() + payload.size());
  // The layout of frame.h: magic "GRNF", version 4, type 12 at their offsets.
  EXPECT_EQ(text_of(std::span(frame).first(4)), "GRNF");
  EXPECT_EQ(frame[4], std::byte{kFrameVersion});
  EXPECT_EQ(frame[6], std::byte{12});
  auto f = decode_frame(frame);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->header.type, 12);
  EXPECT_EQ(f->header.sequence, 41u);
  EXPECT_EQ(f->header.data_crc, store::crc32c_extend(store::crc32c(body), payload));
  EXPECT_EQ(text_of(f->body), text_of(body));
  EXPECT_EQ(text_of(f->payload), text_of(payload));
  // Empty body and payload, and bytes after the frame left alone.
  auto empty = encode_frame(0, 1, {}, {});
  empty.push_back(std::byte{0x55});
  auto e = decode_frame(empty);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->header.frame_bytes(), kFrameHeaderBytes);
}

TEST(Frame, EverySingleByteCorruptionIsRefused) {
  const auto frame = encode_frame(3, 9, bytes_of("body"), bytes_of("payload bytes"));
  for (size_t i = 0; i < frame.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = frame;
      bad[i] ^= static_cast<std::byte>(1 << bit);
      auto f = decode_frame(bad);
      EXPECT_FALSE(f.ok()) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(Frame, TruncationsAreRefusedWithTheSizes) {
  const auto frame = encode_frame(3, 9, bytes_of("body"), bytes_of("payload"));
  for (size_t n = 0; n < frame.size(); ++n) {
    auto f = decode_frame(std::span(frame).first(n));
    ASSERT_FALSE(f.ok()) << n;
    EXPECT_EQ(f.status().code(), Status::Code::kInvalidArgument) << n;
  }
  EXPECT_EQ(decode_frame(std::span(frame).first(10)).status().message(),
            "frame header truncated: expected 40 bytes, found 10");
  EXPECT_EQ(decode_frame(std::span(frame).first(50)).status().message(),
            "frame truncated: expected 51 bytes, found 50");
}

// A header that claims more than the limits is refused from the header alone: nothing the size
// of the claim is allocated or read.
TEST(Frame, OversizedLengthsAreRefusedFromTheHeader) {
  const auto big = std::vector<std::byte>(2048);
  const auto frame = encode_frame(1, 1, big, big);
  FrameLimits small{.max_body_bytes = 1024, .max_payload_bytes = 4096};
  EXPECT_EQ(decode_frame_header(frame, small).status().message(),
            "frame body of 2048 bytes, more than the limit of 1024");
  small = {.max_body_bytes = 4096, .max_payload_bytes = 1024};
  EXPECT_EQ(decode_frame_header(frame, small).status().message(),
            "frame payload of 2048 bytes, more than the limit of 1024");
  EXPECT_TRUE(decode_frame(frame).ok());  // within the defaults
}

TEST(Frame, AnotherVersionIsNotSupported) {
  auto frame = encode_frame(1, 1, bytes_of("b"), {});
  frame[4] = std::byte{kFrameVersion + 1};
  // Re-seal the header so that only the version is wrong.
  const uint32_t crc = store::crc32c(std::span(frame).first(36));
  for (size_t i = 0; i < 4; ++i) frame[36 + i] = static_cast<std::byte>((crc >> (8 * i)) & 0xFF);
  const auto f = decode_frame(frame);
  EXPECT_EQ(f.status().code(), Status::Code::kNotSupported);
  EXPECT_EQ(f.status().message(), "frame version " + std::to_string(kFrameVersion + 1) +
                                      ", expected " + std::to_string(kFrameVersion));
}

TEST(Frame, DataOfOtherSizesThanTheHeaderIsRefused) {
  const auto frame = encode_frame(1, 1, bytes_of("body"), bytes_of("pay"));
  auto h = decode_frame_header(frame);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(verify_frame_data(*h, bytes_of("bod"), bytes_of("pay")).message(),
            "frame data of 3 + 3 bytes, the header says 4 + 3");
  EXPECT_EQ(verify_frame_data(*h, bytes_of("bodY"), bytes_of("pay")).code(),
            Status::Code::kCorruption);
  EXPECT_TRUE(verify_frame_data(*h, bytes_of("body"), bytes_of("pay")).ok());
}

// Random byte streams (seeded) and random headers with a valid magic never decode.
TEST(Frame, RandomBytesAreRefused) {
  std::mt19937_64 rng(20261206);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::byte> junk(static_cast<size_t>(rng() % 200));
    for (auto& b : junk) b = static_cast<std::byte>(rng() & 0xFF);
    if (i % 2 == 0 && junk.size() >= 4) {
      junk[0] = std::byte{'G'}, junk[1] = std::byte{'R'}, junk[2] = std::byte{'N'},
      junk[3] = std::byte{'F'};
    }
    EXPECT_FALSE(decode_frame(junk).ok()) << i;
  }
}

}  // namespace
}  // namespace granary::realmode

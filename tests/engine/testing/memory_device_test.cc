// MemoryEnv's devices: the bytes they keep and the crash semantics of engine/env.h's Device
// contract (unflushed writes kept, dropped or torn at 512-byte sectors, by seed).
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "engine/testing/memory_env.h"

namespace granary::testing {
namespace {

Payload bytes_of(std::vector<std::byte> b) {
  const uint64_t n = b.size();
  return Payload{n, Buffer::copy_of(std::move(b))};
}

std::vector<std::byte> filled(size_t n, uint8_t v) {
  return std::vector<std::byte>(n, static_cast<std::byte>(v));
}

struct World {
  MemoryEnv env{1};
  HostId host = env.add_host("h", 1, 1e9, 0);
  DeviceId dev = env.add_device(host, 1 << 20, 1e9, 1e-6);

  // Runs `body` as one task to completion.
  void run(std::function<void(Device&)> body) {
    env.spawn(host, "t", [this, body] { body(env.device(dev)); });
    Status s = env.run();
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  std::vector<std::byte> read(uint64_t offset, uint64_t length) {
    std::vector<std::byte> out;
    run([&](Device& d) {
      Result<Payload> p = d.read(offset, length);
      ASSERT_TRUE(p.ok());
      ASSERT_TRUE(p->bytes);
      out = p->bytes.to_vector();
    });
    return out;
  }
};

TEST(MemoryDevice, SizeOnlyUntilGivenBytes) {
  World w;
  w.run([](Device& d) {
    ASSERT_TRUE(d.write(0, Payload::of_size(8192)).ok());
    Result<Payload> p = d.read(0, 8192);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->size_bytes, 8192u);
    EXPECT_FALSE(p->bytes);  // as it always was: sizes only
  });
}

TEST(MemoryDevice, ReturnsWhatWasWrittenAndZerosElsewhere) {
  World w;
  w.run([](Device& d) {
    std::vector<std::byte> data(10000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7);
    ASSERT_TRUE(d.write(3000, bytes_of(data)).ok());  // unaligned, spans 4 blocks
    Result<Payload> p = d.read(0, 16384);
    ASSERT_TRUE(p.ok() && p->bytes);
    const auto& b = p->bytes.to_vector();
    for (size_t i = 0; i < 3000; ++i) ASSERT_EQ(b[i], std::byte{0}) << i;
    for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(b[3000 + i], data[i]) << i;
    for (size_t i = 13000; i < 16384; ++i) ASSERT_EQ(b[i], std::byte{0}) << i;
    // A size-only write leaves the contents alone.
    ASSERT_TRUE(d.write(3000, Payload::of_size(100)).ok());
    EXPECT_EQ((d.read(3000, 1)->bytes)[0], data[0]);
    // Wrong sizes and ranges are refused.
    EXPECT_EQ(d.write(0, Payload{5, Buffer::zeros(3)}).code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(d.write((1 << 20) - 1, bytes_of(filled(2, 1))).code(),
              Status::Code::kInvalidArgument);
  });
}

TEST(MemoryDevice, CrashKeepsFlushedWritesAndResolvesTheOthers) {
  World w;
  w.run([](Device& d) {
    ASSERT_TRUE(d.write(0, bytes_of(filled(4096, 0xAA))).ok());
    ASSERT_TRUE(d.flush().ok());
    ASSERT_TRUE(d.write(0, bytes_of(filled(4096, 0xBB))).ok());
    EXPECT_EQ((d.read(0, 1)->bytes)[0], std::byte{0xBB});  // visible before the flush
  });
  EXPECT_EQ(w.env.unflushed_writes(w.dev), 1u);
  // Over many seeds the one unflushed write is kept, dropped and torn; flushed bytes never
  // change; a torn write keeps a whole-sector prefix (1 to 7 of its 8 sectors).
  int kept = 0, dropped = 0, torn = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    World v;
    v.run([](Device& d) {
      ASSERT_TRUE(d.write(0, bytes_of(filled(4096, 0xAA))).ok());
      ASSERT_TRUE(d.flush().ok());
      ASSERT_TRUE(d.write(0, bytes_of(filled(4096, 0xBB))).ok());
    });
    const CrashReport r = v.env.crash_device(v.dev, seed);
    EXPECT_EQ(r.kept + r.dropped + r.torn, 1u);
    EXPECT_EQ(v.env.unflushed_writes(v.dev), 0u);
    const std::vector<std::byte> b = v.read(0, 4096);
    size_t new_bytes = 0;
    while (new_bytes < b.size() && b[new_bytes] == std::byte{0xBB}) ++new_bytes;
    for (size_t i = new_bytes; i < b.size(); ++i) ASSERT_EQ(b[i], std::byte{0xAA}) << i;
    EXPECT_EQ(new_bytes % 512, 0u);
    if (r.kept) {
      EXPECT_EQ(new_bytes, 4096u);
      ++kept;
    } else if (r.dropped) {
      EXPECT_EQ(new_bytes, 0u);
      ++dropped;
    } else {
      EXPECT_GT(new_bytes, 0u);
      EXPECT_LT(new_bytes, 4096u);
      ++torn;
    }
  }
  EXPECT_GT(kept, 5);
  EXPECT_GT(dropped, 5);
  EXPECT_GT(torn, 5);
}

TEST(MemoryDevice, CrashIsAFunctionOfTheSeed) {
  auto outcome = [](uint64_t seed) {
    World v;
    v.run([](Device& d) {
      for (int i = 0; i < 16; ++i) {
        ASSERT_TRUE(d.write(static_cast<uint64_t>(i) * 8192 + 100,
                            bytes_of(filled(6000, static_cast<uint8_t>(i + 1))))
                        .ok());
      }
    });
    v.env.crash_device(v.dev, seed);
    return v.read(0, 16 * 8192);
  };
  EXPECT_EQ(outcome(7), outcome(7));
  EXPECT_NE(outcome(7), outcome(8));
}

TEST(MemoryDevice, PowerCutFailsLaterWritesUntilTheCrash) {
  World w;
  w.env.cut_power_after(w.dev, 2);
  w.run([](Device& d) {
    EXPECT_TRUE(d.write(0, bytes_of(filled(512, 1))).ok());
    EXPECT_TRUE(d.flush().ok());
    const Status s = d.write(512, bytes_of(filled(512, 2)));
    EXPECT_EQ(s.code(), Status::Code::kIOError);
    EXPECT_NE(s.message().find("device 0 lost power"), std::string::npos) << s.to_string();
    EXPECT_EQ(d.flush().code(), Status::Code::kIOError);
  });
  w.env.crash_device(w.dev, 1);
  const std::vector<std::byte> b = w.read(0, 1024);
  EXPECT_EQ(b[0], std::byte{1});
  EXPECT_EQ(b[512], std::byte{0});  // the refused write never happened
  w.run([](Device& d) { EXPECT_TRUE(d.write(512, bytes_of(filled(512, 3))).ok()); });
}

}  // namespace
}  // namespace granary::testing

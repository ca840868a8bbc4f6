// UringDevice on a preallocated file in the temporary folder (ext4 here: O_DIRECT works):
// read-your-writes at aligned and unaligned ranges, zeros where nothing was written, pieces
// larger than one submission, many ranges read in one call, many threads writing bytes of the same
// blocks at once (the read-modify-write lock), bytes kept across close and reopen after a flush,
// ranges and options refused with messages that name the path.
#include "realmode/uring_device.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <random>
#include <thread>

namespace granary::realmode {
namespace {

class TempDir {
 public:
  TempDir() {
    char dir[] = "/tmp/granary-uring-XXXXXX";
    path_ = mkdtemp(dir) ? dir : "/tmp";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out(n);
  for (std::byte& b : out) b = static_cast<std::byte>(rng() & 0xFF);
  return out;
}

Payload payload_of(const std::vector<std::byte>& bytes) {
  return Payload::of(Buffer::copy_of(bytes));
}

Result<std::unique_ptr<UringDevice>> open_device(
    const std::string& path, uint64_t capacity, uint32_t max_io_bytes = 1u << 20,
    std::function<void(const Status&)> on_error = nullptr) {
  UringDeviceOptions o;
  o.path = path;
  o.capacity_bytes = capacity;
  o.queue_depth = 8;
  o.max_io_bytes = max_io_bytes;
  o.on_error = std::move(on_error);
  return UringDevice::open(o);
}

// Opens the device into `var`, or skips the test, saying why, where the kernel refuses io_uring
// (a container whose seccomp profile blocks it) or the folder refuses O_DIRECT.
#define OPEN_OR_SKIP(var, ...)                                                           \
  auto var##_result = open_device(__VA_ARGS__);                                          \
  if (!var##_result.ok() && var##_result.status().code() == Status::Code::kNotSupported) \
    GTEST_SKIP() << var##_result.status().message();                                     \
  ASSERT_TRUE(var##_result.ok()) << var##_result.status().message();                     \
  std::unique_ptr<UringDevice> var = std::move(var##_result).value()

TEST(UringDevice, ReadsReturnWhatWasWrittenAtAnyRange) {
  TempDir dir;
  OPEN_OR_SKIP(d, dir.file("drive"), 16 << 20);
  EXPECT_EQ(d->capacity_bytes(), uint64_t{16} << 20);
  // Never written: zeros.
  auto zeros = d->read(12345, 10000);
  ASSERT_TRUE(zeros.ok()) << zeros.status().message();
  EXPECT_EQ(zeros->bytes.to_vector(), std::vector<std::byte>(10000));
  // Aligned, unaligned inside one block, across blocks, and overwriting part of an earlier one.
  const auto a = pattern(64 << 10, 1), b = pattern(100, 2), c = pattern(10000, 3);
  ASSERT_TRUE(d->write(1 << 20, payload_of(a)).ok());
  ASSERT_TRUE(d->write(4096 + 7, payload_of(b)).ok());
  ASSERT_TRUE(d->write((1 << 20) + 4000, payload_of(c)).ok());
  ASSERT_TRUE(d->flush().ok());
  std::vector<std::byte> want = a;
  std::copy(c.begin(), c.end(), want.begin() + 4000);
  auto got = d->read(1 << 20, a.size());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes.to_vector(), want);
  EXPECT_TRUE(got->bytes.aligned());  // an aligned read lands in aligned memory
  auto small = d->read(4096 + 7, 100);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->bytes.to_vector(), b);
  auto around = d->read(4096, 200);  // b and the zeros around it
  std::vector<std::byte> around_want(200);
  std::copy(b.begin(), b.end(), around_want.begin() + 7);
  EXPECT_EQ(around->bytes.to_vector(), around_want);
  // Empty ranges and size-only writes change nothing.
  EXPECT_TRUE(d->read(16 << 20, 0).ok());
  EXPECT_TRUE(d->write(1 << 20, Payload::of_size(4096)).ok());
  EXPECT_EQ(d->read(1 << 20, a.size())->bytes.to_vector(), want);
}

TEST(UringDevice, LargeRangesGoInPiecesAndComeBackWhole) {
  TempDir dir;
  OPEN_OR_SKIP(d, dir.file("drive"), 32 << 20, 64 << 10);  // 64 KiB pieces, 8 in flight
  const auto big = pattern(5 << 20, 4);
  ASSERT_TRUE(d->write(3 << 20, payload_of(big)).ok());
  auto got = d->read(3 << 20, big.size());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes.to_vector(), big);
  const auto odd = pattern((1 << 20) + 333, 5);  // unaligned and several pieces
  ASSERT_TRUE(d->write((10 << 20) + 1000, payload_of(odd)).ok());
  EXPECT_EQ(d->read((10 << 20) + 1000, odd.size())->bytes.to_vector(), odd);
}

// read_ranges: many ranges (more pieces than the queue depth, aligned and not, one empty) in
// one call come back each as read() returns it; a range past the end fails the call.
TEST(UringDevice, ManyRangesReadAtOnceComeBackInOrder) {
  TempDir dir;
  OPEN_OR_SKIP(d, dir.file("drive"), 8 << 20, 64 << 10);  // 64 KiB pieces, 8 in flight
  const auto bytes = pattern(8 << 20, 6);
  ASSERT_TRUE(d->write(0, payload_of(bytes)).ok());
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (uint64_t i = 0; i < 40; ++i) ranges.emplace_back((i * 7919 * 4096) % (7 << 20), 4096);
  ranges.emplace_back(12345, 200000);  // unaligned, several pieces
  ranges.emplace_back(4096, 0);
  ranges.emplace_back((8 << 20) - 10, 10);
  auto got = d->read_ranges(ranges);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto [offset, length] = ranges[i];
    EXPECT_EQ((*got)[i].size_bytes, length) << i;
    EXPECT_EQ((*got)[i].bytes.to_vector(),
              std::vector<std::byte>(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                     bytes.begin() + static_cast<std::ptrdiff_t>(offset + length)))
        << "range " << i << " at " << offset;
  }
  ranges.emplace_back((8 << 20) - 10, 11);
  auto past = d->read_ranges(ranges);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), Status::Code::kInvalidArgument);
}

// Eight threads write interleaved 100-byte pieces that share blocks: without the
// read-modify-write lock one thread's edge block would overwrite another's bytes.
TEST(UringDevice, ConcurrentWritesToTheSameBlocksKeepEveryByte) {
  TempDir dir;
  OPEN_OR_SKIP(d, dir.file("drive"), 4 << 20);
  constexpr int kThreads = 8, kPieces = 200, kPiece = 100;
  std::vector<std::thread> threads;
  std::vector<Status> errors(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPieces && errors[t].ok(); ++i) {
        const uint64_t at = static_cast<uint64_t>(i * kThreads + t) * kPiece;
        errors[t] = d->write(at, payload_of(pattern(kPiece, at)));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const Status& s : errors) ASSERT_TRUE(s.ok()) << s.message();
  auto all = d->read(0, uint64_t{kThreads} * kPieces * kPiece);
  ASSERT_TRUE(all.ok());
  for (uint64_t at = 0; at < all->size_bytes; at += kPiece) {
    const auto want = pattern(kPiece, at);
    ASSERT_TRUE(std::equal(want.begin(), want.end(), all->bytes.begin() + static_cast<long>(at)))
        << "the piece at " << at;
  }
}

TEST(UringDevice, FlushedBytesSurviveCloseAndReopen) {
  TempDir dir;
  const auto bytes = pattern(12345, 6);
  {
    OPEN_OR_SKIP(d, dir.file("drive"), 1 << 20);
    ASSERT_TRUE(d->write(777, payload_of(bytes)).ok());
    ASSERT_TRUE(d->flush().ok());
  }
  OPEN_OR_SKIP(again, dir.file("drive"), 0);  // 0: the file's size
  EXPECT_EQ(again->capacity_bytes(), uint64_t{1} << 20);
  EXPECT_EQ(again->read(777, bytes.size())->bytes.to_vector(), bytes);
}

// A slow drive (granary real's slow_drive): every I/O takes `factor` times its service time.
// Medians of 4 KiB reads at factor 1 and 40: the slow ones take at least 10 times as long (40
// by construction; the margin is the noise of a shared machine's drive between the two sets).
TEST(UringDevice, ASlowedDriveTakesFactorTimesAsLong) {
  TempDir dir;
  OPEN_OR_SKIP(d, dir.file("slow.img"), 16 << 20);
  ASSERT_TRUE(d->write(0, payload_of(pattern(1 << 20, 3))).ok());
  ASSERT_TRUE(d->flush().ok());
  auto median_read_s = [&] {
    std::vector<double> took;
    for (int i = 0; i < 15; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      Result<Payload> r = d->read(static_cast<uint64_t>(i % 256) * 4096, 4096);
      took.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      EXPECT_TRUE(r.ok());
    }
    std::sort(took.begin(), took.end());
    return took[took.size() / 2];
  };
  const double normal = median_read_s();
  d->set_slowdown(40);
  EXPECT_EQ(d->slowdown(), 40);
  const double slow = median_read_s();
  EXPECT_GE(slow, 10 * normal) << "normal " << normal << " s, slowed " << slow << " s";
  d->set_slowdown(0.5);  // below 1: the drive as it is
  EXPECT_EQ(d->slowdown(), 1);
  // The bytes are the drive's, slow or not.
  Result<Payload> back = d->read(4096, 4096);
  ASSERT_TRUE(back.ok());
  const std::vector<std::byte> want = pattern(1 << 20, 3);
  EXPECT_TRUE(std::equal(want.begin() + 4096, want.begin() + 8192, back->bytes.data()));
}

// A failed drive (granary real's drive_failure): every read, write and flush fails with EIO,
// on_error sees each error, and the bytes are untouched for when it stops failing.
TEST(UringDevice, AFailedDriveReturnsEioToEverything) {
  TempDir dir;
  UringDeviceOptions o;
  o.path = dir.file("failed.img");
  o.capacity_bytes = 16 << 20;
  std::vector<std::string> seen;
  o.on_error = [&seen](const Status& e) { seen.push_back(e.message()); };
  auto opened = UringDevice::open(o);
  if (!opened.ok() && opened.status().code() == Status::Code::kNotSupported) {
    GTEST_SKIP() << opened.status().message();
  }
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<UringDevice> d = std::move(opened).value();
  ASSERT_TRUE(d->write(0, payload_of(pattern(8192, 5))).ok());
  d->set_failed(true);
  EXPECT_TRUE(d->failed());
  const Result<Payload> r = d->read(0, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIOError);
  EXPECT_EQ(r.status().message(), o.path +
                                      ": read of 4096 bytes at offset 0: Input/output error "
                                      "(injected: the drive failed)");
  EXPECT_EQ(d->write(4096, payload_of(pattern(4096, 6))).code(), Status::Code::kIOError);
  EXPECT_EQ(d->flush().code(), Status::Code::kIOError);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], r.status().message());
  d->set_failed(false);
  const Result<Payload> back = d->read(0, 8192);
  ASSERT_TRUE(back.ok());
  const std::vector<std::byte> want = pattern(8192, 5);  // the refused write changed nothing
  EXPECT_TRUE(std::equal(want.begin(), want.end(), back->bytes.data()));
  EXPECT_EQ(seen.size(), 3u);
}

// Latent sector errors (set_bad_ranges): a read touching a bad block fails with EIO naming the
// block, alone or among other ranges, without on_error (the OSD repairs a read; it stops on a
// write's error); a write makes the blocks it covers good again, with the bytes it wrote.
TEST(UringDevice, BadBlocksFailTheirReadsUntilAWriteRemapsThem) {
  TempDir dir;
  const std::string path = dir.file("bad.img");
  int errors_seen = 0;
  OPEN_OR_SKIP(d, path, 16 << 20, 1u << 20, [&errors_seen](const Status&) { ++errors_seen; });
  const auto bytes = pattern(64 << 10, 7);
  ASSERT_TRUE(d->write(0, payload_of(bytes)).ok());
  d->set_bad_ranges({{8192 + 10, 5000}});  // blocks 2 and 3
  EXPECT_EQ(d->bad_blocks(), 2u);
  EXPECT_TRUE(d->read(0, 8192).ok());  // blocks 0 and 1
  const Result<Payload> bad = d->read(4096, 8192);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kIOError);
  EXPECT_EQ(bad.status().message(), path +
                                        ": read of 8192 bytes at offset 4096: Input/output error "
                                        "(injected: a medium error in block 2)");
  EXPECT_FALSE(d->read_ranges({{0, 4096}, {12288, 100}}).ok());
  EXPECT_EQ(errors_seen, 0);
  const auto fresh = pattern(4096, 8);
  ASSERT_TRUE(d->write(8192, payload_of(fresh)).ok());  // block 2 remapped
  EXPECT_EQ(d->bad_blocks(), 1u);
  const Result<Payload> good = d->read(8192, 4096);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->bytes.to_vector(), fresh);
  EXPECT_FALSE(d->read(12288, 1).ok());  // block 3 still bad
  d->set_bad_ranges({});
  EXPECT_EQ(d->bad_blocks(), 0u);
  EXPECT_TRUE(d->read(12288, 4096).ok());
  EXPECT_EQ(errors_seen, 0);
}

TEST(UringDevice, RangesAndOptionsAreRefusedWithClearMessages) {
  TempDir dir;
  const std::string path = dir.file("drive");
  OPEN_OR_SKIP(d, path, 1 << 20);
  EXPECT_EQ(d->read((1 << 20) - 10, 11).status().message(),
            path + ": read of 11 bytes at offset 1048566 does not fit the device's 1048576 bytes");
  EXPECT_EQ(d->write(UINT64_MAX, payload_of(pattern(1, 1))).message(),
            path +
                ": write of 1 bytes at offset 18446744073709551615 does not fit the device's "
                "1048576 bytes");
  Payload lying = Payload::of(Buffer::copy_of(std::string_view("abc")));
  lying.size_bytes = 4;
  EXPECT_EQ(d->write(0, lying).code(), Status::Code::kInvalidArgument);
  UringDeviceOptions o;
  o.path = dir.file("other");
  o.capacity_bytes = 1000;
  EXPECT_EQ(UringDevice::open(o).status().message(),
            o.path + ": capacity: expected a multiple of 4096 bytes, found 1000");
  o.capacity_bytes = 0;
  EXPECT_EQ(UringDevice::open(o).status().message(),
            o.path + ": capacity: an empty file needs capacity_bytes");
  o.capacity_bytes = 4096;
  o.queue_depth = 0;
  EXPECT_EQ(UringDevice::open(o).status().message(),
            o.path + ": queue depth: expected 1..4096, found 0");
  o.queue_depth = 4;
  o.path = dir.file("no/such/dir/drive");
  EXPECT_EQ(UringDevice::open(o).status().code(), Status::Code::kIOError);
  o.path = "/dev/null";
  EXPECT_FALSE(UringDevice::open(o).ok());
}

}  // namespace
}  // namespace granary::realmode

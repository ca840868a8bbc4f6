// Real-mode drive throughput: UringDevice (realmode/uring_device.h) reading or writing a file
// with O_DIRECT at a block size and queue depth, for comparison with fio on the same file
// (tests/bench/uring_device_bench.sh runs both). The queue depth is `qd` threads, each with one
// blocking Device call in flight, as a daemon's tasks would use the device.
//
// Usage: uring_device_bench FILE SIZE_MIB BLOCK_KIB QD MODE SECONDS
//   MODE: read, write, randread, randwrite. Prints one line: "MODE bs=..K qd=.. MB/s IOPS".
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "realmode/uring_device.h"

int main(int argc, char** argv) {
  using namespace granary;
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s FILE SIZE_MIB BLOCK_KIB QD MODE SECONDS\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[5];
  const uint64_t size = std::strtoull(argv[2], nullptr, 10) << 20;
  const uint64_t block = std::strtoull(argv[3], nullptr, 10) << 10;
  const int qd = std::atoi(argv[4]);
  const double seconds = std::atof(argv[6]);
  const bool write = mode == "write" || mode == "randwrite";
  const bool random = mode == "randread" || mode == "randwrite";
  if (block == 0 || size < block || qd < 1 || seconds <= 0 ||
      !(write || mode == "read" || mode == "randread")) {
    std::fprintf(stderr, "uring_device_bench: bad arguments\n");
    return 2;
  }
  realmode::UringDeviceOptions o;
  o.path = argv[1];
  o.capacity_bytes = size;
  o.queue_depth = static_cast<unsigned>(qd);
  o.max_io_bytes = static_cast<uint32_t>(std::max<uint64_t>(block, 4096));
  auto device = realmode::UringDevice::open(o);
  if (!device.ok()) {
    std::fprintf(stderr, "uring_device_bench: %s\n", device.status().message().c_str());
    return 2;
  }
  realmode::UringDevice& d = **device;
  MutableBuffer fill(block);
  for (size_t i = 0; i < block; ++i) fill[i] = static_cast<std::byte>(i * 131 + 7);
  const Payload data = Payload::of(std::move(fill).freeze());
  const uint64_t blocks = size / block;
  std::atomic<uint64_t> next{0}, done{0};
  std::atomic<bool> stop{false}, failed{false};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < qd; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t b = random ? rng() % blocks : next.fetch_add(1) % blocks;
        const Status s = write ? d.write(b * block, data) : d.read(b * block, block).status();
        if (!s.ok()) {
          std::fprintf(stderr, "uring_device_bench: %s\n", s.message().c_str());
          failed = true;
          stop = true;
          return;
        }
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : threads) th.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (failed) return 1;
  const double ios = static_cast<double>(done.load());
  std::printf("%s bs=%lluK qd=%d %.1f MB/s %.0f IOPS\n", mode.c_str(),
              static_cast<unsigned long long>(block >> 10), qd, ios * block / elapsed / 1e6,
              ios / elapsed);
  return 0;
}

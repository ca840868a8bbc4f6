// The drive probe (drive_probe.h).
#include "realmode/drive_probe.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/random.h"
#include "realmode/uring_device.h"

namespace granary::realmode {
namespace {

using Clock = std::chrono::steady_clock;

struct Mode {
  const char* name;
  bool write, random;
  uint64_t block;
  int threads;
  bool flush = false;  // a flush after every write (a durable write)
};

struct Measured {
  uint64_t ops = 0;
  double seconds = 0, latency_s_sum = 0;
};

// `mode` on `device` for `seconds`: each thread issues one I/O at a time.
Result<Measured> run_mode(UringDevice& device, const Mode& mode, double seconds) {
  const uint64_t blocks = device.capacity_bytes() / mode.block;
  MutableBuffer fill(mode.block);
  for (size_t i = 0; i < mode.block; ++i) fill[i] = static_cast<std::byte>(i * 131 + 17);
  const Payload data = Payload::of(std::move(fill).freeze());
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  Measured total;
  Status first_error;
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < mode.threads; ++t) {
    threads.emplace_back([&, t] {
      Random rng(0x9e3779b97f4a7c15ull + static_cast<uint64_t>(t));
      Measured mine;
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t b = (mode.random ? rng.uniform(blocks) : next.fetch_add(1)) % blocks;
        const auto t0 = Clock::now();
        Status s = mode.write ? device.write(b * mode.block, data)
                              : device.read(b * mode.block, mode.block).status();
        if (s.ok() && mode.flush) s = device.flush();
        const auto t1 = Clock::now();
        if (!s.ok()) {
          std::lock_guard lock(mu);
          if (first_error.ok()) first_error = s;
          stop = true;
          break;
        }
        ++mine.ops;
        mine.latency_s_sum += std::chrono::duration<double>(t1 - t0).count();
        if (std::chrono::duration<double>(t1 - start).count() >= seconds) stop = true;
      }
      std::lock_guard lock(mu);
      total.ops += mine.ops;
      total.latency_s_sum += mine.latency_s_sum;
    });
  }
  for (std::thread& t : threads) t.join();
  total.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!first_error.ok()) return first_error;
  return total;
}

}  // namespace

Result<nlohmann::json> probe_drive(const DriveProbeOptions& o) {
  if (o.path.empty() || o.bytes < (16ull << 20) || o.bytes % (1ull << 20) != 0 ||
      !(o.seconds > 0 && o.seconds <= 3600) || o.queue_depth < 1 || o.queue_depth > 256) {
    return Status::invalid_argument(
        "drive probe: expected a path, a size that is a multiple of 1 MiB and at least 16 MiB, "
        "0 < seconds <= 3600 and a queue depth 1..256");
  }
  UringDeviceOptions device_options;
  device_options.path = o.path;
  device_options.capacity_bytes = o.bytes;
  device_options.queue_depth = static_cast<unsigned>(std::max(o.queue_depth, 8));
  Result<std::unique_ptr<UringDevice>> opened = UringDevice::open(device_options);
  if (!opened.ok()) return opened.status();
  UringDevice& device = **opened;
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remove{o.path};
  // Written end to end first: a file system's unwritten extents read as zeros without the drive.
  MutableBuffer chunk(1u << 20);
  const Payload one_mib = Payload::of(std::move(chunk).freeze());
  for (uint64_t off = 0; off < o.bytes; off += 1u << 20) {
    if (Status s = device.write(off, one_mib); !s.ok()) return s;
  }
  if (Status s = device.flush(); !s.ok()) return s;
  const Mode modes[] = {
      {"seq write", true, false, 1u << 20, 8},
      {"seq read", false, false, 1u << 20, 8},
      {"rand read", false, true, 4096, o.queue_depth},
      {"rand write", true, true, 4096, o.queue_depth},
      {"lat read", false, true, 4096, 1},
      {"lat write", true, true, 4096, 1},
      {"lat durable write", true, true, 4096, 1, true},
  };
  nlohmann::json out = {{"path", o.path},
                        {"bytes", o.bytes},
                        {"seconds_per_mode", o.seconds},
                        {"queue_depth", o.queue_depth},
                        {"modes", nlohmann::json::array()}};
  std::vector<Measured> got;
  for (const Mode& m : modes) {
    Result<Measured> r = run_mode(device, m, o.seconds);
    if (!r.ok()) return r.status();
    got.push_back(*r);
    const double iops = static_cast<double>(r->ops) / r->seconds;
    out["modes"].push_back(
        {{"mode", m.name},
         {"block_bytes", m.block},
         {"threads", m.threads},
         {"ops", r->ops},
         {"seconds", r->seconds},
         {"mb_per_s", iops * static_cast<double>(m.block) / 1e6},
         {"iops", iops},
         {"latency_us_mean", r->ops ? r->latency_s_sum / static_cast<double>(r->ops) * 1e6 : 0}});
  }
  if (Status s = device.flush(); !s.ok()) return s;
  auto rate = [&](size_t i) { return static_cast<double>(got[i].ops) / got[i].seconds; };
  auto latency_us = [&](size_t i) {
    return got[i].latency_s_sum / static_cast<double>(std::max<uint64_t>(got[i].ops, 1)) * 1e6;
  };
  out["profile"] = {{"write_gbytes_per_s", rate(0) * (1u << 20) / 1e9},
                    {"read_gbytes_per_s", rate(1) * (1u << 20) / 1e9},
                    {"read_kiops", rate(2) / 1e3},
                    {"write_kiops", rate(3) / 1e3},
                    {"read_latency_us", latency_us(4)},
                    {"write_latency_us", std::max(latency_us(5), latency_us(6))},
                    {"queue_depth", o.queue_depth}};
  return out;
}

}  // namespace granary::realmode

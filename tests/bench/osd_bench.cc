// Real-mode I/O through an OSD: a client process (ClusterProcess, StorageClient) reading or
// writing an RBD image striped over 4 MiB objects that one granary-osd daemon stores on its
// drive (io_uring, O_DIRECT, DiskStore with its journal and crc32c per 4 KiB block), over the
// transport on loopback; for comparison with fio on the same drive file
// (tests/bench/osd_bench.sh runs both). The queue depth is `qd` client tasks, each with one
// request in flight.
//
// Usage:
//   osd_bench config DIR DRIVE DRIVE_MIB   writes DIR/key and DIR/cluster.json (one OSD on
//                                          DRIVE, host "storage0"; the client host "client")
//   osd_bench fill CONFIG IMAGE_MIB        writes the image end to end (1 MiB requests, qd 8)
//   osd_bench run CONFIG MODE BLOCK_KIB QD SECONDS IMAGE_MIB
//     MODE: read, write, randread, randwrite. Prints "MODE bs=..K qd=.. MB/s IOPS".
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "realmode/auth.h"
#include "realmode/cluster_process.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode {
namespace {

constexpr HostId kClientHost = 1;
constexpr const char* kImage = "bench";

int fail(const std::string& what) {
  std::fprintf(stderr, "osd_bench: %s\n", what.c_str());
  return 2;
}

int write_config(const std::string& dir, const std::string& drive, uint64_t drive_mib) {
  auto key = ClusterKey::generate();
  if (!key.ok()) return fail(key.status().message());
  if (Status s = key->save(dir + "/key"); !s.ok()) return fail(s.message());
  const auto table = test::loopback_table(2);
  ClusterConfig c;
  c.key_file = dir + "/key";
  c.hosts = {{"storage0", table[0], 16, "", 0}, {"client", table[1], 16, "", 0}};
  c.osds = {{0, 0, drive, drive_mib << 20, 64}};
  c.names = {{kImage, kClientHost}};
  c.replicas = 1;
  c.pg_num = 8;
  c.op_timeout_s = 60;
  c.sub_op_timeout_s = 30;
  c.handshake_timeout_s = 5;
  std::ofstream(dir + "/cluster.json") << cluster_config_json(c);
  return 0;
}

// `qd` tasks doing `mode` on the image for `seconds` (or, for a fill, once over it).
int run(const std::string& config_path, const std::string& mode, uint64_t block, int qd,
        double seconds, uint64_t image_bytes) {
  const bool write = mode == "write" || mode == "randwrite" || mode == "fill";
  const bool random = mode == "randread" || mode == "randwrite";
  const bool fill = mode == "fill";
  if (block == 0 || image_bytes < block || qd < 1 || (!fill && seconds <= 0) ||
      !(write || mode == "read" || mode == "randread")) {
    return fail("bad arguments");
  }
  auto config = load_cluster_config(config_path);
  if (!config.ok()) return fail(config.status().message());
  auto opened = ClusterProcess::open(*config, kClientHost, 7);
  if (!opened.ok()) return fail(opened.status().message());
  ClusterProcess& p = **opened;
  RealEnv& env = p.env();
  services::StorageClient client(env, kClientHost, p.rados_backend(),
                                 services::StorageClientOptions{.name = kImage});
  MutableBuffer fill_bytes = env.allocate(block);
  for (size_t i = 0; i < block; ++i) fill_bytes[i] = static_cast<std::byte>(i * 131 + 7);
  const Payload data = Payload::of(std::move(fill_bytes).freeze());
  const uint64_t blocks = image_bytes / block;
  std::atomic<uint64_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  Status first_error;
  std::mutex error_mu;
  double start_s = 0, end_s = 0;
  for (int t = 0; t < qd; ++t) {
    env.spawn(kClientHost, "io" + std::to_string(t), [&, t] {
      Random rng(1000 + static_cast<uint64_t>(t));
      Buffer got;
      while (!stop.load(std::memory_order_relaxed)) {
        uint64_t b = random ? rng.uniform(blocks) : next.fetch_add(1);
        if (fill && b >= blocks) return;
        b %= blocks;
        Status s = write ? client.write_extent(kImage, b * block, data).status()
                         : client.read_extent(kImage, b * block, block, &got).status();
        if (!s.ok()) {
          std::lock_guard lock(error_mu);
          if (first_error.ok()) first_error = s;
          stop = true;
          return;
        }
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  if (!fill) {
    env.spawn(kClientHost, "clock", [&] {
      start_s = env.now_s();
      env.sleep_s(seconds);
      stop = true;
      end_s = env.now_s();
    });
  }
  const double wall_start = env.now_s();
  if (Status s = env.run(); !s.ok()) return fail(s.message());
  if (!first_error.ok()) return fail(first_error.to_string());
  if (fill) {
    end_s = env.now_s();
    start_s = wall_start;
  }
  const double elapsed = end_s - start_s;
  const double ios = static_cast<double>(done.load());
  std::printf("%s bs=%lluK qd=%d %.1f MB/s %.0f IOPS\n", mode.c_str(),
              static_cast<unsigned long long>(block >> 10), qd,
              ios * static_cast<double>(block) / elapsed / 1e6, ios / elapsed);
  return 0;
}

}  // namespace
}  // namespace granary::realmode

int main(int argc, char** argv) {
  using granary::realmode::fail;
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "config" && argc == 5) {
    return granary::realmode::write_config(argv[2], argv[3], std::strtoull(argv[4], nullptr, 10));
  }
  if (cmd == "fill" && argc == 4) {
    return granary::realmode::run(argv[2], "fill", 1 << 20, 8, 0,
                                  std::strtoull(argv[3], nullptr, 10) << 20);
  }
  if (cmd == "run" && argc == 8) {
    return granary::realmode::run(argv[2], argv[3], std::strtoull(argv[4], nullptr, 10) << 10,
                                  std::atoi(argv[5]), std::atof(argv[6]),
                                  std::strtoull(argv[7], nullptr, 10) << 20);
  }
  std::fprintf(stderr,
               "usage: osd_bench config DIR DRIVE DRIVE_MIB | fill CONFIG IMAGE_MIB | run CONFIG "
               "MODE BLOCK_KIB QD SECONDS IMAGE_MIB\n");
  return 2;
}

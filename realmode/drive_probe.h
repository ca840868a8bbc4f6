// The drive probe of `granary real calibrate` (realmode/README.md, "Calibration"): the figures
// of a models::DriveProfile measured on a drive file through the same data path the OSDs use
// (UringDevice: io_uring, O_DIRECT, a ring per thread), as fio measures a drive:
//
//   mode        block   threads (queue depth)  what it gives
//   seq write   1 MiB   8                      write_gbytes_per_s (10^9 bytes/s)
//   seq read    1 MiB   8                      read_gbytes_per_s
//   rand read   4 KiB   queue_depth            read_kiops
//   rand write  4 KiB   queue_depth            write_kiops
//   lat read    4 KiB   1                      read_latency_us (mean)
//   lat write   4 KiB   1                      write_latency_us (mean)
//   lat durable write  4 KiB, 1, a flush after each: write_latency_us when it takes longer
//
// Each mode runs for `seconds` (sequential modes wrap around the file; random offsets are
// block-aligned, uniform over the file, from a fixed seed). The file is written end to end
// first (so that reads hit written blocks, not a file system's unwritten extents), and deleted
// at the end. The profile's write latency is that of a durable write (the OSDs acknowledge a
// write once their journal is flushed): a drive with power-loss protection flushes at no cost
// and its rated latency stands; a drive (or a virtual disk) whose flush reaches the medium
// gives the write and flush's. The bandwidth and IOPS modes do not flush (the OSDs commit
// their journal in groups).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/status.h"

namespace granary::realmode {

struct DriveProbeOptions {
  std::string path;               // a file on the file system the drives live on (made and removed)
  uint64_t bytes = 256ull << 20;  // its size, a multiple of 1 MiB, >= 16 MiB
  double seconds = 1.0;           // per mode, > 0
  int queue_depth = 32;           // the random modes' threads, 1..256
};

// The measurements: {"path", "bytes", "seconds_per_mode", "queue_depth", "modes": [{"mode",
// "block_bytes", "threads", "ops", "seconds", "mb_per_s", "iops", "latency_us_mean"}],
// "profile": {read_gbytes_per_s, write_gbytes_per_s, read_kiops, write_kiops, read_latency_us,
// write_latency_us, queue_depth}}. InvalidArgument for options out of range; the device's
// errors (a file system without O_DIRECT: NotSupported) as they are.
Result<nlohmann::json> probe_drive(const DriveProbeOptions& options);

}  // namespace granary::realmode

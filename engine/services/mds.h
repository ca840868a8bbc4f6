// MetadataService: a metadata server (Lustre MDS, a filer's namespace) answering
// MetadataRequests (open, create, stat, close — a close may set the size of a written file) for the
// files it knows, with their sizes.
//
// Capacity model: parallel_ops operations are in service at once, each taking its kind's
// service time (Env::sleep_s: the time covers the server's CPU, journal and locking, not
// modelled apart), and the rest queue in arrival order on the endpoint; so the server does at
// most parallel_ops / service_time operations of one kind per second, and a mix of kinds
// shares that capacity in proportion to their times (a file read's open and close together
// cost open + close). Replies are small messages.
// open and stat of an unknown path fail with kNotFound; close of a file that has no open
// handle fails with kInvalid; open counts handles per path, close drops one.
//
// A Shutdown stops the service for good, as OsdService (osd.h) does: a worker passes the
// Shutdown on to the endpoint and stops.
//
// Thread-safety: the workers share the open-handle table and counters under an EnvMutex;
// stats() may be called from any task or after the run.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "engine/env.h"
#include "engine/services/env_mutex.h"

namespace granary::services {

struct MetadataServiceOptions {
  std::string endpoint_name = "mds.0";
  int parallel_ops = 1;  // >= 1: operations in service at once
  // >= 0: the time one operation of each kind holds a worker.
  double open_time_s = 0;
  double close_time_s = 0;
  double create_time_s = 0;
  double stat_time_s = 0;
  // Every kind at once (tests and single-rate servers).
  void set_service_time_s(double t) {
    open_time_s = close_time_s = create_time_s = stat_time_s = t;
  }
};

struct MdsStats {
  uint64_t opens = 0;
  uint64_t stats = 0;
  uint64_t closes = 0;
  uint64_t errors = 0;  // operations answered with ok = false (also counted above)
};

class MetadataService {
 public:
  // `file_sizes`: the namespace (path -> size in bytes), e.g. Dataset::sizes_by_path().
  MetadataService(Env& env, HostId host, std::map<std::string, uint64_t, std::less<>> file_sizes,
                  MetadataServiceOptions options);
  MetadataService(const MetadataService&) = delete;
  MetadataService& operator=(const MetadataService&) = delete;

  // Spawns parallel_ops worker tasks on the host running serve(); daemons by default.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // One worker loop on the calling task; returns after a Shutdown.
  void serve();

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  MdsStats stats() const;
  int parallel_ops() const { return options_.parallel_ops; }
  // Service time of the operations served so far, summed over the workers (s). Lock-free (a
  // sampler may read it often, from any task or thread).
  double busy_s() const {
    return static_cast<double>(busy_ns_.load(std::memory_order_relaxed)) * 1e-9;
  }

 private:
  // The reply to `request`, served in `service_s` (counted in busy_s()).
  MetadataReply handle(const MetadataRequest& request, double service_s);

  Env& env_;
  HostId host_;
  std::map<std::string, uint64_t, std::less<>> file_sizes_;
  MetadataServiceOptions options_;
  Endpoint& endpoint_;
  mutable EnvMutex mu_;
  std::map<std::string, uint64_t, std::less<>> open_handles_;  // guarded by mu_
  std::atomic<uint64_t> busy_ns_{0};
  MdsStats stats_;  // guarded by mu_
};

}  // namespace granary::services

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
// Layouts (Lustre's MDS choosing the OSTs of a new file): with an OstAllocator in the options,
// a create of a new file allocates its layout (options.layout_spec, drawing from a Random
// seeded with options.layout_seed), and open, create and stat reply with it; without one the
// replies carry none and the clients hold the layouts (the simulator's pfs).
// Persistence (real mode's granary-mds): with a MdsNamespaceStore, every change of a file (a
// create of a new file, a close that sets a size) is put there before the reply goes out, and
// a failed put fails the operation (ReplyError::kIoError) and leaves the namespace as it was;
// a restarted server is built from what the store holds. Open handles live in memory only: a
// close the server has no handle for (it restarted since the open) fails with kInvalid, and
// the client replays its open and closes again (client.cc, as Lustre clients replay opens).
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
#include <vector>

#include "engine/env.h"
#include "engine/layout/lustre.h"
#include "engine/random.h"
#include "engine/services/env_mutex.h"

namespace granary::services {

// A file the metadata server knows: its size and, when the server allocates layouts, its layout
// (stripe_size_bytes 0: none).
struct MdsFile {
  uint64_t size_bytes = 0;
  uint64_t stripe_size_bytes = 0;
  std::vector<uint32_t> ost_indices;
  bool operator==(const MdsFile&) const = default;
};

using MdsNamespace = std::map<std::string, MdsFile, std::less<>>;

// Where a metadata server keeps its namespace across restarts (see the header comment).
class MdsNamespaceStore {
 public:
  virtual ~MdsNamespaceStore() = default;
  // Makes `file`'s record durable under `path` (replacing any), or fails.
  virtual Status put(const std::string& path, const MdsFile& file) = 0;
};

struct MetadataServiceOptions {
  std::string endpoint_name = "mds.0";
  int parallel_ops = 1;  // >= 1: operations in service at once
  // >= 0: the time one operation of each kind holds a worker.
  double open_time_s = 0;
  double close_time_s = 0;
  double create_time_s = 0;
  double stat_time_s = 0;
  // Layout allocation and persistence (see the header comment); not owned, null: none.
  layout::OstAllocator* allocator = nullptr;
  layout::LustreLayoutSpec layout_spec = {};
  uint64_t layout_seed = 0;
  MdsNamespaceStore* store = nullptr;
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
  // The namespace with layouts (a restarted server: what its store held).
  MetadataService(Env& env, HostId host, MdsNamespace files, MetadataServiceOptions options);
  MetadataService(const MetadataService&) = delete;
  MetadataService& operator=(const MetadataService&) = delete;

  // Spawns parallel_ops worker tasks on the host running serve(); daemons by default.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // One worker loop on the calling task; returns after a Shutdown.
  void serve();

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  MdsStats stats() const;
  // The namespace as it is now (a copy; any task).
  MdsNamespace files() const;
  int parallel_ops() const { return options_.parallel_ops; }
  // Service time of the operations served so far, summed over the workers (s). Lock-free (a
  // sampler may read it often, from any task or thread).
  double busy_s() const {
    return static_cast<double>(busy_ns_.load(std::memory_order_relaxed)) * 1e-9;
  }

 private:
  // The reply to `request`, served in `service_s` (counted in busy_s()).
  MetadataReply handle(const MetadataRequest& request, double service_s);
  // Under mu_: a create of `path`, which is not in files_; false (and `error` set) when its
  // layout cannot be allocated or its record not stored.
  bool create_locked(const std::string& path, std::string& error, ReplyError& code);

  Env& env_;
  HostId host_;
  MetadataServiceOptions options_;
  Endpoint& endpoint_;
  mutable EnvMutex mu_;
  MdsNamespace files_;                                         // guarded by mu_
  Random layout_rng_;                                          // guarded by mu_
  std::map<std::string, uint64_t, std::less<>> open_handles_;  // guarded by mu_
  std::atomic<uint64_t> busy_ns_{0};
  MdsStats stats_;  // guarded by mu_
};

}  // namespace granary::services

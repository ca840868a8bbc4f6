// ClusterProcess: one process of a real-mode cluster (a daemon, or a client such as the
// launcher's workload runner): its host's RealEnv with every host of the configuration listed
// (its own local), the transport at its address with the cluster key, the names table (OSD i's
// "osd.<i>" and the configuration's client names placed on their hosts), and the pool's ring.
//
// run_osd_daemon is granary-osd: OSD `osd`'s drive (UringDevice), formatted when asked
// (--mkfs) and otherwise mounted (the journal replayed after a crash), its OsdService, served
// until `stop` says so. A kill -9 loses nothing a client was told was written: the store
// acknowledges a write only once its journal record is durable (engine/store/disk_store.h).
//
// Thread-safety: as RealEnv.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "realmode/cluster_config.h"
#include "realmode/real_env.h"
#include "realmode/transport.h"

namespace granary::realmode {

// Opens the transport `options` describe for `env`'s process: messages it receives are
// delivered into `env` (deliver_from_network), bulk receives draw from env's buffer pool, and
// env sends to other hosts through it (attach_transport). It must be destroyed before `env`.
Result<std::unique_ptr<Transport>> open_attached_transport(RealEnv& env, TransportOptions options);

class ClusterProcess {
 public:
  // Loads the key, opens the transport; errors name what failed (the key file, the address).
  static Result<std::unique_ptr<ClusterProcess>> open(const ClusterConfig& config, HostId host,
                                                      uint64_t seed);
  ~ClusterProcess();
  RealEnv& env() { return *env_; }
  Transport& transport() { return *transport_; }
  const ClusterConfig& config() const { return config_; }
  const placement::Ring& ring() const { return *ring_; }
  HostId host() const { return host_; }

 private:
  ClusterProcess(ClusterConfig config, HostId host) : config_(std::move(config)), host_(host) {}
  ClusterConfig config_;
  HostId host_;
  std::unique_ptr<RealEnv> env_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<placement::Ring> ring_;
};

struct OsdDaemonOptions {
  bool mkfs = false;     // format the drive first (a new OSD)
  int worker_tasks = 4;  // OsdService workers
  // Polled every 100 ms; the daemon ends (cleanly) once it returns true (SIGTERM's handler).
  std::function<bool()> stop;
  // Where each step is said ("osd.2: mounted, 12 journal records replayed"); null: stderr.
  std::function<void(const std::string&)> log;
};

Status run_osd_daemon(const ClusterConfig& config, int osd, const OsdDaemonOptions& options);

}  // namespace granary::realmode

// OsdService: a storage server's object service for one device. It serves ReadRequests on
// its endpoint: looks the object up in the device's ObjectIndex (an ObjectStore, or a
// DatasetObjectIndex), charges the protocol's server CPU per request (Env::compute_s, shared with
// the host's other work), then answers with Env::send_from_device, streaming the extent from the
// drive to the client's reply endpoint. A request for an unknown object, or a range past the
// object's end, gets a ReadReply with ok = false and an error code (messages.h). A Shutdown stops
// it.
//
// The same service plays the Ceph OSD ("osd.<id>"), the Lustre OST ("ost.<index>") and the
// NFS head's export ("nfs.<head>"): only the endpoint name and the object names differ
// (file_mapping.h).
//
// Concurrency: worker_tasks tasks receive from the one endpoint, so up to that many requests
// are in their CPU phase at once; the device serialises or shares the reads as the Env models
// it. A worker that receives Shutdown passes it on to its endpoint (so every worker sees one)
// and stops; the service stops for good (a Shutdown stays queued for any later worker).
// Requests still queued behind the Shutdown are served by the workers that have not stopped
// yet; requests arriving later are not answered.
//
// Thread-safety: the service's tasks share only the counters, guarded by an EnvMutex; stats()
// may be called from any task or after the run. The ObjectIndex and Device must outlive it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/env.h"
#include "engine/services/env_mutex.h"
#include "engine/services/object_store.h"

namespace granary::services {

struct OsdServiceOptions {
  std::string endpoint_name;  // e.g. osd_endpoint_name(3); required
  double cpu_s_per_op = 0;    // server CPU per request (a protocol's server_cpu_us_per_op)
  int worker_tasks = 4;       // >= 1
};

struct OsdStats {
  uint64_t requests = 0;    // ReadRequests answered (ok or not)
  uint64_t errors = 0;      // answered with ok = false
  uint64_t bytes_sent = 0;  // payload bytes of successful replies
};

class OsdService {
 public:
  // Creates the endpoint on `host`. The device should be on `host`.
  OsdService(Env& env, HostId host, Device& device, const ObjectIndex& store,
             OsdServiceOptions options);
  OsdService(const OsdService&) = delete;
  OsdService& operator=(const OsdService&) = delete;

  // Spawns worker_tasks tasks on the host, each running serve(); daemons by default, so that
  // a run ends when the clients are done.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // One worker loop on the calling task (which must be on the host); returns after a Shutdown
  // (or when the endpoint fails).
  void serve();

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  OsdStats stats() const;

 private:
  void handle(const ReadRequest& request);

  Env& env_;
  HostId host_;
  Device& device_;
  const ObjectIndex& store_;
  OsdServiceOptions options_;
  Endpoint& endpoint_;
  mutable EnvMutex mu_;
  OsdStats stats_;  // guarded by mu_
};

}  // namespace granary::services

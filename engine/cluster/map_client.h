// MapClient: a host's copy of the cluster map, kept current by messages from the monitor
// (Ceph's MonClient subscription to "osdmap" and the OSDMap each daemon and client holds).
//
// A MapClient owns one endpoint on its host. start() sends the monitor (monitor.h) a
// MapSubscribe with the epoch it has, and its task then applies the MapUpdates that arrive: a
// full map replaces its copy when it is newer; each incremental is applied when it makes the next
// epoch, skipped when it is one it already has, and a gap (an incremental beyond the next epoch:
// an update was lost while a host was down, or arrived late) makes it subscribe again with the
// epoch it has and drop the rest of that update, so that epochs are applied strictly in order.
// With renew_interval_s set, it also subscribes again after that long without any update (a
// client that may have missed the last epoch; Ceph's clients renew their subscriptions).
//
// After each epoch it applied (or each full map it took), the local callbacks run on its task,
// in subscription order, with the new map: the services of the same host (its placement,
// map_placement.h; an OSD's or client's reactions) follow the map through them. Nothing crosses
// hosts but the messages.
//
// Thread-safety: epoch() may be called from any task (and outside tasks); map() from any task.
// Callbacks are registered before start() and run on the MapClient's task, without its lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/env.h"
#include "engine/services/env_mutex.h"

namespace granary::cluster {

struct MapClientOptions {
  // The client's endpoint: "<service>.<id>.map" by the naming rule of env.h (required, unique).
  std::string endpoint_name;
  std::string monitor_endpoint = "mon.0";
  // Subscribe again after this long without an update (0: only when a gap is seen).
  double renew_interval_s = 0;
  // Ask the monitor to answer even when this client is current (MapSubscribe::confirm), so
  // that confirmed() tells when the map it holds is the monitor's.
  bool confirm = false;
};

class MapClient {
 public:
  // `initial` is the map the host starts from (the scenario's epoch 1, known to every host as
  // the well-known names are); the monitor sends what came after it.
  MapClient(Env& env, HostId host, OsdMap initial, MapClientOptions options);
  MapClient(const MapClient&) = delete;
  MapClient& operator=(const MapClient&) = delete;

  // Calls `callback` on the client's task with every map it applies from now on. Before start().
  void subscribe(std::function<void(const OsdMap&)> callback);
  // Spawns the client's task on its host (a daemon by default); it subscribes at once.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // The client's loop on the calling task; returns on a Shutdown or when the endpoint fails.
  void serve();

  HostId host() const { return host_; }
  const std::string& endpoint_name() const { return options_.endpoint_name; }
  // The epoch of the map it holds.
  uint32_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // A copy of the map it holds.
  OsdMap map() const;
  // The map it holds, for its callbacks (which run on its task, where nothing changes it).
  const OsdMap& map_on_task() const { return map_; }
  // How many times it subscribed again after a gap or a silence (for tests and logs).
  uint64_t resubscriptions() const { return resubscriptions_.load(std::memory_order_relaxed); }
  // Whether an update from the monitor has been applied since start(): the map it holds was
  // the monitor's then (a process that restarted holds the initial map until then, which may
  // be many epochs old).
  bool confirmed() const { return confirmed_.load(std::memory_order_acquire); }

 private:
  void send_subscribe();
  // Applies one update; false when it saw a gap.
  bool on_update(const MapUpdate& u);
  void notify();

  Env& env_;
  HostId host_;
  MapClientOptions options_;
  Endpoint& endpoint_;
  mutable services::EnvMutex mu_;
  OsdMap map_;  // written on the client's task under mu_
  std::atomic<uint32_t> epoch_;
  std::atomic<uint64_t> resubscriptions_{0};
  std::atomic<bool> confirmed_{false};
  std::vector<std::function<void(const OsdMap&)>> callbacks_;
};

}  // namespace granary::cluster

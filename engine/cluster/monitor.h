// MonitorService and HeartbeatAgent: failure detection and the cluster map's epochs.
//
// Ceph (docs.ceph.com rados/configuration/mon-osd-interaction): every OSD pings its peers at
// most every osd_heartbeat_interval (6 s); a peer whose ping is unanswered for
// osd_heartbeat_grace (20 s) is reported to the monitor, which marks it down once
// mon_osd_min_down_reporters (2) OSDs reported it, and marks a down OSD out after
// mon_osd_down_out_interval (600 s), so that CRUSH moves its data elsewhere. The first ping
// left unanswered was sent up to one interval after the crash, so an OSD is marked down between
// grace and grace + interval after it died.
//
// Granary's simplification: one HeartbeatAgent per OSD sends a Heartbeat to the monitor every
// interval_s (peer pinging and the reporter quorum are not modelled). The monitor marks an OSD
// down when no heartbeat arrived for interval + grace seconds (the heartbeat that was due, plus
// its grace), which reproduces Ceph's window: detection between grace and grace + interval
// after the crash (plus one message latency). It marks a down OSD out down_out_interval_s
// after it was marked down; a heartbeat from a down OSD is its boot: it is marked up again, and
// in again if the monitor had marked it out (mon_osd_auto_mark_auto_out_in). Every change is
// one Incremental, one new epoch.
//
// Maps travel as messages (Ceph's MMonSubscribe / MOSDMap). A map client (map_client.h) sends a
// MapSubscribe naming its endpoint and the epoch it has; the monitor remembers the endpoint and
// answers with every epoch after that one: the incrementals, or the full map when the client is
// further behind than the history it keeps (map_history epochs). Each new epoch then goes to
// every subscriber as a MapUpdate with its one incremental, in epoch order; a subscriber that
// finds a gap (an update lost with a host that was down) subscribes again with the epoch it has.
// A PgTempRequest (Ceph's MOSDPGTemp) whose entries change the map becomes one new epoch. An
// epoch that moves OSD states is primed with pg_temp (prime_pg_temp in osd_map.h, Ceph's
// mon_osd_prime_pg_temp), so PGs whose up set moves keep being served by the OSDs that have
// their data until their peering asks otherwise.
//
// A heartbeat that carries an incarnation (Heartbeat::incarnation, real mode) tells the monitor
// when an OSD process restarted faster than it could be marked down: an up OSD whose heartbeat
// comes from a new incarnation is marked down in one epoch and up in the next (Ceph's monitor
// marks the old instance down when a new one boots: OSDMonitor::prepare_boot), so that every
// PG it serves starts a new interval and peers (the restarted OSD missed writes).
//
// The monitor is one task that receives on its endpoint with a timeout set to the next
// deadline, so marks happen at the exact deadline (deterministic, no polling). A crashed OSD is
// an agent that was stop()ped (or whose host's endpoints fail in real mode); restart() is the
// OSD coming back.
//
// Thread-safety: both classes guard their state with an EnvMutex; map(), history(), apply(),
// add_subscriber(), stop() and restart() may be called from any task. Updates are sent by the
// task that made the change (the monitor's, or apply()'s caller), without the lock held.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/cluster/osd_map.h"
#include "engine/env.h"
#include "engine/services/env_mutex.h"

namespace granary::cluster {

struct MonitorOptions {
  std::string endpoint_name = "mon.0";
  double heartbeat_interval_s = 6;    // osd_heartbeat_interval (as the agents are told)
  double heartbeat_grace_s = 20;      // osd_heartbeat_grace
  double down_out_interval_s = 600;   // mon_osd_down_out_interval; <= 0: never mark out
  bool auto_mark_auto_out_in = true;  // mon_osd_auto_mark_auto_out_in
  bool prime_pg_temp = true;          // mon_osd_prime_pg_temp
  // Incrementals kept for subscribers that are behind (Ceph's mon_min_osdmap_epochs); one
  // further behind gets the full map.
  size_t map_history = 500;
};

// One epoch's change, for logs, reports and tests.
struct MapChange {
  uint32_t epoch = 0;
  double at_s = 0;
  std::string what;           // Incremental::describe(), e.g. "down osd.3"
  bool pg_temp_only = false;  // it changed pg_temp and nothing else (a PgTempRequest's epoch)
};

class MonitorService {
 public:
  // Creates the endpoint on `host`. OSDs up in `initial` count as heard from at start().
  MonitorService(Env& env, HostId host, OsdMap initial, MonitorOptions options);
  MonitorService(const MonitorService&) = delete;
  MonitorService& operator=(const MonitorService&) = delete;

  // Sends every new epoch from now on to the map client at `endpoint` (as a MapSubscribe with
  // the current epoch does, without the answer).
  void add_subscriber(const std::string& endpoint);
  // Spawns the monitor's task on its host (a daemon by default).
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // The monitor's loop on the calling task (on the monitor's host); returns on a Shutdown or
  // when the endpoint fails.
  void serve();

  // An operator's command (`ceph osd out 3`, a new host): applies it as a new epoch and
  // publishes it. Errors as OsdMap::apply.
  Status apply(const Incremental& change);

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  OsdMap map() const;
  std::vector<MapChange> history() const;

 private:
  struct OsdTrack {
    double last_heard_s = 0;
    double down_at_s = -1;
    bool auto_out = false;     // marked out by the monitor (down too long)
    uint64_t incarnation = 0;  // the last one heard (0: none told)
  };

  // An epoch to send to the subscribers.
  struct Published {
    uint32_t epoch = 0;
    std::shared_ptr<const Incremental> change;
    std::vector<std::string> to;
  };
  // Applies (primed with pg_temp when it moves OSDs) and records a change; returns the epoch to
  // publish. Requires mu_.
  Result<Published> apply_locked(Incremental change, bool auto_out);
  void publish(const Published& p);
  void on_heartbeat(const Heartbeat& hb);
  void on_subscribe(const MapSubscribe& s);
  void on_pg_temp(const PgTempRequest& r);
  void check_deadlines();
  double next_deadline_s() const;  // requires mu_
  void track_size();               // requires mu_

  Env& env_;
  HostId host_;
  MonitorOptions options_;
  Endpoint& endpoint_;
  mutable services::EnvMutex mu_;
  OsdMap map_;                      // guarded by mu_
  std::vector<OsdTrack> osds_;      // guarded by mu_
  std::vector<MapChange> history_;  // guarded by mu_
  // The incrementals of the last epochs, the oldest making epoch first_kept_epoch_.
  std::deque<std::shared_ptr<const Incremental>> kept_;  // guarded by mu_
  uint32_t first_kept_epoch_ = 2;                        // guarded by mu_
  std::vector<std::string> subscribers_;                 // guarded by mu_, in arrival order
  std::set<std::string> subscriber_set_;                 // guarded by mu_
};

struct HeartbeatOptions {
  std::string monitor_endpoint = "mon.0";
  double interval_s = 6;     // osd_heartbeat_interval
  double first_at_s = 0;     // delay of the first heartbeat after start() (spreads the agents)
  uint64_t incarnation = 0;  // sent in every heartbeat (Heartbeat::incarnation; 0: none)
};

class HeartbeatAgent {
 public:
  HeartbeatAgent(Env& env, HostId host, int32_t osd, HeartbeatOptions options);
  HeartbeatAgent(const HeartbeatAgent&) = delete;
  HeartbeatAgent& operator=(const HeartbeatAgent&) = delete;

  // Spawns the heartbeat task on the OSD's host (a daemon by default).
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // The OSD crashed: no heartbeat is sent from now on.
  void stop();
  // The OSD is back: a heartbeat goes out now, then every interval.
  void restart();
  bool running() const;
  int32_t osd() const { return osd_; }

 private:
  void loop(uint64_t generation, double first_delay_s);

  Env& env_;
  HostId host_;
  int32_t osd_;
  HeartbeatOptions options_;
  TaskOptions task_options_;
  mutable services::EnvMutex mu_;
  bool running_ = false;     // guarded by mu_
  uint64_t generation_ = 0;  // guarded by mu_: a loop of an older generation stops
};

}  // namespace granary::cluster

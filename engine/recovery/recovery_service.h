// RecoveryService: executes a recovery plan (planner.h) through the Env, with Ceph's throttles, so
// that recovery competes with client traffic for the same drives and links.
//
// Daemons. Every OSD taking part gets a recovery daemon on its device's host, endpoint
// "recovery.<osd>" (daemon_workers tasks): a RecoveryPush is written to the device
// (Device::write) and acknowledged with a RecoveryPushReply; a RecoveryRead is answered with
// Env::send_from_device (a RecoveryReadReply carrying the bytes).
//
// Ops. Each op runs as a task on its driver's host (sources[0], the primary's role), chunk by
// chunk (chunk_bytes: an object). A chunk is copied straight from the driver's drive to the
// target's daemon with send_from_device when the op has one source (a replica, or an erasure
// chunk that still exists); an erasure rebuild first gathers the chunk from each of its k sources
// (RecoveryRead), then pushes the decoded chunk from the driver's host. So the target's drive
// writes bytes_to_write, the sources' drives read bytes_to_read (k times the write for a
// rebuild), and the data crosses the network as the Env models it.
//
// Throttles (Ceph option names, defaults for flash):
//  - max_backfills (osd_max_backfills, 1): ops at once per OSD, counted apart for the OSD as
//    driver (Ceph's local reservation) and as target (remote reservation). Ceph's recovery and
//    backfill both reserve these slots; ops run in Ceph's priority order: log recovery first,
//    then backfills that restore redundancy (degraded), then the rest (misplaced); plan order
//    within a class. An op reserves its driver's slot, then its target's, by messages to the
//    OSDs' reservers (reserver.h: "reserver.<osd>.local" and ".remote", started with the
//    recovery daemons), which grant by priority, then arrival.
//  - recovery_max_active (osd_recovery_max_active, 3): chunks in flight per driving OSD, over
//    all its ops; one op may use them all.
//  - recovery_sleep_s (osd_recovery_sleep; _ssd 0, _hdd 0.1): each op's chunk stream pauses this
//    long after every chunk.
//  - osd_recovery_bytes_per_s (0: none): recovery bytes per second each OSD may read plus, apart,
//    write, a token bucket of one chunk (the recovery share mClock gives an OSD): a chunk starts
//    once every OSD it touches has budget for it, so N bytes through one OSD take N / B.
//
// Carried data (move_objects set: the OSDs keep real bytes, services::StoreBackend): an op,
// once its two reservations are held, moves its PG's objects with their bytes by move_objects
// (the recovery manager peers the PG's members, recovery/peering.h: exactly the objects or
// shards the target lacks are pushed as messages, rebuilt from k shards for an erasure-coded
// pool) instead of streaming sized chunks between the drives. Of the chunk throttles,
// osd_recovery_bytes_per_s charges the op's planned bytes before it moves them and
// recovery_sleep_s pauses the op after each object pushed; recovery_max_active, the op queues
// and recovery_max_single_start act on chunk streams only, and must be left at their defaults
// (execute() refuses nothing: the scenario parser refuses those keys with carried data).
//
// Progress: stats() (bytes so far, PGs still to move or still degraded, the time full
// redundancy came back and the time the plan finished), op_records(), and the on_op_done
// callback (called on the op's task).
//
// Thread-safety: the service's tasks share counters under an EnvMutex; stats() and op_records()
// may be called from any task or after the run. One plan at a time: execute() again only after
// the previous one finished. The Env must outlive the service.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/env.h"
#include "engine/recovery/planner.h"
#include "engine/services/env_mutex.h"
#include "engine/services/op_queue.h"

namespace granary::recovery {

// "recovery.<osd>".
std::string recovery_endpoint_name(int32_t osd);

// What a carried op moved (move_objects).
struct CarriedMove {
  uint64_t objects_pushed = 0;  // objects (replicated) or shards (erasure) written
  uint64_t bytes_written = 0;   // their bytes, as stored (a shard's, for an erasure pool)
  uint64_t bytes_read = 0;      // read from the sources to make them (k shards per rebuilt one)
};

struct RecoveryOptions {
  int max_backfills = 1;                     // >= 1
  int recovery_max_active = 3;               // >= 1
  double recovery_sleep_s = 0;               // >= 0
  double osd_recovery_bytes_per_s = 0;       // >= 0; 0: no limit
  uint64_t chunk_bytes = uint64_t{4} << 20;  // >= 1
  int daemon_workers = 4;                    // >= 1
  // [osd] -> the OSD's device. Empty: device id = OSD id.
  std::vector<DeviceId> osd_devices{};
  // Recovery I/O lands at device_offset_bytes + (offset within the op, wrapped to fit the
  // device); the in-memory and simulated devices keep no content.
  uint64_t device_offset_bytes = 0;
  // The OSDs' op queues ([osd] -> its queue; empty: none, the chunks are copied as soon as the
  // throttles above allow). With queues, recovery pays Ceph's per-object OSD cost and competes
  // with the client ops queued on the same shards (op_queue.h): a chunk is started by a
  // PGRecovery item on the driver's queue (priority osd_recovery_priority 5, class
  // recovery_class, cost recovery_item_cost_bytes, or the chunk bytes when 0), which reads the
  // chunk from the driver's drive while it holds the op thread (a replica copy: Ceph's
  // build_push_op reads synchronously); the push is then queued on the target (priority
  // osd_recovery_op_priority 3, class immediate, cost its bytes), written to the drive after
  // its op-thread CPU, and its reply queued on the driver (priority 3, immediate). One
  // PGRecovery item of an op is queued at a time (the PG's lock), and each starts up to
  // recovery_max_single_start chunks (osd_recovery_max_single_start, 1).
  std::vector<services::OsdOpQueue*> op_queues{};
  int recovery_max_single_start = 1;      // >= 1
  double cpu_s_per_op = 0;                // op-thread CPU of each queued item
  uint64_t recovery_item_cost_bytes = 0;  // 0: the chunks' bytes
  services::OpClass recovery_class = services::OpClass::kBackgroundRecovery;
  // Ceph >= Reef: backfill that restores no redundancy (misplaced) is best effort.
  bool misplaced_is_best_effort = false;
  // Called when an op finishes: (op, its index in the plan, time).
  std::function<void(const RecoveryOp&, size_t, double)> on_op_done{};
  // Carried data (see above): moves op's objects, on the op's task on `host` (sources[0]'s).
  std::function<Result<CarriedMove>(const RecoveryOp& op, HostId host)> move_objects{};
};

struct RecoveryStats {
  size_t ops_total = 0;
  size_t ops_done = 0;
  uint64_t bytes_written = 0;  // so far, chunk by chunk
  uint64_t bytes_read = 0;
  uint32_t pgs_total = 0;               // PGs with ops
  uint32_t pgs_remaining = 0;           // of which not finished
  uint32_t degraded_pgs_remaining = 0;  // PGs with a restoring op not finished
  double started_at_s = -1;
  double redundancy_restored_at_s = -1;  // when the last restoring op finished (or started_at_s)
  double finished_at_s = -1;             // when the last op finished
  std::vector<uint64_t> bytes_read_per_osd;     // [osd]
  std::vector<uint64_t> bytes_written_per_osd;  // [osd]
  uint64_t chunk_errors = 0;  // chunks that failed (a device error); their op stops
  std::string first_error;
};

struct OpRecord {
  double started_at_s = -1;  // reservations held
  double finished_at_s = -1;
};

class RecoveryService {
 public:
  RecoveryService(Env& env, RecoveryOptions options);
  RecoveryService(const RecoveryService&) = delete;
  RecoveryService& operator=(const RecoveryService&) = delete;

  // Starts the recovery daemon of `osd` unless it runs already (execute() starts those it
  // needs). Daemon tasks by default.
  void start_daemon(int32_t osd, TaskOptions task_options = TaskOptions{.daemon = true});
  // Starts running `plan` and returns at once: one task per op (`op_task_options`; not daemons
  // by default, so an in-memory run lasts until recovery is done). Callable from a task or,
  // before a run, from the thread that builds the world.
  void execute(RecoveryPlan plan, TaskOptions op_task_options = {});
  // Blocks the calling task until the plan being executed is done.
  void wait();

  RecoveryStats stats() const;
  std::vector<OpRecord> op_records() const;
  const RecoveryPlan& plan() const { return plan_; }

 private:
  struct Lanes;  // the chunk streams of one op

  DeviceId device_of(int32_t osd) const;
  HostId host_of(int32_t osd);
  void serve_daemon(int32_t osd);
  void run_op(size_t index);
  void run_lane(size_t index, Lanes& lanes, int lane);
  // A carried op's move (options_.move_objects), its throttles and counts.
  void move_carried(size_t index, HostId host);
  Status copy_chunk(size_t index, uint64_t offset, uint64_t length, Endpoint& reply);
  // The chunks [first, first + count) of op `index` through the OSDs' op queues.
  Status queued_chunks(size_t index, Lanes& lanes, uint64_t first, uint64_t count, Endpoint& reply);
  services::OsdOpQueue* queue_of(int32_t osd) const;
  uint64_t device_offset(int32_t osd, uint64_t offset, uint64_t length);
  void pace(const RecoveryOp& op, uint64_t length);
  void grow_per_osd(int32_t osd);

  Env& env_;
  RecoveryOptions options_;
  RecoveryPlan plan_;
  std::vector<size_t> order_;  // op indices in execution order
  TaskOptions op_task_options_;
  std::vector<bool> daemon_started_;
  // Per-OSD throttles, created by execute() for every OSD of the plan.
  // recovery_max_active: the chunks in flight of the ops an OSD drives (one process's count).
  std::vector<std::unique_ptr<Semaphore>> active_slots_;
  std::vector<double> read_budget_at_s_, write_budget_at_s_;  // token buckets (guarded by mu_)
  std::vector<uint32_t> pg_ops_left_, pg_restoring_left_;     // [pg] (guarded by mu_)
  std::shared_ptr<Semaphore> done_;  // guarded by mu_ (released once the plan is done)
  bool running_ = false;
  uint64_t reserve_requests_ = 0;  // guarded by mu_
  mutable services::EnvMutex mu_;
  RecoveryStats stats_;            // guarded by mu_
  std::vector<OpRecord> records_;  // guarded by mu_
};

}  // namespace granary::recovery

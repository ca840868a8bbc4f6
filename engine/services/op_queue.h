// OsdOpQueue: an OSD's op shards and op threads (Ceph's ShardedOpWQ, src/osd/OSD.h): `shards`
// shards, each with its own OpScheduler (op_scheduler.h: WPQ or mClock) and
// `threads_per_shard` op threads. Client ops and recovery ops of the OSD are queued on the
// shard of their PG and wait there until the shard's scheduler picks them and a thread of the
// shard is free; the op then holds that thread while its synchronous part runs (CPU, and for
// a recovery read the read of the object, as Ceph's build_push_op reads in the op thread);
// what it does after (a device write, the network) no longer holds a thread.
//
// run() is that: it blocks the calling task until its op is picked, runs `work` on the calling
// task (holding the thread), then frees the thread for the next op. When mClock holds every
// queued op at its limit, a timer task wakes the shard at the time the first becomes
// eligible. Ceph's defaults: 8 shards x 2 threads for flash, 5 x 1 for rotational
// (osd_op_num_shards_[ssd|hdd], osd_op_num_threads_per_shard_[ssd|hdd]).
//
// Thread-safety: run() may be called from any task of the Env; the shards' state is guarded by
// an EnvMutex. stats() from any task or after the run. The Env must outlive the queue.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/env.h"
#include "engine/services/env_mutex.h"
#include "engine/services/op_scheduler.h"

namespace granary::services {

struct OpQueueOptions {
  int shards = 8;             // >= 1
  int threads_per_shard = 2;  // >= 1
  SchedulerOptions scheduler{};
  std::string name = "osd";  // names the timer tasks
};

struct OpQueueStats {
  uint64_t ops[4] = {0, 0, 0, 0};   // served, by OpClass
  double wait_s[4] = {0, 0, 0, 0};  // total time queued, by OpClass
  double busy_s = 0;                // thread time held
};

class OsdOpQueue {
 public:
  OsdOpQueue(Env& env, HostId host, OpQueueOptions options, uint64_t seed);
  OsdOpQueue(const OsdOpQueue&) = delete;
  OsdOpQueue& operator=(const OsdOpQueue&) = delete;

  // Queues `item` on shard `shard_key % shards`, waits for its turn and a free thread, runs
  // `work` holding the thread. item.id is assigned here.
  void run(uint64_t shard_key, OpItem item, const std::function<void()>& work);

  int shards() const { return options_.shards; }
  OpQueueStats stats() const;

 private:
  struct Waiter {
    std::shared_ptr<Semaphore> go;
    double queued_at_s = 0;
  };
  struct Shard {
    std::unique_ptr<OpScheduler> scheduler;
    int free_threads = 0;
    std::map<uint64_t, Waiter> waiting;  // by item id
    double timer_at_s = -1;              // a timer task is pending for this time (-1: none)
  };
  // Hands free threads to the ops the scheduler picks; arms a timer when mClock holds them.
  // Called with mu_ held.
  void dispatch(size_t shard);

  Env& env_;
  HostId host_;
  OpQueueOptions options_;
  mutable EnvMutex mu_;
  std::vector<Shard> shards_;  // guarded by mu_
  uint64_t next_id_ = 0;       // guarded by mu_
  OpQueueStats stats_;         // guarded by mu_
};

}  // namespace granary::services

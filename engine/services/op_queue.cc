#include "engine/services/op_queue.h"

#include <cmath>
#include <limits>
#include <mutex>

namespace granary::services {

OsdOpQueue::OsdOpQueue(Env& env, HostId host, OpQueueOptions options, uint64_t seed)
    : env_(env), host_(host), options_(std::move(options)), mu_(env) {
  GRANARY_CHECK(options_.shards >= 1 && options_.threads_per_shard >= 1);
  Random seeds(seed);
  shards_.resize(static_cast<size_t>(options_.shards));
  for (auto& s : shards_) {
    SchedulerOptions so = options_.scheduler;
    so.mclock.shards = options_.shards;
    s.scheduler = make_scheduler(so, seeds.next_u64());
    s.free_threads = options_.threads_per_shard;
  }
}

void OsdOpQueue::dispatch(size_t shard) {
  Shard& s = shards_[shard];
  while (s.free_threads > 0 && !s.scheduler->empty()) {
    double ready_at = std::numeric_limits<double>::infinity();
    const double now = env_.now_s();
    std::optional<OpItem> item = s.scheduler->dequeue(now, &ready_at);
    if (!item) {
      GRANARY_CHECK(std::isfinite(ready_at) && ready_at > now);
      if (s.timer_at_s >= 0 && s.timer_at_s <= ready_at) return;  // one is due sooner
      s.timer_at_s = ready_at;
      env_.spawn(
          host_, options_.name + ".shard" + std::to_string(shard) + ".timer",
          [this, shard, ready_at] {
            env_.sleep_s(ready_at - env_.now_s());
            std::lock_guard<EnvMutex> lock(mu_);
            if (shards_[shard].timer_at_s == ready_at) shards_[shard].timer_at_s = -1;
            dispatch(shard);
          },
          TaskOptions{.daemon = true});
      return;
    }
    auto w = s.waiting.find(item->id);
    GRANARY_CHECK(w != s.waiting.end());
    --s.free_threads;
    const auto c = static_cast<size_t>(item->op_class);
    ++stats_.ops[c];
    stats_.wait_s[c] += now - w->second.queued_at_s;
    w->second.go->release();
    s.waiting.erase(w);
  }
}

void OsdOpQueue::run(uint64_t shard_key, OpItem item, const std::function<void()>& work) {
  const size_t shard = static_cast<size_t>(shard_key % static_cast<uint64_t>(options_.shards));
  std::shared_ptr<Semaphore> go = env_.make_semaphore(0);
  {
    std::lock_guard<EnvMutex> lock(mu_);
    item.id = ++next_id_;
    shards_[shard].waiting[item.id] = Waiter{go, env_.now_s()};
    shards_[shard].scheduler->enqueue(item);
    dispatch(shard);
  }
  go->acquire();
  const double start = env_.now_s();
  if (work) work();
  std::lock_guard<EnvMutex> lock(mu_);
  stats_.busy_s += env_.now_s() - start;
  ++shards_[shard].free_threads;
  dispatch(shard);
}

OpQueueStats OsdOpQueue::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

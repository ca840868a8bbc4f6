// RealEnv (real_env.h): tasks as threads under one mutex, each waiting on its own condition
// variable, so that cancel() can wake exactly the task it ends.
#include "realmode/real_env.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

namespace granary::realmode {

namespace {

// Unwinds a cancelled task from the Env call it waits in. Deliberately not a std::exception.
struct TaskCancelled {};

// Runs `f` when the scope ends, by return or by unwinding.
template <class F>
class OnExit {
 public:
  explicit OnExit(F f) : f_(std::move(f)) {}
  ~OnExit() { f_(); }
  OnExit(const OnExit&) = delete;
  OnExit& operator=(const OnExit&) = delete;

 private:
  F f_;
};

}  // namespace

// What a blocked caller waits on: a condition variable under mu_, and whether its task was
// cancelled.
struct RealEnv::Waiter {
  std::condition_variable cv;
  bool cancelled = false;
};

struct RealEnv::Task {
  RealEnv* env = nullptr;
  TaskId id = 0;
  std::string name;
  HostId host = 0;
  bool daemon = false;
  std::function<void()> fn;
  Waiter waiter;
  bool launched = false;  // its thread exists
  bool ended = false;
  std::vector<Waiter*> joiners;
  std::thread thread;
  Random random{0};
};

struct RealEnv::Computation {
  double remaining = 0;  // core-seconds
  Waiter* waiter = nullptr;
};

struct RealEnv::Host {
  RealHostOptions options;
  bool down = false;
  double nic_free_s = 0;                // when the modelled NIC has sent what it was given
  std::vector<Computation*> computing;  // processor sharing among these
  double advanced_s = 0;                // computing's remaining work is as of this time
  double unreachable_until_s = -1;      // another process's host whose transport failed
  // Another process's host, while a run is in progress: the messages for it waiting for the
  // transport, sent in order by its sender thread (started with the first).
  std::deque<std::pair<std::string, Message>> outbox;
  std::condition_variable outbox_cv;        // a message queued, or stop_sender
  std::condition_variable outbox_space_cv;  // the outbox has room again
  std::thread sender;
  bool sending = false;  // a send to it is with the transport (the sender's or a task's own)
  bool stop_sender = false;
  bool said_unreachable = false;  // logged since its last successful send
};

struct RealEnv::Delivery {
  double at_s = 0;
  uint64_t order = 0;
  RealEndpoint* to = nullptr;
  HostId remote = -1;  // the transport takes it to this host; -1: delivered here
  Message message;
  // A min-heap through std::push_heap's max-heap: "less" is "later".
  bool operator<(const Delivery& o) const {
    return at_s != o.at_s ? at_s > o.at_s : order > o.order;
  }
};

namespace {
thread_local void* tls_task = nullptr;  // the RealEnv::Task the calling thread runs, if any
}  // namespace

class RealEnv::RealEndpoint final : public Endpoint {
 public:
  RealEndpoint(RealEnv& env, std::string name) : env_(env), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  HostId host() const override { return host_; }
  Result<Message> recv() override { return env_.receive(*this, std::nullopt); }
  Result<Message> recv(double timeout_s) override { return env_.receive(*this, timeout_s); }
  void set_queue_limit(uint64_t bytes) override {
    std::lock_guard lock(env_.mu_);
    budget_.set_limit(bytes);
  }
  uint64_t queued_bytes() const override {
    std::lock_guard lock(env_.mu_);
    return budget_.queued();
  }

 private:
  friend class RealEnv;
  RealEnv& env_;
  const std::string name_;
  HostId host_ = -1;  // -1 until endpoint() creates it (messages may wait for it)
  bool created_ = false;
  std::deque<Message> queue_;
  EndpointQueueBudget budget_;
  std::deque<Waiter*> receivers_;  // in the order they started waiting
};

class RealEnv::RealSemaphore final : public Semaphore {
 public:
  RealSemaphore(RealEnv& env, int initial) : env_(env), free_(initial) {}

  void acquire() override {
    Lock lock(env_.mu_);
    if (free_ > 0 && waiting_.empty()) {
      --free_;
      return;
    }
    Entry me{&env_.self(), false};
    waiting_.push_back(&me);
    OnExit leave([&] {
      if (me.granted) return;  // taken (or, when cancelled, handed on below)
      waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &me));
    });
    try {
      env_.wait(lock, *me.waiter, [&] { return me.granted; });
    } catch (const TaskCancelled&) {
      if (me.granted) release_locked();  // handed over as it was cancelled: to the next one
      throw;
    }
  }

  void release() override {
    std::lock_guard lock(env_.mu_);
    release_locked();
  }

 private:
  struct Entry {
    Waiter* waiter;
    bool granted;
  };
  // FIFO hand-off: the longest waiter gets the permit, before anyone who asks later.
  void release_locked() {
    if (waiting_.empty()) {
      ++free_;
      return;
    }
    Entry* next = waiting_.front();
    waiting_.pop_front();
    next->granted = true;
    next->waiter->cv.notify_one();
  }

  RealEnv& env_;
  int free_;
  std::deque<Entry*> waiting_;
};

RealEnv::RealEnv(uint64_t seed) : seed_(seed), random_(seed) {}

RealEnv::~RealEnv() {
  Lock lock(mu_);
  GRANARY_CHECK(!running_);
  std::vector<std::thread> threads = std::move(finished_);
  lock.unlock();
  for (std::thread& t : threads) t.join();
}

Result<HostId> RealEnv::add_host(const RealHostOptions& options) {
  if (options.cores < 1) {
    return Status::invalid_argument("host '" + options.name + "': cores must be at least 1, got " +
                                    std::to_string(options.cores));
  }
  if (!std::isfinite(options.nic_bytes_per_s) || options.nic_bytes_per_s < 0 ||
      !std::isfinite(options.latency_s) || options.latency_s < 0) {
    return Status::invalid_argument("host '" + options.name +
                                    "': the NIC's rate and latency must be finite and >= 0");
  }
  std::lock_guard lock(mu_);
  auto h = std::make_unique<Host>();
  h->options = options;
  hosts_.push_back(std::move(h));
  return static_cast<HostId>(hosts_.size() - 1);
}

Result<DeviceId> RealEnv::add_device(std::unique_ptr<Device> device) {
  std::lock_guard lock(mu_);
  const auto next = static_cast<DeviceId>(devices_.size());
  if (device == nullptr || device->id() != next) {
    return Status::invalid_argument("add_device: expected a device with id " +
                                    std::to_string(next));
  }
  if (device->host() < 0 || static_cast<size_t>(device->host()) >= hosts_.size()) {
    return Status::invalid_argument("device " + std::to_string(next) + ": host " +
                                    std::to_string(device->host()) + " was never added");
  }
  devices_.push_back(std::move(device));
  return next;
}

void RealEnv::set_host_down(HostId host, bool down) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(host >= 0 && static_cast<size_t>(host) < hosts_.size());
  hosts_[static_cast<size_t>(host)]->down = down;
}

// ---- time

double RealEnv::now_s() const {
  if (!running_.load(std::memory_order_acquire)) return frozen_s_.load();
  const Clock::rep ticks = Clock::now().time_since_epoch().count() - origin_.load();
  return std::chrono::duration<double>(Clock::duration(ticks)).count();
}

RealEnv::Clock::time_point RealEnv::at(double s) const {
  const auto since_origin = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(s, 1e9)));  // 1e9 s: "for ever", without overflow
  return Clock::time_point(Clock::duration(origin_.load())) + since_origin;
}

RealEnv::Task* RealEnv::current_task() const {
  auto* t = static_cast<Task*>(tls_task);
  return t != nullptr && t->env == this ? t : nullptr;
}

RealEnv::Waiter& RealEnv::self() {
  thread_local Waiter outside;  // callers that are not tasks are never cancelled
  Task* t = current_task();
  return t != nullptr ? t->waiter : outside;
}

template <class Pred>
bool RealEnv::wait(Lock& lock, Waiter& w, Pred pred, std::optional<double> deadline_s) {
  for (;;) {
    if (w.cancelled) throw TaskCancelled{};
    if (pred()) return true;
    if (deadline_s) {
      if (now_s() >= *deadline_s) return false;
      w.cv.wait_until(lock, at(*deadline_s));
    } else {
      w.cv.wait(lock);
    }
  }
}

void RealEnv::sleep_s(double seconds) {
  Lock lock(mu_);
  Waiter& w = self();
  const double until = now_s() + std::max(0.0, seconds);
  wait(
      lock, w, [] { return false; }, until);
  if (w.cancelled) throw TaskCancelled{};  // a wait that completes as it is cancelled
}

void RealEnv::advance(Host& host) {
  const double now = now_s();
  if (!host.computing.empty()) {
    const double rate =
        std::min(1.0, host.options.cores / static_cast<double>(host.computing.size()));
    const double done = rate * (now - host.advanced_s);
    for (Computation* c : host.computing) c->remaining -= done;
  }
  host.advanced_s = now;
}

void RealEnv::compute_s(double core_seconds) {
  if (!(core_seconds > 0)) return;
  Lock lock(mu_);
  Waiter& w = self();
  if (w.cancelled) throw TaskCancelled{};
  const Task* task = current_task();
  Host& host = *hosts_[static_cast<size_t>(task != nullptr ? task->host : 0)];
  Computation me{core_seconds, &w};
  auto reshare = [&] {  // the others' finishing times changed
    for (Computation* c : host.computing) {
      if (c != &me) c->waiter->cv.notify_one();
    }
  };
  advance(host);
  host.computing.push_back(&me);
  reshare();
  OnExit leave([&] {
    advance(host);
    host.computing.erase(std::find(host.computing.begin(), host.computing.end(), &me));
    reshare();
  });
  for (;;) {
    advance(host);
    if (me.remaining <= 1e-12) break;
    const double rate =
        std::min(1.0, host.options.cores / static_cast<double>(host.computing.size()));
    const double until = now_s() + me.remaining / rate;
    bool woken = false;
    wait(
        lock, w, [&] { return std::exchange(woken, true); }, until);
  }
}

// ---- tasks

TaskId RealEnv::spawn(HostId host, std::string name, std::function<void()> task,
                      TaskOptions options) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(host >= 0 && static_cast<size_t>(host) < hosts_.size());
  GRANARY_CHECK(hosts_[static_cast<size_t>(host)]->options.local);  // tasks run where they live
  auto t = std::make_unique<Task>();
  t->env = this;
  t->id = next_task_++;
  t->name = std::move(name);
  t->host = host;
  t->daemon = options.daemon;
  t->fn = std::move(task);
  t->random = Random(seed_ ^ (0x9E3779B97F4A7C15ULL * (t->id + 1)));  // the task's own stream
  if (!t->daemon) ++live_;
  Task& ref = *t;
  tasks_.emplace(ref.id, std::move(t));
  if (running_) launch(ref);
  return ref.id;
}

void RealEnv::launch(Task& task) {
  task.launched = true;
  task.thread = std::thread(&RealEnv::task_main, this, &task);
}

void RealEnv::task_main(Task* task) {
  tls_task = task;
  {
    std::lock_guard lock(mu_);
    if (task->waiter.cancelled) {  // cancelled between launch and start: never runs
      end_task(*task);
      return;
    }
  }
  Status failed;
  try {
    task->fn();
  } catch (const TaskCancelled&) {
  } catch (const std::exception& e) {
    failed = Status::io_error("task '" + task->name + "' on host " + std::to_string(task->host) +
                              " failed: " + e.what());
  }
  task->fn = nullptr;  // what it captured goes now, outside the lock
  std::lock_guard lock(mu_);
  if (!failed.ok() && failure_.ok()) failure_ = failed;
  end_task(*task);
}

void RealEnv::end_task(Task& task) {
  task.ended = true;
  if (!task.daemon) --live_;
  for (Waiter* j : task.joiners) j->cv.notify_one();
  task.joiners.clear();
  if (task.thread.joinable()) finished_.push_back(std::move(task.thread));
  run_cv_.notify_all();
}

Result<RealEnv::Task*> RealEnv::task_for(const char* op, TaskId id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) {
    return Status::invalid_argument(std::string(op) + ": no task " + std::to_string(id) +
                                    " was ever spawned");
  }
  if (it->second.get() == current_task()) {
    return Status::invalid_argument(std::string(op) + ": task " + std::to_string(id) + " ('" +
                                    it->second->name + "') is the caller itself");
  }
  return it->second.get();
}

Status RealEnv::join(TaskId id) {
  Lock lock(mu_);
  Result<Task*> t = task_for("join", id);
  if (!t.ok()) return t.status();
  Task& target = **t;
  Waiter& w = self();
  if (!target.ended) {
    target.joiners.push_back(&w);
    OnExit leave([&] {
      auto it = std::find(target.joiners.begin(), target.joiners.end(), &w);
      if (it != target.joiners.end()) target.joiners.erase(it);
    });
    wait(lock, w, [&] { return target.ended; });
  }
  if (w.cancelled) throw TaskCancelled{};
  return Status::ok_status();
}

Status RealEnv::cancel(TaskId id) {
  std::lock_guard lock(mu_);
  Result<Task*> t = task_for("cancel", id);
  if (!t.ok()) return t.status();
  Task& target = **t;
  if (target.ended || target.waiter.cancelled) return Status::ok_status();
  target.waiter.cancelled = true;
  if (!target.launched) {
    end_task(target);  // never runs
  } else {
    target.waiter.cv.notify_one();
  }
  return Status::ok_status();
}

void RealEnv::cancel_all() {
  for (auto& [id, t] : tasks_) {
    if (t->ended || t->waiter.cancelled) continue;
    t->waiter.cancelled = true;
    if (!t->launched) {
      end_task(*t);
    } else {
      t->waiter.cv.notify_one();
    }
  }
}

Status RealEnv::run(const RealRunOptions& options) {
  Lock lock(mu_);
  GRANARY_CHECK(!running_ && current_task() == nullptr);
  const Clock::rep origin =
      Clock::now().time_since_epoch().count() -
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(frozen_s_.load()))
          .count();
  origin_.store(origin);
  running_.store(true, std::memory_order_release);
  failure_ = Status::ok_status();
  stop_deliverer_ = false;
  deliverer_ = std::thread(&RealEnv::deliverer_main, this);
  for (auto& [id, t] : tasks_) {
    if (!t->launched && !t->ended) launch(*t);
  }
  Status result;
  std::optional<double> end_s;
  for (;;) {
    std::vector<std::thread> reap = std::move(finished_);
    finished_.clear();
    if (!reap.empty()) {
      lock.unlock();
      for (std::thread& th : reap) th.join();
      lock.lock();
      continue;
    }
    if (!end_s) {
      if (live_ == 0 || !failure_.ok()) {
        end_s = now_s();
        result = failure_;
        cancel_all();
      } else if (options.max_time_s > 0 && now_s() >= options.max_time_s) {
        end_s = now_s();
        std::string msg = "real time limit of " + std::to_string(options.max_time_s) +
                          " s reached with tasks still running:";
        for (const auto& [id, t] : tasks_) {
          if (!t->ended && !t->daemon) msg += " '" + t->name + "'";
        }
        result = Status::io_error(msg);
        cancel_all();
      }
    }
    if (end_s) {
      const bool all_ended = std::all_of(tasks_.begin(), tasks_.end(),
                                         [](const auto& kv) { return kv.second->ended; });
      if (all_ended && finished_.empty()) break;
    }
    if (!end_s && options.max_time_s > 0) {
      run_cv_.wait_until(lock, at(options.max_time_s));
    } else {
      run_cv_.wait(lock);
    }
  }
  stop_deliverer_ = true;
  deliverer_cv_.notify_all();
  lock.unlock();
  deliverer_.join();
  lock.lock();
  stop_senders(lock);
  frozen_s_.store(*end_s);
  running_.store(false, std::memory_order_release);
  return result;
}

// ---- endpoints and messages

RealEnv::RealEndpoint& RealEnv::record(std::string_view name) {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end()) {
    it = endpoints_
             .emplace(std::string(name), std::make_unique<RealEndpoint>(*this, std::string(name)))
             .first;
  }
  return *it->second;
}

Endpoint& RealEnv::endpoint(HostId host, std::string_view name) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(host >= 0 && static_cast<size_t>(host) < hosts_.size());
  GRANARY_CHECK(hosts_[static_cast<size_t>(host)]->options.local);  // created where it lives
  RealEndpoint& ep = record(name);
  if (!ep.created_) {
    ep.created_ = true;
    ep.host_ = host;
  }
  GRANARY_CHECK(ep.host_ == host);  // a name never changes host (engine/env.h)
  return ep;
}

Result<HostId> RealEnv::host_of(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = endpoints_.find(name);
  if (it == endpoints_.end() || !it->second->created_) {
    return Status::not_found("no endpoint called '" + std::string(name) + "' has been created");
  }
  return it->second->host_;
}

Result<Message> RealEnv::receive(RealEndpoint& ep, std::optional<double> timeout_s) {
  Lock lock(mu_);
  Waiter& w = self();
  std::optional<double> until;
  if (timeout_s) until = now_s() + std::max(0.0, *timeout_s);
  ep.receivers_.push_back(&w);
  OnExit leave([&] {
    ep.receivers_.erase(std::find(ep.receivers_.begin(), ep.receivers_.end(), &w));
    // A message this waiter was woken for and did not take goes to the next one.
    if (!ep.queue_.empty() && !ep.receivers_.empty()) ep.receivers_.front()->cv.notify_one();
  });
  // Served in the order receivers started waiting: only the first takes a message.
  if (!wait(
          lock, w, [&] { return !ep.queue_.empty() && ep.receivers_.front() == &w; }, until)) {
    return Status::not_found("endpoint " + ep.name_ + ": nothing arrived in " +
                             std::to_string(*timeout_s) + " s");
  }
  Message m = std::move(ep.queue_.front());
  ep.queue_.pop_front();
  ep.budget_.taken(m.wire_bytes());
  return m;
}

double RealEnv::arrival_s(HostId from, const RealEndpoint& to, uint64_t wire_bytes) {
  const double now = now_s();
  if (to.created_ && to.host_ == from) return now;  // within the host: no NIC
  Host& h = *hosts_[static_cast<size_t>(from)];
  double left = now;
  if (wire_bytes > kSmallMessageBytes && h.options.nic_bytes_per_s > 0) {
    left =
        std::max(now, h.nic_free_s) + static_cast<double>(wire_bytes) / h.options.nic_bytes_per_s;
    h.nic_free_s = left;
  }
  return left + h.options.latency_s;
}

void RealEnv::deliver(RealEndpoint& to, Message message) {
  to.queue_.push_back(std::move(message));
  if (!to.receivers_.empty()) to.receivers_.front()->cv.notify_one();
}

void RealEnv::deliverer_main() {
  Lock lock(mu_);
  while (!stop_deliverer_) {
    if (deliveries_.empty()) {
      deliverer_cv_.wait(lock);
      continue;
    }
    if (deliveries_.front().at_s <= now_s()) {
      std::pop_heap(deliveries_.begin(), deliveries_.end());
      Delivery d = std::move(deliveries_.back());
      deliveries_.pop_back();
      if (d.remote < 0) {
        deliver(*d.to, std::move(d.message));
        continue;
      }
      queue_remote(lock, d.remote, d.to->name_, std::move(d.message));
      continue;
    }
    deliverer_cv_.wait_until(lock, at(deliveries_.front().at_s));
  }
}

Status RealEnv::send(HostId from, std::string_view to, Message message) {
  Lock lock(mu_);
  if (from < 0 || static_cast<size_t>(from) >= hosts_.size()) {
    return Status::invalid_argument("send to " + std::string(to) + ": no host " +
                                    std::to_string(from));
  }
  RealEndpoint& ep = record(to);
  if (hosts_[static_cast<size_t>(from)]->down) {
    return Status::unavailable("send from host " + std::to_string(from) + " to " + std::string(to) +
                               ": the sending host is down");
  }
  const HostId dest = resolve(ep);
  const Host* dest_host = dest >= 0 ? hosts_[static_cast<size_t>(dest)].get() : nullptr;
  if (dest_host != nullptr && (dest_host->down || now_s() < dest_host->unreachable_until_s)) {
    return Status::unavailable("send to " + std::string(to) + ": its host " + std::to_string(dest) +
                               " is down");
  }
  const bool remote = dest_host != nullptr && !dest_host->options.local;
  if (remote && transport_ == nullptr) {
    return Status::unavailable("send to " + std::string(to) + ": host " + std::to_string(dest) +
                               " is in another process and no transport is attached");
  }
  const uint64_t wire = message.wire_bytes();
  if (!remote) {
    if (Status s = ep.budget_.admit(ep.name_, wire); !s.ok()) return s;
  }
  const double arrive = arrival_s(from, ep, wire);
  if (arrive <= now_s() && deliveries_.empty()) {
    if (!remote) {
      deliver(ep, std::move(message));
      return Status::ok_status();
    }
    if (running_.load(std::memory_order_acquire))
      return send_during_run(lock, dest, ep.name_, std::move(message));
    lock.unlock();  // outside a run: in the calling thread
    return send_remote(dest, ep.name_, message);
  }
  deliveries_.push_back(
      Delivery{arrive, next_delivery_++, &ep, remote ? dest : -1, std::move(message)});
  std::push_heap(deliveries_.begin(), deliveries_.end());
  if (deliveries_.front().order == next_delivery_ - 1) deliverer_cv_.notify_one();  // earliest now
  return Status::ok_status();
}

HostId RealEnv::resolve(const RealEndpoint& ep) const {
  if (ep.created_) return ep.host_;
  std::string_view name = ep.name_;
  for (;;) {
    auto it = placed_.find(name);
    if (it != placed_.end()) return it->second;
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) return -1;
    name = name.substr(0, dot);
  }
}

Status RealEnv::send_during_run(Lock& lock, HostId to_host, const std::string& to,
                                Message message) {
  Host& h = *hosts_[static_cast<size_t>(to_host)];
  // The common case, a live peer of an established pair with nothing queued for it: the
  // calling task posts the message itself (no hand-off to the sender thread, which cost half
  // the small-message rate). Anything that may wait — a handshake, a queue — goes through the
  // sender.
  if (!h.outbox.empty() || h.sending || !transport_->authenticated(to_host)) {
    queue_remote(lock, to_host, to, std::move(message));
    return Status::ok_status();
  }
  h.sending = true;
  lock.unlock();
  Status s = transport_->send(to_host, to, message);
  lock.lock();
  h.sending = false;
  sent_remote(h, to_host, to, s);
  if (!h.outbox.empty()) h.outbox_cv.notify_one();  // queued meanwhile: the sender's now
  return s;
}

void RealEnv::sent_remote(Host& h, HostId to_host, const std::string& to, const Status& s) {
  if (s.ok()) {
    h.said_unreachable = false;
    return;
  }
  size_t dropped = 0;
  if (s.code() == Status::Code::kUnavailable) {
    h.unreachable_until_s = now_s() + retry_down_s;
    dropped = h.outbox.size();
    h.outbox.clear();
    h.outbox_space_cv.notify_all();
    if (h.said_unreachable) return;  // once per outage
    h.said_unreachable = true;
  }
  std::fprintf(stderr,
               "granary: a message to %s (host %d) was not sent (%zu more to its host dropped): "
               "%s\n",
               to.c_str(), static_cast<int>(to_host), dropped, s.to_string().c_str());
}

void RealEnv::queue_remote(Lock& lock, HostId to_host, const std::string& to, Message message) {
  Host& h = *hosts_[static_cast<size_t>(to_host)];
  // (Room is made by the sender, which never waits for ever: each transport send is bounded by
  // the handshake timeout, and a failed one empties the outbox.)
  h.outbox_space_cv.wait(lock, [&] { return h.outbox.size() < kOutboxMessages; });
  h.outbox.emplace_back(to, std::move(message));
  if (!h.sender.joinable()) h.sender = std::thread(&RealEnv::sender_main, this, to_host);
  h.outbox_cv.notify_one();
}

void RealEnv::sender_main(HostId to_host) {
  Lock lock(mu_);
  Host& h = *hosts_[static_cast<size_t>(to_host)];
  for (;;) {
    if (h.outbox.empty() || h.sending) {
      if (h.outbox.empty() && !h.sending && h.stop_sender) return;
      h.outbox_cv.wait(lock);
      continue;
    }
    std::pair<std::string, Message> next = std::move(h.outbox.front());
    h.outbox.pop_front();
    h.outbox_space_cv.notify_all();
    h.sending = true;
    lock.unlock();
    Status s = transport_->send(to_host, next.first, next.second);
    lock.lock();
    h.sending = false;
    sent_remote(h, to_host, next.first, s);
  }
}

void RealEnv::stop_senders(Lock& lock) {
  for (auto& host : hosts_) {
    Host& h = *host;
    if (!h.sender.joinable()) continue;
    h.stop_sender = true;
    h.outbox_cv.notify_all();
    std::thread sender = std::move(h.sender);
    lock.unlock();
    sender.join();  // once it has sent (or dropped) what was queued
    lock.lock();
    h.stop_sender = false;
  }
}

Status RealEnv::send_remote(HostId to_host, const std::string& to, const Message& message) {
  Status s = transport_->send(to_host, to, message);
  if (s.code() == Status::Code::kUnavailable) {
    std::lock_guard lock(mu_);
    hosts_[static_cast<size_t>(to_host)]->unreachable_until_s = now_s() + retry_down_s;
  }
  return s;
}

void RealEnv::attach_transport(Transport* transport) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(!running_);
  transport_ = transport;
}

void RealEnv::place(std::string name, HostId host) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(host >= 0 && static_cast<size_t>(host) < hosts_.size());
  placed_[std::move(name)] = host;
}

void RealEnv::deliver_from_network(HostId from, std::string to, Message message) {
  std::lock_guard lock(mu_);
  RealEndpoint& ep = record(to);
  const HostId here = resolve(ep);
  if (here >= 0 && !hosts_[static_cast<size_t>(here)]->options.local) {
    std::fprintf(stderr, "granary: dropped a message from host %d for %s, which is not here\n",
                 from, to.c_str());
    return;
  }
  if (Status s = ep.budget_.admit(ep.name_, message.wire_bytes()); !s.ok()) {
    std::fprintf(stderr, "granary: dropped a message from host %d: %s\n", from,
                 s.message().c_str());
    return;
  }
  deliver(ep, std::move(message));
}

Status RealEnv::send_from_device(Device& device, uint64_t offset, uint64_t length,
                                 std::string_view to, Message message) {
  const uint64_t cap = device.capacity_bytes();
  if (offset > cap || length > cap - offset) {
    return Status::invalid_argument("send_from_device to " + std::string(to) + ": range [" +
                                    std::to_string(offset) + ", +" + std::to_string(length) +
                                    ") does not fit device " + std::to_string(device.id()) +
                                    " of " + std::to_string(cap) + " bytes");
  }
  {
    std::lock_guard lock(mu_);
    if (hosts_[static_cast<size_t>(device.host())]->down) {
      return Status::unavailable("send_from_device from device " + std::to_string(device.id()) +
                                 " to " + std::string(to) + ": its host " +
                                 std::to_string(device.host()) + " is down");
    }
  }
  Result<Payload> data = device.read(offset, length);
  if (!data.ok()) return data.status();
  message.payload = std::move(*data);
  return send(device.host(), to, std::move(message));
}

// ---- devices, semaphores, randomness

Device& RealEnv::device(DeviceId id) {
  std::lock_guard lock(mu_);
  GRANARY_CHECK(id >= 0 && static_cast<size_t>(id) < devices_.size());
  return *devices_[static_cast<size_t>(id)];
}

std::unique_ptr<Semaphore> RealEnv::make_semaphore(int initial) {
  GRANARY_CHECK(initial >= 0);
  return std::make_unique<RealSemaphore>(*this, initial);
}

MutableBuffer RealEnv::allocate(size_t bytes) {
  return pool_->take(bytes, /*zeroed=*/true);
}

Random& RealEnv::random() {
  Task* t = current_task();
  return t != nullptr ? t->random : random_;
}

}  // namespace granary::realmode

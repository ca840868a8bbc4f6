#include "engine/testing/memory_env.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <span>
#include <utility>

#include "engine/store/device_image.h"

namespace granary::testing {
namespace {

// Thrown from a blocking Env call to unwind a task that the world terminates. Deliberately not
// a std::exception, so that `catch (const std::exception&)` in service code lets it pass.
struct TaskKilled {};

// Completions of a compute job within this many core-seconds count as done (rounding).
constexpr double kComputeEpsilonS = 1e-12;

std::string format_seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", s);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Endpoints, devices, semaphores

class MemoryEnv::MemEndpoint final : public Endpoint {
 public:
  MemEndpoint(MemoryEnv& env, std::string name, HostId host)
      : env_(env), name_(std::move(name)), host_(host) {}

  const std::string& name() const override { return name_; }
  HostId host() const override { return host_; }
  bool bound() const { return host_ >= 0; }
  void bind(HostId host) { host_ = host; }

  Result<Message> recv() override { return receive(std::nullopt); }
  Result<Message> recv(double timeout_s) override { return receive(timeout_s); }
  void set_queue_limit(uint64_t bytes) override { budget_.set_limit(bytes); }
  uint64_t queued_bytes() const override { return budget_.queued(); }
  Status admit(uint64_t wire_bytes) { return budget_.admit(name_, wire_bytes); }

  // Called by the scheduler when a message arrives.
  void deliver(Message message) {
    while (!waiters_.empty()) {
      const Waiter w = waiters_.front();
      waiters_.pop_front();
      if (!env_.waiting(w)) continue;  // gave up (timeout) or was terminated
      env_.find_task(w.task_id)->received = std::move(message);
      env_.wake(w);
      return;
    }
    queue_.push_back(std::move(message));
  }

 private:
  Result<Message> receive(std::optional<double> timeout_s) {
    Task& self = env_.current();
    GRANARY_CHECK(bound() && self.host == host_);  // receive only on the endpoint's host
    if (!queue_.empty()) {
      Message m = std::move(queue_.front());
      queue_.pop_front();
      budget_.taken(m.wire_bytes());
      return m;
    }
    const Waiter w = env_.prepare_wait("recv on " + name_);
    waiters_.push_back(w);
    if (timeout_s) {
      MemoryEnv* env = &env_;
      env_.schedule(env_.now_s_ + std::max(0.0, *timeout_s), [env, w] {
        if (env->waiting(w)) env->wake(w);
      });
    }
    env_.block();
    if (!self.received) {
      return Status::not_found("no message on endpoint " + name_ + " within " +
                               format_seconds(timeout_s.value_or(0)) + " s");
    }
    Message m = std::move(*self.received);
    self.received.reset();
    budget_.taken(m.wire_bytes());
    return m;
  }

  MemoryEnv& env_;
  std::string name_;
  HostId host_;  // -1 until endpoint() creates it on a host
  std::deque<Message> queue_;
  std::deque<Waiter> waiters_;
  EndpointQueueBudget budget_;
};

class MemoryEnv::MemDevice final : public Device {
 public:
  MemDevice(MemoryEnv& env, DeviceId id, HostId host, uint64_t capacity_bytes,
            double read_bytes_per_s, double latency_s)
      : env_(env),
        id_(id),
        host_(host),
        capacity_bytes_(capacity_bytes),
        read_bytes_per_s_(read_bytes_per_s),
        latency_s_(latency_s) {}

  DeviceId id() const override { return id_; }
  HostId host() const override { return host_; }
  uint64_t capacity_bytes() const override { return capacity_bytes_; }

  Result<Payload> read(uint64_t offset, uint64_t length) override {
    if (Status s = check_range(offset, length); !s.ok()) return s;
    wait_for(length, "read on device " + std::to_string(id_));
    return contents(offset, length);
  }

  Status write(uint64_t offset, const Payload& data) override {
    if (Status s = check_range(offset, data.size_bytes); !s.ok()) return s;
    if (data.bytes && data.bytes.size() != data.size_bytes) {
      return Status::invalid_argument("device " + std::to_string(id_) + ": a write of " +
                                      std::to_string(data.size_bytes) + " bytes carries " +
                                      std::to_string(data.bytes.size()) + " bytes of data");
    }
    if (Status s = use_power(); !s.ok()) return s;
    wait_for(data.size_bytes, "write on device " + std::to_string(id_));
    if (data.bytes && data.size_bytes > 0) {
      holds_data_ = true;
      current_.write(offset, data.bytes.span());
      unflushed_.push_back(Unflushed{offset, data.bytes});
    }
    return Status::ok_status();
  }

  Status flush() override {
    if (Status s = use_power(); !s.ok()) return s;
    wait_for(0, "flush on device " + std::to_string(id_));
    for (const Unflushed& w : unflushed_) durable_.write(w.offset, w.bytes.span());
    unflushed_.clear();
    return Status::ok_status();
  }

  // The payload of a read: bytes once the device holds data, a size otherwise.
  Payload contents(uint64_t offset, uint64_t length) const {
    if (!holds_data_) return Payload::of_size(length);
    MutableBuffer out = env_.allocate(length);
    current_.read(offset, out.span());
    return Payload::of(std::move(out).freeze());
  }

  CrashReport crash(uint64_t seed) {
    Random rng(seed);
    CrashReport report;
    for (const Unflushed& w : unflushed_) {
      const uint64_t len = w.bytes.size();
      const uint64_t first = w.offset / kSectorBytes;
      const uint64_t sectors = (w.offset + len - 1) / kSectorBytes - first + 1;
      switch (rng.uniform(3)) {
        case 0:
          durable_.write(w.offset, w.bytes.span());
          ++report.kept;
          break;
        case 1:
          ++report.dropped;
          break;
        default:
          if (sectors < 2) {  // a one-sector write cannot tear: it is lost
            ++report.dropped;
            break;
          }
          const uint64_t keep = 1 + rng.uniform(sectors - 1);  // 1 .. sectors - 1
          const uint64_t end = (first + keep) * kSectorBytes;
          durable_.write(w.offset, w.bytes.slice(0, end - w.offset).span());
          ++report.torn;
          break;
      }
    }
    unflushed_.clear();
    current_ = durable_;
    power_left_.reset();
    return report;
  }

  void cut_power_after(uint64_t operations) { power_left_ = operations; }
  uint64_t unflushed_writes() const { return unflushed_.size(); }

  Status check_range(uint64_t offset, uint64_t length) const {
    if (offset > capacity_bytes_ || length > capacity_bytes_ - offset) {
      return Status::invalid_argument("device " + std::to_string(id_) + ": range [" +
                                      std::to_string(offset) + ", +" + std::to_string(length) +
                                      ") is beyond its capacity of " +
                                      std::to_string(capacity_bytes_) + " bytes");
    }
    return Status::ok_status();
  }

  // Reserves the device for one operation starting no earlier than now. Returns when the
  // first byte is available and when the operation completes.
  std::pair<double, double> reserve(uint64_t length) {
    const double start = std::max(env_.now_s_, free_at_s_);
    const double data_at = start + latency_s_;
    free_at_s_ = data_at + static_cast<double>(length) / read_bytes_per_s_;
    return {data_at, free_at_s_};
  }

 private:
  void wait_for(uint64_t length, std::string what) {
    const double done = reserve(length).second;
    const Waiter w = env_.prepare_wait(std::move(what));
    env_.wake_at(done, w);
    env_.block();
  }

  static constexpr uint64_t kSectorBytes = 512;

  struct Unflushed {
    uint64_t offset;
    Buffer bytes;
  };

  Status use_power() {
    if (!power_left_) return Status::ok_status();
    if (*power_left_ == 0) {
      return Status::io_error("device " + std::to_string(id_) + " lost power");
    }
    --*power_left_;
    return Status::ok_status();
  }

  MemoryEnv& env_;
  DeviceId id_;
  HostId host_;
  uint64_t capacity_bytes_;
  double read_bytes_per_s_;
  double latency_s_;
  double free_at_s_ = 0;
  bool holds_data_ = false;
  store::DeviceImage current_;  // what reads see
  store::DeviceImage durable_;  // what survives a crash
  std::vector<Unflushed> unflushed_;
  std::optional<uint64_t> power_left_;  // writes and flushes left before the power goes
};

class MemoryEnv::MemSemaphore final : public Semaphore {
 public:
  MemSemaphore(MemoryEnv& env, int initial) : env_(env), state_(std::make_shared<State>()) {
    state_->count = initial;
  }

  void acquire() override {
    if (state_->count >
        0) {  // allowed outside tasks too (reading a service's counters after a run)
      --state_->count;
      return;
    }
    const Waiter w = env_.prepare_wait("semaphore");
    state_->waiters.push_back(w);
    env_.block();  // the releaser handed its permit over
  }

  void release() override { release(env_, state_); }

 private:
  // Shared with the hand-offs under way, which may outlive the semaphore.
  struct State {
    int count = 0;
    std::deque<Waiter> waiters;
  };

  static void release(MemoryEnv& env, const std::shared_ptr<State>& state) {
    while (!state->waiters.empty()) {
      const Waiter w = state->waiters.front();
      state->waiters.pop_front();
      if (!env.waiting(w)) continue;  // cancelled or terminated
      // The permit is the waiter's from now on; should it be cancelled before it runs again,
      // the permit goes back (to the next waiter) instead of being lost.
      env.schedule(env.now_s_, [&env, state, w] {
        if (env.waiting(w)) {
          env.wake(w);
        } else {
          release(env, state);
        }
      });
      return;
    }
    ++state->count;
  }

  MemoryEnv& env_;
  std::shared_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// World building

MemoryEnv::MemoryEnv(uint64_t seed) : random_(seed) {}

MemoryEnv::~MemoryEnv() {
  kill_all();
}

HostId MemoryEnv::add_host(std::string name, int cores, double nic_bytes_per_s, double latency_s) {
  GRANARY_CHECK(cores >= 1 && nic_bytes_per_s > 0 && latency_s >= 0);
  Host h;
  h.name = std::move(name);
  h.cores = cores;
  h.nic_bytes_per_s = nic_bytes_per_s;
  h.latency_s = latency_s;
  hosts_.push_back(std::move(h));
  return static_cast<HostId>(hosts_.size() - 1);
}

DeviceId MemoryEnv::add_device(HostId host, uint64_t capacity_bytes, double read_bytes_per_s,
                               double latency_s) {
  GRANARY_CHECK(host >= 0 && host < host_count());
  GRANARY_CHECK(read_bytes_per_s > 0 && latency_s >= 0);
  const auto id = static_cast<DeviceId>(devices_.size());
  devices_.push_back(
      std::make_unique<MemDevice>(*this, id, host, capacity_bytes, read_bytes_per_s, latency_s));
  return id;
}

CrashReport MemoryEnv::crash_device(DeviceId id, uint64_t seed) {
  GRANARY_CHECK(id >= 0 && static_cast<size_t>(id) < devices_.size());
  GRANARY_CHECK(running_ == nullptr);  // between runs
  return devices_[static_cast<size_t>(id)]->crash(seed);
}

void MemoryEnv::cut_power_after(DeviceId id, uint64_t operations) {
  GRANARY_CHECK(id >= 0 && static_cast<size_t>(id) < devices_.size());
  devices_[static_cast<size_t>(id)]->cut_power_after(operations);
}

uint64_t MemoryEnv::unflushed_writes(DeviceId id) const {
  GRANARY_CHECK(id >= 0 && static_cast<size_t>(id) < devices_.size());
  return devices_[static_cast<size_t>(id)]->unflushed_writes();
}

const std::string& MemoryEnv::host_name(HostId host) const {
  GRANARY_CHECK(host >= 0 && host < host_count());
  return hosts_[static_cast<size_t>(host)].name;
}

std::vector<std::string> MemoryEnv::live_tasks() const {
  std::vector<std::string> names;
  for (const auto& [id, t] : tasks_) names.push_back(t->name);
  return names;
}

// ---------------------------------------------------------------------------------------------
// Scheduler

void MemoryEnv::schedule(double time_s, std::function<void()> action) {
  events_.push_back(Event{time_s, next_seq_++, std::move(action)});
  std::push_heap(events_.begin(), events_.end(), EventLater{});
}

MemoryEnv::Task& MemoryEnv::current() {
  GRANARY_CHECK(running_ != nullptr);  // blocking Env calls are made from tasks
  return *running_;
}

MemoryEnv::Task* MemoryEnv::find_task(uint64_t id) {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : it->second.get();
}

bool MemoryEnv::waiting(const Waiter& w) {
  const Task* t = find_task(w.task_id);
  return t != nullptr && t->state == TaskState::kBlocked && t->wait_gen == w.gen && !t->kill;
}

MemoryEnv::Waiter MemoryEnv::prepare_wait(std::string blocked_on) {
  Task& t = current();
  t.blocked_on = std::move(blocked_on);
  return Waiter{t.id, ++t.wait_gen};
}

void MemoryEnv::block() {
  Task& t = current();
  t.state = TaskState::kBlocked;
  {
    std::unique_lock<std::mutex> lock(mu_);
    running_ = nullptr;
    scheduler_cv_.notify_one();
    t.cv.wait(lock, [&] { return running_ == &t; });
  }
  if (t.kill) throw TaskKilled{};
}

void MemoryEnv::resume(Task& task) {
  GRANARY_CHECK(running_ == nullptr);  // only the scheduler resumes tasks
  GRANARY_CHECK(task.state == TaskState::kNew || task.state == TaskState::kBlocked);
  task.state = TaskState::kRunning;
  {
    std::unique_lock<std::mutex> lock(mu_);
    running_ = &task;
    task.cv.notify_one();
    scheduler_cv_.wait(lock, [&] { return running_ == nullptr; });
  }
  if (task.state == TaskState::kDone) reap(task);
}

void MemoryEnv::wake(const Waiter& w) {
  if (!waiting(w)) return;
  resume(*find_task(w.task_id));
}

void MemoryEnv::wake_at(double time_s, Waiter w) {
  schedule(time_s, [this, w] { wake(w); });
}

void MemoryEnv::task_main(Task* task) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    task->cv.wait(lock, [&] { return running_ == task; });
  }
  if (!task->kill) {
    try {
      task->body();
    } catch (const TaskKilled&) {
      // terminated by the world
    } catch (const std::exception& e) {
      task->failure = e.what();
    } catch (...) {
      task->failure = "an exception that is not a std::exception";
    }
  }
  task->body = nullptr;  // the task's captures die on its own thread
  std::lock_guard<std::mutex> lock(mu_);
  task->state = TaskState::kDone;
  running_ = nullptr;
  scheduler_cv_.notify_one();
}

void MemoryEnv::reap(Task& task) {
  task.thread.join();
  for (const Waiter& w : task.joiners) wake_at(now_s_, w);
  if (!task.failure.empty() && task_failure_.empty()) {
    task_failure_ = "task '" + task.name + "' on host " + hosts_[task.host].name +
                    " ended with an exception: " + task.failure;
  }
  tasks_.erase(task.id);
}

void MemoryEnv::kill_all() {
  GRANARY_CHECK(running_ == nullptr);
  while (!tasks_.empty()) {
    Task& t = *tasks_.begin()->second;
    t.kill = true;
    resume(t);  // unwinds it; reap() forgets it
  }
  for (Host& h : hosts_) {
    h.jobs.clear();
    ++h.compute_gen;
  }
}

Status MemoryEnv::run(const MemoryRunOptions& options) {
  GRANARY_CHECK(running_ == nullptr && !running_run_);  // not from a task, not re-entered
  running_run_ = true;
  Status result;
  while (true) {
    if (!task_failure_.empty()) {
      result = Status::io_error(task_failure_);
      task_failure_.clear();
      break;
    }
    const bool work_left = std::any_of(tasks_.begin(), tasks_.end(),
                                       [](const auto& kv) { return !kv.second->daemon; });
    if (!work_left) break;
    if (events_.empty()) {
      std::string msg = "deadlock at t=" + format_seconds(now_s_) +
                        " s: every task is blocked and nothing is scheduled:";
      for (bool daemons : {false, true}) {
        for (const auto& [id, t] : tasks_) {
          if (t->daemon != daemons) continue;
          msg += " '" + t->name + "'" + (t->daemon ? " [daemon]" : "") + " on " +
                 hosts_[t->host].name + " (" + t->blocked_on + ");";
        }
      }
      msg.pop_back();
      result = Status::io_error(msg);
      break;
    }
    if (events_.front().time_s > options.max_time_s) {
      std::string msg = "virtual time limit of " + format_seconds(options.max_time_s) +
                        " s reached with tasks still running:";
      for (const auto& [id, t] : tasks_) {
        if (!t->daemon) msg += " '" + t->name + "'";
      }
      result = Status::io_error(msg);
      break;
    }
    std::pop_heap(events_.begin(), events_.end(), EventLater{});
    Event ev = std::move(events_.back());
    events_.pop_back();
    now_s_ = ev.time_s;
    ++events_processed_;
    ev.action();
  }
  kill_all();
  running_run_ = false;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Env

void MemoryEnv::sleep_s(double seconds) {
  const Waiter w = prepare_wait("sleep");
  wake_at(now_s_ + std::max(0.0, seconds), w);
  block();
}

double MemoryEnv::host_rate(const Host& h) const {
  const auto n = static_cast<double>(h.jobs.size());
  return n <= h.cores ? 1.0 : static_cast<double>(h.cores) / n;
}

void MemoryEnv::advance_compute(Host& h) {
  const double elapsed = now_s_ - h.jobs_updated_at_s;
  if (!h.jobs.empty() && elapsed > 0) {
    const double done = elapsed * host_rate(h);
    for (ComputeJob& j : h.jobs) j.remaining_core_s -= done;
  }
  h.jobs_updated_at_s = now_s_;
}

void MemoryEnv::reschedule_compute(HostId host) {
  Host& h = hosts_[static_cast<size_t>(host)];
  const uint64_t gen = ++h.compute_gen;
  if (h.jobs.empty()) return;
  double min_remaining = h.jobs.front().remaining_core_s;
  for (const ComputeJob& j : h.jobs) min_remaining = std::min(min_remaining, j.remaining_core_s);
  const double at = now_s_ + std::max(0.0, min_remaining) / host_rate(h);
  schedule(at, [this, host, gen] {
    Host& hh = hosts_[static_cast<size_t>(host)];
    if (hh.compute_gen != gen) return;  // the job set changed since
    advance_compute(hh);
    std::vector<Waiter> finished;
    std::erase_if(hh.jobs, [&](const ComputeJob& j) {
      if (j.remaining_core_s > kComputeEpsilonS) return false;
      finished.push_back(j.waiter);
      return true;
    });
    reschedule_compute(host);
    for (const Waiter& w : finished) wake(w);
  });
}

void MemoryEnv::compute_s(double core_seconds) {
  Task& t = current();
  if (core_seconds <= 0) return;
  Host& h = hosts_[static_cast<size_t>(t.host)];
  advance_compute(h);
  h.jobs.push_back(ComputeJob{prepare_wait("compute on " + h.name), core_seconds});
  reschedule_compute(t.host);
  block();
}

TaskId MemoryEnv::spawn(HostId host, std::string name, std::function<void()> task,
                        TaskOptions options) {
  GRANARY_CHECK(host >= 0 && host < host_count());
  auto t = std::make_unique<Task>();
  t->id = next_task_id_++;
  t->name = std::move(name);
  t->host = host;
  t->daemon = options.daemon;
  t->body = std::move(task);
  t->blocked_on = "not started";
  Task* raw = t.get();
  const uint64_t id = t->id;
  tasks_.emplace(id, std::move(t));
  raw->thread = std::thread(&MemoryEnv::task_main, this, raw);
  schedule(now_s_, [this, id] {
    Task* task = find_task(id);
    if (task != nullptr && task->state == TaskState::kNew && !task->kill) resume(*task);
  });
  return id;
}

Status MemoryEnv::join(TaskId id) {
  Task& self = current();
  if (id >= next_task_id_) {
    return Status::invalid_argument("join: no task " + std::to_string(id) + " was spawned");
  }
  if (id == self.id) {
    return Status::invalid_argument("join: task '" + self.name + "' cannot join itself");
  }
  Task* target = find_task(id);
  if (target == nullptr) return Status::ok_status();  // already ended
  const Waiter w = prepare_wait("join of '" + target->name + "'");
  target->joiners.push_back(w);
  block();
  return Status::ok_status();
}

Status MemoryEnv::cancel(TaskId id) {
  if (id >= next_task_id_) {
    return Status::invalid_argument("cancel: no task " + std::to_string(id) + " was spawned");
  }
  if (running_ != nullptr && running_->id == id) {
    return Status::invalid_argument("cancel: task '" + running_->name +
                                    "' cannot cancel itself (it ends by returning)");
  }
  Task* target = find_task(id);
  if (target == nullptr || target->kill) return Status::ok_status();  // ended, or ending
  target->kill = true;                                                // no wake-up resumes it now
  // Its computation stops sharing the host's cores.
  Host& h = hosts_[static_cast<size_t>(target->host)];
  if (std::any_of(h.jobs.begin(), h.jobs.end(),
                  [id](const ComputeJob& j) { return j.waiter.task_id == id; })) {
    advance_compute(h);
    std::erase_if(h.jobs, [id](const ComputeJob& j) { return j.waiter.task_id == id; });
    reschedule_compute(target->host);
  }
  // Unwinds it now (at this time, after the tasks already due).
  schedule(now_s_, [this, id] {
    Task* t = find_task(id);
    if (t != nullptr && (t->state == TaskState::kNew || t->state == TaskState::kBlocked))
      resume(*t);
  });
  return Status::ok_status();
}

MemoryEnv::MemEndpoint& MemoryEnv::endpoint_by_name(std::string_view name) {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end()) {
    it =
        endpoints_
            .emplace(std::string(name), std::make_unique<MemEndpoint>(*this, std::string(name), -1))
            .first;
  }
  return *it->second;
}

Endpoint& MemoryEnv::endpoint(HostId host, std::string_view name) {
  GRANARY_CHECK(host >= 0 && host < host_count());
  MemEndpoint& ep = endpoint_by_name(name);
  if (!ep.bound()) ep.bind(host);
  GRANARY_CHECK(ep.host() == host);  // an endpoint lives on one host
  return ep;
}

Result<HostId> MemoryEnv::host_of(std::string_view name) const {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end() || !it->second->bound()) {
    return Status::not_found("no endpoint called '" + std::string(name) + "' has been created");
  }
  return it->second->host();
}

double MemoryEnv::transfer(HostId from, uint64_t bytes, double ready_at_s) {
  Host& h = hosts_[static_cast<size_t>(from)];
  const double start = std::max(ready_at_s, h.nic_free_at_s);
  h.nic_free_at_s = start + static_cast<double>(bytes) / h.nic_bytes_per_s;
  return h.nic_free_at_s;
}

void MemoryEnv::deliver(MemEndpoint& ep, Message message) {
  ep.deliver(std::move(message));
}

void MemoryEnv::set_host_down(HostId host, bool down) {
  GRANARY_CHECK(host >= 0 && host < host_count());
  hosts_[static_cast<size_t>(host)].down = down;
}

bool MemoryEnv::host_down(HostId host) const {
  GRANARY_CHECK(host >= 0 && host < host_count());
  return hosts_[static_cast<size_t>(host)].down;
}

Status MemoryEnv::check_reachable(HostId from, const MemEndpoint& to) const {
  const HostId dead = hosts_[static_cast<size_t>(from)].down                      ? from
                      : to.bound() && hosts_[static_cast<size_t>(to.host())].down ? to.host()
                                                                                  : -1;
  if (dead < 0) return Status::ok_status();
  return Status::unavailable("send from host " + hosts_[static_cast<size_t>(from)].name +
                             " to endpoint " + to.name() + ": host " +
                             hosts_[static_cast<size_t>(dead)].name + " is down");
}

Status MemoryEnv::send(HostId from, std::string_view to, Message message) {
  GRANARY_CHECK(from >= 0 && from < host_count());
  MemEndpoint& ep = endpoint_by_name(to);
  if (Status s = check_reachable(from, ep); !s.ok()) return s;
  if (Status s = ep.admit(message.wire_bytes()); !s.ok()) return s;
  double at = now_s_;
  if (!(ep.bound() && ep.host() == from)) {
    at = transfer(from, message.wire_bytes(), now_s_) + hosts_[static_cast<size_t>(from)].latency_s;
  }
  MemEndpoint* target = &ep;
  schedule(at,
           [this, target, m = std::move(message)]() mutable { deliver(*target, std::move(m)); });
  return Status::ok_status();
}

Status MemoryEnv::send_from_device(Device& device, uint64_t offset, uint64_t length,
                                   std::string_view to, Message message) {
  GRANARY_CHECK(device.id() >= 0 && static_cast<size_t>(device.id()) < devices_.size());
  MemDevice& dev = *devices_[static_cast<size_t>(device.id())];
  GRANARY_CHECK(&dev == &device);  // a device of this world
  if (Status s = dev.check_range(offset, length); !s.ok()) return s;
  const HostId host = dev.host();
  MemEndpoint& ep = endpoint_by_name(to);
  if (Status s = check_reachable(host, ep); !s.ok()) return s;
  message.payload = Payload::of_size(length);  // for its wire bytes
  if (Status s = ep.admit(message.wire_bytes()); !s.ok()) return s;
  const auto [data_at, dev_done] = dev.reserve(length);
  message.payload = dev.contents(offset, length);
  double at = dev_done;
  if (!(ep.bound() && ep.host() == host)) {
    const double nic_done = transfer(host, message.wire_bytes(), data_at);
    at = std::max(dev_done, nic_done) + hosts_[static_cast<size_t>(host)].latency_s;
  }
  MemEndpoint* target = &ep;
  schedule(at,
           [this, target, m = std::move(message)]() mutable { deliver(*target, std::move(m)); });
  return Status::ok_status();
}

Device& MemoryEnv::device(DeviceId id) {
  GRANARY_CHECK(id >= 0 && static_cast<size_t>(id) < devices_.size());
  return *devices_[static_cast<size_t>(id)];
}

std::unique_ptr<Semaphore> MemoryEnv::make_semaphore(int initial) {
  GRANARY_CHECK(initial >= 0);
  return std::make_unique<MemSemaphore>(*this, initial);
}

}  // namespace granary::testing

// MemoryEnv: a deterministic in-memory Env with a virtual clock, for unit tests of the services
// of engine/ (OSD, metadata server, client, GPU consumer) without SimGrid or hardware.
//
// Tasks. Every spawned task is a std::thread, but exactly one of them runs at a time: a task
// runs until it blocks in an Env call (sleep, compute, recv, device read, semaphore) and then
// hands control back to the scheduler, the thread that called run(). Threads are used only so
// that service code can block in the middle of ordinary C++ functions (the same code runs on
// SimGrid actors and on real threads); this is the one place in engine/ allowed to use
// std::thread, and it is built as its own library (granary_engine_testing).
//
// Scheduling. The scheduler pops wake-ups from a priority queue ordered by (virtual time,
// sequence number); the sequence number is assigned when the wake-up is scheduled, so ties run
// in the order they were caused and a run is a pure function of the world, the seed and the
// tasks. Virtual time jumps from one wake-up to the next; nothing depends on the real clock.
//
// Models (simple on purpose: they are for unit tests, not accuracy; sim/ is the accurate world):
//  - sleep_s(d): wakes at now + d. sleep_s(0) yields: tasks already due at this time run first.
//  - compute_s(w): processor sharing on the calling task's host: with n computations on a host
//    of c cores, each progresses at min(1, c / n) core-seconds per second.
//  - send(from, to, m): a message to an endpoint on the sending host is delivered at once.
//    Otherwise it occupies the sender's NIC for m.wire_bytes() / nic_bytes_per_s(from),
//    after every transfer the sender started before (FIFO per sending host), and arrives
//    latency_s(from) after its last byte left:
//        start = max(now, nic_free(from)); nic_free(from) = start + bytes / bandwidth;
//        delivered = nic_free(from) + latency_s(from).
//    Only the sender's NIC is modelled (no receiver-side contention, no fabric); the latency
//    of a host is the one-way latency of what leaves it, so a round trip between hosts a and b
//    costs latency_s(a) + latency_s(b).
//  - Devices: read(offset, length) and write() occupy the device for latency_s +
//    length / read_bytes_per_s (writes use the read bandwidth), FIFO per device (queue depth
//    one); the calling task wakes when its operation completes; flush() occupies it for
//    latency_s. Contents: a device keeps the bytes of every write whose payload carries bytes
//    (sparse, in 4 KiB blocks) and, once it has been given bytes, returns bytes on read
//    (never-written ranges read as zeros); until then, and for size-only writes, it is the
//    size-only device it always was (reads return sizes, no memory is used).
//  - Crashes (Env's Device durability contract, engine/env.h): the device remembers the writes
//    made since its last flush. crash_device(id, seed) is a power loss: each such write is,
//    by a choice seeded by `seed`, kept, dropped or torn (a prefix of its 512-byte sectors
//    kept, at least one and not all), in the order they were made; flushed bytes never change.
//    This is FoundationDB's AsyncFileNonDurable. cut_power_after(id, n) makes the device fail
//    every write and flush after the next n (the power went while the service was running)
//    until the crash.
//  - send_from_device(dev, off, len, to, m): the device part as a read (dev_start = max(now,
//    dev_free), data_at = dev_start + latency, dev_done = data_at + len / read_bw); the NIC
//    transfer of m.wire_bytes() (header + len) starts when the first data is there and the NIC
//    is free (nic_start = max(data_at, nic_free)), nic_done = nic_start + wire / nic_bw; the
//    message arrives at max(dev_done, nic_done) + latency_s(host of dev), or at
//    max(dev_done, nic_done) when `to` is on the device's host. The payload size is `len`.
//    A range beyond the device's capacity is refused (InvalidArgument) and nothing is sent.
//  - Endpoints: FIFO queues; a recv() blocks until a message is delivered; waiting receivers
//    are served in the order they started waiting. A message sent to a name nobody has asked
//    for yet is kept until endpoint() creates it.
//  - Tasks: spawn() numbers tasks 0, 1, ... in spawn order. join() blocks until the task is
//    reaped. cancel() marks the task and resumes it at the current time (after the wake-ups
//    already due), so that it unwinds from the call it is blocked in; its compute job leaves
//    its host at once, and a semaphore permit handed to it before it ran again goes back.
//  - Hosts down: set_host_down(h) makes send and send_from_device refuse (kUnavailable) what
//    leaves h or goes to an endpoint on h; messages already scheduled are still delivered.
//  - Queue limits: Endpoint::set_queue_limit counts the wire bytes sent to an endpoint and not
//    yet received (from the send on), as engine/env.h says.
//  - Semaphores: FIFO hand-off to waiters. An acquire that would not block may also be made
//    outside tasks (e.g. to read a service's counters after a run).
//
// run() runs until no non-daemon task is left; then daemon tasks are terminated (as in
// SimGrid). If every remaining task is blocked and nothing is scheduled, run() returns an
// error naming the blocked tasks (deadlock). Terminating a task unwinds its stack with an
// internal exception that does not derive from std::exception, thrown from the Env call it is
// blocked in; service code must not swallow it with catch (...). A task that lets a
// std::exception escape ends the run with an error.
//
// Thread-safety: the world builder (add_host, add_device) and run() are called from one
// thread, outside tasks. Env methods are called from tasks (spawn, endpoint, send and now_s
// also from the building thread, before or between runs). Because only one task runs at a
// time, tasks may share plain data without locks in this Env (not in real mode).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/env.h"

namespace granary::testing {

// What crash_device did to the writes that had not been flushed.
struct CrashReport {
  uint64_t kept = 0;
  uint64_t dropped = 0;
  uint64_t torn = 0;
};

struct MemoryRunOptions {
  // Safety net for tests: stop with an error instead of running past this virtual time.
  double max_time_s = std::numeric_limits<double>::infinity();
};

class MemoryEnv final : public Env {
 public:
  explicit MemoryEnv(uint64_t seed);
  // Terminates the tasks that are still alive (never started, or left by a failed run).
  ~MemoryEnv() override;
  MemoryEnv(const MemoryEnv&) = delete;
  MemoryEnv& operator=(const MemoryEnv&) = delete;

  // ---- world building
  // A host with `cores` cores (>= 1) and a NIC of `nic_bytes_per_s` (> 0) whose messages take
  // `latency_s` (>= 0) one way. Hosts are numbered 0, 1, ... in the order they are added.
  HostId add_host(std::string name, int cores, double nic_bytes_per_s, double latency_s);
  // A drive on `host`; devices are numbered 0, 1, ... in the order they are added.
  DeviceId add_device(HostId host, uint64_t capacity_bytes, double read_bytes_per_s,
                      double latency_s);

  // ---- crashes (outside tasks, between runs; see the header comment)
  // Power loss on device `id`: resolves its unflushed writes by `seed` and restores power.
  CrashReport crash_device(DeviceId id, uint64_t seed);
  // Device `id` accepts `operations` more writes and flushes, then fails the rest with an I/O
  // error until crash_device.
  void cut_power_after(DeviceId id, uint64_t operations);
  // Writes made to device `id` since its last flush (its data at risk in a crash).
  uint64_t unflushed_writes(DeviceId id) const;

  // Marks `host` down (or up again): sends from it and to its endpoints fail with kUnavailable
  // (engine/env.h, "Hosts that go down"). From tasks or the building thread.
  void set_host_down(HostId host, bool down);
  bool host_down(HostId host) const;

  const std::string& host_name(HostId host) const;
  int host_count() const { return static_cast<int>(hosts_.size()); }

  // Runs the world (see the header comment). OK when every non-daemon task finished.
  Status run(const MemoryRunOptions& options = {});

  // Names of the tasks alive now, in spawn order (for tests and error messages).
  std::vector<std::string> live_tasks() const;
  // Wake-ups processed so far (a cheap fingerprint of a run, for determinism tests).
  uint64_t events_processed() const { return events_processed_; }

  // ---- Env
  double now_s() const override { return now_s_; }
  void sleep_s(double seconds) override;
  void compute_s(double core_seconds) override;
  TaskId spawn(HostId host, std::string name, std::function<void()> task,
               TaskOptions options = {}) override;
  Status join(TaskId id) override;
  Status cancel(TaskId id) override;
  Endpoint& endpoint(HostId host, std::string_view name) override;
  Result<HostId> host_of(std::string_view name) const override;
  Status send(HostId from, std::string_view to, Message message) override;
  Status send_from_device(Device& device, uint64_t offset, uint64_t length, std::string_view to,
                          Message message) override;
  Device& device(DeviceId id) override;
  std::unique_ptr<Semaphore> make_semaphore(int initial) override;
  Random& random() override { return random_; }

 private:
  class MemEndpoint;
  class MemDevice;
  class MemSemaphore;
  friend class MemEndpoint;
  friend class MemDevice;
  friend class MemSemaphore;

  enum class TaskState { kNew, kRunning, kBlocked, kDone };

  // A registration of a blocked task: valid while the task still waits with that generation.
  struct Waiter {
    uint64_t task_id = 0;
    uint64_t gen = 0;
  };

  struct Task {
    uint64_t id = 0;
    std::string name;
    HostId host = 0;
    bool daemon = false;
    std::function<void()> body;
    std::thread thread;
    std::condition_variable cv;
    TaskState state = TaskState::kNew;
    uint64_t wait_gen = 0;            // incremented each time the task blocks
    std::string blocked_on;           // what it waits for, for deadlock reports
    bool kill = false;                // set before resuming a task that must terminate
    std::optional<Message> received;  // handed over by a delivery
    std::string failure;              // what() of an exception that escaped the body
    std::vector<Waiter> joiners;      // tasks blocked in join() on this one
  };

  struct ComputeJob {
    Waiter waiter;
    double remaining_core_s = 0;
  };

  struct Host {
    std::string name;
    int cores = 1;
    double nic_bytes_per_s = 0;
    double latency_s = 0;
    double nic_free_at_s = 0;
    bool down = false;
    std::vector<ComputeJob> jobs;
    double jobs_updated_at_s = 0;
    uint64_t compute_gen = 0;  // invalidates scheduled completions when the job set changes
  };

  struct Event {
    double time_s;
    uint64_t seq;
    std::function<void()> action;
  };
  struct EventLater {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_s != b.time_s ? a.time_s > b.time_s : a.seq > b.seq;
    }
  };

  void schedule(double time_s, std::function<void()> action);
  Task& current();  // the running task (checks that one runs)
  Task* find_task(uint64_t id);
  bool waiting(const Waiter& w);  // the task still waits with that generation
  Waiter prepare_wait(std::string blocked_on);
  void block();                // called by the running task: yield until resumed
  void resume(Task& task);     // called by the scheduler: run `task` until it blocks
  void wake(const Waiter& w);  // resumes the waiter now if still waiting
  void wake_at(double time_s, Waiter w);
  void task_main(Task* task);
  void reap(Task& task);  // joins a finished task and forgets it
  void kill_all();
  double host_rate(const Host& h) const;
  void advance_compute(Host& h);
  void reschedule_compute(HostId host);
  double transfer(HostId from, uint64_t bytes, double ready_at_s);
  void deliver(MemEndpoint& ep, Message message);
  // OK, or kUnavailable when `from` or the host of `to` is down.
  Status check_reachable(HostId from, const MemEndpoint& to) const;
  MemEndpoint& endpoint_by_name(std::string_view name);

  Random random_;
  double now_s_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t next_task_id_ = 0;
  uint64_t events_processed_ = 0;
  bool running_run_ = false;
  std::vector<Event> events_;  // a heap ordered by EventLater
  std::vector<Host> hosts_;
  std::vector<std::unique_ptr<MemDevice>> devices_;
  std::map<std::string, std::unique_ptr<MemEndpoint>, std::less<>> endpoints_;
  std::map<uint64_t, std::unique_ptr<Task>> tasks_;  // alive tasks, by id (= spawn order)
  std::string task_failure_;

  // Hand-off between the scheduler and the tasks.
  std::mutex mu_;
  std::condition_variable scheduler_cv_;
  Task* running_ = nullptr;  // guarded by mu_ for the hand-off; null while the scheduler runs
};

}  // namespace granary::testing

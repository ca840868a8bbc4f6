// RealEnv: engine/env.h on the real world — one thread per task, the monotonic clock, drives
// that are real Devices (UringDevice: io_uring with O_DIRECT), and real waiting.
//
// The services of engine/ run on it unchanged; it passes the Env conformance suite
// (tests/engine/env_conformance.h) except where the contract itself allows a real world to
// differ: the clock is wall time (a time is "at least" what the formula says, within the
// scheduler's jitter), runs are not reproducible event by event, and a drive cannot be
// power-cut from a test (crash tests kill the daemon process instead).
//
// What each call does:
//  - Tasks are std::threads, started by run() (those spawned before it) or at once (those
//    spawned while the world runs). now_s() is steady_clock time since the first run() began,
//    frozen when a run ends (at the moment its last non-daemon task ended) and continued by a
//    later run().
//  - Blocking calls (sleep_s, recv, compute_s, acquire, join) wait on the calling task's own
//    condition variable under the Env's one mutex; cancel() marks the task and wakes it, and
//    the wait throws an internal exception (not a std::exception) that unwinds the task, taking
//    it out of the queue it waited in. Device operations, which hold no Env lock, complete.
//  - compute_s(w) emulates w core-seconds on the host's `cores` by processor sharing in wall
//    time: the task waits while its share of the host's cores works it off, recomputed each
//    time a computation starts or ends on the host. No CPU is burnt: the host being modelled
//    (a GPU node, a storage server's cores) is not the machine running the daemon.
//  - Messages: a message to an endpoint of the sender's own host is delivered at once; one to
//    another host crosses the sender's modelled NIC: messages larger than kSmallMessageBytes
//    are serialised on it at nic_bytes_per_s (FIFO, so messages that leave together share it)
//    and every message arrives latency_s after it left. This is the transport's shaping in user
//    space (this kernel has no netem; tc tbf shapes the namespace links in multi-host runs,
//    where the NIC model is off: nic_bytes_per_s 0). Delayed deliveries wait in a heap that a
//    delivery thread empties at their times; deliveries at the same time keep send order.
//  - send_from_device reads the range in the calling thread (io_uring, no Env lock held), then
//    sends it: the read is not overlapped with the transfer.
//  - Hosts of other processes (attach_transport below): their messages travel through the
//    Transport (libfabric), after the same NIC model. During a run, such a message is queued for
//    its host's sender thread, which hands the host's messages to the transport in order: a
//    send never waits on another host's connection (a dead peer's handshake timeout holds up
//    only what goes to it, as a messenger's per-connection queues do). When the transport
//    cannot reach the host, what was queued for it is dropped (logged once per outage) and
//    sends to it are refused for retry_down_s. run() returns once the senders have handed over
//    everything the run sent; outside a run, a send goes through the transport at once.
//  - random(): each task has its own stream, seeded from the world's seed and the task's id, so
//    tasks never share a generator across threads; outside tasks, the world's stream.
//
// run() runs until no non-daemon task is left, then cancels the daemons and joins every
// thread. A task that lets a std::exception escape ends the run with an error naming it (the
// other tasks are cancelled); so does passing options.max_time_s. A daemon task must block in
// Env calls (or return) to be cancellable: a thread spinning outside the Env is waited for.
//
// Thread-safety: every Env, Endpoint, Device and Semaphore method may be called from any task
// at once. The builder (add_host, add_device) and run() are called from one thread, outside
// tasks; spawn, endpoint, send, cancel and set_host_down also from it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/env.h"
#include "realmode/buffer_pool.h"
#include "realmode/transport.h"

namespace granary::realmode {

struct RealHostOptions {
  std::string name;
  // A host of this process (its tasks, endpoints and drives live here), or another process's,
  // reached through the transport (attach_transport).
  bool local = true;
  int cores = 1;  // the cores compute_s shares (>= 1)
  // The NIC modelled in user space for what leaves the host: bytes per second for messages
  // larger than kSmallMessageBytes (0: not paced, the real link's own speed) and the one-way
  // latency added to every message to another host (seconds, >= 0).
  double nic_bytes_per_s = 0;
  double latency_s = 0;
};

struct RealRunOptions {
  // Wall-clock seconds of world time after which run() cancels every task and fails (0: none).
  double max_time_s = 0;
};

class RealEnv final : public Env {
 public:
  explicit RealEnv(uint64_t seed);
  // Requires that no run is in progress.
  ~RealEnv() override;
  RealEnv(const RealEnv&) = delete;
  RealEnv& operator=(const RealEnv&) = delete;

  // Adds a host (ids 0, 1, ... in order). InvalidArgument for cores < 1 or a negative or
  // non-finite rate or latency.
  Result<HostId> add_host(const RealHostOptions& options);
  // Adds a drive (ids 0, 1, ... in order): its id() must be the next id and its host() a host
  // added before (InvalidArgument otherwise).
  Result<DeviceId> add_device(std::unique_ptr<Device> device);
  // Marks `host` down or up again (engine/env.h, "Hosts that go down"); from any thread.
  void set_host_down(HostId host, bool down);

  // Several processes. Each process's RealEnv lists every host of the world, its own `local`;
  // messages to an endpoint on another host go through `transport` (owned by the caller, set
  // before the world runs, outliving it), whose deliveries the caller hands to
  // deliver_from_network. An endpoint's host is known where it was created; elsewhere from the
  // launcher's table of service names: place("osd.3", 2) says that "osd.3" and the names under
  // it ("osd.3.recovery") live on host 2 (the longest placed prefix at a '.' boundary wins).
  // A send to a remote endpoint is not counted against its queue limit here (the receiving
  // process counts it and drops what would pass the limit, logging it); a send to a host whose
  // transport failed is refused (kUnavailable) for retry_down_s, then tried again.
  void attach_transport(Transport* transport);
  void place(std::string name, HostId host);
  void deliver_from_network(HostId from, std::string to, Message message);
  double retry_down_s = 1.0;

  // Runs the world (see above). Once at a time; from outside tasks.
  Status run(const RealRunOptions& options = {});

  double now_s() const override;
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
  Random& random() override;
  // Zeroed, aligned memory from the process's BufferPool (reused, not faulted in afresh).
  MutableBuffer allocate(size_t bytes) override;
  // The pool allocate() draws from; the transport's bulk receives should share it
  // (TransportOptions::pool).
  const std::shared_ptr<BufferPool>& pool() const { return pool_; }

 private:
  struct Waiter;
  struct Task;
  struct Host;
  struct Computation;
  struct Delivery;
  class RealEndpoint;
  class RealSemaphore;
  using Clock = std::chrono::steady_clock;
  using Lock = std::unique_lock<std::mutex>;

  // The world time `s` as a steady_clock instant of this run.
  Clock::time_point at(double s) const;
  // The task the calling thread runs in this Env, or null.
  Task* current_task() const;
  // The calling thread's waiter: its task's, or a per-thread one outside tasks.
  Waiter& self();
  // Waits on `w` (mu_ held by `lock`) until pred() holds, or until world time `deadline_s`
  // passes (false). Throws the cancellation exception when w's task is cancelled.
  template <class Pred>
  bool wait(Lock& lock, Waiter& w, Pred pred, std::optional<double> deadline_s = std::nullopt);
  void launch(Task& task);  // mu_ held
  void task_main(Task* task);
  void end_task(Task& task);                          // mu_ held
  Result<Task*> task_for(const char* op, TaskId id);  // mu_ held
  RealEndpoint& record(std::string_view name);        // mu_ held
  Result<Message> receive(RealEndpoint& ep, std::optional<double> timeout_s);
  // When a message of `wire_bytes` sent now from `from` to `to` arrives (mu_ held; books the
  // sender's NIC).
  double arrival_s(HostId from, const RealEndpoint& to, uint64_t wire_bytes);
  void deliver(RealEndpoint& to, Message message);  // mu_ held
  void deliverer_main();
  // Works off the computations of `host` up to now, at its current sharing (mu_ held).
  void advance(Host& host);
  // Cancels every task still running (mu_ held), e.g. the daemons at the end of a run.
  void cancel_all();
  // The host of endpoint `name` as far as this process knows (created here, or placed), or -1.
  HostId resolve(const RealEndpoint& ep) const;  // mu_ held
  // Hands `message` to the transport for host `to_host` (no lock held); marks the host down
  // for retry_down_s when the transport cannot reach it.
  Status send_remote(HostId to_host, const std::string& to, const Message& message);
  // During a run: sends `message` to host `to_host` in the calling task when the pair is
  // authenticated and nothing is queued or being sent to it, else queues it (mu_ held through
  // `lock`).
  Status send_during_run(Lock& lock, HostId to_host, const std::string& to, Message message);
  // After a send to `h`: on failure, marks it unreachable, drops its outbox, logs once.
  void sent_remote(Host& h, HostId to_host, const std::string& to, const Status& s);
  // During a run: queues `message` for host `to_host`'s sender (mu_ held through `lock`; waits
  // while the outbox holds kOutboxMessages).
  void queue_remote(Lock& lock, HostId to_host, const std::string& to, Message message);
  void sender_main(HostId to_host);
  // At the end of a run: each sender sends what it holds and stops (mu_ held through `lock`).
  void stop_senders(Lock& lock);
  static constexpr size_t kOutboxMessages = 4096;

  const uint64_t seed_;
  mutable std::mutex mu_;  // everything below
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::map<TaskId, std::unique_ptr<Task>> tasks_;
  TaskId next_task_ = 0;
  int live_ = 0;                       // non-daemon tasks not yet ended
  std::vector<std::thread> finished_;  // threads of ended tasks, to be joined by run()
  std::condition_variable run_cv_;     // a task ended, or a task failed
  Status failure_;                     // the first task that failed, or OK
  std::map<std::string, std::unique_ptr<RealEndpoint>, std::less<>> endpoints_;
  std::map<std::string, HostId, std::less<>> placed_;  // the launcher's table of names
  Transport* transport_ = nullptr;
  std::vector<Delivery> deliveries_;  // a min-heap by time, then send order
  uint64_t next_delivery_ = 0;
  std::condition_variable deliverer_cv_;
  bool stop_deliverer_ = false;
  std::thread deliverer_;
  // The clock, read without mu_ (now_s() is called under it and outside it).
  std::atomic<bool> running_{false};
  std::atomic<Clock::rep> origin_{0};  // world time 0 of this run, steady_clock ticks
  std::atomic<double> frozen_s_{0};    // now_s() while no run is in progress
  Random random_;                      // outside tasks
  std::shared_ptr<BufferPool> pool_ = BufferPool::create();
};

}  // namespace granary::realmode

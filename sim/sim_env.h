// SimEnv: the Env of engine/ on SimGrid S4U. Tasks are actors, endpoints are mailboxes with a
// permanent receiver (messages flow as soon as they are sent, as on a real NIC), device reads
// are host-to-host transfers from a drive's host over its drive link, and send_from_device is
// one transfer whose route starts at the drive: the drive, the server NIC and the fabric share
// it (a pipelined read-and-send).
//
// Task ids are actor pids; cancel() is Actor::kill() plus a mark that ends the actor at its
// next Env call (a kill is handled only after the current scheduling round). Hosts marked down
// (set_host_down) and endpoint queue limits are the Env's own bookkeeping, checked at send.
//
// Device contents. By default the devices keep no bytes: a read returns a size, a write's bytes
// are dropped (the size-only world of large simulations). With keep_device_bytes() every device
// keeps what writes carry (sparse, store::DeviceImage: ranges never written read as zeros) and
// reads and send_from_device return it; the time an operation takes is the same either way
// (the same drive model, the same transfers). The simulator does not model power loss: a flush
// makes nothing more durable than it already is (every completed write survives; no crash
// loses or tears one), and costs no time.
//
// Not thread-safe (SimGrid runs actors one at a time). One per simulation.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/env.h"
#include "models/topology.h"
#include "sim/drive_model.h"
#include "sim/platform.h"

namespace granary::sim {

class SimEnv final : public Env {
 public:
  // Messages up to this size travel as latency-only transfers (see send()): Env's small
  // messages.
  static constexpr uint64_t kLatencyOnlyBytes = kSmallMessageBytes;

  // `platform` and `topology` must outlive the SimEnv. Devices are the topology's drives in
  // order (DeviceId = position in topology.drives); HostId = topology node index.
  SimEnv(const models::Topology& topology, const Platform& platform, uint64_t seed);
  ~SimEnv() override;

  double now_s() const override;
  void sleep_s(double seconds) override;
  void compute_s(double core_seconds) override;
  // Task ids are the actors' pids.
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

  // Gives every drive a DriveQueue with `timing`: each read or write then waits for its access
  // (drive_model.h) before its data moves, so the drive links should carry no latency of their
  // own (the runner zeroes it). Without it a drive operation is only its link's transfer.
  void set_drive_timing(const DriveTiming& timing);
  // Drive `id`'s command processing `factor` times slower (1: its own speed).
  void set_drive_slowdown(DeviceId id, double factor);
  // The drive's queue (null before set_drive_timing).
  const DriveQueue* drive_queue(DeviceId id) const;

  // Devices keep the bytes written to them from now on (see the header comment). Before the
  // simulation runs.
  void keep_device_bytes() { keep_bytes_ = true; }
  bool keeps_device_bytes() const { return keep_bytes_; }
  // Setup: while on, device reads, writes and flushes move bytes only and take no simulated
  // time (no drive queue, no transfer), so they may be called from outside any task: how a
  // world builder lays data out on the devices before the clock starts. Off while the
  // simulation runs.
  void set_devices_untimed(bool on) { untimed_ = on; }
  bool devices_untimed() const { return untimed_; }
  // Tests: flips the bits of `mask` in byte `offset` of device `id`'s kept bytes, as a silent
  // media error would (no time, no drive access). Needs keep_device_bytes().
  void corrupt_device_byte(DeviceId id, uint64_t offset, uint8_t mask = 0xff);

  // Marks `host` down (or up again): sends from it and to its endpoints fail with kUnavailable
  // (engine/env.h, "Hosts that go down"). Only the Env's bookkeeping: the SimGrid host stays on
  // and its actors run. Nothing in the runner calls it (its failures are the services' own).
  void set_host_down(HostId host, bool down);
  bool host_down(HostId host) const;

  simgrid::s4u::Host* host(HostId id) const;
  HostId host_of_drive(DeviceId id) const;
  int device_count() const { return static_cast<int>(devices_.size()); }

 private:
  class SimEndpoint;
  class SimDevice;
  class SimSemaphore;
  struct CourierJob {
    simgrid::s4u::Mailbox* to;
    Message* message;
    uint64_t bytes;
    double ready_s;  // when the drive has the data (DriveQueue), 0 without a drive model
  };
  struct Courier {  // streams send_from_device transfers out of one drive
    std::deque<CourierJob> jobs;
    simgrid::s4u::SemaphorePtr pending;
    bool started = false;
  };
  void courier_loop(DeviceId id);
  // Whether the calling actor has been cancelled; ends it if so (every blocking Env call ends
  // with this check: see cancel()).
  bool cancelled_self() const;
  void exit_if_cancelled();
  // The endpoint called `name`, made without a host (-1) when nobody has asked for it yet.
  SimEndpoint& endpoint_by_name(std::string_view name);
  // OK, or kUnavailable when `from` or the host of `to` is down.
  Status check_reachable(HostId from, const SimEndpoint& to) const;
  // Whether `id` is a task this Env spawned (not a courier, not beyond the last spawn).
  Status check_task(const char* what, TaskId id) const;

  const models::Topology& topology_;
  const Platform& platform_;
  Random random_;
  std::map<std::string, std::unique_ptr<SimEndpoint>, std::less<>> endpoints_;
  std::vector<std::unique_ptr<SimDevice>> devices_;
  std::vector<Courier> couriers_;
  std::vector<bool> host_down_;  // [HostId]
  TaskId last_task_ = 0;         // the largest pid spawn() gave out
  bool spawned_ = false;
  std::vector<TaskId> courier_pids_;
  std::unordered_set<TaskId> cancelled_;  // cancelled tasks that may not have unwound yet
  bool keep_bytes_ = false;
  bool untimed_ = false;
};

}  // namespace granary::sim

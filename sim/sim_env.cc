#include "sim/sim_env.h"

#include <algorithm>
#include <simgrid/Exception.hpp>

#include "engine/store/device_image.h"

namespace granary::sim {

namespace sg4 = simgrid::s4u;

namespace {
void delete_message(void* p) {
  delete static_cast<Message*>(p);
}
}  // namespace

class SimEnv::SimEndpoint final : public Endpoint {
 public:
  SimEndpoint(SimEnv& env, std::string name, HostId host)
      : env_(env), name_(std::move(name)), host_(host) {
    mailbox_ = sg4::Mailbox::by_name(name_);
  }
  ~SimEndpoint() override = default;
  const std::string& name() const override { return name_; }
  HostId host() const override { return host_; }
  bool bound() const { return host_ >= 0; }
  void bind(HostId host) { host_ = host; }
  sg4::Mailbox* mailbox() const { return mailbox_; }

  void claim_receiver() {
    // The task that first asks for an endpoint receives from it: messages then flow without
    // waiting for a matching receive, as data does on a real NIC.
    if (!receiver_set_ && sg4::Actor::is_maestro() == false) {
      mailbox_->set_receiver(sg4::Actor::self());
      receiver_set_ = true;
    }
  }

  void set_queue_limit(uint64_t bytes) override { budget_.set_limit(bytes); }
  uint64_t queued_bytes() const override { return budget_.queued(); }
  Status admit(uint64_t wire_bytes) { return budget_.admit(name_, wire_bytes); }

  Result<Message> recv() override {
    try {
      std::unique_ptr<Message> m(mailbox_->get<Message>());
      budget_.taken(m->wire_bytes());
      env_.exit_if_cancelled();
      return std::move(*m);
    } catch (const simgrid::Exception& e) {
      return Status::io_error("receive on " + name_ + " failed: " + e.what());
    }
  }

  Result<Message> recv(double timeout_s) override {
    Message* raw = nullptr;
    sg4::CommPtr comm = mailbox_->get_async<Message>(&raw);
    try {
      comm->wait_for(timeout_s);
    } catch (const simgrid::TimeoutException&) {
      comm->cancel();
      // A message that completed at the very instant of the timeout is not lost: take it.
      if (raw == nullptr) {
        env_.exit_if_cancelled();
        return Status::not_found("nothing arrived on " + name_ + " within " +
                                 std::to_string(timeout_s) + " s");
      }
    } catch (const simgrid::Exception& e) {
      return Status::io_error("receive on " + name_ + " failed: " + e.what());
    }
    std::unique_ptr<Message> m(raw);
    budget_.taken(m->wire_bytes());
    env_.exit_if_cancelled();
    return std::move(*m);
  }

 private:
  SimEnv& env_;
  std::string name_;
  HostId host_;  // -1 until endpoint() creates it on a host
  sg4::Mailbox* mailbox_ = nullptr;
  bool receiver_set_ = false;
  EndpointQueueBudget budget_;
};

class SimEnv::SimDevice final : public Device {
 public:
  SimDevice(SimEnv& env, DeviceId id, HostId server, sg4::Host* drive_host, sg4::Host* server_host,
            uint64_t capacity)
      : env_(env),
        id_(id),
        server_(server),
        drive_host_(drive_host),
        server_host_(server_host),
        capacity_(capacity) {}
  DeviceId id() const override { return id_; }
  HostId host() const override { return server_; }
  uint64_t capacity_bytes() const override { return capacity_; }
  sg4::Host* drive_host() const { return drive_host_; }
  void set_timing(const DriveTiming& timing) { queue_ = std::make_unique<DriveQueue>(timing); }
  DriveQueue* queue() const { return queue_.get(); }
  // Waits for the drive's access to an operation (nothing without a drive model); the time the
  // data is ready.
  double access(bool write, uint64_t bytes) {
    if (!queue_) return 0;
    const double ready = queue_->admit(sg4::Engine::get_clock(), write, bytes);
    sg4::this_actor::sleep_until(ready);
    env_.exit_if_cancelled();
    return ready;
  }
  // As access() for an operation a courier carries out later: only the ready time.
  double admit_read(uint64_t bytes) {
    return queue_ ? queue_->admit(sg4::Engine::get_clock(), false, bytes) : 0;
  }

  Result<Payload> read(uint64_t offset, uint64_t length) override {
    if (Status s = check_range("read", offset, length); !s.ok()) return s;
    if (!env_.untimed_) {
      try {
        access(false, length);
        sg4::Comm::sendto(drive_host_, server_host_, length);
        env_.exit_if_cancelled();
      } catch (const simgrid::Exception& e) {
        return Status::io_error("device " + std::to_string(id_) + " read failed: " + e.what());
      }
    }
    return contents(offset, length);
  }

  Status write(uint64_t offset, const Payload& data) override {
    if (Status s = check_range("write", offset, data.size_bytes); !s.ok()) return s;
    if (data.bytes && data.bytes.size() != data.size_bytes) {
      return Status::invalid_argument("device " + std::to_string(id_) + ": a write of " +
                                      std::to_string(data.size_bytes) + " bytes carries " +
                                      std::to_string(data.bytes.size()) + " bytes of data");
    }
    if (!env_.untimed_) {
      try {
        access(true, data.size_bytes);
        sg4::Comm::sendto(server_host_, drive_host_, data.size_bytes);
        env_.exit_if_cancelled();
      } catch (const simgrid::Exception& e) {
        return Status::io_error("device " + std::to_string(id_) + " write failed: " + e.what());
      }
    }
    // The bytes land when the write completes (a cancelled writer's write is not applied).
    if (env_.keep_bytes_ && data.bytes) {
      image_.write(offset, data.bytes.span());
    }
    return Status();
  }

  // The payload of a read of [offset, +length): the kept bytes, or a size.
  Payload contents(uint64_t offset, uint64_t length) const {
    if (!env_.keep_bytes_) return Payload::of_size(length);
    MutableBuffer out = env_.allocate(length);
    image_.read(offset, out.span());
    return Payload::of(std::move(out).freeze());
  }

  void corrupt(uint64_t offset, uint8_t mask) {
    std::byte b{};
    image_.read(offset, std::span(&b, 1));
    b ^= static_cast<std::byte>(mask);
    image_.write(offset, std::span(&b, 1));
  }

  Status check_range(const char* what, uint64_t offset, uint64_t length) const {
    if (offset > capacity_ || length > capacity_ - offset) {
      return Status::invalid_argument(std::string(what) + " on device " + std::to_string(id_) +
                                      ": range [" + std::to_string(offset) + ", +" +
                                      std::to_string(length) + ") is beyond its capacity of " +
                                      std::to_string(capacity_) + " bytes");
    }
    return Status();
  }

  // The simulator models no power loss: every completed write is as durable as it will be
  // (see sim_env.h), so a flush has nothing to do and costs no time (a drive's flush latency
  // is not modelled, and predictions do not change).
  Status flush() override { return Status(); }

 private:
  SimEnv& env_;
  DeviceId id_;
  HostId server_;
  sg4::Host* drive_host_;
  sg4::Host* server_host_;
  uint64_t capacity_;
  std::unique_ptr<DriveQueue> queue_;
  store::DeviceImage image_;  // with keep_device_bytes()
};

class SimEnv::SimSemaphore final : public Semaphore {
 public:
  SimSemaphore(SimEnv& env, int initial) : env_(env), sem_(sg4::Semaphore::create(initial)) {}
  void acquire() override {
    sem_->acquire();
    if (env_.cancelled_self()) {  // granted as it was cancelled: the permit goes on
      sem_->release();
      env_.exit_if_cancelled();
    }
  }
  // A task killed (Actor::kill_all, a run stopped at its time limit) while it releases gets
  // SimGrid's ForcefulKillException from the release; released from a lock guard's destructor,
  // which may not throw, that would end the process. The task still dies: SimGrid throws again
  // at its next blocking call (the kill_all of the run's end kills every task anyway).
  void release() override {
    try {
      sem_->release();
    } catch (const simgrid::ForcefulKillException&) {
    }
  }

 private:
  SimEnv& env_;
  sg4::SemaphorePtr sem_;
};

SimEnv::SimEnv(const models::Topology& topology, const Platform& platform, uint64_t seed)
    : topology_(topology), platform_(platform), random_(seed) {
  for (size_t d = 0; d < topology.drives.size(); ++d) {
    const models::TopologyNode& drive = topology.nodes[topology.drives[d]];
    GRANARY_CHECK(drive.owner >= 0);
    // Capacity is not part of the topology: devices are as large as any object store needs.
    devices_.push_back(std::make_unique<SimDevice>(*this, static_cast<DeviceId>(d), drive.owner,
                                                   platform.hosts[topology.drives[d]],
                                                   platform.hosts[drive.owner], uint64_t{1} << 62));
  }
  couriers_.resize(devices_.size());
  host_down_.assign(platform.hosts.size(), false);
}

SimEnv::~SimEnv() {
  for (auto& [name, ep] : endpoints_) ep->mailbox()->set_receiver(nullptr);
}

double SimEnv::now_s() const {
  return sg4::Engine::get_clock();
}

void SimEnv::sleep_s(double seconds) {
  if (seconds > 0) sg4::this_actor::sleep_for(seconds);
  exit_if_cancelled();
}

void SimEnv::compute_s(double core_seconds) {
  if (core_seconds > 0)
    sg4::this_actor::execute(core_seconds * sg4::this_actor::get_host()->get_speed());
  exit_if_cancelled();
}

bool SimEnv::cancelled_self() const {
  return !cancelled_.empty() && !sg4::Actor::is_maestro() &&
         cancelled_.count(static_cast<TaskId>(sg4::this_actor::get_pid())) > 0;
}

void SimEnv::exit_if_cancelled() {
  if (cancelled_self()) sg4::this_actor::exit();  // unwinds with a ForcefulKillException
}

TaskId SimEnv::spawn(HostId host_id, std::string name, std::function<void()> task,
                     TaskOptions options) {
  // A task cancelled before it first runs never runs; its id leaves the cancelled set when it
  // ends, however it ends.
  auto body = [this, task = std::move(task)] {
    struct Forget {
      SimEnv* env;
      ~Forget() {
        if (!env->cancelled_.empty()) {
          env->cancelled_.erase(static_cast<TaskId>(sg4::this_actor::get_pid()));
        }
      }
    } forget{this};
    if (cancelled_self()) return;
    task();
  };
  sg4::ActorPtr a = sg4::Actor::create(name, host(host_id), std::move(body));
  if (options.daemon) a->daemonize();
  const auto id = static_cast<TaskId>(a->get_pid());
  last_task_ = std::max(last_task_, id);
  spawned_ = true;
  return id;
}

Status SimEnv::check_task(const char* what, TaskId id) const {
  if (!spawned_ || id > last_task_ ||
      std::find(courier_pids_.begin(), courier_pids_.end(), id) != courier_pids_.end()) {
    return Status::invalid_argument(std::string(what) + ": no task " + std::to_string(id) +
                                    " was spawned");
  }
  if (!sg4::Actor::is_maestro() && static_cast<TaskId>(sg4::this_actor::get_pid()) == id) {
    return Status::invalid_argument(std::string(what) + ": task '" + sg4::this_actor::get_name() +
                                    "' cannot " + what + " itself");
  }
  return Status::ok_status();
}

Status SimEnv::join(TaskId id) {
  if (Status s = check_task("join", id); !s.ok()) return s;
  // Pids are never reused: an actor that is gone has ended.
  if (sg4::ActorPtr a = sg4::Actor::by_pid(static_cast<aid_t>(id))) a->join();
  exit_if_cancelled();
  return Status::ok_status();
}

Status SimEnv::cancel(TaskId id) {
  if (Status s = check_task("cancel", id); !s.ok()) return s;
  sg4::ActorPtr a = sg4::Actor::by_pid(static_cast<aid_t>(id));
  if (!a) return Status::ok_status();  // ended
  // SimGrid cancels what the actor waits for and unwinds it (ForcefulKillException) when it
  // is next scheduled, at this time. kill() is a simcall, handled after this scheduling round:
  // a victim that is ready to run (its wait just completed, or it has not started) would run
  // first, so the Env marks it at once and its Env calls end it (exit_if_cancelled).
  cancelled_.insert(id);
  a->kill();
  return Status::ok_status();
}

SimEnv::SimEndpoint& SimEnv::endpoint_by_name(std::string_view name) {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end()) {
    it =
        endpoints_
            .emplace(std::string(name), std::make_unique<SimEndpoint>(*this, std::string(name), -1))
            .first;
  }
  return *it->second;
}

Endpoint& SimEnv::endpoint(HostId host_id, std::string_view name) {
  GRANARY_CHECK(host_id >= 0 && static_cast<size_t>(host_id) < platform_.hosts.size());
  SimEndpoint& ep = endpoint_by_name(name);
  if (!ep.bound()) ep.bind(host_id);
  GRANARY_CHECK(ep.host() == host_id);
  ep.claim_receiver();
  return ep;
}

Result<HostId> SimEnv::host_of(std::string_view name) const {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end() || !it->second->bound()) {
    return Status::not_found("no endpoint called '" + std::string(name) + "' has been created");
  }
  return it->second->host();
}

void SimEnv::set_host_down(HostId host_id, bool down) {
  GRANARY_CHECK(host_id >= 0 && static_cast<size_t>(host_id) < host_down_.size());
  host_down_[static_cast<size_t>(host_id)] = down;
}

bool SimEnv::host_down(HostId host_id) const {
  GRANARY_CHECK(host_id >= 0 && static_cast<size_t>(host_id) < host_down_.size());
  return host_down_[static_cast<size_t>(host_id)];
}

Status SimEnv::check_reachable(HostId from, const SimEndpoint& to) const {
  const HostId dead = host_down(from) ? from : to.bound() && host_down(to.host()) ? to.host() : -1;
  if (dead < 0) return Status::ok_status();
  return Status::unavailable("send from host " + host(from)->get_name() + " to endpoint " +
                             to.name() + ": host " + host(dead)->get_name() + " is down");
}

Status SimEnv::send(HostId from, std::string_view to, Message message) {
  SimEndpoint& ep = endpoint_by_name(to);
  if (Status s = check_reachable(from, ep); !s.ok()) return s;
  if (Status s = ep.admit(message.wire_bytes()); !s.ok()) return s;
  // A small message (a request, a metadata op) costs its route's latency; its bytes are noise
  // next to the data flows, so it is sent as a latency-only transfer, which spares the
  // bandwidth solver a flow and an event.
  const uint64_t bytes = message.wire_bytes() <= kLatencyOnlyBytes ? 0 : message.wire_bytes();
  auto* m = new Message(std::move(message));
  ep.mailbox()->put_init(m, bytes)->detach(delete_message);
  return Status::ok_status();
}

Status SimEnv::send_from_device(Device& device, uint64_t offset, uint64_t length,
                                std::string_view to, Message message) {
  auto& sim_device = static_cast<SimDevice&>(device);
  if (Status s = sim_device.check_range("send", offset, length); !s.ok()) return s;
  SimEndpoint& ep = endpoint_by_name(to);
  if (Status s = check_reachable(device.host(), ep); !s.ok()) return s;
  message.payload = Payload::of_size(length);
  if (Status s = ep.admit(message.wire_bytes()); !s.ok()) return s;
  // The bytes as the device holds them when the transfer starts (as MemoryEnv takes them).
  message.payload = sim_device.contents(offset, length);
  Courier& c = couriers_[device.id()];
  if (!c.started) {
    c.started = true;
    c.pending = sg4::Semaphore::create(0);
    const DeviceId id = device.id();
    sg4::ActorPtr a = sg4::Actor::create("courier." + std::to_string(id), sim_device.drive_host(),
                                         [this, id] { courier_loop(id); });
    a->daemonize();
    courier_pids_.push_back(static_cast<TaskId>(a->get_pid()));
  }
  const uint64_t bytes = message.wire_bytes();
  const double ready = sim_device.admit_read(length);
  c.jobs.push_back({ep.mailbox(), new Message(std::move(message)), bytes, ready});
  c.pending->release();
  return Status();
}

void SimEnv::courier_loop(DeviceId id) {
  Courier& c = couriers_[id];
  for (;;) {
    c.pending->acquire();
    CourierJob job = c.jobs.front();
    c.jobs.pop_front();
    // Reads are admitted in time order and their ready times never decrease (drive_model.h):
    // waiting for each in turn delays none behind another.
    if (job.ready_s > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(job.ready_s);
    // Sent from the drive's host: the transfer's route starts with the drive link.
    job.to->put_init(job.message, job.bytes)->detach(delete_message);
  }
}

Device& SimEnv::device(DeviceId id) {
  GRANARY_CHECK(id >= 0 && id < static_cast<DeviceId>(devices_.size()));
  return *devices_[id];
}

void SimEnv::set_drive_timing(const DriveTiming& timing) {
  for (auto& d : devices_) d->set_timing(timing);
}

void SimEnv::set_drive_slowdown(DeviceId id, double factor) {
  GRANARY_CHECK(id >= 0 && id < static_cast<DeviceId>(devices_.size()));
  if (DriveQueue* q = devices_[id]->queue()) q->set_slowdown(factor);
}

void SimEnv::corrupt_device_byte(DeviceId id, uint64_t offset, uint8_t mask) {
  GRANARY_CHECK(keep_bytes_);
  GRANARY_CHECK(id >= 0 && id < static_cast<DeviceId>(devices_.size()));
  devices_[id]->corrupt(offset, mask);
}

const DriveQueue* SimEnv::drive_queue(DeviceId id) const {
  GRANARY_CHECK(id >= 0 && id < static_cast<DeviceId>(devices_.size()));
  return devices_[id]->queue();
}

std::unique_ptr<Semaphore> SimEnv::make_semaphore(int initial) {
  return std::make_unique<SimSemaphore>(*this, initial);
}

sg4::Host* SimEnv::host(HostId id) const {
  GRANARY_CHECK(id >= 0 && id < static_cast<HostId>(platform_.hosts.size()) && platform_.hosts[id]);
  return platform_.hosts[id];
}

HostId SimEnv::host_of_drive(DeviceId id) const {
  return devices_.at(id)->host();
}

}  // namespace granary::sim

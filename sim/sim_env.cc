#include "sim/sim_env.h"

#include <simgrid/Exception.hpp>

namespace granary::sim {

namespace sg4 = simgrid::s4u;

namespace {
void delete_message(void* p) {
  delete static_cast<Message*>(p);
}
}  // namespace

class SimEnv::SimEndpoint final : public Endpoint {
 public:
  SimEndpoint(std::string name, HostId host) : name_(std::move(name)), host_(host) {
    mailbox_ = sg4::Mailbox::by_name(name_);
  }
  ~SimEndpoint() override = default;
  const std::string& name() const override { return name_; }
  HostId host() const override { return host_; }
  sg4::Mailbox* mailbox() const { return mailbox_; }

  void claim_receiver() {
    // The task that first asks for an endpoint receives from it: messages then flow without
    // waiting for a matching receive, as data does on a real NIC.
    if (!receiver_set_ && sg4::Actor::is_maestro() == false) {
      mailbox_->set_receiver(sg4::Actor::self());
      receiver_set_ = true;
    }
  }

  Result<Message> recv() override {
    try {
      std::unique_ptr<Message> m(mailbox_->get<Message>());
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
      if (raw != nullptr) {
        std::unique_ptr<Message> m(raw);
        return std::move(*m);
      }
      return Status::not_found("nothing arrived on " + name_ + " within " +
                               std::to_string(timeout_s) + " s");
    } catch (const simgrid::Exception& e) {
      return Status::io_error("receive on " + name_ + " failed: " + e.what());
    }
    std::unique_ptr<Message> m(raw);
    return std::move(*m);
  }

 private:
  std::string name_;
  HostId host_;
  sg4::Mailbox* mailbox_ = nullptr;
  bool receiver_set_ = false;
};

class SimEnv::SimDevice final : public Device {
 public:
  SimDevice(DeviceId id, HostId server, sg4::Host* drive_host, sg4::Host* server_host,
            uint64_t capacity)
      : id_(id),
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
    return ready;
  }
  // As access() for an operation a courier carries out later: only the ready time.
  double admit_read(uint64_t bytes) {
    return queue_ ? queue_->admit(sg4::Engine::get_clock(), false, bytes) : 0;
  }

  Result<Payload> read(uint64_t offset, uint64_t length) override {
    if (Status s = check_range("read", offset, length); !s.ok()) return s;
    try {
      access(false, length);
      sg4::Comm::sendto(drive_host_, server_host_, length);
    } catch (const simgrid::Exception& e) {
      return Status::io_error("device " + std::to_string(id_) + " read failed: " + e.what());
    }
    return Payload::of_size(length);
  }

  Status write(uint64_t offset, const Payload& data) override {
    if (Status s = check_range("write", offset, data.size_bytes); !s.ok()) return s;
    if (data.bytes && data.bytes->size() != data.size_bytes) {
      return Status::invalid_argument("device " + std::to_string(id_) + ": a write of " +
                                      std::to_string(data.size_bytes) + " bytes carries " +
                                      std::to_string(data.bytes->size()) + " bytes of data");
    }
    try {
      access(true, data.size_bytes);
      sg4::Comm::sendto(server_host_, drive_host_, data.size_bytes);
    } catch (const simgrid::Exception& e) {
      return Status::io_error("device " + std::to_string(id_) + " write failed: " + e.what());
    }
    return Status();
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

  // The simulator keeps no bytes: nothing to make durable, and a flush costs no time (so that
  // predictions do not change; a drive's flush latency is not modelled).
  Status flush() override { return Status(); }

 private:
  DeviceId id_;
  HostId server_;
  sg4::Host* drive_host_;
  sg4::Host* server_host_;
  uint64_t capacity_;
  std::unique_ptr<DriveQueue> queue_;
};

class SimEnv::SimSemaphore final : public Semaphore {
 public:
  explicit SimSemaphore(int initial) : sem_(sg4::Semaphore::create(initial)) {}
  void acquire() override { sem_->acquire(); }
  void release() override { sem_->release(); }

 private:
  sg4::SemaphorePtr sem_;
};

SimEnv::SimEnv(const models::Topology& topology, const Platform& platform, uint64_t seed)
    : topology_(topology), platform_(platform), random_(seed) {
  for (size_t d = 0; d < topology.drives.size(); ++d) {
    const models::TopologyNode& drive = topology.nodes[topology.drives[d]];
    GRANARY_CHECK(drive.owner >= 0);
    // Capacity is not part of the topology: devices are as large as any object store needs.
    devices_.push_back(std::make_unique<SimDevice>(static_cast<DeviceId>(d), drive.owner,
                                                   platform.hosts[topology.drives[d]],
                                                   platform.hosts[drive.owner], uint64_t{1} << 62));
  }
  couriers_.resize(devices_.size());
}

SimEnv::~SimEnv() {
  for (auto& [name, ep] : endpoints_) ep->mailbox()->set_receiver(nullptr);
}

double SimEnv::now_s() const {
  return sg4::Engine::get_clock();
}

void SimEnv::sleep_s(double seconds) {
  if (seconds > 0) sg4::this_actor::sleep_for(seconds);
}

void SimEnv::compute_s(double core_seconds) {
  if (core_seconds > 0)
    sg4::this_actor::execute(core_seconds * sg4::this_actor::get_host()->get_speed());
}

void SimEnv::spawn(HostId host_id, std::string name, std::function<void()> task,
                   TaskOptions options) {
  sg4::ActorPtr a = sg4::Actor::create(name, host(host_id), std::move(task));
  if (options.daemon) a->daemonize();
}

Endpoint& SimEnv::endpoint(HostId host_id, std::string_view name) {
  auto it = endpoints_.find(name);
  if (it == endpoints_.end()) {
    it = endpoints_
             .emplace(std::string(name), std::make_unique<SimEndpoint>(std::string(name), host_id))
             .first;
  }
  GRANARY_CHECK(it->second->host() == host_id);
  it->second->claim_receiver();
  return *it->second;
}

void SimEnv::send(HostId, std::string_view to, Message message) {
  // A small message (a request, a metadata op) costs its route's latency; its bytes are noise
  // next to the data flows, so it is sent as a latency-only transfer, which spares the
  // bandwidth solver a flow and an event.
  const uint64_t bytes = message.wire_bytes() <= kLatencyOnlyBytes ? 0 : message.wire_bytes();
  auto* m = new Message(std::move(message));
  sg4::Mailbox::by_name(std::string(to))->put_init(m, bytes)->detach(delete_message);
}

Status SimEnv::send_from_device(Device& device, uint64_t offset, uint64_t length,
                                std::string_view to, Message message) {
  auto& sim_device = static_cast<SimDevice&>(device);
  if (Status s = sim_device.check_range("send", offset, length); !s.ok()) return s;
  message.payload = Payload::of_size(length);
  Courier& c = couriers_[device.id()];
  if (!c.started) {
    c.started = true;
    c.pending = sg4::Semaphore::create(0);
    const DeviceId id = device.id();
    sg4::ActorPtr a = sg4::Actor::create("courier." + std::to_string(id), sim_device.drive_host(),
                                         [this, id] { courier_loop(id); });
    a->daemonize();
  }
  const uint64_t bytes = message.wire_bytes();
  const double ready = sim_device.admit_read(length);
  c.jobs.push_back(
      {sg4::Mailbox::by_name(std::string(to)), new Message(std::move(message)), bytes, ready});
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

const DriveQueue* SimEnv::drive_queue(DeviceId id) const {
  GRANARY_CHECK(id >= 0 && id < static_cast<DeviceId>(devices_.size()));
  return devices_[id]->queue();
}

std::unique_ptr<Semaphore> SimEnv::make_semaphore(int initial) {
  return std::make_unique<SimSemaphore>(initial);
}

sg4::Host* SimEnv::host(HostId id) const {
  GRANARY_CHECK(id >= 0 && id < static_cast<HostId>(platform_.hosts.size()) && platform_.hosts[id]);
  return platform_.hosts[id];
}

HostId SimEnv::host_of_drive(DeviceId id) const {
  return devices_.at(id)->host();
}

}  // namespace granary::sim

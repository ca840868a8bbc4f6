// Env: the only door from Granary's storage services to the world.
//
// The services of engine/ (OSD, metadata server, client, GPU data loader) are written once
// against this interface and never know which world they run in: sim/ implements it on
// SimGrid S4U (actors, mailboxes, links), realmode/ on threads, io_uring and libfabric, and
// engine/testing/ has an in-memory implementation with a virtual clock for unit tests. This is
// leveldb's Env and FoundationDB's simulated/real INetwork applied to a storage cluster.
//
// Programming model: a service is a set of tasks (simulated actors or threads) that block on
// Env calls (sleep, receive, read). Tasks run on a host; endpoints (named mailboxes) live on a
// host; messages carry a typed body and a payload whose size is what crosses the network.
// Everything a task needs comes through its Env reference; there is no global.
//
// Thread-safety: in simulation tasks never run concurrently. In real mode an Env and its
// endpoints, devices and synchronisation objects are safe to use from any task; plain data
// shared between tasks must be guarded with Env mutexes.
//
// Conformance. What this header promises (the comments on each call below) is checked for
// every Env by one suite written once against a harness,
// tests/engine/env_conformance.{h,cc}, and instantiated per Env: MemoryEnv in engine_tests,
// SimEnv in sim_tests (one simulation per process, so ctest runs each test alone), the
// real-mode Env when it exists. What an Env does beyond the contract (MemoryEnv's NIC FIFO,
// SimEnv's max-min sharing) is its own business and is tested beside it; a service may rely
// only on the contract. docs/ARCHITECTURE.md, decision 81.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/messages.h"
#include "engine/random.h"
#include "engine/status.h"

namespace granary {

// Hosts of the world (client nodes, storage servers, metadata servers) are numbered densely by
// whoever builds the world; services only pass them around.
using HostId = int32_t;
// Devices (drives) likewise.
using DeviceId = int32_t;
// Tasks are numbered by the Env that spawns them; an id is never reused within a world.
using TaskId = uint64_t;

// Messages of at most this many bytes on the wire (Message::wire_bytes()) are "small": requests,
// acknowledgements, metadata. An Env may charge them only the latency of their route (the
// simulator does: their bytes are noise next to the data flows), and their order is kept (see
// Env::send).
inline constexpr uint64_t kSmallMessageBytes = 64 * 1024;

// A named mailbox located on a host. Anyone may send to it; the tasks of its host receive
// from it.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual const std::string& name() const = 0;
  virtual HostId host() const = 0;

  // Receives the next message, blocking until one has arrived. An error when the endpoint's
  // host went down.
  virtual Result<Message> recv() = 0;
  // As recv(), but gives up after `timeout_s` seconds: kNotFound when nothing arrived, and the
  // clock has then advanced by `timeout_s`. A message that arrives in time is returned when it
  // arrives.
  virtual Result<Message> recv(double timeout_s) = 0;

  // Back-pressure. The bytes queued on the endpoint are the wire bytes (Message::wire_bytes())
  // of the messages sent to it (send, send_from_device, also before it was created) and not
  // yet received, those in flight included. With a limit set, a send that finds something
  // queued and would take the queue past the limit fails with kNoSpace and sends nothing; a
  // send to an empty queue always goes (so a message larger than the limit is not refused for
  // ever). The sender retries later: after a reply, or a sleep. 0, the default, is no limit.
  // Set by the endpoint's owner; a real Env maps it to the receive credits (or buffer) of the
  // endpoint's connections.
  virtual void set_queue_limit(uint64_t bytes) = 0;
  virtual uint64_t queued_bytes() const = 0;
};

// The bytes queued on an endpoint (sent and not yet received) against its optional limit
// (Endpoint::set_queue_limit): the accounting every Env's endpoints share.
class EndpointQueueBudget {
 public:
  void set_limit(uint64_t bytes) { limit_ = bytes; }
  uint64_t queued() const { return queued_; }
  // Counts a message of `wire_bytes` in, or refuses it (kNoSpace) when the non-empty queue
  // would pass its limit; `endpoint` names it in the error.
  Status admit(const std::string& endpoint, uint64_t wire_bytes) {
    if (limit_ > 0 && queued_ > 0 && queued_ + wire_bytes > limit_) {
      return Status::no_space("endpoint " + endpoint + ": " + std::to_string(queued_) +
                              " bytes queued, a message of " + std::to_string(wire_bytes) +
                              " bytes would pass its limit of " + std::to_string(limit_));
    }
    queued_ += wire_bytes;
    return Status::ok_status();
  }
  // A message of `wire_bytes` was received.
  void taken(uint64_t wire_bytes) { queued_ -= wire_bytes; }

 private:
  uint64_t limit_ = 0;   // 0: none
  uint64_t queued_ = 0;  // sent and not yet received
};

// A block device: a drive of a storage server.
//
// Durability contract (what an object store on a Device may rely on, engine/store/):
//  - A write that returned OK is visible to every later read of the device (read-your-writes),
//    but it is volatile: it sits in the drive's write cache until a flush.
//  - flush() returning OK makes every write that had returned OK before flush() was called
//    durable: it survives a crash (power loss, host reset) with exactly its bytes.
//  - After a crash, each write that had not been made durable is, independently, either fully
//    present, absent (the old bytes stay), or torn: a prefix of its 512-byte sectors is
//    present and the rest holds the old bytes. Nothing else changes; in particular durable
//    bytes are never damaged by a crash, and no write is ever reordered with a later flush.
// engine/testing's MemoryEnv implements exactly this (MemoryEnv::crash_device); the simulator
// models no power loss (its devices keep bytes only when asked, sim/sim_env.h), so its flush
// is free and changes no prediction.
class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceId id() const = 0;
  virtual HostId host() const = 0;
  virtual uint64_t capacity_bytes() const = 0;
  // Ranges: an operation on a range that does not fit the device (offset + length beyond
  // capacity_bytes(), or overflowing) fails with InvalidArgument, takes no time and changes
  // nothing. [capacity_bytes(), +0) fits.
  //
  // Reads `length` bytes at `offset`, blocking until done. In a size-only simulation the
  // payload has only a size; where the device keeps data (real mode, MemoryEnv after a write
  // with bytes, SimEnv with keep_device_bytes) it carries the bytes, ranges never written
  // reading as zeros.
  virtual Result<Payload> read(uint64_t offset, uint64_t length) = 0;
  // Reads several ranges ({offset, length} each), as read() reads each, their payloads in
  // order; the first failing range's error fails the call. A device may serve them at once
  // (UringDevice: one io_uring submission, so a fragmented object's blocks are read in
  // parallel); by default, one after the other.
  virtual Result<std::vector<Payload>> read_ranges(
      const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
    std::vector<Payload> out;
    out.reserve(ranges.size());
    for (const auto& [offset, length] : ranges) {
      Result<Payload> p = read(offset, length);
      if (!p.ok()) return p.status();
      out.push_back(std::move(p).value());
    }
    return out;
  }
  // Writes `data` at `offset`, blocking until the device has it (not durably; see flush). A
  // payload without bytes is a size-only write: it costs time and leaves the contents alone.
  // A payload whose bytes are not `size_bytes` long is refused (InvalidArgument).
  virtual Status write(uint64_t offset, const Payload& data) = 0;
  // Blocks until every write completed before the call is durable (the contract above).
  virtual Status flush() = 0;
};

// A counting semaphore for the tasks of one host.
class Semaphore {
 public:
  virtual ~Semaphore() = default;
  // Takes a permit, blocking while none is free.
  virtual void acquire() = 0;
  // Returns a permit. Permits are handed over in FIFO order: when tasks are waiting, the one
  // that has waited longest gets it, before any task that calls acquire() later (no barging).
  virtual void release() = 0;
};

struct TaskOptions {
  // A daemon task does not keep the world alive: the run ends when only daemons remain (at
  // once, for a world of daemons alone), and they are terminated then. A non-daemon task keeps
  // it alive until it returns, whoever spawned it and when.
  bool daemon = false;
};

// Hosts that go down. A host goes down, and comes back, by the world's doing, never by a
// service's: the failure injection of a test or simulation (MemoryEnv::set_host_down,
// SimEnv::set_host_down), a peer whose connections fail in real mode. While an Env knows a
// host is down, a send from it or to one of its endpoints fails with kUnavailable and sends
// nothing. Nothing else changes: its tasks keep running (cancel them to model the crash of its
// processes), its devices keep their contents, and a message already under way may be lost or
// delivered.
class Env {
 public:
  virtual ~Env() = default;

  // Seconds since the start of the world.
  virtual double now_s() const = 0;
  // Blocks the calling task for `seconds`: now_s() has advanced by exactly that much (nothing
  // for seconds <= 0).
  virtual void sleep_s(double seconds) = 0;
  // Uses `core_seconds` of CPU time on the calling task's host, sharing the host's cores with
  // its other tasks (a storage server's request processing, a client's copy loop): processor
  // sharing, with n computations on a host of c cores each progressing at min(1, c / n)
  // core-seconds per second.
  virtual void compute_s(double core_seconds) = 0;

  // Starts `task` on `host` and returns its id (unique within the world, never reused).
  virtual TaskId spawn(HostId host, std::string name, std::function<void()> task,
                       TaskOptions options = {}) = 0;
  // Blocks the calling task until task `id` has ended: returned, been cancelled, or been
  // terminated at the end of the world. Returns at once when it has already ended. Joining a
  // task that never ends blocks for ever (a daemon: until the world ends). Refused with
  // InvalidArgument, at once, for an id this Env never gave out and for the caller's own id.
  // Called from tasks only.
  virtual Status join(TaskId id) = 0;
  // Terminates task `id` at the current time: its stack unwinds (destructors run, by an
  // internal exception that does not derive from std::exception, so service code must not
  // swallow it with catch (...)) from the Env call it is blocked in, or from the Env call that
  // would let it go on (a wait that completes as it is cancelled); a task that has not started
  // yet never runs. What it waited for is abandoned: a recv still waiting takes no message (it
  // stays for the next receiver), a compute stops sharing the host's cores, a semaphore permit
  // not yet taken goes to the next waiter. Device operations it had started complete. OK and
  // nothing happens for a task that has already ended; InvalidArgument for an id this Env never
  // gave out and for the caller's own id (a task ends itself by returning). The caller goes on
  // without waiting (join() waits for the end); as after any Env call, other tasks may have run
  // in between at the same time. From tasks, or from outside them before the world runs.
  // Code that a cancel unwinds must not make Env calls from destructors.
  virtual Status cancel(TaskId id) = 0;

  // The endpoint called `name`, created on `host` the first time it is asked for. Asking again
  // for the same name returns the same endpoint (its host must match).
  //
  // Naming. An endpoint's name is "<service>.<id>[.<suffix>]": the service ("osd", "mds",
  // "mon", a client's or GPU consumer's configured name), its number, and for the further
  // endpoints a service opens a suffix ("client3.reply.17", a client's per-call reply
  // endpoints). A name is unique within the world and its endpoint never changes host. That is
  // what lets a real Env map names to network addresses: a host is one network address (a
  // libfabric address, or IP and port over TCP, from the launcher's table of hosts), an
  // endpoint is a tag demultiplexed at that address, and a name resolves to its host's address
  // (host_of). Well-known names (an OSD on its server, the monitor, the metadata servers) are
  // known to every host from the scenario when the cluster starts; the others, reply endpoints,
  // travel in the messages that ask for replies (reply_to), with the address of their host.
  virtual Endpoint& endpoint(HostId host, std::string_view name) = 0;
  // The host of the endpoint called `name`: kNotFound while nobody has created it (endpoint()).
  virtual Result<HostId> host_of(std::string_view name) const = 0;
  // Sends `message` to the endpoint called `to` and returns at once; the transfer of
  // message.wire_bytes() proceeds in the background and the receiver gets the message when it
  // has arrived. `from` is the sending host (the data leaves from there).
  //  - Completion: OK means the message is under way, as a real network's send completion
  //    means its bytes left; delivery is then best-effort (a message whose destination goes
  //    down before it arrives may be lost; a service that needs to know waits for a reply
  //    with a timeout). An error means nothing was sent:
  //      kUnavailable when `from`, or the host of the endpoint `to`, is known to be down at
  //      send time (see "Hosts that go down" above);
  //      kNoSpace when the endpoint's queue is at its limit (Endpoint::set_queue_limit).
  //  - A message sent to a name nobody has asked for yet waits until endpoint() creates it.
  //  - Order: small messages (kSmallMessageBytes) sent by one task to one endpoint arrive in
  //    the order they were sent. Larger ones are data flows that share the network; they may
  //    overtake each other and small ones (as over several connections of a real fabric), so
  //    services match replies to requests by id, not by order.
  //  - Time: a message larger than kSmallMessageBytes takes at least wire_bytes() divided by
  //    the sending host's NIC bandwidth, and messages leaving one NIC share it.
  virtual Status send(HostId from, std::string_view to, Message message) = 0;
  // Sends `message` with a payload of `length` bytes read from `device` at `offset` straight
  // to `to`: the read and the transfer are pipelined (a zero-copy or RDMA read), which is how
  // a storage server streams a large extent. Returns at once: OK when the transfer is under
  // way; InvalidArgument, and nothing is sent, when the range does not fit the device; the
  // errors of send otherwise, `from` being the device's host. The payload carries the device's
  // bytes where it keeps them (Device::read). Delivery as send.
  virtual Status send_from_device(Device& device, uint64_t offset, uint64_t length,
                                  std::string_view to, Message message) = 0;

  virtual Device& device(DeviceId id) = 0;
  virtual std::unique_ptr<Semaphore> make_semaphore(int initial) = 0;

  // `bytes` bytes of the memory payloads should live in (engine/buffer.h): zeroed, aligned to
  // kBufferAlignment, and in a real world registered with the fabric (the MutableBuffer carries
  // the registration), so that sending them or reading a device into them needs no copy. Any
  // Buffer may travel; memory from here is the one that travels without a copy. This default,
  // which the simulated and in-memory worlds keep, hands out plain aligned heap memory.
  virtual MutableBuffer allocate(size_t bytes) { return MutableBuffer(bytes); }

  // The world's random source (seeded once per run). Determinism: the same seed, world and
  // tasks give the same run (the same events at the same times in the same order).
  virtual Random& random() = 0;
};

}  // namespace granary

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
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// A named mailbox located on a host. Anyone may send to it; the tasks of its host receive
// from it.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual const std::string& name() const = 0;
  virtual HostId host() const = 0;

  // Receives the next message, blocking. An error when the endpoint's host went down.
  virtual Result<Message> recv() = 0;
  // As recv(), but gives up after `timeout_s` seconds (kNotFound: nothing arrived).
  virtual Result<Message> recv(double timeout_s) = 0;
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
// keeps no bytes, so its flush is free and changes no prediction.
class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceId id() const = 0;
  virtual HostId host() const = 0;
  virtual uint64_t capacity_bytes() const = 0;
  // Reads `length` bytes at `offset`, blocking until done. In simulation the payload has only
  // a size; where the device keeps data (real mode, MemoryEnv after a write with bytes) it
  // carries the bytes, ranges never written reading as zeros.
  virtual Result<Payload> read(uint64_t offset, uint64_t length) = 0;
  // Writes `data` at `offset`, blocking until the device has it (not durably; see flush). A
  // payload without bytes is a size-only write: it costs time and leaves the contents alone.
  virtual Status write(uint64_t offset, const Payload& data) = 0;
  // Blocks until every write completed before the call is durable (the contract above).
  virtual Status flush() = 0;
};

// A counting semaphore for the tasks of one host.
class Semaphore {
 public:
  virtual ~Semaphore() = default;
  virtual void acquire() = 0;
  virtual void release() = 0;
};

struct TaskOptions {
  // A daemon task does not keep the world alive: the run ends when only daemons remain.
  bool daemon = false;
};

class Env {
 public:
  virtual ~Env() = default;

  // Seconds since the start of the world.
  virtual double now_s() const = 0;
  // Blocks the calling task for `seconds`.
  virtual void sleep_s(double seconds) = 0;
  // Uses `core_seconds` of CPU time on the calling task's host, sharing the host's cores with
  // its other tasks (a storage server's request processing, a client's copy loop).
  virtual void compute_s(double core_seconds) = 0;

  // Starts `task` on `host`.
  virtual void spawn(HostId host, std::string name, std::function<void()> task,
                     TaskOptions options = {}) = 0;

  // The endpoint called `name`, created on `host` the first time it is asked for. Asking again
  // for the same name returns the same endpoint (its host must match).
  virtual Endpoint& endpoint(HostId host, std::string_view name) = 0;
  // Sends `message` to the endpoint called `to` and returns at once; the transfer of
  // message.wire_bytes() proceeds in the background and the receiver gets the message when it
  // has arrived. `from` is the sending host (the data leaves from there).
  virtual void send(HostId from, std::string_view to, Message message) = 0;
  // Sends `message` with a payload read from `device` (offset, length) straight to `to`: the
  // read and the transfer are pipelined (a zero-copy or RDMA read), which is how a storage
  // server streams a large extent. Returns at once.
  virtual void send_from_device(Device& device, uint64_t offset, uint64_t length,
                                std::string_view to, Message message) = 0;

  virtual Device& device(DeviceId id) = 0;
  virtual std::unique_ptr<Semaphore> make_semaphore(int initial) = 0;

  // The world's random source (seeded once per run).
  virtual Random& random() = 0;
};

}  // namespace granary

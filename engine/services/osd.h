// OsdService: a storage server's object service for one device. It serves, on its endpoint:
//  - ReadRequest: looks the object up in the device's ObjectIndex (an ObjectStore, a
//    DatasetObjectIndex, or a WrittenObjectStore over one), charges the protocol's server CPU
//    per request and per byte of its length (Env::compute_s, shared with the host's other
//    work), then streams the extent
//    from the drive to the client (Env::send_from_device). For an erasure-coded object
//    (request.ec.k > 0) it is the primary: it gathers the data chunks from the shard OSDs (its
//    own from its device), rebuilding from any k shards when some are missing (erasure.h;
//    decode CPU per byte), and replies with the whole range.
//  - WriteRequest (messages.h for the protocol): a leaf write (a replica, a shard, an OST, an
//    NFS export) records the extent in the WritableObjectIndex and writes the device — the
//    journal device first when there is one (the write is durable there; the data device is
//    written after the reply). A primary also forwards to the replicas, or plans, reads,
//    encodes and distributes the stripes of an erasure-coded write, and replies when every
//    copy or shard is durable. An unstable (NFS) write is acknowledged before the device write
//    and tracked in an UnstableWrites until a CommitRequest finds it done.
// A request for an unknown object, a range past the object's end, or a write to a read-only
// service gets a reply with ok = false and an error code (messages.h). A Shutdown stops it.
// With a placement (failure runs), a write of a past interval of its group is discarded
// unanswered (OsdServiceOptions::placement), so no primary waits for ever on a dead peer.
//
// The same service plays the Ceph OSD ("osd.<id>"), the Lustre OST ("ost.<index>") and the
// NFS head's export ("nfs.<head>"): only the endpoint name and the object names differ
// (file_mapping.h).
//
// Concurrency: worker_tasks tasks receive from the one endpoint; without an op queue up to that
// many requests are in progress at once (a primary's worker waits for its replicas or shards on its
// own endpoint "<endpoint>.d<device>.w<i>"); the device serialises or shares the I/O as the Env
// models it. Requests among OSDs (replica and shard writes, shard reads: sub-ops, which never
// wait on another OSD) go to a second endpoint, "<endpoint>.sub", with worker_tasks workers of
// their own: were they queued behind client ops, every worker of every OSD could end up a
// primary waiting for sub-ops that no worker is free to serve (a distributed deadlock, found
// with 4 OSDs under queue-depth-32 block writes). With an op queue, a worker hands each read or
// write to a handler task (one more is started when none is idle) and takes the next at once
// (Ceph's op threads never wait for replicas; the queue's threads bound the requests' op-thread
// part), so no number of requests in flight can tie up every worker. A worker that receives
// Shutdown passes it on to its endpoint (so every worker sees one) and stops.
//
// Thread-safety: the service's tasks share the counters (guarded by an EnvMutex) and the
// writable index (guarded by options.store_mutex, or the service's own mutex); stats() may be
// called from any task or after the run. The index, devices and UnstableWrites must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/env.h"
#include "engine/placement/placement.h"
#include "engine/redundancy/codec.h"
#include "engine/redundancy/erasure.h"
#include "engine/services/env_mutex.h"
#include "engine/services/object_backend.h"
#include "engine/services/object_store.h"
#include "engine/services/op_queue.h"

namespace granary::services {

// The unstable (NFS) writes a server holds, per object, shared by the services of one server.
// Thread-safe.
class UnstableWrites {
 public:
  explicit UnstableWrites(Env& env) : env_(env), mu_(env) {}
  void begin(const std::string& object);
  // A write done; a failed one fails the next wait_durable() of the object.
  void end(const std::string& object, const Status& status);
  // Blocks until `object` has no unstable write in progress; the first failure since the
  // last wait, if any.
  Status wait_durable(const std::string& object);

 private:
  Env& env_;
  EnvMutex mu_;
  std::map<std::string, int, std::less<>> pending_;
  std::map<std::string, Status, std::less<>> failed_;
  std::map<std::string, std::vector<std::shared_ptr<Semaphore>>, std::less<>> waiters_;
};

struct OsdServiceOptions {
  std::string endpoint_name;  // e.g. osd_endpoint_name(3); required
  double cpu_s_per_op = 0;    // server CPU per request (a protocol's server_cpu_us_per_op)
  // Server CPU per byte a read or write request moves (a protocol's cpu_us_per_mib: copies,
  // checksums; 0 when zero-copy), charged with cpu_s_per_op on the request's length.
  double cpu_s_per_byte = 0;
  int worker_tasks = 4;  // >= 1
  // Erasure coding CPU per data byte fed to the encoder (ISA-L Reed-Solomon runs at several
  // GB/s per core), and per byte the decoder rebuilds (k multiply-adds per byte where encoding
  // costs m per byte: slower; < 0: the encode rate).
  double ec_cpu_s_per_byte = 0;
  double ec_decode_cpu_s_per_byte = -1;
  Device* journal = nullptr;           // write-ahead journal device (null: none)
  UnstableWrites* unstable = nullptr;  // NFS: required for unstable writes and commits
  EnvMutex* store_mutex = nullptr;     // when several services share one writable index
  // An erasure-coded primary waits this long for a shard's reply before it reads around the
  // shard (rebuilding from the others), as Ceph's primary does once the shard's OSD is down.
  // 0: wait for ever.
  double shard_timeout_s = 0;
  // Without a placement: a primary waits this long for its replicas' or shards' write replies,
  // then fails the write with an error (the client does not get an acknowledgement; 0: wait
  // for ever). With a placement, the interval check below ends such waits; a sub_op_timeout_s
  // then also ends one unanswered (the write is discarded, the client resends: real mode,
  // where a message can be lost with a connection that reset). 0: only the interval check.
  double sub_op_timeout_s = 0;
  // Failure scenarios: the placement the cluster map gives now, whose groups' intervals
  // (Placement::interval_of) tell when a group's devices changed. A write whose group is no
  // longer in the interval it was planned in (WriteRequest::interval) is discarded unanswered
  // — on arrival, while its primary waits for replicas or shards (looked at every
  // interval_check_s), and before the reply — as Ceph's OSDs drop the ops of a past interval;
  // the client resends to the group's OSDs now. So a primary never waits for ever on a replica
  // that died, and no write is acknowledged to a group that has been replaced meanwhile.
  // Only group_of and interval_of are called (const). Null: writes are never discarded.
  placement::Placement* placement = nullptr;
  double interval_check_s = 1.0;
  // The OSD's op queue (op_queue.h; null: none). With one, each request's op-thread part (its
  // CPU) waits on the shard of its placement group (its name's hash without a
  // placement) for the scheduler and a free op thread, beside the OSD's recovery ops: a
  // client's read or write as class client, priority osd_client_op_priority 63, cost its
  // bytes; a sub-op from another OSD (a replica or shard write or read, whose reply goes to an
  // "osd." endpoint) as class immediate, priority 63 (Ceph schedules only client ops, not
  // MOSDRepOp, by mClock). Must outlive the service.
  OsdOpQueue* op_queue = nullptr;
  // The OSD's peering (engine/recovery/primary_peering.h, real mode): called with the group of
  // each client read and client write (those on the service's own endpoint, not sub-ops)
  // before it is served; it blocks until the group is active here (peered in its current
  // interval, so this OSD, if its primary, holds the newest copy of every object) and returns
  // true, or returns false after its own bound: the request is then dropped unanswered and the
  // client resends it (Ceph's PGs queue ops while peering: waiting_for_active). With it, every
  // client read and write goes to a handler task (as with an op queue), so that one waiting
  // never holds a worker. Requires `placement`. Null: requests are served at once.
  std::function<bool(uint32_t group)> await_active = nullptr;
  // With await_active (and no op queue): whether a group is active now, without waiting. A
  // client request of a group that is goes to the worker that received it, not to a handler
  // task (one hand-off less per request); one that is not waits in a handler as above. Null:
  // every such request goes to a handler.
  std::function<bool(uint32_t group)> active_now = nullptr;
  // A peering scan's epoch (ScanRequest::epoch): blocks until this OSD's map has reached it and
  // returns true, or returns false after its own bound (the scan is then refused, and the
  // peering tries again). Null: scans are answered at once.
  std::function<bool(uint32_t epoch)> await_epoch = nullptr;
  // A DiskStore service: reads of the drive run in parallel, outside the store's lock
  // (StoreBackend's parallel_reads; real mode, where the drive's io_uring queue serves many at
  // once). Off in the simulator, whose results were measured with reads serialised.
  bool parallel_store_reads = false;
  // Read repair (Ceph's repair of a primary's unreadable copy from its replicas): the other
  // members of an object's replicated acting set (their endpoint names), for a client read
  // whose own copy cannot be read (the drive's I/O error on a bad sector, or a block whose
  // crc32c does not match). The service then reads the whole object from the first member
  // that holds the same version, writes it over its own copy (copy-on-write: onto other
  // blocks, so a bad sector is left behind) and answers the read; only when no member can
  // serve it, or the rewrite fails, does the read fail (an I/O error then stops the service,
  // as before). Null: no repair.
  std::function<std::vector<std::string>(const std::string& object)> peers_of = nullptr;
};

struct OsdStats {
  uint64_t requests = 0;           // ReadRequests answered (ok or not), primaries' gathers included
  uint64_t errors = 0;             // requests answered with ok = false
  uint64_t bytes_sent = 0;         // payload bytes of successful read replies
  uint64_t writes = 0;             // WriteRequests answered (ok or not)
  uint64_t bytes_written = 0;      // bytes this service wrote to its data device
  uint64_t bytes_forwarded = 0;    // bytes a primary sent to replicas or shards
  uint64_t ec_reads_degraded = 0;  // erasure-coded reads that had to decode
  uint64_t writes_discarded = 0;   // writes dropped unanswered: their group changed interval
  uint64_t shard_reads_around = 0;  // shard reads that failed, timed out or were stale, and
                                    // were read around (an erasure-coded gather)
  uint64_t scans = 0;               // ScanRequests answered
  uint64_t removes = 0;             // RemoveRequests answered
  uint64_t dropped_inactive = 0;    // client requests dropped: their group stayed inactive
  uint64_t read_repairs = 0;        // own copies that could not be read, rewritten from a peer
};

class OsdService {
 public:
  // A read-only service (writes are answered with an error).
  OsdService(Env& env, HostId host, Device& device, const ObjectIndex& store,
             OsdServiceOptions options);
  // A service that also takes writes into `store`.
  OsdService(Env& env, HostId host, Device& device, WritableObjectIndex& store,
             OsdServiceOptions options);
  // A service that keeps real bytes in a mounted DiskStore on `device` (object_backend.h:
  // StoreBackend): writes need payloads with bytes, reads return them, erasure-coded primaries
  // encode and decode with the codec (codec.h). options.journal must be null (the store has
  // its own journal). The store must outlive the service.
  OsdService(Env& env, HostId host, Device& device, store::DiskStore& store,
             OsdServiceOptions options);
  OsdService(const OsdService&) = delete;
  OsdService& operator=(const OsdService&) = delete;

  // Spawns worker_tasks tasks on the host, each running serve(); daemons by default, so that
  // a run ends when the clients are done.
  void start(TaskOptions task_options = TaskOptions{.daemon = true});
  // One worker loop on the calling task (which must be on the host); returns after a Shutdown
  // (or when the endpoint fails). `worker` numbers the task's own endpoint; `sub_ops`: the
  // loop of the sub-op endpoint.
  void serve(int worker = 0, bool sub_ops = false);
  // The endpoint that takes `osd`'s sub-ops: "<osd>.sub".
  static std::string sub_op_endpoint(const std::string& osd);

  const std::string& endpoint_name() const { return options_.endpoint_name; }
  OsdStats stats() const;
  // A crashed daemon (false) takes requests off its endpoint and answers none of them, as a
  // dead process's peers see it until the cluster map says it is down; true: back.
  void set_available(bool available);
  bool available() const;

 private:
  // With an op queue: a handler task's loop over the requests the workers hand it.
  void run_handler(int slot);
  // `client`: the request came to the service's own endpoint (a client's), not to its
  // sub-op endpoint (another OSD's, or a peering's or scrub's read of this copy).
  void handle_read(const ReadRequest& request, Endpoint& own, bool client);
  void handle_write(const WriteRequest& request, const Payload& payload, Endpoint& own);
  void handle_commit(const CommitRequest& request);
  // An unstable (NFS) write, already begun in the UnstableWrites and acknowledged: written by a
  // task of its own.
  void write_behind(const WriteRequest& request, const Payload& payload, uint64_t logical_end);
  void handle_scan(const ScanRequest& request);
  void handle_remove(const RemoveRequest& request);
  void dispatch(const Message& m, Endpoint& own, bool client);
  // The request's op-thread part: cpu_s_per_op + bytes x cpu_s_per_byte, through the op queue
  // when there is one.
  void op_thread(const std::string& object, uint64_t bytes, const std::string& reply_to);
  // The whole of `object` (`info` as this service holds it) from a peer of peers_of with the
  // same version, written over this service's copy (OsdServiceOptions::peers_of); replies
  // arrive at `own`.
  Result<Payload> repair_from_peers(const std::string& object, const ObjectInfo& info,
                                    Endpoint& own);
  // Reads [offset, offset + length) of this OSD's copy or shard of `object`; a shard reads as
  // zeros past what it holds (`held`: its size). With data, the payload carries the bytes.
  Result<Payload> read_own(const std::string& object, uint64_t offset, uint64_t length,
                           uint64_t held);
  // Shard reads of an erasure-coded object: `extents` (shard indices into `shards`), this
  // OSD's own from its backend, the others from their OSDs, replies collected with `receive`
  // (false: give up, the op ends unanswered; true with a kNotFound status: timed out).
  struct Fetched {
    std::vector<Payload> data;       // per extent
    std::vector<uint64_t> versions;  // per extent: the version the shard holds
    std::vector<bool> failed;        // per extent: error, no reply in time
    std::string error;               // the first error
  };
  bool fetch_shards(const std::string& object, const std::vector<redundancy::ShardExtent>& extents,
                    const std::vector<std::string>& shards, const ErasureCoding& ec, Endpoint& own,
                    const std::function<bool(Result<Message>&)>& receive, Fetched& out);
  // The erasure-coded primary's part of a write: reads the old chunks partial stripes need
  // (rebuilding those of missing shards from k others), encodes, writes its own shard
  // (write_local) and forwards the others' (forward). An error Status fails the write;
  // *unanswered: the op ends without a reply (receive gave up).
  using Receive = std::function<bool(Result<Message>&)>;
  // (shard: the shard index a shard write stores; -1 for a replica's copy.)
  using Forward =
      std::function<void(const std::string& to, uint64_t offset, Payload data, int32_t shard)>;
  using WriteLocal = std::function<Status(uint64_t offset, const Payload& data, int32_t shard,
                                          std::vector<DeviceExtent>*)>;
  Status write_coded(const WriteRequest& request, const Payload& payload, Endpoint& own,
                     const Receive& receive, const Forward& forward, const WriteLocal& write_local,
                     std::vector<DeviceExtent>* deferred, bool* unanswered, std::string& error);
  // The codec of `ec` (built once per profile).
  Result<std::shared_ptr<const redundancy::ReedSolomon>> codec(const ErasureCoding& ec);
  void count(uint64_t OsdStats::*field, uint64_t n);
  // After a store operation: an I/O error stops a data-carrying OSD (see the .cc).
  void device_failed(const Status& s);
  double decode_cpu_s_per_byte() const {
    return options_.ec_decode_cpu_s_per_byte >= 0 ? options_.ec_decode_cpu_s_per_byte
                                                  : options_.ec_cpu_s_per_byte;
  }
  void count_read(uint64_t bytes);  // one answered read request of `bytes`
  // OsdServiceOptions::await_active for a client request (on a handler task); false: drop it.
  bool await_active(const Message& m);
  // OsdServiceOptions::active_now for a client read or write.
  bool active_now(const Message& m) const;
  // The interval of `object`'s group now (0 without a placement).
  uint64_t interval_of(const std::string& object) const;
  // Asks the shard OSD `to` for `extent` of its shard of `object`, replies to `own`; the id.
  uint64_t send_shard_read(const std::string& to, const std::string& object,
                           const redundancy::ShardExtent& extent, const ErasureCoding& ec,
                           Endpoint& own);

  OsdService(Env& env, HostId host, Device& device, OsdServiceOptions options);

  Env& env_;
  HostId host_;
  Device& device_;
  OsdServiceOptions options_;
  Endpoint& endpoint_;
  Endpoint& sub_endpoint_;          // sub-ops from other OSDs
  bool sub_shutdown_sent_ = false;  // guarded by mu_
  mutable EnvMutex mu_;
  EnvMutex* store_mu_;                      // guards an ExtentBackend's index
  std::unique_ptr<ObjectBackend> backend_;  // set by the public constructors
  OsdStats stats_;                          // guarded by mu_
  std::map<std::tuple<int, int, uint64_t>, std::shared_ptr<const redundancy::ReedSolomon>>
      codecs_;                   // guarded by mu_
  uint64_t sub_request_id_ = 0;  // guarded by mu_
  // Requests handed to the handler tasks (guarded by mu_), one token each: with an op queue,
  // and client ops that must wait for their group to be active (await_active).
  struct Handed {
    std::shared_ptr<Message> message;
    bool awaits = false;  // call await_active first
    bool client = false;  // from the service's own endpoint (handle_read's `client`)
  };
  std::deque<Handed> pending_;
  int handlers_ = 0, idle_handlers_ = 0;  // guarded by mu_
  std::unique_ptr<Semaphore> pending_sem_;
  // Read for every request received: an atomic, not a lock (a lock is a simcall in SimGrid).
  std::atomic<bool> available_{true};
};

}  // namespace granary::services

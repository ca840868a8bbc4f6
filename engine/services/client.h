// StorageClient: what a GPU node's data loader uses to read a file (a training sample file)
// from the storage design of the world: RADOS objects on OSDs, a Lustre-style parallel file
// system, or an NFS filer. Written against Env only.
//
// How a whole-file read proceeds (names and mapping in file_mapping.h):
//  - rados: the file's object extents (RbdLayout striping); each object -> group -> primary
//    OSD via the Placement; one ReadRequest per extent, at most window_requests in flight (a
//    sliding window, as a client's readahead keeps a few object reads going), or all at once.
//  - pfs: an open on the MDS first unless this client already has the file open (the handle
//    and the size the MDS reported are kept until close_file, which closes every handle the
//    client holds, two if two tasks opened the file at the same time); the read covers the size the
//    MDS reported, which must equal the caller's size_bytes (else corruption). Then the stripe
//    extents of the file's LustreFileLayout, cut into requests of max_request_bytes, all sent
//    at once to the OSTs ("ost.<index>").
//  - nfs: requests of rsize_bytes to the file's head, with at most window_requests in flight
//    (a sliding window: each reply lets the next request go).
// Each request costs cpu_s_per_op, and each data request cpu_s_per_byte per byte it moves, of
// the client host's CPU (Env::compute_s) before it is sent.
// A failed reply makes the read fail with the server's message (kNotFound -> not_found,
// kOutOfRange and kInvalid -> invalid_argument, otherwise io_error); after the first failure
// no new request is sent, and the ones in flight are drained before returning. A reply
// whose length differs from the request is a corruption error.
//
// Replies come to per-call endpoints "<name>.reply.<k>" on the client's host, taken from a
// pool, so any number of tasks of the host may read through one client at once. Every
// successful file read is recorded (latency from the call to the last reply, open included).
//
// Thread-safety: read_file and close_file may be called from any task on the client's host
// concurrently; shared state (the pool, open files, counters, the Placement, which is not
// thread-safe) is guarded by EnvMutexes. The Placement and the pfs layouts must outlive the
// client.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/env.h"
#include "engine/layout/rbd.h"
#include "engine/placement/placement.h"
#include "engine/services/env_mutex.h"
#include "engine/services/file_mapping.h"

namespace granary::services {

struct RadosBackend {
  layout::RbdLayout layout = layout::RbdLayout::default_layout();
  placement::Placement* placement = nullptr;  // required; not owned
  int window_requests = 0;  // object requests in flight per file read or write (0: all at once)
  ErasureCoding ec;         // the pool's erasure code (k = 0: replicated)
  // The epoch of the cluster map behind `placement` (null: it never changes): the host's
  // cluster::MapClient::epoch() (map_client.h), which a cluster::MapPlacement follows. A request
  // unanswered for resend_check_s is sent again to its object's primary of the new epoch once
  // the epoch has moved on (Ceph's clients resend on a new map: a crashed OSD answers nothing
  // until the monitor marks it down; one that comes back has lost what it was sent).
  // Writes: checked every resend_check_s of waiting; a write whose group's interval
  // (Placement::interval_of) changed since it was sent goes at once to the group's primary
  // now, with the group's other OSDs (its old primary discards it, see OsdServiceOptions);
  // one whose group did not change is sent again once it has waited resend_check_s. A write
  // is idempotent (the same bytes at the same offset), so a duplicate does no harm and a
  // late acknowledgement of an earlier send is ignored.
  std::function<uint32_t()> map_epoch = nullptr;
  double resend_check_s = 1.0;
  // Object requests in flight per file write (0: window_requests). A writer's data is buffered
  // (page cache, librados' objecter), so writes go out far deeper than a reader's readahead.
  int write_window_requests = 0;
  // Without a map (map_epoch null): a call whose requests stay unanswered this long fails with
  // an io_error naming the timeout (librados' rados_osd_op_timeout), the requests still in
  // flight are abandoned (their late replies ignored). 0: wait for ever.
  double op_timeout_s = 0;
  // With a map: a request unanswered this long is sent again even when the map has not moved
  // (real mode, where a message can be lost with a connection that reset, or be dropped by a
  // primary whose sub-op timed out; Ceph's Objecter resends on a session reset). 0: never (the
  // simulator, where nothing is lost while the map stands).
  double same_map_resend_s = 0;
};

struct PfsBackend {
  // Every file's layout (not owned), or null: the MDS serves them (open and create replies,
  // MetadataService with an OstAllocator), and the client keeps each open file's.
  const PfsLayouts* layouts = nullptr;
  std::string mds_endpoint = "mds.0";
  uint64_t max_request_bytes = uint64_t{4} << 20;  // Lustre's 4 MiB RPCs
  int window_requests = 0;                         // RPCs in flight per file read (0: all at once)
  // Metadata servers "mds.0" .. "mds.<n-1>" (Lustre DNE): a file's operations go to
  // mds.<str_hash_rjenkins(path) % n>. 0 or 1: all to mds_endpoint.
  int mds_count = 1;
  // A metadata operation unanswered this long fails (kUnavailable); 0: wait for ever.
  double op_timeout_s = 0;
};

struct NfsBackend {
  int32_t heads = 1;                         // the filer heads "nfs.0" .. "nfs.<heads-1>"
  uint64_t rsize_bytes = uint64_t{1} << 20;  // NFS rsize
  int window_requests = 16;                  // >= 1: RPCs in flight per file read
  // >= 0: every file is on this head (design local: the node's own drives hold a copy of
  // every file); -1: on the head nfs_head_of picks from its path.
  int32_t local_head = -1;

  int32_t head_of(std::string_view path) const {
    return local_head >= 0 ? local_head : nfs_head_of(path, heads);
  }
};

using StorageBackend = std::variant<RadosBackend, PfsBackend, NfsBackend>;

struct StorageClientOptions {
  std::string name = "client";  // unique in the world: the prefix of the reply endpoints
  double cpu_s_per_op = 0;      // client CPU per request (a protocol's client_cpu_us_per_op)
  // Client CPU per data byte a request moves (a protocol's cpu_us_per_mib: copies, checksums;
  // 0 when the data lands in place, zero_copy).
  double cpu_s_per_byte = 0;
};

struct FileRead {
  uint64_t bytes = 0;
  double latency_s = 0;
  uint64_t requests = 0;  // data requests (metadata not counted)
};

struct WriteOptions {
  // Durable before write_file returns: rados and pfs writes are acknowledged once durable
  // anyway; nfs sends its WRITEs unstable and then a COMMIT. Without it an nfs write returns
  // once the server has acknowledged the data (in its memory).
  bool fsync = true;
};

struct FileWrite {
  uint64_t bytes = 0;
  double latency_s = 0;  // the call to the last acknowledgement (commit included)
  uint64_t requests = 0;
};

struct ClientStats {
  uint64_t files_read = 0;  // successful reads
  uint64_t bytes_read = 0;
  uint64_t requests = 0;               // data requests sent
  uint64_t metadata_ops = 0;           // opens and closes sent
  uint64_t errors = 0;                 // failed file reads and closes
  std::vector<double> file_latency_s;  // per successful file read, in completion order
  uint64_t resent = 0;                 // read requests sent again after a map change
  // Time read requests waited before being sent again (each send's wait, summed), and reads
  // waited for a placement group with no OSD to serve it.
  double blocked_s = 0;
  uint64_t files_written = 0;
  uint64_t bytes_written = 0;
  uint64_t write_requests = 0;          // first sends; resends are counted in writes_resent
  uint64_t writes_resent = 0;           // write requests sent again after a map change
  double write_blocked_s = 0;           // as blocked_s, for writes
  std::vector<double> write_latency_s;  // per successful file write, in completion order
};

class StorageClient {
 public:
  StorageClient(Env& env, HostId host, StorageBackend backend, StorageClientOptions options);
  StorageClient(const StorageClient&) = delete;
  StorageClient& operator=(const StorageClient&) = delete;

  // Reads the whole file `path` of `size_bytes` (see the header comment); blocks the calling
  // task until every reply is in.
  // With `data` (rados and pfs): the file's bytes, as the OSDs or OSTs returned them, are put there
  // (size_bytes of them; the reply's own buffer when one object extent holds the file, no copy);
  // OSDs that keep no bytes (the size-only simulation) make that an error.
  Result<FileRead> read_file(std::string_view path, uint64_t size_bytes, Buffer* data = nullptr);
  // pfs: closes the client's handle on the MDS (error if the client has none). Other designs
  // have no open state: OK.
  Status close_file(std::string_view path);
  // Writes the whole file `path` of `size_bytes` (creating it), blocking until acknowledged:
  //  - rados: one WriteRequest per object extent to the primary, with the group's other OSDs
  //    (replicas) or every shard (erasure-coded pools), window_requests in flight.
  //  - pfs: a create on the MDS, the stripe extents to the OSTs in RPCs of max_request_bytes
  //    (window_requests in flight), then a close that records the size.
  //  - nfs: WRITE RPCs of rsize_bytes, unstable, window_requests in flight, then a COMMIT
  //    when options.fsync.
  // Failures as for read_file. With a changing map (RadosBackend::map_epoch) each write goes
  // to its object's group as the map has it when sent, with the group's interval, and follows
  // the map as the backend's comment says.
  Result<FileWrite> write_file(std::string_view path, uint64_t size_bytes,
                               WriteOptions options = {});
  // Writes `data` as the whole file `path` (rados and pfs; its size is data.size_bytes): each
  // request carries its bytes and a version (the client's next write number:
  // increasing per client, so one writer's writes of an object are ordered; engine/services/
  // object_backend.h). A payload without bytes is a size-only write.
  Result<FileWrite> write_file(std::string_view path, const Payload& data,
                               WriteOptions options = {});

  // rados only (an RBD image's block I/O, block_volume.h): reads or writes
  // [offset, offset + length) of the image or file `path`, one request per object extent, all
  // in flight at once; a write goes to the primary with the group's other OSDs or shards, and
  // is acknowledged once durable. While a group has no OSD (an inactive PG) the call waits for
  // a map that brings one back, as for read_file. The bytes moved; failures as for read_file.
  // Counted in requests / write_requests, not in files_read or files_written.
  // With `data`: the bytes read, as read_file.
  Result<uint64_t> read_extent(std::string_view path, uint64_t offset, uint64_t length,
                               Buffer* data = nullptr);
  Result<uint64_t> write_extent(std::string_view path, uint64_t offset, uint64_t length);
  // Writes `data` at `offset` of `path`, carrying its bytes and versions as write_file does.
  Result<uint64_t> write_extent(std::string_view path, uint64_t offset, const Payload& data);

  HostId host() const { return host_; }
  ClientStats stats() const;
  // Data bytes received so far, counted reply by reply (readable at any time without a lock).
  uint64_t bytes_received() const { return bytes_received_.load(std::memory_order_relaxed); }

 private:
  Endpoint& take_reply_endpoint();
  void return_reply_endpoint(Endpoint& ep);
  uint64_t next_request_id();
  Result<uint64_t> metadata(MetadataOp op, std::string_view path, Endpoint& reply_ep,
                            int64_t size_bytes = -1);
  Result<MetadataReply> metadata_reply(MetadataOp op, std::string_view path, Endpoint& reply_ep,
                                       int64_t size_bytes = -1);
  Result<uint64_t> pfs_open(std::string_view path, Endpoint& reply_ep);
  // pfs: the file's layout (PfsBackend::layouts, or the MDS's for a file this client has open).
  Result<layout::LustreFileLayout> pfs_layout(std::string_view path);
  // pfs, nfs: the requests for the whole file (rados: plan_rados).
  Result<std::vector<ObjectRead>> plan(std::string_view path, uint64_t size_bytes);
  // `n` fresh write versions (see write_file).
  std::vector<uint64_t> next_versions(size_t n);
  // A request sent at `sent_s` and unanswered under the same map for same_map_resend_s
  // (RadosBackend): it is sent again.
  bool presumed_lost(const RadosBackend* rados, double sent_s) const;
  // The next reply: waiting resend_check_s with a changing map (to look at it again),
  // op_timeout_s without one (kNotFound: nothing came), else for ever.
  Result<Message> await_reply(Endpoint& reply_ep, const RadosBackend* rados);
  // Sends `reads` (planned under map epoch planned_epoch), window at a time, and collects the
  // replies, re-targeting with the map (RadosBackend::map_epoch). `replies` (if not null)
  // receives each read's payload, by index.
  Result<uint64_t> exchange(const std::vector<ObjectRead>& reads, size_t window, Endpoint& reply_ep,
                            uint32_t planned_epoch, std::vector<Payload>* replies = nullptr);
  // `payloads` (if not null): each write's data, by index, sent with a version.
  Result<uint64_t> exchange_writes(const std::vector<ObjectRead>& writes, size_t window,
                                   bool durable, Endpoint& reply_ep,
                                   const std::vector<Payload>* payloads = nullptr);
  // With data: the file ranges each request carries (rados: per object extent of
  // [offset, offset + length), as rados_reads plans them; pfs: per request of `requests`).
  Result<std::vector<std::vector<layout::ByteRange>>> rados_file_ranges(const RadosBackend& rados,
                                                                        uint64_t offset,
                                                                        uint64_t length);
  Result<std::vector<std::vector<layout::ByteRange>>> pfs_ranges(
      const layout::LustreFileLayout& layout, std::string_view path,
      const std::vector<ObjectRead>& requests);
  // Each request's bytes cut from `data` (the file's bytes from `offset`) along `ranges`, or,
  // reading, the replies assembled into [offset, offset + length).
  Result<std::vector<Payload>> split_ranges(
      uint64_t offset, const Payload& data,
      const std::vector<std::vector<layout::ByteRange>>& ranges);
  Status gather_ranges(uint64_t offset, uint64_t length,
                       const std::vector<std::vector<layout::ByteRange>>& ranges,
                       const std::vector<Payload>& replies, Buffer* data);
  Result<FileWrite> write_whole(std::string_view path, uint64_t size_bytes, const Payload* data,
                                WriteOptions options);
  Result<uint64_t> write_range(std::string_view path, uint64_t offset, uint64_t length,
                               const Payload* data);
  size_t window_of() const;
  // rados: the requests for [offset, offset + length) of `path`, waiting (with map_epoch) while
  // a group has no device; the time waited is added to stats_.*blocked.
  // *planned_epoch (if not null) is the map epoch the plan was made under.
  Result<std::vector<ObjectRead>> plan_rados(const RadosBackend& rados, std::string_view path,
                                             uint64_t offset, uint64_t length, bool with_group,
                                             double ClientStats::*blocked,
                                             uint32_t* planned_epoch = nullptr);

  Env& env_;
  HostId host_;
  StorageBackend backend_;
  StorageClientOptions options_;
  mutable EnvMutex mu_;    // everything below
  EnvMutex placement_mu_;  // the Placement
  std::vector<Endpoint*> free_reply_endpoints_;
  int reply_endpoints_made_ = 0;
  uint64_t request_id_ = 0;
  uint64_t write_version_ = 0;  // the last version given to a write with data
  struct OpenFile {
    uint64_t size_bytes = 0;         // as the MDS reported it
    int handles = 0;                 // MDS handles this client holds
    uint64_t stripe_size_bytes = 0;  // the layout the MDS gave (0: none)
    std::vector<uint32_t> ost_indices;
  };
  std::map<std::string, OpenFile, std::less<>> open_files_;  // pfs
  ClientStats stats_;
  std::atomic<uint64_t> bytes_received_{0};
};

// The Status a failed reply stands for.
Status reply_status(ReplyError code, const std::string& message);

}  // namespace granary::services

// BlockVolume: a client's handle on an RBD image, what librbd is to a VM or a node's system
// disk: block reads and writes of the image become RADOS object requests through a
// StorageClient (read_extent / write_extent: the image is striped by the client's RbdLayout,
// object names "<image>.<object_no as 16 hex>", file_mapping.h).
//
// A clone (spec.parent set) starts with no objects of its own, as `rbd clone` makes it:
//  - a read of an object the clone has not written is served from the parent image's object
//    (same object number and offsets: a clone has its parent's size and layout);
//  - the first write to such an object copies the parent's object up (librbd's
//    CopyupRequest): the client reads the parent object whole, then writes the whole object
//    into the clone — the new data included — and from then on the object is the clone's.
//    Other I/O to an object while its copy-up runs waits for it to finish.
// A read that spans objects of both kinds is split in two (clone's part, then parent's part).
//
// Not modelled: librbd's object map and cache, copy-on-read, discard; the image's header and
// id objects (their I/O is at open time only).
//
// Thread-safety: read() and write() may be called from any task of the client's host at
// once (a queue depth); the copy-up state is guarded by an EnvMutex. The client and layout
// must outlive the volume.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/env.h"
#include "engine/layout/rbd.h"
#include "engine/services/client.h"
#include "engine/services/env_mutex.h"

namespace granary::services {

struct BlockVolumeSpec {
  std::string image;        // the image's path: its objects are "<image>.<object_no hex>"
  uint64_t size_bytes = 0;  // > 0
  std::string parent;       // "" or the parent image of a clone
};

struct BlockIo {
  uint64_t bytes = 0;    // the op's bytes
  double latency_s = 0;  // call to completion, copy-up included
  int copyups = 0;       // objects copied up from the parent by this op
};

struct BlockVolumeStats {
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t parent_reads = 0;  // reads (or parts) served from the parent image
  uint64_t copyups = 0;       // objects copied up
  uint64_t copyup_bytes = 0;  // parent object bytes read and written again by copy-ups
};

class BlockVolume {
 public:
  // invalid_argument for a zero size.
  static Result<std::unique_ptr<BlockVolume>> open(Env& env, StorageClient& client,
                                                   const layout::RbdLayout& layout,
                                                   BlockVolumeSpec spec);

  // invalid_argument for a zero length or a range past the image's end.
  Result<BlockIo> read(uint64_t offset, uint64_t length);
  Result<BlockIo> write(uint64_t offset, uint64_t length);
  // With bytes (real mode, carried data): a read that puts the range's bytes in `data` (null:
  // as read above), a write that carries `data` (its size the length). not_supported for a
  // clone (a copy-up would have to merge the parent's bytes with the write's).
  Result<BlockIo> read(uint64_t offset, uint64_t length, Buffer* data);
  Result<BlockIo> write(uint64_t offset, const Payload& data);

  const BlockVolumeSpec& spec() const { return spec_; }
  BlockVolumeStats stats() const;
  // Objects the image holds itself (every object of a non-clone; a clone's copied-up ones).
  bool owns_object(uint64_t object_no) const;

 private:
  BlockVolume(Env& env, StorageClient& client, const layout::RbdLayout& layout,
              BlockVolumeSpec spec);
  Status check_range(uint64_t offset, uint64_t length) const;
  // Copies object `object_no` up from the parent unless the clone has it; waits for a copy-up
  // already running. True when this call did the copy-up.
  Result<bool> ensure_owned(uint64_t object_no);

  Env& env_;
  StorageClient& client_;
  const layout::RbdLayout& layout_;
  BlockVolumeSpec spec_;
  mutable EnvMutex mu_;
  std::set<uint64_t> owned_;                                             // clone: objects copied up
  std::map<uint64_t, std::vector<std::shared_ptr<Semaphore>>> copying_;  // object -> waiters
  BlockVolumeStats stats_;
};

}  // namespace granary::services

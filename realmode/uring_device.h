// UringDevice: a Device (engine/env.h) on a raw block device or a preallocated file, through
// io_uring (liburing) with O_DIRECT: the page cache never holds the data, so what the engine
// measures is the drive, as fio --direct=1 measures it.
//
// I/O. A read or write is split into pieces of at most max_io_bytes, submitted together and
// waited for; at most queue_depth pieces are in flight on the device at once, from all threads
// (a thread that would exceed it waits for a slot). Each calling thread has its own ring on the
// device, made on its first call: it submits its pieces there and waits for their completions
// in the kernel itself. io_uring completes a read or write in the context of the task that
// submitted it, so a shared ring would cost every I/O extra wake-ups of other threads (measured:
// 5,000 random 4 KiB IOPS at queue depth 32 with a shared ring and a reaper thread, against fio's
// 100,000); with the submitter waiting on its own ring, one wake-up. A short transfer is
// resubmitted for its remainder; an error is an IOError naming the path, the operation, the
// range and errno's text. A thread's ring lives until the device is closed.
//
// Alignment. O_DIRECT moves whole logical blocks (kBlockBytes, 4096: it also satisfies 512-byte
// devices) between aligned memory and aligned offsets. A read of any range reads the aligned
// blocks that cover it into aligned memory (engine/buffer.h) and returns a view of the range
// (no copy). A write of whole blocks from aligned memory goes as it is; from unaligned memory
// it is copied into aligned memory first; a write of part of a block reads the blocks at its
// edges, overlays the bytes and writes the blocks (read-modify-write). Read-modify-writes are
// serialised against every other write of the device (a shared/exclusive lock), so that no
// concurrent write to other bytes of an edge block is lost.
//
// Durability (engine/env.h's contract): flush() is an fdatasync through the ring, after which
// every write that completed before it is durable; a file is preallocated (fallocate) so that
// flushing needs no allocation. A size-only payload (no bytes: the simulator's) writes nothing,
// as the contract allows ("leaves the contents alone").
//
// A slow drive (set_slowdown) is the real drive with every I/O's service time multiplied: what
// the simulator's slow_drive does to a drive's bandwidth, relative to the drive at hand.
//
// Thread-safety: every method may be called from any thread at once.
#pragma once

#include <liburing.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/env.h"

namespace granary::realmode {

struct UringDeviceOptions {
  DeviceId id = 0;
  HostId host = 0;
  // A block device, or a file: created when missing and preallocated to capacity_bytes.
  std::string path;
  // The device's size: a file's is set to it (0: keep the file's size); a block device is
  // used up to it (0: the whole device). A multiple of kBlockBytes.
  uint64_t capacity_bytes = 0;
  unsigned queue_depth = 32;         // pieces in flight at once, 1..4096
  uint32_t max_io_bytes = 1u << 20;  // one piece moves at most this many bytes (a block multiple)
  // Fault injection (tests): called with every write before it is made, from the writing
  // thread; it may do anything a test needs, e.g. kill the process partway (granary-osd's
  // --kill-at-journal-write). Null: none.
  std::function<void(uint64_t offset, const Payload& data)> before_write;
  // Called with every write or flush error, and every error of a drive set_failed failed,
  // before it is returned, from the thread that got it: granary-osd stops there, as ceph-osd
  // aborts on a write error of its device. A read's error is only returned (Ceph repairs an
  // object whose read fails from its other copies: OsdServiceOptions::peers_of). Null: errors
  // are only returned.
  std::function<void(const Status& error)> on_error;
};

class UringDevice final : public Device {
 public:
  static constexpr uint64_t kBlockBytes = 4096;

  // Opens (and for a file, creates and preallocates) the device. InvalidArgument for options
  // out of range; IOError naming the path for open/fallocate failures; NotSupported when the
  // kernel refuses io_uring or the file system refuses O_DIRECT (the message says which).
  static Result<std::unique_ptr<UringDevice>> open(const UringDeviceOptions& options);
  ~UringDevice() override;

  DeviceId id() const override { return options_.id; }
  HostId host() const override { return options_.host; }
  uint64_t capacity_bytes() const override { return capacity_; }
  Result<Payload> read(uint64_t offset, uint64_t length) override;
  // Every range's pieces submitted together (within the queue depth), then waited for.
  Result<std::vector<Payload>> read_ranges(
      const std::vector<std::pair<uint64_t, uint64_t>>& ranges) override;
  Status write(uint64_t offset, const Payload& data) override;
  Status flush() override;

  const std::string& path() const { return options_.path; }

  // Fault injection (granary real's slow_drive): every I/O of the device takes `factor` times
  // as long as the drive took, holding its slot of the queue depth meanwhile: a submission's
  // completions are handed back at start + factor x (completion - start). 1: the drive as it
  // is. Takes effect for I/Os submitted after the call.
  void set_slowdown(double factor) { slowdown_.store(factor < 1 ? 1.0 : factor); }
  double slowdown() const { return slowdown_.load(); }
  // Fault injection (granary real's drive_failure): while failed, every read, write and flush
  // fails with an IOError ("Input/output error", as a dead drive's EIO) and touches nothing.
  void set_failed(bool failed) { failed_.store(failed); }
  bool failed() const { return failed_.load(); }
  // Fault injection (latent sector errors): the 4 KiB blocks that cover `ranges` ({offset,
  // length} in bytes) become unreadable: a read touching one fails with an IOError ("a medium
  // error"), as a drive's read of a bad sector does; a write of a block makes it good again (the
  // drive remaps the sector). Replaces the earlier set; none: every block reads.
  void set_bad_ranges(const std::vector<std::pair<uint64_t, uint64_t>>& ranges);
  uint64_t bad_blocks() const;

 private:
  struct Piece;
  struct ThreadRing;
  explicit UringDevice(UringDeviceOptions options);
  Status check_range(const char* op, uint64_t offset, uint64_t length) const;
  // write() past its checks: the bytes to the drive.
  Status write_bytes(uint64_t offset, const Payload& data);
  // Reads or writes [offset, offset + size) of aligned memory at `memory`, in pieces.
  Status transfer(bool write, std::byte* memory, uint64_t offset, uint64_t size);
  // transfer() of several extents at once: every piece of all of them submitted together.
  struct Extent {
    std::byte* memory;
    uint64_t offset, size;
  };
  Status transfer_extents(bool write, const std::vector<Extent>& extents);
  // Submits the pieces on the calling thread's ring, within the device's queue depth, and waits
  // until all completed (their results in the pieces).
  Status submit_and_wait(std::vector<Piece>& pieces);
  // The calling thread's ring on this device (made on first use).
  Result<io_uring*> thread_ring();
  // Takes up to `want` of the queue depth's free slots, waiting for one when `wait`.
  unsigned take_slots(unsigned want, bool wait);
  void give_slots(unsigned n);

  UringDeviceOptions options_;
  uint64_t capacity_ = 0;
  int fd_ = -1;
  uint64_t serial_ = 0;  // unique per device opened in the process (threads' ring caches)

  std::atomic<unsigned> in_flight_{0};      // pieces submitted and not yet completed
  std::atomic<unsigned> space_waiters_{0};  // threads waiting for a slot
  std::mutex mutex_;                        // rings_, and the waits for a slot
  std::condition_variable space_;           // a slot of the queue depth came free
  std::vector<std::unique_ptr<ThreadRing>> rings_;

  std::shared_mutex write_lock_;  // shared: whole-block writes; exclusive: read-modify-writes
  std::atomic<double> slowdown_{1.0};
  std::atomic<bool> failed_{false};
  mutable std::mutex bad_mu_;
  std::set<uint64_t> bad_;  // unreadable blocks (set_bad_ranges), guarded by bad_mu_
  std::atomic<bool> any_bad_{false};
  // The error of an operation, after on_error has seen it (a read's: only on a failed drive).
  Status report(Status error, bool read = false) const;
  // A medium error when [offset, offset + length) touches a bad block, else OK.
  Status bad_sector(uint64_t offset, uint64_t length) const;
  // A write of [offset, offset + length) completed: its blocks are good again.
  void remap(uint64_t offset, uint64_t length);
  // The injected failure's error for `op` at a range, or OK.
  Status injected(const char* op, uint64_t offset, uint64_t length) const;
};

}  // namespace granary::realmode

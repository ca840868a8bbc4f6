// UringDevice (uring_device.h).
#include "realmode/uring_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace granary::realmode {

enum class PieceKind { kRead, kWrite, kFlush };

struct UringDevice::Piece {
  PieceKind kind = PieceKind::kRead;
  std::byte* memory = nullptr;
  uint64_t offset = 0;
  uint32_t length = 0;
  int result = 0;
};

struct UringDevice::ThreadRing {
  io_uring ring{};
  ~ThreadRing() { io_uring_queue_exit(&ring); }
};

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

bool block_multiple(uint64_t v) {
  return v % UringDevice::kBlockBytes == 0;
}

}  // namespace

Result<std::unique_ptr<UringDevice>> UringDevice::open(const UringDeviceOptions& o) {
  const std::string& path = o.path;
  if (path.empty()) return Status::invalid_argument("device path: expected a path, found none");
  if (o.queue_depth < 1 || o.queue_depth > 4096) {
    return Status::invalid_argument(path + ": queue depth: expected 1..4096, found " +
                                    std::to_string(o.queue_depth));
  }
  if (o.max_io_bytes < kBlockBytes || !block_multiple(o.max_io_bytes)) {
    return Status::invalid_argument(path + ": max_io_bytes: expected a multiple of 4096, found " +
                                    std::to_string(o.max_io_bytes));
  }
  if (!block_multiple(o.capacity_bytes)) {
    return Status::invalid_argument(path + ": capacity: expected a multiple of 4096 bytes, found " +
                                    std::to_string(o.capacity_bytes));
  }
  std::unique_ptr<UringDevice> d(new UringDevice(o));
  d->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
  if (d->fd_ < 0) {
    const int e = errno;
    if (e == EINVAL) {
      return Status::not_supported(path + ": the file system refuses O_DIRECT (" + errno_text(e) +
                                   "); use a block device or an ext4/xfs file");
    }
    return Status::io_error(path + ": cannot open the device: " + errno_text(e));
  }
  struct stat st {};
  if (::fstat(d->fd_, &st) != 0) return Status::io_error(path + ": " + errno_text(errno));
  if (S_ISBLK(st.st_mode)) {
    uint64_t size = 0;
    if (::ioctl(d->fd_, BLKGETSIZE64, &size) != 0) {
      return Status::io_error(path + ": cannot read the block device's size: " + errno_text(errno));
    }
    size -= size % kBlockBytes;
    if (o.capacity_bytes > size) {
      return Status::invalid_argument(path + ": capacity: expected at most the device's " +
                                      std::to_string(size) + " bytes, found " +
                                      std::to_string(o.capacity_bytes));
    }
    d->capacity_ = o.capacity_bytes > 0 ? o.capacity_bytes : size;
  } else if (S_ISREG(st.st_mode)) {
    const auto size = static_cast<uint64_t>(st.st_size);
    d->capacity_ = o.capacity_bytes > 0 ? o.capacity_bytes : size - size % kBlockBytes;
    if (d->capacity_ == 0) {
      return Status::invalid_argument(path + ": capacity: an empty file needs capacity_bytes");
    }
    // Allocated up front: a flush then never waits for allocation, and the drive's space is
    // known to be there.
    if (d->capacity_ > size) {
      if (::fallocate(d->fd_, 0, 0, static_cast<off_t>(d->capacity_)) != 0) {
        return Status::io_error(path + ": cannot preallocate " + std::to_string(d->capacity_) +
                                " bytes: " + errno_text(errno));
      }
    }
  } else {
    return Status::invalid_argument(path + ": expected a block device or a regular file");
  }
  static std::atomic<uint64_t> serials{0};
  d->serial_ = ++serials;
  // The opening thread's ring, now: a kernel without io_uring is refused here.
  if (Result<io_uring*> ring = d->thread_ring(); !ring.ok()) return ring.status();
  return d;
}

UringDevice::UringDevice(UringDeviceOptions options) : options_(std::move(options)) {}

UringDevice::~UringDevice() {
  rings_.clear();  // every caller has its completions before it returns: nothing in flight
  if (fd_ >= 0) ::close(fd_);
}

Result<io_uring*> UringDevice::thread_ring() {
  // The thread's rings by device serial (a serial is never reused, so an entry of a closed
  // device is never taken for a new one).
  thread_local std::vector<std::pair<uint64_t, io_uring*>> cache;
  for (const auto& [serial, ring] : cache) {
    if (serial == serial_) return ring;
  }
  auto r = std::make_unique<ThreadRing>();
  // One thread submits and waits on the ring: its completions' work runs when it waits
  // (DEFER_TASKRUN, Linux 6.1), not by interrupting it; older kernels refuse the flags.
  int e = io_uring_queue_init(options_.queue_depth, &r->ring,
                              IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
  if (e == -EINVAL) e = io_uring_queue_init(options_.queue_depth, &r->ring, 0);
  if (e < 0) {
    return Status::not_supported(options_.path + ": io_uring is not available: " + errno_text(-e));
  }
  io_uring* ring = &r->ring;
  {
    std::lock_guard lock(mutex_);
    rings_.push_back(std::move(r));
  }
  cache.emplace_back(serial_, ring);
  return ring;
}

unsigned UringDevice::take_slots(unsigned want, bool wait) {
  const unsigned depth = options_.queue_depth;
  unsigned cur = in_flight_.load();
  while (true) {
    if (cur >= depth) {
      if (!wait) return 0;
      std::unique_lock lock(mutex_);
      ++space_waiters_;  // seen by give_slots after its decrement (both sequentially consistent)
      space_.wait(lock, [&] { return in_flight_.load() < depth; });
      --space_waiters_;
      cur = in_flight_.load();
      continue;
    }
    const unsigned n = std::min(want, depth - cur);
    if (in_flight_.compare_exchange_weak(cur, cur + n)) return n;
  }
}

void UringDevice::give_slots(unsigned n) {
  in_flight_.fetch_sub(n);
  if (space_waiters_.load() > 0) {
    { std::lock_guard lock(mutex_); }
    space_.notify_all();
  }
}

Status UringDevice::submit_and_wait(std::vector<Piece>& pieces) {
  Result<io_uring*> r = thread_ring();
  if (!r.ok()) return r.status();
  io_uring* ring = *r;
  size_t next = 0;
  unsigned outstanding = 0;
  const double slowdown = slowdown_.load();
  const auto start = std::chrono::steady_clock::now();
  while (next < pieces.size() || outstanding > 0) {
    // As many pieces as free slots allow; wait for a slot only with nothing of ours in flight.
    const auto want = static_cast<unsigned>(std::min<size_t>(pieces.size() - next, 1u << 30));
    const unsigned n = want > 0 ? take_slots(want, outstanding == 0) : 0;
    for (unsigned i = 0; i < n; ++i, ++next) {
      Piece& p = pieces[next];
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      GRANARY_CHECK(sqe != nullptr);  // at most queue_depth in flight on a ring of that size
      switch (p.kind) {
        case PieceKind::kRead:
          io_uring_prep_read(sqe, fd_, p.memory, p.length, p.offset);
          break;
        case PieceKind::kWrite:
          io_uring_prep_write(sqe, fd_, p.memory, p.length, p.offset);
          break;
        case PieceKind::kFlush:
          io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
          break;
      }
      io_uring_sqe_set_data(sqe, &p);
    }
    if (outstanding + n == 0) continue;
    outstanding += n;
    // Submits and waits for a completion in one system call.
    int w;
    do {
      w = io_uring_submit_and_wait(ring, 1);
    } while (w == -EINTR);
    GRANARY_CHECK(w >= 0);
    constexpr unsigned kMaxBatch = 64;
    io_uring_cqe* cqes[kMaxBatch];
    const unsigned done = io_uring_peek_batch_cqe(ring, cqes, kMaxBatch);
    for (unsigned i = 0; i < done; ++i) {
      static_cast<Piece*>(io_uring_cqe_get_data(cqes[i]))->result = cqes[i]->res;
    }
    io_uring_cq_advance(ring, done);
    if (slowdown > 1) {
      // A slow drive: these completions come back at start + slowdown x their service time.
      const auto took = std::chrono::steady_clock::now() - start;
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(took * slowdown));
    }
    outstanding -= done;
    give_slots(done);
  }
  return Status();
}

Status UringDevice::transfer(bool write, std::byte* memory, uint64_t offset, uint64_t size) {
  return transfer_extents(write, {Extent{memory, offset, size}});
}

Status UringDevice::transfer_extents(bool write, const std::vector<Extent>& extents) {
  const PieceKind kind = write ? PieceKind::kWrite : PieceKind::kRead;
  std::vector<Piece> pieces;
  for (const Extent& e : extents) {
    for (uint64_t at = 0; at < e.size; at += options_.max_io_bytes) {
      const auto n = static_cast<uint32_t>(std::min<uint64_t>(options_.max_io_bytes, e.size - at));
      pieces.push_back({kind, e.memory + at, e.offset + at, n, 0});
    }
  }
  while (!pieces.empty()) {
    if (Status s = submit_and_wait(pieces); !s.ok()) return s;
    std::vector<Piece> rest;
    for (const Piece& p : pieces) {
      if (p.result < 0 || (p.result == 0 && p.length > 0)) {
        return Status::io_error(
            options_.path + ": " + (write ? "write" : "read") + " of " + std::to_string(p.length) +
            " bytes at offset " + std::to_string(p.offset) + ": " +
            (p.result < 0 ? errno_text(-p.result) : std::string("no bytes moved")));
      }
      const auto moved = static_cast<uint32_t>(p.result);
      if (moved < p.length) {  // a short transfer: the rest again
        rest.push_back({kind, p.memory + moved, p.offset + moved, p.length - moved, 0});
      }
    }
    pieces = std::move(rest);
  }
  return Status();
}

Status UringDevice::check_range(const char* op, uint64_t offset, uint64_t length) const {
  if (offset > capacity_ || length > capacity_ - offset) {
    return Status::invalid_argument(options_.path + ": " + op + " of " + std::to_string(length) +
                                    " bytes at offset " + std::to_string(offset) +
                                    " does not fit the device's " + std::to_string(capacity_) +
                                    " bytes");
  }
  return Status();
}

Status UringDevice::report(Status error, bool read) const {
  if (!error.ok() && error.code() == Status::Code::kIOError && options_.on_error &&
      (!read || failed_.load())) {
    options_.on_error(error);
  }
  return error;
}

void UringDevice::set_bad_ranges(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::lock_guard lock(bad_mu_);
  bad_.clear();
  for (const auto& [offset, length] : ranges) {
    if (length == 0) continue;
    for (uint64_t b = offset / kBlockBytes; b <= (offset + length - 1) / kBlockBytes; ++b) {
      bad_.insert(b);
    }
  }
  any_bad_.store(!bad_.empty());
}

uint64_t UringDevice::bad_blocks() const {
  std::lock_guard lock(bad_mu_);
  return bad_.size();
}

Status UringDevice::bad_sector(uint64_t offset, uint64_t length) const {
  if (!any_bad_.load(std::memory_order_relaxed) || length == 0) return Status();
  std::lock_guard lock(bad_mu_);
  auto it = bad_.lower_bound(offset / kBlockBytes);
  if (it == bad_.end() || *it > (offset + length - 1) / kBlockBytes) return Status();
  return Status::io_error(options_.path + ": read of " + std::to_string(length) +
                          " bytes at offset " + std::to_string(offset) + ": " + errno_text(EIO) +
                          " (injected: a medium error in block " + std::to_string(*it) + ")");
}

void UringDevice::remap(uint64_t offset, uint64_t length) {
  if (!any_bad_.load(std::memory_order_relaxed) || length == 0) return;
  std::lock_guard lock(bad_mu_);
  bad_.erase(bad_.lower_bound(offset / kBlockBytes),
             bad_.upper_bound((offset + length - 1) / kBlockBytes));
  any_bad_.store(!bad_.empty());
}

Status UringDevice::injected(const char* op, uint64_t offset, uint64_t length) const {
  if (!failed_.load()) return Status();
  return report(Status::io_error(options_.path + ": " + op + " of " + std::to_string(length) +
                                 " bytes at offset " + std::to_string(offset) + ": " +
                                 errno_text(EIO) + " (injected: the drive failed)"));
}

Result<Payload> UringDevice::read(uint64_t offset, uint64_t length) {
  if (Status s = check_range("read", offset, length); !s.ok()) return s;
  if (Status s = injected("read", offset, length); !s.ok()) return s;
  if (Status s = bad_sector(offset, length); !s.ok()) return s;
  const uint64_t first = offset - offset % kBlockBytes;
  const uint64_t end = (offset + length + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  MutableBuffer blocks(end - first);
  if (length > 0) {
    if (Status s = transfer(false, blocks.data(), first, end - first); !s.ok()) {
      return report(s, /*read=*/true);
    }
  }
  return Payload::of(std::move(blocks).freeze().slice(offset - first, length));
}

Result<std::vector<Payload>> UringDevice::read_ranges(
    const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::vector<MutableBuffer> blocks;
  std::vector<Extent> extents;
  blocks.reserve(ranges.size());
  for (const auto& [offset, length] : ranges) {
    if (Status s = check_range("read", offset, length); !s.ok()) return s;
    if (Status s = injected("read", offset, length); !s.ok()) return s;
    if (Status s = bad_sector(offset, length); !s.ok()) return s;
    const uint64_t first = offset - offset % kBlockBytes;
    const uint64_t end = (offset + length + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    blocks.emplace_back(end - first);
    if (length > 0) extents.push_back({blocks.back().data(), first, end - first});
  }
  if (!extents.empty()) {
    if (Status s = transfer_extents(false, extents); !s.ok()) return report(s, /*read=*/true);
  }
  std::vector<Payload> out;
  out.reserve(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& [offset, length] = ranges[i];
    out.push_back(Payload::of(std::move(blocks[i]).freeze().slice(offset % kBlockBytes, length)));
  }
  return out;
}

Status UringDevice::write(uint64_t offset, const Payload& data) {
  if (Status s = check_range("write", offset, data.size_bytes); !s.ok()) return s;
  if (!data.bytes) return Status();  // size-only: the contents stay (uring_device.h)
  if (data.bytes.size() != data.size_bytes) {
    return Status::invalid_argument(options_.path + ": a payload of " +
                                    std::to_string(data.size_bytes) + " bytes holds " +
                                    std::to_string(data.bytes.size()));
  }
  const uint64_t length = data.size_bytes;
  if (length == 0) return Status();
  if (Status s = injected("write", offset, length); !s.ok()) return s;
  Status written = write_bytes(offset, data);
  if (written.ok()) remap(offset, length);
  return report(std::move(written));
}

Status UringDevice::write_bytes(uint64_t offset, const Payload& data) {
  const uint64_t length = data.size_bytes;
  if (options_.before_write) options_.before_write(offset, data);
  if (block_multiple(offset) && block_multiple(length)) {
    std::shared_lock lock(write_lock_);
    if (data.bytes.aligned()) {
      // io_uring only reads the memory of a write.
      return transfer(true, const_cast<std::byte*>(data.bytes.data()), offset, length);
    }
    MutableBuffer copy(length);
    copy.write_at(0, data.bytes.span());
    return transfer(true, copy.data(), offset, length);
  }
  // Part of a block: read the edge blocks, overlay, write the blocks back, alone.
  std::unique_lock lock(write_lock_);
  const uint64_t first = offset - offset % kBlockBytes;
  const uint64_t end = (offset + length + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  MutableBuffer blocks(end - first);
  if (!block_multiple(offset)) {
    if (Status s = transfer(false, blocks.data(), first, kBlockBytes); !s.ok()) return s;
  }
  const uint64_t last = end - kBlockBytes;
  if (!block_multiple(offset + length) && (last != first || block_multiple(offset))) {
    if (Status s = transfer(false, blocks.data() + (last - first), last, kBlockBytes); !s.ok()) {
      return s;
    }
  }
  blocks.write_at(offset - first, data.bytes.span());
  return transfer(true, blocks.data(), first, end - first);
}

Status UringDevice::flush() {
  if (Status s = injected("flush", 0, 0); !s.ok()) return s;
  std::vector<Piece> fsync = {{PieceKind::kFlush, nullptr, 0, 0, 0}};
  if (Status s = submit_and_wait(fsync); !s.ok()) return report(s);
  if (fsync[0].result < 0) {
    return report(
        Status::io_error(options_.path + ": flush (fdatasync): " + errno_text(-fsync[0].result)));
  }
  return Status();
}

}  // namespace granary::realmode

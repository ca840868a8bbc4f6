#include "engine/services/block_volume.h"

#include <algorithm>
#include <mutex>

namespace granary::services {

Result<std::unique_ptr<BlockVolume>> BlockVolume::open(Env& env, StorageClient& client,
                                                       const layout::RbdLayout& layout,
                                                       BlockVolumeSpec spec) {
  if (spec.size_bytes == 0) {
    return Status::invalid_argument("block volume " + spec.image + ": size must be > 0 bytes");
  }
  if (spec.image.empty() || spec.image == spec.parent) {
    return Status::invalid_argument("block volume: the image needs a name other than its parent's");
  }
  return std::unique_ptr<BlockVolume>(new BlockVolume(env, client, layout, std::move(spec)));
}

BlockVolume::BlockVolume(Env& env, StorageClient& client, const layout::RbdLayout& layout,
                         BlockVolumeSpec spec)
    : env_(env), client_(client), layout_(layout), spec_(std::move(spec)), mu_(env) {}

Status BlockVolume::check_range(uint64_t offset, uint64_t length) const {
  if (length == 0 || offset > spec_.size_bytes || length > spec_.size_bytes - offset) {
    return Status::invalid_argument(
        spec_.image + ": I/O of " + std::to_string(length) + " bytes at " + std::to_string(offset) +
        " is empty or leaves the image of " + std::to_string(spec_.size_bytes) + " bytes");
  }
  return Status();
}

bool BlockVolume::owns_object(uint64_t object_no) const {
  if (spec_.parent.empty()) return true;
  std::lock_guard<EnvMutex> lock(mu_);
  return owned_.count(object_no) > 0;
}

Result<BlockIo> BlockVolume::read(uint64_t offset, uint64_t length) {
  if (Status s = check_range(offset, length); !s.ok()) return s;
  const double start_s = env_.now_s();
  uint64_t parent_parts = 0;
  if (spec_.parent.empty()) {
    Result<uint64_t> got = client_.read_extent(spec_.image, offset, length);
    if (!got.ok()) return got.status();
  } else {
    // Each piece of the range from whoever holds its object, adjacent pieces of one source
    // merged, in image order.
    auto extents = layout_.image_to_objects(offset, length);
    if (!extents.ok()) return extents.status();
    struct Piece {
      layout::ByteRange range;
      bool parent;
    };
    std::vector<Piece> pieces;
    for (const auto& e : *extents) {
      const bool from_parent = !owns_object(e.object_no);
      for (const auto& r : e.image_ranges) pieces.push_back({r, from_parent});
    }
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
      return a.range.offset_bytes < b.range.offset_bytes;
    });
    std::vector<Piece> merged;
    for (const Piece& p : pieces) {
      if (!merged.empty() && merged.back().parent == p.parent &&
          merged.back().range.offset_bytes + merged.back().range.length_bytes ==
              p.range.offset_bytes) {
        merged.back().range.length_bytes += p.range.length_bytes;
      } else {
        merged.push_back(p);
      }
    }
    for (const Piece& p : merged) {
      Result<uint64_t> got = client_.read_extent(p.parent ? spec_.parent : spec_.image,
                                                 p.range.offset_bytes, p.range.length_bytes);
      if (!got.ok()) return got.status();
      if (p.parent) ++parent_parts;
    }
  }
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.reads;
  stats_.bytes_read += length;
  stats_.parent_reads += parent_parts;
  return BlockIo{length, env_.now_s() - start_s, 0};
}

Result<bool> BlockVolume::ensure_owned(uint64_t object_no) {
  for (;;) {
    std::shared_ptr<Semaphore> wait;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      if (owned_.count(object_no) > 0) return false;
      auto it = copying_.find(object_no);
      if (it == copying_.end()) {
        copying_[object_no];  // this call copies it up
        break;
      }
      wait = env_.make_semaphore(0);
      it->second.push_back(wait);
    }
    wait->acquire();  // then look again: owned, or the copy-up failed and we try
  }
  // The object's image ranges (clipped to the image: the last object set may be short).
  auto ranges = layout_.object_to_image(object_no, 0, layout_.spec().object_size_bytes);
  Status status = ranges.status();
  uint64_t bytes = 0;
  if (status.ok()) {
    for (const auto& r : *ranges) {
      if (r.offset_bytes >= spec_.size_bytes) continue;
      const uint64_t len = std::min(r.length_bytes, spec_.size_bytes - r.offset_bytes);
      Result<uint64_t> got = client_.read_extent(spec_.parent, r.offset_bytes, len);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      Result<uint64_t> put = client_.write_extent(spec_.image, r.offset_bytes, len);
      if (!put.ok()) {
        status = put.status();
        break;
      }
      bytes += len;
    }
  }
  std::vector<std::shared_ptr<Semaphore>> waiters;
  {
    std::lock_guard<EnvMutex> lock(mu_);
    waiters = std::move(copying_[object_no]);
    copying_.erase(object_no);
    if (status.ok()) {
      owned_.insert(object_no);
      ++stats_.copyups;
      stats_.copyup_bytes += bytes;
    }
  }
  for (auto& w : waiters) w->release();
  if (!status.ok()) return status;
  return true;
}

Result<BlockIo> BlockVolume::write(uint64_t offset, uint64_t length) {
  if (Status s = check_range(offset, length); !s.ok()) return s;
  const double start_s = env_.now_s();
  int copyups = 0;
  bool all_copied = false;
  if (!spec_.parent.empty()) {
    auto extents = layout_.image_to_objects(offset, length);
    if (!extents.ok()) return extents.status();
    all_copied = true;
    for (const auto& e : *extents) {
      Result<bool> copied = ensure_owned(e.object_no);
      if (!copied.ok()) return copied.status();
      if (*copied) {
        ++copyups;
      } else {
        all_copied = false;
      }
    }
  }
  // A copy-up's write carries the op's data with the parent's (librbd sends copyup and write
  // as one OSD op): only what no copy-up of this call covered is written again.
  if (!all_copied) {
    Result<uint64_t> put = client_.write_extent(spec_.image, offset, length);
    if (!put.ok()) return put.status();
  }
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.writes;
  stats_.bytes_written += length;
  return BlockIo{length, env_.now_s() - start_s, copyups};
}

Result<BlockIo> BlockVolume::read(uint64_t offset, uint64_t length, Buffer* data) {
  if (data == nullptr) return read(offset, length);
  if (!spec_.parent.empty()) {
    return Status::not_supported(spec_.image + ": a clone's reads carry no bytes");
  }
  if (Status s = check_range(offset, length); !s.ok()) return s;
  const double start_s = env_.now_s();
  Result<uint64_t> got = client_.read_extent(spec_.image, offset, length, data);
  if (!got.ok()) return got.status();
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.reads;
  stats_.bytes_read += length;
  return BlockIo{length, env_.now_s() - start_s, 0};
}

Result<BlockIo> BlockVolume::write(uint64_t offset, const Payload& data) {
  if (!spec_.parent.empty()) {
    return Status::not_supported(spec_.image + ": a clone's writes carry no bytes");
  }
  const uint64_t length = data.size_bytes;
  if (Status s = check_range(offset, length); !s.ok()) return s;
  const double start_s = env_.now_s();
  Result<uint64_t> put = client_.write_extent(spec_.image, offset, data);
  if (!put.ok()) return put.status();
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.writes;
  stats_.bytes_written += length;
  return BlockIo{length, env_.now_s() - start_s, 0};
}

BlockVolumeStats BlockVolume::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

#include "engine/store/disk_store.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "engine/store/crc32c.h"

namespace granary::store {
namespace {

constexpr uint64_t kSuperMagic = 0x31524f5453524e47ull;  // "GNRSTOR1"
constexpr uint32_t kVersion = 2;                         // 2: onodes carry attributes
constexpr uint32_t kCheckpointMagic = 0x504b4347u;       // "GCKP"
constexpr uint32_t kRecordMagic = 0x4e524a47u;           // "GJRN"
constexpr uint64_t kRecordAlign = 512;
constexpr uint64_t kRecordHeaderBytes = 32;
constexpr uint64_t kCheckpointHeaderBytes = 40;
constexpr uint64_t kMaxNameBytes = 1024;
constexpr uint64_t kBlockRefBytes = 20;   // object block u64, device block u64, crc u32
constexpr uint64_t kMaxAttrBytes = 1024;  // an attribute's key and its value, each

enum RecordType : uint16_t { kWrite = 1, kRemove = 2, kCommit = 3 };

uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

// Little-endian encoding.
class Writer {
 public:
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void str(std::string_view s) {
    u16(static_cast<uint16_t>(s.size()));
    for (char c : s) out.push_back(static_cast<std::byte>(c));
  }
  std::vector<std::byte> out;

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
};

// Bounds-checked decoding: a read past the end sets !ok and returns zeros.
class Reader {
 public:
  Reader(const std::byte* data, uint64_t size) : p_(data), left_(size) {}
  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  std::string str() {
    const uint16_t n = u16();
    if (n > left_) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return s;
  }
  uint64_t left() const { return left_; }
  bool ok = true;

 private:
  uint64_t get(int n) {
    if (static_cast<uint64_t>(n) > left_) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += n;
    left_ -= static_cast<uint64_t>(n);
    return v;
  }
  const std::byte* p_;
  uint64_t left_;
};

void put_u32_at(std::vector<std::byte>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<size_t>(i)] = static_cast<std::byte>(v >> (8 * i));
}

// The crc32c of `size` bytes at `data` with the 4-byte field at `field_at` read as zeros (a
// record's or checkpoint's crc covers its header with the crc field zeroed).
uint32_t crc32c_zero_field(const std::byte* data, size_t size, size_t field_at) {
  const std::byte zero[4] = {};
  uint32_t crc = crc32c(std::span(data, field_at));
  crc = crc32c_extend(crc, zero);
  return crc32c_extend(crc, std::span(data + field_at + 4, size - field_at - 4));
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// A write record's body: the object, its new size, and its new blocks.
struct WriteBody {
  std::string object;
  uint64_t size = 0;
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // object block, device block
  std::vector<uint32_t> crcs;
  std::vector<std::pair<std::string, std::string>> attrs;  // set by the write
};

// Attributes: a count, then key and value strings.
void put_attrs(Writer& w, const std::vector<std::pair<std::string, std::string>>& attrs) {
  w.u32(static_cast<uint32_t>(attrs.size()));
  for (const auto& [k, v] : attrs) {
    w.str(k);
    w.str(v);
  }
}

bool get_attrs(Reader& r, std::vector<std::pair<std::string, std::string>>& out) {
  const uint32_t n = r.u32();
  for (uint32_t i = 0; i < n && r.ok; ++i) {
    std::string k = r.str();
    std::string v = r.str();
    out.emplace_back(std::move(k), std::move(v));
  }
  return r.ok;
}

bool decode_write(const std::byte* data, uint64_t size, WriteBody& out) {
  Reader r(data, size);
  out.object = r.str();
  out.size = r.u64();
  const uint32_t n = r.u32();
  if (!r.ok || r.left() < uint64_t{n} * kBlockRefBytes) return false;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t ob = r.u64();
    const uint64_t db = r.u64();
    out.blocks.emplace_back(ob, db);
    out.crcs.push_back(r.u32());
  }
  return get_attrs(r, out.attrs) && r.left() == 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Format and mount

DiskStore::DiskStore(Device& device, const Layout& layout)
    : device_(device), layout_(layout), allocator_(layout.data_block, layout.data_blocks) {}

Status DiskStore::format(Device& device, const FormatOptions& options) {
  const std::string dev = "device " + std::to_string(device.id());
  if (options.journal_bytes < kBlockBytes || options.journal_bytes % kBlockBytes != 0 ||
      options.checkpoint_bytes < kBlockBytes || options.checkpoint_bytes % kBlockBytes != 0) {
    return Status::invalid_argument(dev +
                                    ": journal_bytes and checkpoint_bytes must be positive "
                                    "multiples of 4096, found " +
                                    std::to_string(options.journal_bytes) + " and " +
                                    std::to_string(options.checkpoint_bytes));
  }
  Layout l;
  l.capacity = device.capacity_bytes();
  l.checkpoint_bytes = options.checkpoint_bytes;
  l.checkpoint_offset[0] = kBlockBytes;
  l.checkpoint_offset[1] = kBlockBytes + options.checkpoint_bytes;
  l.journal_offset = kBlockBytes + 2 * options.checkpoint_bytes;
  l.journal_bytes = options.journal_bytes;
  const uint64_t data_offset = l.journal_offset + l.journal_bytes;
  const uint64_t blocks = l.capacity / kBlockBytes;
  if (blocks <= data_offset / kBlockBytes) {
    return Status::no_space(dev + ": " + std::to_string(l.capacity) +
                            " bytes cannot hold the store's metadata regions (" +
                            std::to_string(data_offset) + " bytes) and any data");
  }
  l.data_block = data_offset / kBlockBytes;
  l.data_blocks = blocks - l.data_block;

  DiskStore store(device, l);
  store.generation_ = 0;
  store.active_slot_ = 1;  // the first checkpoint (generation 1) goes to slot 0
  // Zeros over both checkpoint slots and the journal (so that nothing of an earlier store on
  // the device can be replayed), an empty checkpoint, then the superblock, then a flush.
  if (Status s = store.write_device(kBlockBytes, Buffer::zeros(data_offset - kBlockBytes));
      !s.ok()) {
    return s;
  }
  if (Status s = store.write_checkpoint(); !s.ok()) return s;
  Writer w;
  w.u64(kSuperMagic);
  w.u32(kVersion);
  w.u32(static_cast<uint32_t>(kBlockBytes));
  w.u64(l.capacity);
  w.u64(l.checkpoint_offset[0]);
  w.u64(l.checkpoint_offset[1]);
  w.u64(l.checkpoint_bytes);
  w.u64(l.journal_offset);
  w.u64(l.journal_bytes);
  w.u64(l.data_block);
  w.u64(l.data_blocks);
  w.u32(crc32c(w.out));
  std::vector<std::byte> super = std::move(w.out);
  super.resize(kBlockBytes);
  if (Status s = store.write_device(0, super); !s.ok()) return s;
  return store.flush_device();
}

Result<std::unique_ptr<DiskStore>> DiskStore::mount(Device& device) {
  const std::string dev = "device " + std::to_string(device.id());
  if (device.capacity_bytes() < kBlockBytes) {
    return Status::invalid_argument(dev + " is smaller than one 4096-byte block");
  }
  Result<Payload> sb = device.read(0, kBlockBytes);
  if (!sb.ok()) return sb.status();
  if (!sb->bytes) return Status::invalid_argument(dev + " keeps no data (a size-only device)");
  const Buffer& b = sb->bytes;
  Reader r(b.data(), b.size());
  const uint64_t magic = r.u64();
  if (magic != kSuperMagic) {
    return Status::invalid_argument(dev + " holds no store: no superblock at offset 0 (format it)");
  }
  const uint32_t version = r.u32();
  const uint32_t block = r.u32();
  Layout l;
  l.capacity = r.u64();
  l.checkpoint_offset[0] = r.u64();
  l.checkpoint_offset[1] = r.u64();
  l.checkpoint_bytes = r.u64();
  l.journal_offset = r.u64();
  l.journal_bytes = r.u64();
  l.data_block = r.u64();
  l.data_blocks = r.u64();
  const uint64_t covered = b.size() - r.left();
  const uint32_t crc = r.u32();
  if (crc != crc32c(std::span(b.data(), covered))) {
    return Status::corruption(dev + ": the superblock fails its crc32c");
  }
  if (version != kVersion || block != kBlockBytes) {
    return Status::not_supported(dev + ": store version " + std::to_string(version) + " with " +
                                 std::to_string(block) +
                                 "-byte blocks; this build reads version 1 with 4096");
  }
  if (l.capacity != device.capacity_bytes() ||
      (l.data_block + l.data_blocks) * kBlockBytes > l.capacity) {
    return Status::corruption(dev + ": the superblock describes " + std::to_string(l.capacity) +
                              " bytes but the device has " +
                              std::to_string(device.capacity_bytes()));
  }
  std::unique_ptr<DiskStore> store(new DiskStore(device, l));
  if (Status s = store->replay(); !s.ok()) return s;
  return store;
}

Status DiskStore::replay() {
  uint64_t next_seq = 0;
  if (Status st = load_checkpoint(&next_seq); !st.ok()) return st;
  if (Status st = replay_journal(next_seq); !st.ok()) return st;
  if (Status st = take_referenced_blocks(); !st.ok()) return st;
  // 5. A new generation: later records can never be confused with what this replay ignored.
  journal_head_ = 0;
  dirty_ = true;
  return checkpoint();
}

Status DiskStore::load_checkpoint(uint64_t* next_seq) {
  // 1. The newest valid checkpoint.
  int best = -1;
  uint64_t best_gen = 0;
  uint64_t best_next_seq = 0;
  std::vector<std::byte> best_body;
  for (int slot = 0; slot < 2; ++slot) {
    Result<Buffer> c = read_device(layout_.checkpoint_offset[slot], layout_.checkpoint_bytes);
    if (!c.ok()) return c.status();
    const Buffer& b = *c;
    Reader r(b.data(), b.size());
    const uint32_t magic = r.u32();
    const uint32_t version = r.u32();
    const uint64_t gen = r.u64();
    const uint64_t next_seq = r.u64();
    const uint64_t body_len = r.u64();
    const uint32_t crc = r.u32();
    if (magic != kCheckpointMagic || version != kVersion ||
        body_len > b.size() - kCheckpointHeaderBytes) {
      continue;
    }
    if (crc32c_zero_field(b.data(), kCheckpointHeaderBytes + body_len, 32) != crc) continue;
    if (best < 0 || gen > best_gen) {
      best = slot;
      best_gen = gen;
      best_next_seq = next_seq;
      best_body.assign(b.begin() + kCheckpointHeaderBytes,
                       b.begin() + static_cast<ptrdiff_t>(kCheckpointHeaderBytes + body_len));
    }
  }
  if (best < 0) return Status::corruption(where() + ": neither checkpoint slot is valid");
  generation_ = best_gen;
  active_slot_ = best;
  mount_report_.checkpoint_generation = best_gen;
  {
    Reader r(best_body.data(), best_body.size());
    const uint64_t n = r.u64();
    for (uint64_t i = 0; i < n && r.ok; ++i) {
      std::string name = r.str();
      Onode o;
      o.size = r.u64();
      const uint32_t nb = r.u32();
      for (uint32_t j = 0; j < nb && r.ok; ++j) {
        const uint64_t ob = r.u64();
        BlockRef ref;
        ref.device_block = r.u64();
        ref.crc = r.u32();
        o.blocks[ob] = ref;
      }
      std::vector<std::pair<std::string, std::string>> attrs;
      if (!get_attrs(r, attrs)) break;
      for (auto& [key, value] : attrs) o.attrs[std::move(key)] = std::move(value);
      onodes_[std::move(name)] = std::move(o);
    }
    if (!r.ok || r.left() != 0) {
      return Status::corruption(where() + ": checkpoint " + std::to_string(best_gen) +
                                " passes its crc32c but does not decode");
    }
  }
  *next_seq = best_next_seq;
  return Status::ok_status();
}

Status DiskStore::replay_journal(uint64_t best_next_seq) {
  // 2. The journal records that follow it: sequence numbers from next_seq on, this generation.
  Result<Buffer> jr = read_device(layout_.journal_offset, layout_.journal_bytes);
  if (!jr.ok()) return jr.status();
  const Buffer& j = *jr;
  struct Rec {
    uint16_t type;
    uint64_t seq;
    uint64_t body_at;
    uint64_t body_len;
  };
  std::vector<Rec> recs;
  uint64_t pos = 0;
  uint64_t expect = best_next_seq;
  std::string end = "end of journal";
  while (true) {
    if (pos + kRecordHeaderBytes > j.size()) break;
    Reader r(j.data() + pos, kRecordHeaderBytes);
    const uint32_t magic = r.u32();
    const uint16_t type = r.u16();
    r.u16();
    const uint32_t gen = r.u32();
    const uint32_t body_len = r.u32();
    const uint64_t seq = r.u64();
    const uint32_t crc = r.u32();
    if (magic != kRecordMagic) {
      end = "no record at journal offset " + std::to_string(pos);
      break;
    }
    if (gen != static_cast<uint32_t>(generation_)) {
      end = "a record of another generation at journal offset " + std::to_string(pos);
      break;
    }
    if (body_len > j.size() - pos - kRecordHeaderBytes) {
      end = "a record longer than the journal at offset " + std::to_string(pos);
      break;
    }
    if (crc32c_zero_field(j.data() + pos, kRecordHeaderBytes + body_len, 24) != crc) {
      end = "bad crc32c at journal offset " + std::to_string(pos) + " (torn record)";
      break;
    }
    if (seq != expect) {
      end = "sequence " + std::to_string(seq) + " where " + std::to_string(expect) +
            " was expected at journal offset " + std::to_string(pos);
      break;
    }
    if (type != kWrite && type != kRemove && type != kCommit) {
      return Status::corruption(where() + ": journal record " + std::to_string(seq) +
                                " has unknown type " + std::to_string(type));
    }
    recs.push_back(Rec{type, seq, pos + kRecordHeaderBytes, body_len});
    ++expect;
    pos += round_up(kRecordHeaderBytes + body_len, kRecordAlign);
  }

  // 3. Records up to the last commit mark were durable; later ones only if their data is.
  uint64_t committed = best_next_seq == 0 ? 0 : best_next_seq - 1;
  for (const Rec& rec : recs) {
    if (rec.type != kCommit) continue;
    Reader r(j.data() + rec.body_at, rec.body_len);
    const uint64_t through = r.u64();
    if (!r.ok || through >= rec.seq) {
      return Status::corruption(where() + ": commit record " + std::to_string(rec.seq) +
                                " does not decode");
    }
    committed = std::max(committed, through);
  }
  last_seq_ = best_next_seq - 1;
  for (size_t i = 0; i < recs.size(); ++i) {
    const Rec& rec = recs[i];
    const std::byte* body = j.data() + rec.body_at;
    if (rec.type == kWrite) {
      WriteBody w;
      if (!decode_write(body, rec.body_len, w) || w.object.empty()) {
        return Status::corruption(where() + ": write record " + std::to_string(rec.seq) +
                                  " does not decode");
      }
      if (rec.seq > committed) {
        bool intact = true;
        for (size_t k = 0; k < w.blocks.size() && intact; ++k) {
          Result<Buffer> d = read_device(w.blocks[k].second * kBlockBytes, kBlockBytes);
          if (!d.ok()) return d.status();
          intact = crc32c(*d) == w.crcs[k];
        }
        if (!intact) {
          mount_report_.records_discarded = recs.size() - i;
          end = "record " + std::to_string(rec.seq) + " names data that did not reach the disk";
          break;
        }
      }
      Onode& o = onodes_[w.object];
      o.size = w.size;
      for (size_t k = 0; k < w.blocks.size(); ++k) {
        o.blocks[w.blocks[k].first] = BlockRef{w.blocks[k].second, w.crcs[k]};
      }
      for (auto& [key, value] : w.attrs) o.attrs[std::move(key)] = std::move(value);
    } else if (rec.type == kRemove) {
      Reader r(body, rec.body_len);
      const std::string name = r.str();
      if (!r.ok || r.left() != 0) {
        return Status::corruption(where() + ": remove record " + std::to_string(rec.seq) +
                                  " does not decode");
      }
      onodes_.erase(name);
    }
    last_seq_ = rec.seq;
    ++mount_report_.records_replayed;
  }
  mount_report_.journal_end = end;
  return Status::ok_status();
}

Status DiskStore::take_referenced_blocks() {
  // 4. The free space is what no object references.
  for (const auto& [name, o] : onodes_) {
    for (const auto& [ob, ref] : o.blocks) {
      if (ref.device_block < layout_.data_block ||
          ref.device_block >= layout_.data_block + layout_.data_blocks ||
          !allocator_.is_free(ref.device_block)) {
        return Status::corruption(where() + ": object " + quoted(name) + " block " +
                                  std::to_string(ob) + " names device block " +
                                  std::to_string(ref.device_block) +
                                  ", outside the data region or used twice");
      }
      allocator_.take(ref.device_block);
    }
  }
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Device access

std::string DiskStore::where() const {
  return "device " + std::to_string(device_.id());
}

Status DiskStore::unusable() const {
  return Status::io_error(where() + ": the store stopped after a device error (" + failure_ +
                          "); mount it again");
}

Status DiskStore::fail(Status s) {
  if (failure_.empty()) failure_ = s.to_string();
  return s;
}

Result<Buffer> DiskStore::read_device(uint64_t offset, uint64_t length) {
  Result<Payload> p = device_.read(offset, length);
  if (!p.ok()) return p.status();
  if (!p->bytes) return Buffer::zeros(length);  // a device that was never written
  return std::move(p->bytes);
}

Status DiskStore::write_device(uint64_t offset, Buffer bytes) {
  Status s = device_.write(offset, Payload::of(std::move(bytes)));
  if (!s.ok()) return fail(s);
  dirty_ = true;
  return s;
}

Status DiskStore::flush_device() {
  Status s = device_.flush();
  if (!s.ok()) return fail(s);
  dirty_ = false;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Journal and checkpoints

Status DiskStore::ensure_journal_room(uint64_t record_bytes) {
  if (journal_head_ + record_bytes <= layout_.journal_bytes) return Status::ok_status();
  return checkpoint();
}

Status DiskStore::append_record(uint16_t type, const std::vector<std::byte>& body) {
  const uint64_t bytes = round_up(kRecordHeaderBytes + body.size(), kRecordAlign);
  GRANARY_CHECK(bytes <= layout_.journal_bytes);  // callers check the record size
  if (Status s = ensure_journal_room(bytes); !s.ok()) return s;
  Writer w;
  w.u32(kRecordMagic);
  w.u16(type);
  w.u16(0);
  w.u32(static_cast<uint32_t>(generation_));
  w.u32(static_cast<uint32_t>(body.size()));
  w.u64(last_seq_ + 1);
  w.u32(0);  // crc, below
  w.u32(0);
  std::vector<std::byte> rec = std::move(w.out);
  rec.insert(rec.end(), body.begin(), body.end());
  put_u32_at(rec, 24, crc32c(rec));
  rec.resize(bytes);
  // Written by the next flush (begin_flush hands it over).
  GRANARY_CHECK(journal_pending_at_ + journal_pending_.size() == journal_head_);
  journal_pending_.insert(journal_pending_.end(), rec.begin(), rec.end());
  journal_head_ += bytes;
  ++last_seq_;
  dirty_ = true;
  return Status::ok_status();
}

Status DiskStore::write_checkpoint() {
  Writer body;
  body.u64(onodes_.size());
  for (const auto& [name, o] : onodes_) {
    body.str(name);
    body.u64(o.size);
    body.u32(static_cast<uint32_t>(o.blocks.size()));
    for (const auto& [ob, ref] : o.blocks) {
      body.u64(ob);
      body.u64(ref.device_block);
      body.u32(ref.crc);
    }
    body.u32(static_cast<uint32_t>(o.attrs.size()));
    for (const auto& [k, v] : o.attrs) {
      body.str(k);
      body.str(v);
    }
  }
  const uint64_t total = kCheckpointHeaderBytes + body.out.size();
  if (total > layout_.checkpoint_bytes) {
    return Status::no_space(where() + ": the object index needs " + std::to_string(total) +
                            " bytes, the checkpoint slots hold " +
                            std::to_string(layout_.checkpoint_bytes) +
                            " (format with a larger checkpoint_bytes)");
  }
  const int slot = 1 - active_slot_;
  Writer w;
  w.u32(kCheckpointMagic);
  w.u32(kVersion);
  w.u64(generation_ + 1);
  w.u64(last_seq_ + 1);
  w.u64(body.out.size());
  w.u32(0);  // crc, below
  w.u32(0);
  std::vector<std::byte> c = std::move(w.out);
  c.insert(c.end(), body.out.begin(), body.out.end());
  put_u32_at(c, 32, crc32c(c));
  c.resize(round_up(c.size(), kBlockBytes));
  if (Status s = write_device(layout_.checkpoint_offset[slot], c); !s.ok()) return s;
  if (Status s = flush_device(); !s.ok()) return s;
  active_slot_ = slot;
  ++generation_;
  journal_head_ = 0;
  // The records not yet written are in the checkpoint; the journal starts again.
  journal_pending_.clear();
  journal_pending_at_ = 0;
  journal_handed_ = 0;
  return Status::ok_status();
}

Status DiskStore::checkpoint() {
  if (!failure_.empty()) return unusable();
  // Everything the new checkpoint describes must be on the disk before it is.
  if (Status s = flush_device(); !s.ok()) return s;
  if (Status s = write_checkpoint(); !s.ok()) return s;
  durable_seq_ = last_seq_;
  // No journal record before the checkpoint will be replayed: every freed block is free.
  release_all_pending();
  return Status::ok_status();
}

void DiskStore::release_all_pending() {
  for (uint64_t b : freed_await_commit_) allocator_.release(BlockExtent{b, 1});
  for (uint64_t b : freed_unflushed_) allocator_.release(BlockExtent{b, 1});
  freed_await_commit_.clear();
  freed_unflushed_.clear();
}

Status DiskStore::flush() {
  if (!failure_.empty()) return unusable();
  if (!dirty_) return Status::ok_status();
  FlushTicket ticket = begin_flush();
  return end_flush(ticket, flush_unlocked(ticket));
}

DiskStore::FlushTicket DiskStore::begin_flush() {
  GRANARY_CHECK(!flushing_);  // one flush at a time
  flushing_ = true;
  FlushTicket t;
  t.through_seq = last_seq_;
  t.generation = generation_;
  t.device_flush = dirty_;
  t.freed = std::move(freed_unflushed_);
  freed_unflushed_.clear();
  dirty_ = false;  // what is written from now on needs the next flush
  if (journal_head_ > journal_handed_) {
    // Whole blocks: the written part of the first, the new records, zeros to the end of the
    // last (an aligned write, which the drive takes beside the data writes).
    MutableBuffer blocks(round_up(journal_pending_.size(), kBlockBytes));
    blocks.write_at(0, journal_pending_);
    t.journal_offset = layout_.journal_offset + journal_pending_at_;
    t.journal = std::move(blocks).freeze();
    // The last block's records begin the next flush's first block.
    const uint64_t keep_from = journal_head_ / kBlockBytes * kBlockBytes;
    journal_pending_.erase(
        journal_pending_.begin(),
        journal_pending_.begin() + static_cast<ptrdiff_t>(keep_from - journal_pending_at_));
    journal_pending_at_ = keep_from;
    journal_handed_ = journal_head_;
  }
  return t;
}

Status DiskStore::flush_unlocked(const FlushTicket& ticket) const {
  if (!ticket.journal.empty()) {
    if (Status s = device_.write(ticket.journal_offset, Payload::of(ticket.journal)); !s.ok()) {
      return s;
    }
  }
  return ticket.device_flush ? device_.flush() : Status::ok_status();
}

Status DiskStore::end_flush(FlushTicket& ticket, const Status& flushed) {
  flushing_ = false;
  if (!failure_.empty()) return unusable();
  if (!flushed.ok()) return fail(flushed);
  durable_seq_ = std::max(durable_seq_, ticket.through_seq);
  std::vector<uint64_t> freed = std::move(ticket.freed);
  if (ticket.generation != generation_) {
    // A checkpoint ran meanwhile (it released every block then pending): no record before it
    // is ever replayed, so the blocks these records freed are free now.
    for (uint64_t b : freed) allocator_.release(BlockExtent{b, 1});
    return Status::ok_status();
  }
  // The commit mark appended by the previous flush (before this one began) is durable now:
  // the blocks it covers may be reused.
  for (uint64_t b : freed_await_commit_) allocator_.release(BlockExtent{b, 1});
  freed_await_commit_ = std::move(freed);
  if (freed_await_commit_.empty()) return Status::ok_status();
  // A commit mark: replay needs no data check for records up to the ones this flush made
  // durable (so it does not mistake their reused blocks for lost data); records appended
  // while the device flushed are not covered. Durable at the next flush.
  Writer w;
  w.u64(ticket.through_seq);
  return append_record(kCommit, w.out);
}

// ---------------------------------------------------------------------------------------------
// Operations

Status DiskStore::write(std::string_view object, uint64_t offset, const Payload& data,
                        const WriteOptions& options) {
  Result<PreparedWrite> prepared = prepare_write(object, offset, data, options);
  if (!prepared.ok()) return prepared.status();
  const Status written = write_data(*prepared);
  if (Status s = commit_write(*prepared, written); !s.ok()) return s;
  return options.sync ? flush() : Status::ok_status();
}

Result<DiskStore::PreparedWrite> DiskStore::prepare_write(std::string_view object, uint64_t offset,
                                                          const Payload& data,
                                                          const WriteOptions& options) {
  if (!failure_.empty()) return unusable();
  if (object.empty() || object.size() > kMaxNameBytes) {
    return Status::invalid_argument(where() + ": object names are 1 to 1024 bytes, found " +
                                    std::to_string(object.size()));
  }
  if (!data.bytes) {
    return Status::invalid_argument(where() + ": a write to object " + quoted(object) +
                                    " needs a payload with its bytes (found a size-only one)");
  }
  if (data.bytes.size() != data.size_bytes) {
    return Status::invalid_argument(where() + ": a write to object " + quoted(object) + " of " +
                                    std::to_string(data.size_bytes) + " bytes carries " +
                                    std::to_string(data.bytes.size()) + " bytes of data");
  }
  const uint64_t len = data.size_bytes;
  if (offset > (uint64_t{1} << 50) || len > (uint64_t{1} << 40)) {
    return Status::invalid_argument(where() + ": write to object " + quoted(object) +
                                    " at offset " + std::to_string(offset) + " of " +
                                    std::to_string(len) + " bytes is beyond 2^50 bytes");
  }
  uint64_t attr_bytes = 4;
  for (const auto& [k, v] : options.attrs) {
    if (k.empty() || k.size() > kMaxAttrBytes || v.size() > kMaxAttrBytes) {
      return Status::invalid_argument(
          where() + ": object " + quoted(object) + " attribute " + quoted(k) +
          ": keys are 1 to 1024 bytes and values up to "
          "1024, found " +
          std::to_string(k.size()) + " and " + std::to_string(v.size()));
    }
    attr_bytes += 4 + k.size() + v.size();
  }
  const uint64_t first = offset / kBlockBytes;
  const uint64_t count = len == 0 ? 0 : (offset + len - 1) / kBlockBytes - first + 1;
  const uint64_t record_bytes =
      round_up(kRecordHeaderBytes + 2 + object.size() + 12 + count * kBlockRefBytes + attr_bytes,
               kRecordAlign);
  // Room for the record and a commit mark after it.
  if (record_bytes + kRecordAlign > layout_.journal_bytes) {
    return Status::invalid_argument(
        where() + ": a write of " + std::to_string(len) + " bytes to object " + quoted(object) +
        " needs a " + std::to_string(record_bytes) + "-byte journal record; the journal holds " +
        std::to_string(layout_.journal_bytes) + " (split the write)");
  }
  auto found = onodes_.find(object);
  const Onode* old = found == onodes_.end() ? nullptr : &found->second;

  PreparedWrite p;
  p.object = std::string(object);
  p.first_block = first;
  p.blocks = count;
  p.end_bytes = offset + len;
  p.attrs = options.attrs;
  // The new content of every block the write touches: the payload itself when the write
  // covers whole blocks (no copy), else the old blocks' bytes with the new ones laid over.
  if (offset % kBlockBytes == 0 && len % kBlockBytes == 0) {
    p.content = data.bytes;
  } else {
    MutableBuffer m(count * kBlockBytes);
    // A block needs its old bytes only where the old object has bytes the write does not
    // cover: past the old size a block holds zeros (sizes only grow), so a write that covers
    // the block up to there (a rewrite of the whole object) reads nothing.
    const uint64_t old_end = old == nullptr ? 0 : old->size;
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t ob = first + i;
      const uint64_t block_start = ob * kBlockBytes;
      const uint64_t needed_end = std::min(block_start + kBlockBytes, old_end);
      const bool whole = offset <= block_start && offset + len >= needed_end;
      if (whole || old == nullptr) continue;
      auto it = old->blocks.find(ob);
      if (it == old->blocks.end()) continue;  // a hole: zeros
      Result<Buffer> b = read_device(it->second.device_block * kBlockBytes, kBlockBytes);
      if (!b.ok()) return b.status();
      if (crc32c(b->span()) != it->second.crc) {
        return Status::corruption(where() + ": object " + quoted(object) + " block " +
                                  std::to_string(ob) + " (device offset " +
                                  std::to_string(it->second.device_block * kBlockBytes) +
                                  ") fails its crc32c");
      }
      m.write_at(i * kBlockBytes, b->span());
    }
    if (len > 0) m.write_at(offset - first * kBlockBytes, data.bytes.span());
    p.content = std::move(m).freeze();
  }

  // Space: room in the journal first (a checkpoint releases freed blocks), then blocks.
  if (Status s = ensure_journal_room(record_bytes + kRecordAlign); !s.ok()) return s;
  p.extents = allocator_.allocate(count);
  if (p.extents.empty() && count > 0 &&
      !(freed_unflushed_.empty() && freed_await_commit_.empty())) {
    if (Status s = checkpoint(); !s.ok()) return s;  // makes the freed blocks reusable
    p.extents = allocator_.allocate(count);
  }
  if (p.extents.empty() && count > 0) {
    return Status::no_space(
        where() + ": writing " + std::to_string(len) + " bytes to object " + quoted(object) +
        " needs " + std::to_string(count * kBlockBytes) + " bytes of new blocks; " +
        std::to_string(allocator_.free_blocks() * kBlockBytes) + " bytes are free of " +
        std::to_string(layout_.data_blocks * kBlockBytes));
  }
  preparing_blocks_ += count;
  return p;
}

Status DiskStore::write_data(PreparedWrite& p) const {
  // Data to the new blocks, one device write per extent.
  p.crcs.clear();
  p.crcs.reserve(p.blocks);
  uint64_t i = 0;
  for (const BlockExtent& e : p.extents) {
    Buffer chunk = p.content.slice(i * kBlockBytes, e.blocks * kBlockBytes);
    for (uint64_t k = 0; k < e.blocks; ++k) {
      p.crcs.push_back(
          crc32c(std::span(chunk.data() + k * kBlockBytes, static_cast<size_t>(kBlockBytes))));
    }
    if (Status s = device_.write(e.start * kBlockBytes, Payload::of(std::move(chunk))); !s.ok()) {
      return s;
    }
    i += e.blocks;
  }
  return Status::ok_status();
}

Status DiskStore::commit_write(PreparedWrite& p, const Status& written) {
  GRANARY_CHECK(preparing_blocks_ >= p.blocks);
  preparing_blocks_ -= p.blocks;
  auto give_back = [&] {
    for (const BlockExtent& e : p.extents) allocator_.release(e);
  };
  if (!failure_.empty()) {
    give_back();
    return unusable();
  }
  if (!written.ok()) {
    give_back();
    return fail(written);
  }
  GRANARY_CHECK(p.crcs.size() == p.blocks);  // write_data ran
  dirty_ = true;                             // the data blocks
  auto found = onodes_.find(p.object);
  const uint64_t new_size = std::max(found == onodes_.end() ? 0 : found->second.size, p.end_bytes);
  Writer body;
  body.str(p.object);
  body.u64(new_size);
  body.u32(static_cast<uint32_t>(p.blocks));
  std::vector<BlockRef> refs;
  refs.reserve(p.blocks);
  uint64_t i = 0;
  for (const BlockExtent& e : p.extents) {
    for (uint64_t k = 0; k < e.blocks; ++k, ++i) {
      refs.push_back(BlockRef{e.start + k, p.crcs[i]});
      body.u64(p.first_block + i);
      body.u64(e.start + k);
      body.u32(p.crcs[i]);
    }
  }
  put_attrs(body, p.attrs);
  if (Status s = append_record(kWrite, body.out); !s.ok()) {
    if (failure_.empty()) give_back();  // not written (a full checkpoint slot): still free
    return s;
  }
  Onode& o = onodes_[p.object];
  o.size = new_size;
  for (const auto& [k, v] : p.attrs) o.attrs[k] = v;
  for (uint64_t k = 0; k < p.blocks; ++k) {
    auto [it, inserted] = o.blocks.try_emplace(p.first_block + k, refs[k]);
    if (!inserted) {
      free_later(it->second);
      it->second = refs[k];
    }
  }
  return Status::ok_status();
}

Result<Payload> DiskStore::read(std::string_view object, uint64_t offset, uint64_t length) {
  Result<ReadPlan> plan = plan_read(object, offset, length);
  if (!plan.ok()) return plan.status();
  return execute_read(*plan);
}

Result<DiskStore::ReadPlan> DiskStore::plan_read(std::string_view object, uint64_t offset,
                                                 uint64_t length) const {
  if (!failure_.empty()) return unusable();
  auto found = onodes_.find(object);
  if (found == onodes_.end()) {
    return Status::not_found(where() + ": no object " + quoted(object));
  }
  const Onode& o = found->second;
  if (offset > o.size || length > o.size - offset) {
    return Status::invalid_argument(where() + ": object " + quoted(object) + ": range [" +
                                    std::to_string(offset) + ", +" + std::to_string(length) +
                                    ") is beyond its size of " + std::to_string(o.size) + " bytes");
  }
  ReadPlan plan;
  plan.object = std::string(object);
  plan.offset = offset;
  plan.length = length;
  if (length == 0) return plan;
  // The blocks of the range in runs: consecutive object blocks on consecutive device blocks
  // (one device read each), and holes (zeros).
  const uint64_t first = offset / kBlockBytes;
  const uint64_t last = (offset + length - 1) / kBlockBytes;
  for (uint64_t ob = first; ob <= last; ++ob) {
    auto it = o.blocks.find(ob);
    const uint64_t db = it == o.blocks.end() ? kHoleBlock : it->second.device_block;
    const uint32_t crc = it == o.blocks.end() ? 0 : it->second.crc;
    if (!plan.runs.empty()) {
      ReadPlan::Run& r = plan.runs.back();
      const bool hole = r.device_block == kHoleBlock;
      if ((hole && db == kHoleBlock) ||
          (!hole && db != kHoleBlock && db == r.device_block + r.blocks)) {
        ++r.blocks;
        r.crcs.push_back(crc);
        continue;
      }
    }
    plan.runs.push_back(ReadPlan::Run{ob, 1, db, {crc}});
  }
  return plan;
}

Result<Payload> DiskStore::execute_read(const ReadPlan& plan) const {
  if (plan.length == 0) return Payload::of(Buffer::zeros(0));
  const std::vector<ReadPlan::Run>& runs = plan.runs;
  std::vector<Buffer> bytes(runs.size());
  // Every run on the device in one call: a fragmented object's runs are read at once.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const ReadPlan::Run& r : runs) {
    if (r.device_block != kHoleBlock) {
      ranges.emplace_back(r.device_block * kBlockBytes, r.blocks * kBlockBytes);
    }
  }
  Result<std::vector<Payload>> read = device_.read_ranges(ranges);
  if (!read.ok()) return read.status();
  size_t next = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    const ReadPlan::Run& r = runs[k];
    if (r.device_block == kHoleBlock) continue;
    Payload& p = (*read)[next++];
    Buffer b = p.bytes ? std::move(p.bytes) : Buffer::zeros(r.blocks * kBlockBytes);
    for (uint64_t i = 0; i < r.blocks; ++i) {
      const uint32_t crc = crc32c(b.slice(i * kBlockBytes, kBlockBytes).span());
      if (crc != r.crcs[i]) {
        return Status::corruption(where() + ": object " + quoted(plan.object) + " block " +
                                  std::to_string(r.object_block + i) + " (device offset " +
                                  std::to_string((r.device_block + i) * kBlockBytes) +
                                  ") has crc32c " + hex32(crc) + ", its onode says " +
                                  hex32(r.crcs[i]));
      }
    }
    bytes[k] = std::move(b);
  }
  const uint64_t offset = plan.offset, length = plan.length;
  const uint64_t skip = offset - runs[0].object_block * kBlockBytes;
  // One run on the device: the range is a slice of what the device returned (no copy).
  if (runs.size() == 1 && bytes[0]) return Payload::of(bytes[0].slice(skip, length));
  MutableBuffer out(length);
  for (size_t k = 0; k < runs.size(); ++k) {
    if (!bytes[k]) continue;  // zeros
    // The run's bytes [from, to) of the object, clipped to the range.
    const uint64_t from = std::max(runs[k].object_block * kBlockBytes, offset);
    const uint64_t to =
        std::min((runs[k].object_block + runs[k].blocks) * kBlockBytes, offset + length);
    out.write_at(from - offset,
                 bytes[k].slice(from - runs[k].object_block * kBlockBytes, to - from).span());
  }
  return Payload::of(std::move(out).freeze());
}

Status DiskStore::remove(std::string_view object, const WriteOptions& options) {
  if (!failure_.empty()) return unusable();
  auto found = onodes_.find(object);
  if (found == onodes_.end()) {
    return Status::not_found(where() + ": no object " + quoted(object));
  }
  Writer body;
  body.str(object);
  if (Status s = append_record(kRemove, body.out); !s.ok()) return s;
  found = onodes_.find(object);  // a checkpoint may have run; the index is unchanged
  for (const auto& [ob, ref] : found->second.blocks) free_later(ref);
  onodes_.erase(found);
  return options.sync ? flush() : Status::ok_status();
}

// ---------------------------------------------------------------------------------------------
// Inspection

Result<std::string> DiskStore::attr(std::string_view object, std::string_view key) const {
  auto found = onodes_.find(object);
  if (found == onodes_.end()) return Status::not_found(where() + ": no object " + quoted(object));
  auto a = found->second.attrs.find(key);
  if (a == found->second.attrs.end()) {
    return Status::not_found(where() + ": object " + quoted(object) + " has no attribute " +
                             quoted(key));
  }
  return a->second;
}

Result<uint64_t> DiskStore::size(std::string_view object) const {
  auto found = onodes_.find(object);
  if (found == onodes_.end()) return Status::not_found(where() + ": no object " + quoted(object));
  return found->second.size;
}

std::vector<std::string> DiskStore::list() const {
  std::vector<std::string> names;
  for (const auto& [name, o] : onodes_) names.push_back(name);
  return names;
}

Result<std::vector<ObjectExtent>> DiskStore::extents(std::string_view object) const {
  auto found = onodes_.find(object);
  if (found == onodes_.end()) return Status::not_found(where() + ": no object " + quoted(object));
  std::vector<ObjectExtent> out;
  for (const auto& [ob, ref] : found->second.blocks) {
    if (!out.empty() && out.back().object_offset + out.back().length == ob * kBlockBytes &&
        out.back().device_offset + out.back().length == ref.device_block * kBlockBytes) {
      out.back().length += kBlockBytes;
    } else {
      out.push_back(ObjectExtent{ob * kBlockBytes, ref.device_block * kBlockBytes, kBlockBytes});
    }
  }
  return out;
}

SpaceUsage DiskStore::space() const {
  SpaceUsage u;
  u.data_bytes = layout_.data_blocks * kBlockBytes;
  for (const auto& [name, o] : onodes_) u.used_bytes += o.blocks.size() * kBlockBytes;
  u.free_bytes = allocator_.free_blocks() * kBlockBytes;
  u.pending_free_bytes = (freed_unflushed_.size() + freed_await_commit_.size()) * kBlockBytes;
  return u;
}

Status DiskStore::check() const {
  std::set<uint64_t> seen;
  uint64_t used = 0;
  for (const auto& [name, o] : onodes_) {
    const uint64_t blocks_in_size = (o.size + kBlockBytes - 1) / kBlockBytes;
    for (const auto& [ob, ref] : o.blocks) {
      const std::string what = "object " + quoted(name) + " block " + std::to_string(ob);
      if (ob >= blocks_in_size) {
        return Status::corruption(where() + ": " + what + " lies past its size of " +
                                  std::to_string(o.size) + " bytes");
      }
      if (ref.device_block < layout_.data_block ||
          ref.device_block >= layout_.data_block + layout_.data_blocks) {
        return Status::corruption(where() + ": " + what + " names device block " +
                                  std::to_string(ref.device_block) + ", outside the data region");
      }
      if (!seen.insert(ref.device_block).second) {
        return Status::corruption(where() + ": device block " + std::to_string(ref.device_block) +
                                  " is used twice (again by " + what + ")");
      }
      if (allocator_.is_free(ref.device_block)) {
        return Status::corruption(where() + ": " + what + " names device block " +
                                  std::to_string(ref.device_block) + ", which is free");
      }
      ++used;
    }
  }
  for (const std::vector<uint64_t>* pending : {&freed_unflushed_, &freed_await_commit_}) {
    for (uint64_t b : *pending) {
      if (!seen.insert(b).second || allocator_.is_free(b)) {
        return Status::corruption(where() + ": device block " + std::to_string(b) +
                                  " is pending free and also used or free");
      }
    }
  }
  const uint64_t pending = freed_unflushed_.size() + freed_await_commit_.size();
  if (used + pending + preparing_blocks_ + allocator_.free_blocks() != layout_.data_blocks) {
    return Status::corruption(
        where() + ": " + std::to_string(used) + " used + " + std::to_string(pending) +
        " pending + " + std::to_string(preparing_blocks_) + " being written + " +
        std::to_string(allocator_.free_blocks()) +
        " free blocks != " + std::to_string(layout_.data_blocks) + " in the data region");
  }
  uint64_t free_sum = 0;
  for (const auto& [start, len] : allocator_.free_extents()) free_sum += len;
  if (free_sum != allocator_.free_blocks()) {
    return Status::corruption(where() + ": the free extents sum to " + std::to_string(free_sum) +
                              " blocks, the allocator counts " +
                              std::to_string(allocator_.free_blocks()));
  }
  return Status::ok_status();
}

}  // namespace granary::store

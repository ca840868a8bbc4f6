#include "engine/recovery/peering.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <variant>

#include "engine/redundancy/codec.h"
#include "engine/services/file_mapping.h"

namespace granary::recovery {
namespace {

std::string sub_endpoint(const std::string& osd) {
  return osd + ".sub";  // OsdService::sub_op_endpoint
}

uint64_t request_id_of(const MessageBody& body) {
  if (const auto* r = std::get_if<ScanReply>(&body)) return r->request_id;
  if (const auto* r = std::get_if<ReadReply>(&body)) return r->request_id;
  if (const auto* r = std::get_if<WriteReply>(&body)) return r->request_id;
  return 0;
}

using Bytes = Buffer;

std::span<const uint8_t> u8(const Buffer& b) {
  return {reinterpret_cast<const uint8_t*>(b.data()), b.size()};
}

class Peer {
 public:
  Peer(Env& env, HostId host, const PeeringOptions& options)
      : env_(env),
        host_(host),
        options_(options),
        reply_(env.endpoint(host, options.reply_endpoint)) {}

  Result<PeeringReport> run(const std::vector<PgMembers>& pgs) {
    if (options_.ec.k > 0) {
      Result<redundancy::ReedSolomon> rs = redundancy::ReedSolomon::create(
          {options_.ec.k, options_.ec.m, options_.ec.stripe_unit_bytes});
      if (!rs.ok()) return rs.status();
      codec_ = std::make_unique<redundancy::ReedSolomon>(std::move(*rs));
    }
    many_pgs_ = pgs.size() > 1;
    for (const PgMembers& pg : pgs) {
      if (Status s = peer_pg(pg); !s.ok()) return s;
      ++report_.pgs;
    }
    return report_;
  }

 private:
  // One request to `osd` and its reply.
  Result<Message> call(const std::string& osd, MessageBody body, Payload payload = {}) {
    const uint64_t id = ++next_id_;
    std::visit(
        [&](auto& b) {
          if constexpr (requires { b.request_id; }) b.request_id = id;
          if constexpr (requires { b.reply_to; }) b.reply_to = reply_.name();
        },
        body);
    env_.send(host_, sub_endpoint(osd), Message{std::move(body), std::move(payload)});
    for (;;) {
      Result<Message> m = reply_.recv(options_.timeout_s);
      if (!m.ok()) {
        return Status::io_error(osd + " did not answer peering request " + std::to_string(id) +
                                " within " + std::to_string(options_.timeout_s) + " s");
      }
      if (request_id_of(m->body) == id) return m;
    }
  }

  // The objects `osd` holds of PG `pg` (the caller filters them with pg_of: an OSD that
  // places no objects lists all it holds). Peering many PGs, each member lists everything it
  // holds once (all_pgs), instead of once per PG.
  Result<std::vector<ObjectListing>> scan(const std::string& osd, uint32_t pg) {
    auto it = scans_.find(osd);
    if (it != scans_.end()) return it->second;
    ScanRequest q;
    q.pg = pg;
    q.all_pgs = many_pgs_;
    q.epoch = options_.epoch;
    Result<Message> m = call(osd, std::move(q));
    if (!m.ok()) return m.status();
    auto& r = std::get<ScanReply>(m->body);
    if (!r.ok) return Status::io_error(r.error);
    if (!many_pgs_) return std::move(r.objects);
    return scans_[osd] = std::move(r.objects);
  }

  // Reads `length` bytes at `offset` of `osd`'s copy (or, shard >= 0, that shard) of `object`.
  Result<Bytes> read(const std::string& osd, const std::string& object, uint64_t length,
                     int32_t shard) {
    if (length == 0) return Buffer::zeros(0);
    ReadRequest q;
    q.object = object;
    q.length = length;
    if (shard >= 0) {
      q.ec = options_.ec;
      q.shard = shard;
    }
    Result<Message> m = call(osd, std::move(q));
    if (!m.ok()) return m.status();
    const auto& r = std::get<ReadReply>(m->body);
    if (!r.ok) return Status::corruption(r.error);
    if (!m->payload.bytes || m->payload.bytes.size() != length) {
      return Status::io_error(osd + " returned " + object + " without its " +
                              std::to_string(length) + " bytes");
    }
    return std::move(m->payload.bytes);
  }

  Status push(const std::string& osd, const std::string& object, const Bytes& bytes,
              uint64_t version, uint64_t logical, int32_t shard) {
    WriteRequest w;
    w.object = object;
    w.length = bytes.size();
    w.version = version;
    w.logical_end_bytes = logical;
    w.recovery_push = true;
    if (shard >= 0) {
      w.ec = options_.ec;
      w.shard = shard;
    }
    Result<Message> m = call(osd, std::move(w), Payload::of(bytes));
    if (!m.ok()) return m.status();
    const auto& r = std::get<WriteReply>(m->body);
    if (!r.ok) return Status::io_error("push of " + object + " to " + osd + ": " + r.error);
    ++report_.pushes;
    report_.bytes_pushed += bytes.size();
    return Status();
  }

  Status remove(const std::string& osd, const std::string& object) {
    RemoveRequest q;
    q.object = object;
    Result<Message> m = call(osd, std::move(q));
    if (!m.ok()) return m.status();
    const auto& r = std::get<WriteReply>(m->body);
    if (!r.ok && r.error_code != ReplyError::kNotFound) {
      return Status::io_error("remove of " + object + " from " + osd + ": " + r.error);
    }
    return Status();
  }

  struct Copy {
    int position = 0;
    ObjectInfo info;
  };

  Status peer_pg(const PgMembers& pg) {
    std::map<std::string, std::vector<Copy>> objects;
    for (size_t i = 0; i < pg.osds.size(); ++i) {
      if (pg.osds[i].empty()) continue;
      Result<std::vector<ObjectListing>> listed = scan(pg.osds[i], pg.pg);
      if (!listed.ok()) return listed.status();
      for (const ObjectListing& o : *listed) {
        if (options_.pg_of && options_.pg_of(o.name) != pg.pg) continue;
        objects[o.name].push_back(Copy{static_cast<int>(i), o.info});
      }
    }
    for (const auto& [name, copies] : objects) {
      ++report_.objects;
      Status s = options_.ec.k > 0 ? recover_coded(pg, name, copies)
                                   : recover_replicated(pg, name, copies);
      if (!s.ok()) return s;
    }
    return Status();
  }

  // The newest version among `copies`, and the positions holding it.
  static uint64_t newest(const std::vector<Copy>& copies, std::vector<int>& current,
                         ObjectInfo& info) {
    uint64_t v = 0;
    for (const Copy& c : copies) v = std::max(v, c.info.version);
    for (const Copy& c : copies) {
      if (c.info.version == v) {
        current.push_back(c.position);
        info = c.info;
      }
    }
    return v;
  }

  Status recover_replicated(const PgMembers& pg, const std::string& name,
                            const std::vector<Copy>& copies) {
    std::vector<int> current;
    ObjectInfo info;
    const uint64_t version = newest(copies, current, info);
    std::set<int> bad;
    std::map<int, Bytes> content;
    if (options_.deep) {
      // Every current copy, read in full; the content most copies agree on is the good one.
      // (content, copies) in the order the contents were first seen
      std::vector<std::pair<Bytes, int>> votes;
      for (int p : current) {
        Result<Bytes> b = read(pg.osds[p], name, info.size_bytes, -1);
        ++report_.scrubbed_copies;
        if (!b.ok()) {
          bad.insert(p);
          continue;
        }
        auto v =
            std::find_if(votes.begin(), votes.end(), [&](const auto& x) { return x.first == *b; });
        if (v == votes.end()) {
          votes.emplace_back(*b, 1);
        } else {
          ++v->second;
        }
        content[p] = std::move(*b);
      }
      const Bytes* best = nullptr;
      int best_votes = 0;
      for (const auto& [b, n] : votes) {
        if (n > best_votes) best = &b, best_votes = n;
      }
      for (const auto& [p, b] : content) {
        if (best != nullptr && b != *best) bad.insert(p);
      }
      report_.scrub_errors += bad.size();
    }
    std::vector<int> targets;
    for (size_t i = 0; i < pg.osds.size(); ++i) {
      const int p = static_cast<int>(i);
      if (pg.osds[i].empty()) continue;
      const bool has = std::find(current.begin(), current.end(), p) != current.end();
      if (!has) ++report_.stale_copies;
      if (!has || bad.count(p) > 0) targets.push_back(p);
    }
    if (targets.empty()) return Status();
    int source = -1;
    for (int p : current) {
      if (bad.count(p) == 0) {
        source = p;
        break;
      }
    }
    if (source < 0) {
      report_.unrecoverable.push_back(name);
      return Status();
    }
    if (content.find(source) == content.end()) {
      Result<Bytes> b = read(pg.osds[source], name, info.size_bytes, -1);
      if (!b.ok()) return b.status();
      content[source] = std::move(*b);
    }
    for (int p : targets) {
      if (Status s = push(pg.osds[p], name, content[source], version, info.client_bytes(), -1);
          !s.ok()) {
        return s;
      }
    }
    return Status();
  }

  Status recover_coded(const PgMembers& pg, const std::string& name,
                       const std::vector<Copy>& copies) {
    const int k = options_.ec.k, n = options_.ec.k + options_.ec.m;
    std::vector<int> current;
    ObjectInfo info;
    const uint64_t version = newest(copies, current, info);
    const bool older_exists = current.size() < copies.size();
    const uint64_t logical = info.client_bytes();
    const uint64_t shard_len = redundancy::shard_bytes(codec_->profile(), logical);
    // The newest version's shards and the position holding each. A copy is the shard it
    // recorded, which is not its position when CRUSH moved its OSD since (an OSD marked out
    // can reshuffle an indep rule's positions; Ceph keeps the shard in the object's id); a
    // copy in its own position is preferred.
    std::map<int, int> holder;  // shard -> position
    for (const Copy& c : copies) {
      const int shard = c.info.shard >= 0 ? c.info.shard : c.position;
      if (c.info.version != version || shard >= n) continue;
      if (!holder.contains(shard) || c.position == shard) holder[shard] = c.position;
    }
    // Positions whose OSD does not hold its own shard of the newest version.
    std::vector<int> stale;
    for (int p = 0; p < n && p < static_cast<int>(pg.osds.size()); ++p) {
      if (pg.osds[p].empty()) continue;
      auto it = holder.find(p);
      if (it == holder.end() || it->second != p) stale.push_back(p);
    }
    report_.stale_copies += stale.size();
    if (static_cast<int>(holder.size()) < k) {
      if (older_exists) {
        report_.unrecoverable.push_back(name);
        return Status();
      }
      for (int p : current) {
        if (Status s = remove(pg.osds[p], name); !s.ok()) return s;
      }
      ++report_.rolled_back;
      return Status();
    }
    if (!options_.deep && stale.empty()) return Status();

    // The shards to read: every current one when scrubbing, else the first k.
    std::map<int, Bytes> shards;  // by shard
    std::set<int> bad;            // shards
    for (const auto& [shard, p] : holder) {
      if (!options_.deep && static_cast<int>(shards.size()) == k) break;
      Result<Bytes> b = read(pg.osds[p], name, shard_len, shard);
      if (options_.deep) ++report_.scrubbed_copies;
      if (!b.ok()) {
        bad.insert(shard);
        continue;
      }
      shards[shard] = std::move(*b);
    }
    if (static_cast<int>(shards.size()) < k) {
      report_.unrecoverable.push_back(name);
      return Status();
    }
    if (options_.deep) {
      // A shard the others disagree with: rebuilding it from k of the rest gives other bytes,
      // while the rest are consistent among themselves.
      if (!consistent(shards, {})) {
        for (const auto& [shard, b] : shards) {
          if (consistent(shards, {shard})) {
            bad.insert(shard);
            break;
          }
        }
      }
      report_.scrub_errors += bad.size();
      for (int shard : bad) shards.erase(shard);
    }
    // The positions to write: the stale ones and those whose own shard was bad; each gets its
    // own shard, read (held elsewhere) or decoded from k others.
    std::vector<int> targets = stale;
    for (int shard : bad) {
      if (holder[shard] == shard) targets.push_back(shard);
    }
    if (targets.empty()) return Status();
    std::vector<int> sources, decoded;
    for (const auto& [shard, b] : shards) {
      if (static_cast<int>(sources.size()) < k) sources.push_back(shard);
    }
    for (int t : targets) {
      if (!shards.contains(t)) decoded.push_back(t);
    }
    std::map<int, Buffer> rebuilt;
    if (!decoded.empty()) {
      Result<redundancy::ErasureDecoder> dec = codec_->decoder(sources, decoded);
      if (!dec.ok()) return dec.status();
      std::vector<std::span<const uint8_t>> in;
      for (int shard : sources) in.push_back(u8(shards[shard]));
      std::vector<MutableBuffer> bytes;
      std::vector<std::span<uint8_t>> out;
      for (size_t i = 0; i < decoded.size(); ++i) {
        bytes.push_back(env_.allocate(shard_len));
        out.emplace_back(reinterpret_cast<uint8_t*>(bytes.back().data()), shard_len);
      }
      if (Status s = dec->decode(in, out); !s.ok()) return s;
      for (size_t i = 0; i < decoded.size(); ++i)
        rebuilt[decoded[i]] = std::move(bytes[i]).freeze();
    }
    std::vector<int> held(static_cast<size_t>(n), -1);  // position -> shard it holds now
    for (const Copy& c : copies) {
      const int shard = c.info.shard >= 0 ? c.info.shard : c.position;
      if (c.info.version == version && shard < n && c.position < n) held[c.position] = shard;
    }
    for (int t : order_shard_pushes(std::move(held), targets)) {
      const Buffer& chunk = shards.contains(t) ? shards[t] : rebuilt[t];
      if (Status s = push(pg.osds[t], name, chunk, version, logical, t); !s.ok()) return s;
    }
    return Status();
  }

  // Whether the shards other than `skip` agree: every one of them equals what k of them decode.
  bool consistent(const std::map<int, Bytes>& shards, std::set<int> skip) const {
    std::vector<int> sources, others;
    for (const auto& [p, b] : shards) {
      if (skip.count(p) > 0) continue;
      (static_cast<int>(sources.size()) < options_.ec.k ? sources : others).push_back(p);
    }
    if (others.empty() || static_cast<int>(sources.size()) < options_.ec.k) return true;
    Result<redundancy::ErasureDecoder> dec = codec_->decoder(sources, others);
    if (!dec.ok()) return false;
    std::vector<std::span<const uint8_t>> in;
    for (int p : sources) in.push_back(u8(shards.at(p)));
    std::vector<std::vector<uint8_t>> got(others.size(),
                                          std::vector<uint8_t>(shards.at(sources[0]).size()));
    std::vector<std::span<uint8_t>> out;
    for (auto& b : got) out.emplace_back(b);
    if (!dec->decode(in, out).ok()) return false;
    for (size_t i = 0; i < others.size(); ++i) {
      const std::span<const uint8_t> theirs = u8(shards.at(others[i]));
      if (!std::equal(got[i].begin(), got[i].end(), theirs.begin(), theirs.end())) return false;
    }
    return true;
  }

  Env& env_;
  HostId host_;
  const PeeringOptions& options_;
  Endpoint& reply_;
  uint64_t next_id_ = 0;
  std::unique_ptr<redundancy::ReedSolomon> codec_;
  PeeringReport report_;
  bool many_pgs_ = false;  // more than one PG: each member scanned once (all_pgs)
  std::map<std::string, std::vector<ObjectListing>> scans_;  // many_pgs_: by member
};

}  // namespace

std::vector<int> order_shard_pushes(std::vector<int> held, std::vector<int> targets) {
  auto distinct = [](const std::vector<int>& h) {
    std::set<int> d;
    for (int s : h) {
      if (s >= 0) d.insert(s);
    }
    return d.size();
  };
  std::vector<int> order;
  while (!targets.empty()) {
    size_t best = 0, best_distinct = 0;
    for (size_t i = 0; i < targets.size(); ++i) {
      std::vector<int> after = held;
      after[static_cast<size_t>(targets[i])] = targets[i];
      const size_t d = distinct(after);
      if (i == 0 || d > best_distinct) best = i, best_distinct = d;
    }
    const int t = targets[best];
    held[static_cast<size_t>(t)] = t;
    order.push_back(t);
    targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return order;
}

Result<PeeringReport> peer(Env& env, HostId host, const std::vector<PgMembers>& pgs,
                           const PeeringOptions& options) {
  if (options.reply_endpoint.empty() || options.timeout_s <= 0) {
    return Status::invalid_argument("peering needs a reply endpoint and a timeout > 0");
  }
  Peer p(env, host, options);
  return p.run(pgs);
}

std::vector<PgMembers> pg_members(placement::Placement& placement) {
  std::vector<PgMembers> out;
  std::vector<int32_t> devices;
  for (uint32_t g = 0; g < placement.num_groups(); ++g) {
    devices.clear();
    placement.devices_of(g, devices);
    PgMembers m{g, {}};
    for (int32_t d : devices) {
      m.osds.push_back(d == placement::kNoDevice ? "" : services::osd_endpoint_name(d));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace granary::recovery

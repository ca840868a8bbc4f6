#include "engine/services/client.h"

#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <utility>

namespace granary::services {

Status reply_status(ReplyError code, const std::string& message) {
  switch (code) {
    case ReplyError::kNotFound:
      return Status::not_found(message);
    case ReplyError::kOutOfRange:
    case ReplyError::kInvalid:
      return Status::invalid_argument(message);
    case ReplyError::kIoError:
    case ReplyError::kNone:
      break;
  }
  return Status::io_error(message);
}

StorageClient::StorageClient(Env& env, HostId host, StorageBackend backend,
                             StorageClientOptions options)
    : env_(env),
      host_(host),
      backend_(std::move(backend)),
      options_(std::move(options)),
      mu_(env),
      placement_mu_(env) {
  GRANARY_CHECK(!options_.name.empty() && options_.cpu_s_per_op >= 0 &&
                options_.cpu_s_per_byte >= 0);
  if (const auto* r = std::get_if<RadosBackend>(&backend_)) GRANARY_CHECK(r->placement != nullptr);
  if (const auto* p = std::get_if<PfsBackend>(&backend_)) {
    GRANARY_CHECK(p->max_request_bytes > 0 && p->op_timeout_s >= 0);
  }
  if (const auto* n = std::get_if<NfsBackend>(&backend_)) {
    GRANARY_CHECK(n->heads >= 1 && n->rsize_bytes > 0 && n->window_requests >= 1 &&
                  n->local_head < n->heads);
  }
}

Endpoint& StorageClient::take_reply_endpoint() {
  std::lock_guard<EnvMutex> lock(mu_);
  if (!free_reply_endpoints_.empty()) {
    Endpoint* ep = free_reply_endpoints_.back();
    free_reply_endpoints_.pop_back();
    return *ep;
  }
  return env_.endpoint(host_, options_.name + ".reply." + std::to_string(reply_endpoints_made_++));
}

void StorageClient::return_reply_endpoint(Endpoint& ep) {
  std::lock_guard<EnvMutex> lock(mu_);
  free_reply_endpoints_.push_back(&ep);
}

uint64_t StorageClient::next_request_id() {
  std::lock_guard<EnvMutex> lock(mu_);
  return ++request_id_;
}

namespace {

// A close of a handle this client holds, which the metadata server refuses as not open (a
// close's only InvalidArgument, mds.h): the server restarted since the open and lost its
// in-memory handles. Lustre's clients replay their opens to a recovering MDS; here the open is
// replayed when its close finds it missing (the file's create was durable before it was
// answered), then the close goes again. `rpc` sends one metadata operation on the file.
Result<uint64_t> close_replaying_open(const std::function<Result<uint64_t>(MetadataOp)>& rpc) {
  Result<uint64_t> closed = rpc(MetadataOp::kClose);
  if (closed.ok() || closed.status().code() != Status::Code::kInvalidArgument) return closed;
  if (Result<uint64_t> reopened = rpc(MetadataOp::kOpen); !reopened.ok()) return closed;
  return rpc(MetadataOp::kClose);
}

}  // namespace

Result<uint64_t> StorageClient::metadata(MetadataOp op, std::string_view path, Endpoint& reply_ep,
                                         int64_t size_bytes) {
  Result<MetadataReply> reply = metadata_reply(op, path, reply_ep, size_bytes);
  if (!reply.ok()) return reply.status();
  return reply->size_bytes;
}

Result<MetadataReply> StorageClient::metadata_reply(MetadataOp op, std::string_view path,
                                                    Endpoint& reply_ep, int64_t size_bytes) {
  const auto& pfs = std::get<PfsBackend>(backend_);
  MetadataRequest request;
  request.request_id = next_request_id();
  request.op = op;
  request.path = std::string(path);
  request.size_bytes = size_bytes;
  request.reply_to = reply_ep.name();
  request.sent_at_s = env_.now_s();
  const uint64_t id = request.request_id;
  env_.compute_s(options_.cpu_s_per_op);
  {
    std::lock_guard<EnvMutex> lock(mu_);
    ++stats_.metadata_ops;
  }
  // Lustre DNE: the file's metadata server by its path's hash (as nfs_head_of spreads files).
  const std::string& mds =
      pfs.mds_count > 1 ? mds_endpoint_name(nfs_head_of(path, pfs.mds_count)) : pfs.mds_endpoint;
  env_.send(host_, mds, Message{std::move(request), {}});
  for (;;) {
    Result<Message> m = pfs.op_timeout_s > 0 ? reply_ep.recv(pfs.op_timeout_s) : reply_ep.recv();
    if (!m.ok()) {
      if (m.status().code() != Status::Code::kNotFound) return m.status();
      return Status::unavailable(mds + " did not answer the metadata operation on " +
                                 std::string(path) + " within " + std::to_string(pfs.op_timeout_s) +
                                 " s");
    }
    auto* reply = std::get_if<MetadataReply>(&m->body);
    if (reply == nullptr || reply->request_id != id) continue;  // stale
    if (!reply->ok) return reply_status(reply->error_code, reply->error);
    return std::move(*reply);
  }
}

Result<layout::LustreFileLayout> StorageClient::pfs_layout(std::string_view path) {
  const auto& p = std::get<PfsBackend>(backend_);
  if (p.layouts != nullptr) {
    auto it = p.layouts->find(path);
    if (it == p.layouts->end()) return Status::not_found("no pfs layout for " + std::string(path));
    return it->second;
  }
  std::lock_guard<EnvMutex> lock(mu_);
  auto it = open_files_.find(path);
  if (it == open_files_.end() || it->second.stripe_size_bytes == 0) {
    return Status::not_found("no pfs layout from the MDS for " + std::string(path));
  }
  return layout::LustreFileLayout::create(it->second.stripe_size_bytes, it->second.ost_indices);
}

Result<uint64_t> StorageClient::pfs_open(std::string_view path, Endpoint& reply_ep) {
  {
    std::lock_guard<EnvMutex> lock(mu_);
    auto it = open_files_.find(path);
    if (it != open_files_.end()) return it->second.size_bytes;
  }
  Result<MetadataReply> reply = metadata_reply(MetadataOp::kOpen, path, reply_ep);
  if (!reply.ok()) return reply.status();
  std::lock_guard<EnvMutex> lock(mu_);
  // Two tasks may have opened the file at once: the client then holds two MDS handles and
  // close_file releases both.
  OpenFile& f = open_files_[std::string(path)];
  f.size_bytes = reply->size_bytes;
  f.stripe_size_bytes = reply->stripe_size_bytes;
  f.ost_indices = std::move(reply->ost_indices);
  ++f.handles;
  return f.size_bytes;
}

Result<std::vector<ObjectRead>> StorageClient::plan(std::string_view path, uint64_t size_bytes) {
  if (const auto* p = std::get_if<PfsBackend>(&backend_)) {
    Result<layout::LustreFileLayout> l = pfs_layout(path);
    if (!l.ok()) return l.status();
    return pfs_reads(*l, path, 0, size_bytes, p->max_request_bytes);
  }
  const auto& n = std::get<NfsBackend>(backend_);
  return nfs_reads(path, n.head_of(path), 0, size_bytes, n.rsize_bytes);
}

std::vector<uint64_t> StorageClient::next_versions(size_t n) {
  std::vector<uint64_t> versions;
  std::lock_guard<EnvMutex> lock(mu_);
  for (size_t i = 0; i < n; ++i) versions.push_back(++write_version_);
  return versions;
}

namespace {

// Whether `reply` (with `payload`) answers `read` whole (with its bytes when `want_bytes`).
Status check_read_reply(const ReadReply& reply, const Payload& payload, const ObjectRead& read,
                        bool want_bytes) {
  if (!reply.ok) return reply_status(reply.error_code, reply.error);
  if (reply.length != read.length_bytes || payload.size_bytes != read.length_bytes ||
      (want_bytes && !payload.bytes)) {
    return Status::corruption(read.endpoint + ": asked for " + std::to_string(read.length_bytes) +
                              " bytes of " + read.object + ", got " +
                              std::to_string(payload.size_bytes) +
                              (payload.bytes || !want_bytes ? "" : " without their bytes"));
  }
  return Status();
}

// Whether `reply`, from `endpoint`, acknowledges all of `write`.
Status check_write_reply(const WriteReply& reply, const ObjectRead& write,
                         const std::string& endpoint) {
  if (!reply.ok) return reply_status(reply.error_code, reply.error);
  if (reply.length != write.length_bytes) {
    return Status::corruption(endpoint + ": wrote " + std::to_string(reply.length) + " of " +
                              std::to_string(write.length_bytes) + " bytes of " + write.object);
  }
  return Status();
}

// Takes the reply to `read`: its bytes counted (into *bytes and `received`) and its payload
// kept in *out when one is asked for; or, when it does not answer the read, its error kept in
// *first_error unless an earlier one is there.
void take_read_reply(const ReadReply& reply, Payload& payload, const ObjectRead& read, Payload* out,
                     uint64_t* bytes, std::atomic<uint64_t>& received, Status* first_error) {
  Status checked = check_read_reply(reply, payload, read, out != nullptr);
  if (!checked.ok()) {
    if (first_error->ok()) *first_error = checked;
    return;
  }
  *bytes += reply.length;
  received.fetch_add(reply.length, std::memory_order_relaxed);
  if (out != nullptr) *out = std::move(payload);
}

}  // namespace

bool StorageClient::presumed_lost(const RadosBackend* rados, double sent_s) const {
  return rados != nullptr && rados->same_map_resend_s > 0 &&
         env_.now_s() - sent_s >= rados->same_map_resend_s;
}

Result<Message> StorageClient::await_reply(Endpoint& reply_ep, const RadosBackend* rados) {
  if (rados != nullptr && rados->map_epoch) return reply_ep.recv(rados->resend_check_s);
  if (rados != nullptr && rados->op_timeout_s > 0) return reply_ep.recv(rados->op_timeout_s);
  return reply_ep.recv();
}

Result<uint64_t> StorageClient::exchange(const std::vector<ObjectRead>& reads, size_t window,
                                         Endpoint& reply_ep, uint32_t planned_epoch,
                                         std::vector<Payload>* replies) {
  if (replies != nullptr) replies->assign(reads.size(), Payload{});
  struct Pending {
    size_t index;    // in reads
    double sent_s;   // this send
    uint32_t epoch;  // of the map the target came from
    std::string endpoint;
  };
  std::map<uint64_t, Pending> pending;  // request id -> what it asks
  size_t next = 0;
  Status first_error;
  uint64_t bytes = 0;
  const auto* rados = std::get_if<RadosBackend>(&backend_);
  const std::function<uint32_t()>* map_epoch =
      rados != nullptr && rados->map_epoch ? &rados->map_epoch : nullptr;
  auto epoch_now = [&] { return map_epoch ? (*map_epoch)() : 0u; };
  // The request for reads[index] under the map of this moment: its object's primary (and
  // shards) now. Null when the object's group has no OSD (its PG is down).
  auto locate = [&](size_t index) -> std::optional<ObjectRead> {
    std::lock_guard<EnvMutex> lock(placement_mu_);
    Result<std::vector<ObjectRead>> again =
        rados_object_request(*rados->placement, reads[index], rados->ec.k > 0);
    if (!again.ok() || again->empty()) return std::nullopt;
    return std::move((*again)[0]);
  };
  // Sends `read` (reads[index] or its re-targeted copy) tagged with the epoch its target was
  // computed under, so a request planned before a map change and sent after it is never taken
  // for one of the new map (Ceph's Objecter targets every op on the map it sends it under).
  auto send = [&](size_t index, const ObjectRead& read, uint32_t target_epoch) {
    ReadRequest request;
    request.request_id = next_request_id();
    request.object = read.object;
    request.offset = read.offset_bytes;
    request.length = read.length_bytes;
    request.reply_to = reply_ep.name();
    if (rados != nullptr && rados->ec.k > 0) {
      request.ec = rados->ec;
      request.shards = read.group;
    }
    env_.compute_s(options_.cpu_s_per_op +
                   static_cast<double>(read.length_bytes) * options_.cpu_s_per_byte);
    request.sent_at_s = env_.now_s();
    pending.emplace(request.request_id,
                    Pending{index, request.sent_at_s, target_epoch, read.endpoint});
    env_.send(host_, read.endpoint, Message{std::move(request), {}});
  };
  // The next planned request: its planned target if the map has not changed since the plan,
  // else its target now (waiting, as a moved request does, when its group has no OSD).
  auto send_next = [&] {
    const size_t index = next++;
    const uint32_t epoch = epoch_now();
    if (map_epoch == nullptr || epoch == planned_epoch) {
      send(index, reads[index], planned_epoch);
      return;
    }
    std::optional<ObjectRead> target = locate(index);
    if (!target) {
      // Nowhere to go yet: parked as a request of an older map, so the next map retries it.
      pending.emplace(next_request_id(),
                      Pending{index, env_.now_s(), planned_epoch, std::string()});
      return;
    }
    send(index, *target, epoch);
  };
  // On a map change, every request targeted under an older map is looked at again: one whose
  // target moved (its OSD marked down, or back up) goes to the new target at once; one whose
  // target did not move stays in flight unless it has waited resend_check_s already (its OSD
  // may have been down and back in between, dropping it: Ceph's Objecter resends on an OSD
  // session reset too); one whose group has no OSD waits for the next map. A late reply to a
  // replaced send is ignored.
  uint32_t epoch_checked = planned_epoch;
  auto lost = [&](double sent_s) { return presumed_lost(rados, sent_s); };
  double next_look_s = env_.now_s() + (rados != nullptr ? rados->same_map_resend_s : 0);
  auto resend_moved = [&] {
    const uint32_t epoch = epoch_now();
    epoch_checked = epoch;
    std::vector<std::pair<uint64_t, Pending>> moved;
    for (const auto& [id, p] : pending) {
      if (p.epoch != epoch || lost(p.sent_s)) moved.emplace_back(id, p);
    }
    for (auto& [id, p] : moved) {
      std::optional<ObjectRead> target = locate(p.index);
      if (!target) {
        pending[id].epoch = epoch;  // nowhere to go yet: wait for the next map
        pending[id].endpoint.clear();
        continue;
      }
      if (target->endpoint == p.endpoint && env_.now_s() - p.sent_s < rados->resend_check_s &&
          !lost(p.sent_s)) {
        pending[id].epoch = epoch;  // same target, recently sent: still in flight
        continue;
      }
      pending.erase(id);
      {
        std::lock_guard<EnvMutex> lock(mu_);
        if (!p.endpoint.empty()) ++stats_.resent;
        stats_.blocked_s += env_.now_s() - p.sent_s;
      }
      send(p.index, *target, epoch);
    }
  };
  while (next < reads.size() && pending.size() < window) send_next();
  {
    std::lock_guard<EnvMutex> lock(mu_);
    stats_.requests += next;
  }
  while (!pending.empty()) {
    Result<Message> m = await_reply(reply_ep, rados);
    if (!m.ok()) {
      if (!map_epoch && m.status().code() == Status::Code::kNotFound) {
        return Status::io_error(std::to_string(pending.size()) + " object reads unanswered after " +
                                std::to_string(rados->op_timeout_s) + " s (op_timeout_s)");
      }
      if (map_epoch && m.status().code() == Status::Code::kNotFound) {
        // Nothing arrived for resend_check_s: a request parked on an older map (its group had
        // no OSD, or it went to an OSD that died) is tried again under the map of now.
        resend_moved();
        continue;
      }
      return m.status();
    }
    // A new map re-targets what is in flight at once, whatever else keeps arriving; so does
    // the look for lost requests.
    if (map_epoch && (epoch_now() != epoch_checked ||
                      (rados->same_map_resend_s > 0 && env_.now_s() >= next_look_s))) {
      resend_moved();
      next_look_s = env_.now_s() + rados->same_map_resend_s;
    }
    const auto* reply = std::get_if<ReadReply>(&m->body);
    if (reply == nullptr) continue;
    auto it = pending.find(reply->request_id);
    if (it == pending.end()) continue;  // stale (not ours, or answered after a resend)
    const size_t index = it->second.index;
    pending.erase(it);
    take_read_reply(*reply, m->payload, reads[index],
                    replies != nullptr ? &(*replies)[index] : nullptr, &bytes, bytes_received_,
                    &first_error);
    if (first_error.ok() && next < reads.size()) {
      send_next();
      std::lock_guard<EnvMutex> lock(mu_);
      ++stats_.requests;
    }
  }
  if (!first_error.ok()) return first_error;
  return bytes;
}

Result<FileRead> StorageClient::read_file(std::string_view path, uint64_t size_bytes,
                                          Buffer* data) {
  const double start_s = env_.now_s();
  Endpoint& reply_ep = take_reply_endpoint();
  auto fail = [&](Status s) -> Result<FileRead> {
    return_reply_endpoint(reply_ep);
    std::lock_guard<EnvMutex> lock(mu_);
    ++stats_.errors;
    return s;
  };
  if (data != nullptr && std::holds_alternative<NfsBackend>(backend_)) {
    return fail(Status::not_supported(std::string(path) +
                                      ": reads that return data are for rados pools and pfs; "
                                      "nfs clients move sizes only"));
  }
  const size_t window = window_of();
  if (std::holds_alternative<PfsBackend>(backend_)) {
    Result<uint64_t> size = pfs_open(path, reply_ep);
    if (!size.ok()) return fail(size.status());
    if (*size != size_bytes) {
      return fail(Status::corruption(std::string(path) + ": the MDS reports " +
                                     std::to_string(*size) + " bytes, the reader expected " +
                                     std::to_string(size_bytes)));
    }
  }
  const auto* rados = std::get_if<RadosBackend>(&backend_);
  uint32_t planned_epoch = 0;
  Result<std::vector<ObjectRead>> reads =
      rados != nullptr ? plan_rados(*rados, path, 0, size_bytes, rados->ec.k > 0,
                                    &ClientStats::blocked_s, &planned_epoch)
                       : plan(path, size_bytes);
  if (!reads.ok()) return fail(reads.status());
  std::vector<Payload> replies;
  Result<uint64_t> bytes =
      exchange(*reads, window, reply_ep, planned_epoch, data != nullptr ? &replies : nullptr);
  if (!bytes.ok()) return fail(bytes.status());
  if (data != nullptr) {
    Result<std::vector<std::vector<layout::ByteRange>>> ranges =
        std::vector<std::vector<layout::ByteRange>>{};
    if (rados != nullptr) {
      ranges = rados_file_ranges(*rados, 0, size_bytes);
    } else if (Result<layout::LustreFileLayout> l = pfs_layout(path); l.ok()) {
      ranges = pfs_ranges(*l, path, *reads);
    } else {
      ranges = l.status();
    }
    if (!ranges.ok()) return fail(ranges.status());
    if (Status s = gather_ranges(0, size_bytes, *ranges, replies, data); !s.ok()) return fail(s);
  }
  return_reply_endpoint(reply_ep);
  FileRead r{*bytes, env_.now_s() - start_s, reads->size()};
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.files_read;
  stats_.bytes_read += r.bytes;
  stats_.file_latency_s.push_back(r.latency_s);
  return r;
}

Status StorageClient::close_file(std::string_view path) {
  if (!std::holds_alternative<PfsBackend>(backend_)) return Status::ok_status();
  int handles = 0;
  {
    std::lock_guard<EnvMutex> lock(mu_);
    auto it = open_files_.find(path);
    if (it == open_files_.end()) {
      ++stats_.errors;
      return Status::invalid_argument("close of " + std::string(path) +
                                      ", which this client does not have open");
    }
    handles = it->second.handles;
    open_files_.erase(it);
  }
  Endpoint& reply_ep = take_reply_endpoint();
  Status status;
  for (int i = 0; i < handles; ++i) {
    Result<uint64_t> r =
        close_replaying_open([&](MetadataOp op) { return metadata(op, path, reply_ep); });
    if (!r.ok() && status.ok()) status = r.status();
  }
  return_reply_endpoint(reply_ep);
  if (!status.ok()) {
    std::lock_guard<EnvMutex> lock(mu_);
    ++stats_.errors;
  }
  return status;
}

size_t StorageClient::window_of() const {
  size_t window = std::numeric_limits<size_t>::max();
  if (const auto* r = std::get_if<RadosBackend>(&backend_); r && r->window_requests > 0) {
    window = static_cast<size_t>(r->window_requests);
  }
  if (const auto* p = std::get_if<PfsBackend>(&backend_); p && p->window_requests > 0) {
    window = static_cast<size_t>(p->window_requests);
  }
  if (const auto* n = std::get_if<NfsBackend>(&backend_)) {
    window = static_cast<size_t>(n->window_requests);
  }
  return window;
}

Result<uint64_t> StorageClient::exchange_writes(const std::vector<ObjectRead>& writes,
                                                size_t window, bool durable, Endpoint& reply_ep,
                                                const std::vector<Payload>* payloads) {
  // Each write with data gets its version once: a resend carries the same bytes and version.
  GRANARY_CHECK(payloads == nullptr || payloads->size() == writes.size());
  const std::vector<uint64_t> versions = next_versions(payloads != nullptr ? writes.size() : 0);
  struct Pending {
    size_t index;       // in writes
    double sent_s;      // this send (or attempt, when its group had no OSD)
    uint32_t epoch;     // of the map the target came from
    uint64_t interval;  // of the object's group when sent
    bool sent;          // false: its group had no OSD, it waits for the next map
    std::string endpoint;
  };
  std::map<uint64_t, Pending> pending;  // request id -> what it asks
  size_t next = 0;
  Status first_error;
  uint64_t bytes = 0;
  const auto* rados = std::get_if<RadosBackend>(&backend_);
  const std::function<uint32_t()>* map_epoch =
      rados != nullptr && rados->map_epoch ? &rados->map_epoch : nullptr;
  auto epoch_now = [&] { return map_epoch ? (*map_epoch)() : 0u; };
  auto interval_now = [&](const std::string& object) -> uint64_t {
    std::lock_guard<EnvMutex> lock(placement_mu_);
    return rados->placement->interval_of(rados->placement->group_of(object));
  };
  // Where writes[index] goes now. With a changing map the group and its interval are taken
  // from the map of this moment, together (the plan may be older); false when the group has
  // no OSD (its PG is down).
  auto locate = [&](size_t index, ObjectRead& target, uint64_t& interval) {
    if (map_epoch == nullptr) {
      target = writes[index];
      return true;
    }
    std::lock_guard<EnvMutex> lock(placement_mu_);
    auto again = rados_object_request(*rados->placement, writes[index], /*with_group=*/true);
    if (!again.ok() || again->empty()) return false;
    target = std::move((*again)[0]);
    interval = rados->placement->interval_of(rados->placement->group_of(target.object));
    return true;
  };
  auto send = [&](size_t index) {
    ObjectRead target;
    uint64_t interval = 0;
    const bool located = locate(index, target, interval);
    WriteRequest request;
    request.request_id = next_request_id();
    if (!located) {
      pending.emplace(request.request_id,
                      Pending{index, env_.now_s(), epoch_now(), 0, false, std::string()});
      return;
    }
    request.object = target.object;
    request.offset = target.offset_bytes;
    request.length = target.length_bytes;
    request.reply_to = reply_ep.name();
    request.durable = durable;
    request.interval = interval;
    if (payloads != nullptr) request.version = versions[index];
    if (rados != nullptr && rados->ec.k > 0) {
      request.ec = rados->ec;
      request.shards = target.group;
    } else if (rados != nullptr) {
      for (size_t i = 1; i < target.group.size(); ++i) {
        if (!target.group[i].empty()) request.replicas.push_back(target.group[i]);
      }
    }
    env_.compute_s(options_.cpu_s_per_op +
                   static_cast<double>(target.length_bytes) * options_.cpu_s_per_byte);
    request.sent_at_s = env_.now_s();
    pending.emplace(request.request_id, Pending{index, request.sent_at_s, epoch_now(), interval,
                                                true, target.endpoint});
    env_.send(
        host_, target.endpoint,
        Message{std::move(request),
                payloads != nullptr ? (*payloads)[index] : Payload::of_size(target.length_bytes)});
  };
  auto send_next = [&] {
    {
      std::lock_guard<EnvMutex> lock(mu_);
      ++stats_.write_requests;
    }
    send(next);
    ++next;
  };
  // After a map change: a write whose group changed interval goes at once to the group's
  // OSDs now (the old primary discards it); one whose group did not change goes again once it
  // has waited resend_check_s (its OSD may have been down and back, dropping it); one whose
  // group had no OSD tries again.
  auto resend_moved = [&] {
    const uint32_t epoch = epoch_now();
    auto lost = [&](const Pending& p) { return presumed_lost(rados, p.sent_s); };
    std::vector<uint64_t> ids;
    for (const auto& [id, p] : pending) {
      if (p.epoch != epoch || lost(p)) ids.push_back(id);
    }
    for (uint64_t id : ids) {
      const Pending p = pending.at(id);
      if (p.sent && interval_now(writes[p.index].object) == p.interval &&
          env_.now_s() - p.sent_s < rados->resend_check_s && !lost(p)) {
        continue;
      }
      pending.erase(id);
      {
        std::lock_guard<EnvMutex> lock(mu_);
        if (p.sent) ++stats_.writes_resent;
        stats_.write_blocked_s += env_.now_s() - p.sent_s;
      }
      send(p.index);
    }
  };
  while (next < writes.size() && pending.size() < window) send_next();
  double next_check_s = env_.now_s() + (map_epoch ? rados->resend_check_s : 0);
  while (!pending.empty()) {
    Result<Message> m = await_reply(reply_ep, rados);
    if (!m.ok() && !map_epoch && m.status().code() == Status::Code::kNotFound) {
      return Status::io_error(std::to_string(pending.size()) + " object writes unanswered after " +
                              std::to_string(rados->op_timeout_s) + " s (op_timeout_s)");
    }
    if (!m.ok() && !(map_epoch && m.status().code() == Status::Code::kNotFound)) {
      return m.status();
    }
    if (map_epoch && (!m.ok() || env_.now_s() >= next_check_s)) {
      // Nothing arrived for resend_check_s, or that long passed since the last look: perhaps
      // an OSD died and the map moved on.
      resend_moved();
      next_check_s = env_.now_s() + rados->resend_check_s;
    }
    if (!m.ok()) continue;
    const auto* reply = std::get_if<WriteReply>(&m->body);
    if (reply == nullptr) continue;
    auto it = pending.find(reply->request_id);
    if (it == pending.end()) continue;  // stale (not ours, or answered after a resend)
    const ObjectRead& w = writes[it->second.index];
    const std::string endpoint = it->second.endpoint;
    pending.erase(it);
    if (Status checked = check_write_reply(*reply, w, endpoint); !checked.ok()) {
      if (first_error.ok()) first_error = checked;
    } else {
      bytes += reply->length;
    }
    if (first_error.ok() && next < writes.size()) send_next();
  }
  if (!first_error.ok()) return first_error;
  return bytes;
}

Result<FileWrite> StorageClient::write_file(std::string_view path, uint64_t size_bytes,
                                            WriteOptions options) {
  return write_whole(path, size_bytes, nullptr, options);
}

Result<FileWrite> StorageClient::write_file(std::string_view path, const Payload& data,
                                            WriteOptions options) {
  return write_whole(path, data.size_bytes, data.bytes ? &data : nullptr, options);
}

Result<std::vector<std::vector<layout::ByteRange>>> StorageClient::rados_file_ranges(
    const RadosBackend& rados, uint64_t offset, uint64_t length) {
  Result<std::vector<layout::ObjectExtent>> extents = rados.layout.image_to_objects(offset, length);
  if (!extents.ok()) return extents.status();
  std::vector<std::vector<layout::ByteRange>> ranges;
  ranges.reserve(extents->size());
  for (layout::ObjectExtent& e : *extents) ranges.push_back(std::move(e.image_ranges));
  return ranges;
}

Result<std::vector<std::vector<layout::ByteRange>>> StorageClient::pfs_ranges(
    const layout::LustreFileLayout& layout, std::string_view path,
    const std::vector<ObjectRead>& requests) {
  std::vector<std::vector<layout::ByteRange>> ranges;
  ranges.reserve(requests.size());
  for (const ObjectRead& r : requests) {
    Result<std::vector<layout::ByteRange>> one = pfs_file_ranges(layout, path, r);
    if (!one.ok()) return one.status();
    ranges.push_back(std::move(*one));
  }
  return ranges;
}

Result<std::vector<Payload>> StorageClient::split_ranges(
    uint64_t offset, const Payload& data,
    const std::vector<std::vector<layout::ByteRange>>& ranges) {
  std::vector<Payload> out;
  out.reserve(ranges.size());
  for (const std::vector<layout::ByteRange>& request : ranges) {
    for (const layout::ByteRange& r : request) {
      if (r.offset_bytes < offset || r.end_bytes() > offset + data.size_bytes) {
        return Status::invalid_argument("a request's file range lies outside the data written");
      }
    }
    if (request.size() == 1) {  // a slice of the caller's bytes, no copy
      const layout::ByteRange& r = request.front();
      out.push_back(Payload::of(data.bytes.slice(r.offset_bytes - offset, r.length_bytes)));
      continue;
    }
    uint64_t length = 0;
    for (const layout::ByteRange& r : request) length += r.length_bytes;
    MutableBuffer bytes = env_.allocate(length);
    uint64_t at = 0;
    for (const layout::ByteRange& r : request) {
      bytes.write_at(at, data.bytes.slice(r.offset_bytes - offset, r.length_bytes).span());
      at += r.length_bytes;
    }
    out.push_back(Payload::of(std::move(bytes).freeze()));
  }
  return out;
}

Status StorageClient::gather_ranges(uint64_t offset, uint64_t length,
                                    const std::vector<std::vector<layout::ByteRange>>& ranges,
                                    const std::vector<Payload>& replies, Buffer* data) {
  if (ranges.size() != replies.size()) {
    return Status::corruption("gather_ranges: " + std::to_string(replies.size()) + " replies for " +
                              std::to_string(ranges.size()) + " requests");
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    uint64_t want = 0;
    for (const layout::ByteRange& r : ranges[i]) {
      if (r.offset_bytes < offset || r.end_bytes() > offset + length) {
        return Status::corruption("request " + std::to_string(i) +
                                  "'s file range lies outside the range read");
      }
      want += r.length_bytes;
    }
    const Payload& p = replies[i];
    if (!p.bytes || p.bytes.size() != want) {
      return Status::corruption("request " + std::to_string(i) + " came back without its " +
                                std::to_string(want) + " bytes");
    }
  }
  // One request holding the whole range: the reply's bytes as they are.
  if (ranges.size() == 1 && ranges[0].size() == 1 && ranges[0][0].length_bytes == length) {
    *data = replies[0].bytes;
    return Status();
  }
  MutableBuffer out = env_.allocate(length);
  for (size_t i = 0; i < ranges.size(); ++i) {
    uint64_t at = 0;
    for (const layout::ByteRange& r : ranges[i]) {
      out.write_at(r.offset_bytes - offset, replies[i].bytes.slice(at, r.length_bytes).span());
      at += r.length_bytes;
    }
  }
  *data = std::move(out).freeze();
  return Status();
}

Result<FileWrite> StorageClient::write_whole(std::string_view path, uint64_t size_bytes,
                                             const Payload* data, WriteOptions options) {
  const double start_s = env_.now_s();
  Endpoint& reply_ep = take_reply_endpoint();
  auto fail = [&](Status s) -> Result<FileWrite> {
    return_reply_endpoint(reply_ep);
    std::lock_guard<EnvMutex> lock(mu_);
    ++stats_.errors;
    return s;
  };
  Result<std::vector<ObjectRead>> writes = std::vector<ObjectRead>{};
  bool durable = true;
  std::vector<Payload> payloads;
  if (data != nullptr && std::holds_alternative<NfsBackend>(backend_)) {
    return fail(Status::not_supported(std::string(path) +
                                      ": writes that carry data are for rados pools and pfs; nfs "
                                      "clients move sizes only"));
  }
  Result<std::vector<std::vector<layout::ByteRange>>> ranges =
      std::vector<std::vector<layout::ByteRange>>{};
  if (const auto* r = std::get_if<RadosBackend>(&backend_)) {
    if (data != nullptr) ranges = rados_file_ranges(*r, 0, size_bytes);
    writes =
        plan_rados(*r, path, 0, size_bytes, /*with_group=*/true, &ClientStats::write_blocked_s);
  } else if (const auto* p = std::get_if<PfsBackend>(&backend_)) {
    Result<MetadataReply> created = metadata_reply(MetadataOp::kCreate, path, reply_ep);
    if (!created.ok()) return fail(created.status());
    Result<layout::LustreFileLayout> l =
        p->layouts != nullptr
            ? pfs_layout(path)
            : layout::LustreFileLayout::create(created->stripe_size_bytes, created->ost_indices);
    if (!l.ok()) return fail(l.status());
    writes = pfs_reads(*l, path, 0, size_bytes, p->max_request_bytes);
    if (writes.ok() && data != nullptr) ranges = pfs_ranges(*l, path, *writes);
  } else {
    const auto& n = std::get<NfsBackend>(backend_);
    writes = nfs_reads(path, n.head_of(path), 0, size_bytes, n.rsize_bytes);
    durable = false;
  }
  if (!writes.ok()) return fail(writes.status());
  if (!ranges.ok()) return fail(ranges.status());
  if (data != nullptr) {
    Result<std::vector<Payload>> split = split_ranges(0, *data, *ranges);
    if (!split.ok()) return fail(split.status());
    payloads = std::move(*split);
  }
  size_t window = window_of();
  if (const auto* r = std::get_if<RadosBackend>(&backend_); r && r->write_window_requests > 0) {
    window = static_cast<size_t>(r->write_window_requests);
  }
  Result<uint64_t> bytes =
      exchange_writes(*writes, window, durable, reply_ep, data != nullptr ? &payloads : nullptr);
  if (!bytes.ok()) return fail(bytes.status());
  if (std::holds_alternative<PfsBackend>(backend_)) {
    Result<uint64_t> closed = close_replaying_open([&](MetadataOp op) {
      return metadata(op, path, reply_ep,
                      op == MetadataOp::kClose ? static_cast<int64_t>(size_bytes) : -1);
    });
    if (!closed.ok()) return fail(closed.status());
  } else if (const auto* n = std::get_if<NfsBackend>(&backend_); n && options.fsync) {
    CommitRequest commit;
    commit.request_id = next_request_id();
    commit.object = std::string(path);
    commit.reply_to = reply_ep.name();
    commit.sent_at_s = env_.now_s();
    const uint64_t id = commit.request_id;
    env_.compute_s(options_.cpu_s_per_op);
    env_.send(host_, nfs_endpoint_name(n->head_of(path)), Message{std::move(commit), {}});
    for (;;) {
      Result<Message> m = reply_ep.recv();
      if (!m.ok()) return fail(m.status());
      const auto* reply = std::get_if<WriteReply>(&m->body);
      if (reply == nullptr || reply->request_id != id) continue;
      if (!reply->ok) return fail(reply_status(reply->error_code, reply->error));
      break;
    }
  }
  return_reply_endpoint(reply_ep);
  FileWrite w{*bytes, env_.now_s() - start_s, writes->size()};
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.files_written;
  stats_.bytes_written += w.bytes;
  stats_.write_latency_s.push_back(w.latency_s);
  return w;
}

Result<std::vector<ObjectRead>> StorageClient::plan_rados(const RadosBackend& rados,
                                                          std::string_view path, uint64_t offset,
                                                          uint64_t length, bool with_group,
                                                          double ClientStats::*blocked,
                                                          uint32_t* planned_epoch) {
  auto plan_now = [&] {
    std::lock_guard<EnvMutex> lock(placement_mu_);
    // Read before planning: a map that changes meanwhile leaves an older epoch, which only
    // makes the requests re-targeted when sent.
    if (planned_epoch != nullptr) {
      *planned_epoch = rados.map_epoch ? rados.map_epoch() : 0u;
    }
    return rados_reads(rados.layout, *rados.placement, path, offset, length, with_group);
  };
  Result<std::vector<ObjectRead>> requests = plan_now();
  if (!rados.map_epoch) return requests;
  // A group with no OSD left (its PG is down): the I/O waits for a map that brings one back,
  // as I/O to an inactive PG blocks in Ceph.
  const double blocked_from = env_.now_s();
  while (!requests.ok() && requests.status().code() == Status::Code::kNotFound) {
    env_.sleep_s(rados.resend_check_s);
    requests = plan_now();
  }
  if (env_.now_s() > blocked_from) {
    std::lock_guard<EnvMutex> lock(mu_);
    stats_.*blocked += env_.now_s() - blocked_from;
  }
  return requests;
}

Result<uint64_t> StorageClient::read_extent(std::string_view path, uint64_t offset, uint64_t length,
                                            Buffer* data) {
  const auto* rados = std::get_if<RadosBackend>(&backend_);
  if (rados == nullptr) {
    return Status::invalid_argument("read_extent: block I/O needs a rados backend (RBD images)");
  }
  uint32_t planned_epoch = 0;
  Result<std::vector<ObjectRead>> reads = plan_rados(*rados, path, offset, length, rados->ec.k > 0,
                                                     &ClientStats::blocked_s, &planned_epoch);
  if (!reads.ok()) return reads.status();
  Endpoint& reply_ep = take_reply_endpoint();
  std::vector<Payload> replies;
  Result<uint64_t> bytes = exchange(*reads, std::numeric_limits<size_t>::max(), reply_ep,
                                    planned_epoch, data != nullptr ? &replies : nullptr);
  return_reply_endpoint(reply_ep);
  if (bytes.ok() && data != nullptr) {
    Result<std::vector<std::vector<layout::ByteRange>>> ranges =
        rados_file_ranges(*rados, offset, length);
    Status s =
        ranges.ok() ? gather_ranges(offset, length, *ranges, replies, data) : ranges.status();
    if (!s.ok()) bytes = s;
  }
  std::lock_guard<EnvMutex> lock(mu_);
  if (!bytes.ok()) {
    ++stats_.errors;
  } else {
    stats_.bytes_read += *bytes;
  }
  return bytes;
}

Result<uint64_t> StorageClient::write_extent(std::string_view path, uint64_t offset,
                                             uint64_t length) {
  return write_range(path, offset, length, nullptr);
}

Result<uint64_t> StorageClient::write_extent(std::string_view path, uint64_t offset,
                                             const Payload& data) {
  return write_range(path, offset, data.size_bytes, data.bytes ? &data : nullptr);
}

Result<uint64_t> StorageClient::write_range(std::string_view path, uint64_t offset, uint64_t length,
                                            const Payload* data) {
  const auto* rados = std::get_if<RadosBackend>(&backend_);
  if (rados == nullptr) {
    return Status::invalid_argument("write_extent: block I/O needs a rados backend (RBD images)");
  }
  Result<std::vector<ObjectRead>> writes =
      plan_rados(*rados, path, offset, length, /*with_group=*/true, &ClientStats::write_blocked_s);
  if (!writes.ok()) return writes.status();
  std::vector<Payload> payloads;
  if (data != nullptr) {
    Result<std::vector<std::vector<layout::ByteRange>>> ranges =
        rados_file_ranges(*rados, offset, length);
    if (!ranges.ok()) return ranges.status();
    Result<std::vector<Payload>> split = split_ranges(offset, *data, *ranges);
    if (!split.ok()) return split.status();
    payloads = std::move(*split);
  }
  Endpoint& reply_ep = take_reply_endpoint();
  Result<uint64_t> bytes =
      exchange_writes(*writes, std::numeric_limits<size_t>::max(),
                      /*durable=*/true, reply_ep, data != nullptr ? &payloads : nullptr);
  return_reply_endpoint(reply_ep);
  std::lock_guard<EnvMutex> lock(mu_);
  if (!bytes.ok()) {
    ++stats_.errors;
  } else {
    stats_.bytes_written += *bytes;
  }
  return bytes;
}

ClientStats StorageClient::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

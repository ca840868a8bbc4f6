#include "engine/services/osd.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <variant>

#include "engine/redundancy/erasure.h"

namespace granary::services {

// ---- UnstableWrites

void UnstableWrites::begin(const std::string& object) {
  std::lock_guard<EnvMutex> lock(mu_);
  ++pending_[object];
}

void UnstableWrites::end(const std::string& object, const Status& status) {
  std::vector<std::shared_ptr<Semaphore>> wake;
  {
    std::lock_guard<EnvMutex> lock(mu_);
    if (!status.ok() && failed_.find(object) == failed_.end()) failed_[object] = status;
    auto it = pending_.find(object);
    GRANARY_CHECK(it != pending_.end() && it->second > 0);
    if (--it->second > 0) return;
    pending_.erase(it);
    auto w = waiters_.find(object);
    if (w != waiters_.end()) {
      wake = std::move(w->second);
      waiters_.erase(w);
    }
  }
  for (auto& s : wake) s->release();
}

Status UnstableWrites::wait_durable(const std::string& object) {
  std::shared_ptr<Semaphore> sem;
  {
    std::lock_guard<EnvMutex> lock(mu_);
    if (pending_.find(object) != pending_.end()) {
      sem = env_.make_semaphore(0);
      waiters_[object].push_back(sem);
    }
  }
  if (sem) sem->acquire();
  std::lock_guard<EnvMutex> lock(mu_);
  auto f = failed_.find(object);
  if (f == failed_.end()) return Status();
  Status s = f->second;
  failed_.erase(f);
  return s;
}

// ---- OsdService

namespace {

// A request among OSDs addressing one shard of an erasure-coded object.
bool is_shard_op(const ErasureCoding& ec, const std::vector<std::string>& shards) {
  return ec.k > 0 && shards.empty();
}

redundancy::ErasureProfile profile_of(const ErasureCoding& ec) {
  return {ec.k, ec.m, ec.stripe_unit_bytes};
}

// Why an OSD on `backend` refuses `request` outright (read-only, a payload that does not match
// the request's length, no bytes where the OSD stores data), or empty when it may go on.
std::string write_refusal(const WriteRequest& request, const Payload& payload,
                          const ObjectBackend& backend) {
  if (!backend.writable()) return "read-only: no writes accepted";
  if (payload.size_bytes != request.length) {
    return "write of " + std::to_string(request.length) + " bytes carries " +
           std::to_string(payload.size_bytes);
  }
  if (backend.carries_data() && !payload.bytes) {
    return "write of " + std::to_string(request.length) + " bytes to " + request.object +
           " carries no bytes, and this OSD stores data";
  }
  return {};
}

}  // namespace

OsdService::OsdService(Env& env, HostId host, Device& device, OsdServiceOptions options)
    : env_(env),
      host_(host),
      device_(device),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      sub_endpoint_(env.endpoint(host, sub_op_endpoint(options_.endpoint_name))),
      mu_(env),
      store_mu_(options_.store_mutex != nullptr ? options_.store_mutex : &mu_),
      pending_sem_(env.make_semaphore(0)) {
  GRANARY_CHECK(!options_.endpoint_name.empty());
  GRANARY_CHECK(options_.worker_tasks >= 1);
  GRANARY_CHECK(options_.cpu_s_per_op >= 0 && options_.cpu_s_per_byte >= 0 &&
                options_.ec_cpu_s_per_byte >= 0);
  GRANARY_CHECK(!options_.await_active || options_.placement != nullptr);
}

OsdService::OsdService(Env& env, HostId host, Device& device, const ObjectIndex& store,
                       OsdServiceOptions options)
    : OsdService(env, host, device, std::move(options)) {
  backend_ = std::make_unique<ExtentBackend>(device, store, nullptr, options_.journal, *store_mu_);
}

OsdService::OsdService(Env& env, HostId host, Device& device, WritableObjectIndex& store,
                       OsdServiceOptions options)
    : OsdService(env, host, device, std::move(options)) {
  backend_ = std::make_unique<ExtentBackend>(device, store, &store, options_.journal, *store_mu_);
}

OsdService::OsdService(Env& env, HostId host, Device& device, store::DiskStore& store,
                       OsdServiceOptions options)
    : OsdService(env, host, device, std::move(options)) {
  GRANARY_CHECK(options_.journal == nullptr);
  backend_ = std::make_unique<StoreBackend>(env, store, options_.parallel_store_reads);
}

std::string OsdService::sub_op_endpoint(const std::string& osd) {
  return osd + ".sub";
}

void OsdService::start(TaskOptions task_options) {
  for (int i = 0; i < options_.worker_tasks; ++i) {
    env_.spawn(
        host_, options_.endpoint_name + ".worker" + std::to_string(i), [this, i] { serve(i); },
        task_options);
    env_.spawn(
        host_, options_.endpoint_name + ".subworker" + std::to_string(i),
        [this, i] { serve(i, /*sub_ops=*/true); }, task_options);
  }
}

void OsdService::serve(int worker, bool sub_ops) {
  Endpoint& in = sub_ops ? sub_endpoint_ : endpoint_;
  Endpoint& own =
      env_.endpoint(host_, options_.endpoint_name + ".d" + std::to_string(device_.id()) +
                               (sub_ops ? ".s" : ".w") + std::to_string(worker));
  for (;;) {
    Result<Message> m = in.recv();
    if (!m.ok()) return;  // the host went down
    if (std::holds_alternative<Shutdown>(m->body)) {
      env_.send(host_, in.name(), Message{Shutdown{}, {}});  // for the next worker
      bool first = false;
      {
        std::lock_guard<EnvMutex> lock(mu_);
        first = !sub_ops && !sub_shutdown_sent_;
        if (first) sub_shutdown_sent_ = true;
      }
      // The sub-op workers stop too (once a client-op worker has seen the Shutdown).
      if (first) env_.send(host_, sub_endpoint_.name(), Message{Shutdown{}, {}});
      return;
    }
    if (!available()) continue;  // crashed: the request is lost
    const bool io = std::holds_alternative<ReadRequest>(m->body) ||
                    std::holds_alternative<WriteRequest>(m->body);
    // A client op that must wait for its group to be active waits in a handler, never in the
    // worker (a worker held by a PG that is peering would stall every other PG's ops).
    const bool awaits = io && !sub_ops && options_.await_active;
    if (awaits && options_.op_queue == nullptr && options_.active_now && active_now(*m)) {
      dispatch(*m, own, /*client=*/true);  // active: no reason to wait in a handler
      continue;
    }
    if (awaits || (options_.op_queue != nullptr && io)) {
      // Ceph's op threads never wait for replicas: with an op queue (which bounds the
      // requests in their op-thread part) the worker hands the request to a handler task, one
      // more when none is idle, and goes back to the endpoint at once.
      bool spawn = false;
      int slot = 0;
      {
        std::lock_guard<EnvMutex> lock(mu_);
        pending_.push_back(Handed{std::make_shared<Message>(std::move(*m)), awaits, !sub_ops});
        if (idle_handlers_ > 0) {
          --idle_handlers_;
        } else {
          spawn = true;
          slot = handlers_++;
        }
      }
      if (spawn) {
        env_.spawn(
            host_, options_.endpoint_name + ".h" + std::to_string(slot),
            [this, slot] { run_handler(slot); }, TaskOptions{.daemon = true});
      }
      pending_sem_->release();
      continue;
    }
    dispatch(*m, own, !sub_ops);
  }
}

namespace {

// The object a client read or write is for; null for other messages.
const std::string* io_object(const Message& m) {
  if (const auto* r = std::get_if<ReadRequest>(&m.body)) return &r->object;
  if (const auto* w = std::get_if<WriteRequest>(&m.body)) return &w->object;
  return nullptr;
}

}  // namespace

bool OsdService::active_now(const Message& m) const {
  const std::string* object = io_object(m);
  return object != nullptr && options_.active_now(options_.placement->group_of(*object));
}

bool OsdService::await_active(const Message& m) {
  if (!options_.await_active) return true;
  const std::string* object = io_object(m);
  if (object == nullptr) return true;
  if (options_.await_active(options_.placement->group_of(*object))) return true;
  count(&OsdStats::dropped_inactive, 1);
  return false;
}

void OsdService::dispatch(const Message& m, Endpoint& own, bool client) {
  if (const auto* r = std::get_if<ReadRequest>(&m.body)) {
    handle_read(*r, own, client);
  } else if (const auto* w = std::get_if<WriteRequest>(&m.body)) {
    handle_write(*w, m.payload, own);
  } else if (const auto* c = std::get_if<CommitRequest>(&m.body)) {
    handle_commit(*c);
  } else if (const auto* sc = std::get_if<ScanRequest>(&m.body)) {
    handle_scan(*sc);
  } else if (const auto* rm = std::get_if<RemoveRequest>(&m.body)) {
    handle_remove(*rm);
  }
  // Other messages are not for an object service; they are dropped.
}

void OsdService::run_handler(int slot) {
  Endpoint& reply =
      env_.endpoint(host_, options_.endpoint_name + ".d" + std::to_string(device_.id()) + ".h" +
                               std::to_string(slot));
  for (;;) {
    pending_sem_->acquire();
    Handed handed;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      GRANARY_CHECK(!pending_.empty());
      handed = std::move(pending_.front());
      pending_.pop_front();
    }
    // (A group that stayed inactive: the request is dropped, the client resends it.)
    if (!handed.awaits || await_active(*handed.message))
      dispatch(*handed.message, reply, handed.client);
    std::lock_guard<EnvMutex> lock(mu_);
    ++idle_handlers_;
  }
}

void OsdService::count_read(uint64_t bytes) {
  std::lock_guard<EnvMutex> lock(mu_);
  ++stats_.requests;
  stats_.bytes_sent += bytes;
}

uint64_t OsdService::interval_of(const std::string& object) const {
  if (options_.placement == nullptr) return 0;
  return options_.placement->interval_of(options_.placement->group_of(object));
}

void OsdService::count(uint64_t OsdStats::*field, uint64_t n) {
  std::lock_guard<EnvMutex> lock(mu_);
  stats_.*field += n;
}

Result<Payload> OsdService::read_own(const std::string& object, uint64_t offset, uint64_t length,
                                     uint64_t held) {
  const uint64_t have = std::min(length, held > offset ? held - offset : 0);
  Result<Payload> data = have > 0 ? backend_->read(object, offset, have) : Payload::of_size(0);
  if (!data.ok() || !backend_->carries_data()) {
    if (data.ok()) data->size_bytes = length;
    return data;
  }
  if (have == length) return data;
  MutableBuffer bytes = env_.allocate(length);  // zeros past what it holds
  if (data->bytes) bytes.write_at(0, data->bytes.span());
  return Payload::of(std::move(bytes).freeze());
}

Result<Payload> OsdService::repair_from_peers(const std::string& object, const ObjectInfo& info,
                                              Endpoint& own) {
  std::string tried;
  for (const std::string& peer : options_.peers_of(object)) {
    if (peer.empty() || peer == options_.endpoint_name) continue;
    ReadRequest sub;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      sub.request_id = ++sub_request_id_;
    }
    sub.object = object;
    sub.length = info.size_bytes;
    sub.reply_to = own.name();
    sub.sent_at_s = env_.now_s();
    env_.send(host_, sub_op_endpoint(peer), Message{sub, {}});
    Result<Message> m = Status::unavailable("");
    for (;;) {  // replies to earlier sub-ops of this endpoint are not this one's
      m = options_.sub_op_timeout_s > 0 ? own.recv(options_.sub_op_timeout_s) : own.recv();
      if (!m.ok()) break;
      const auto* r = std::get_if<ReadReply>(&m->body);
      if (r != nullptr && r->request_id == sub.request_id) break;
    }
    const auto* reply = m.ok() ? std::get_if<ReadReply>(&m->body) : nullptr;
    if (reply == nullptr || !reply->ok || reply->version != info.version ||
        m->payload.size_bytes != info.size_bytes || !m->payload.bytes) {
      tried += (tried.empty() ? "" : ", ") + peer +
               (reply == nullptr ? std::string(" did not answer")
                : !reply->ok     ? ": " + reply->error
                                 : " holds version " + std::to_string(reply->version) + ", not " +
                                   std::to_string(info.version));
      continue;
    }
    const Status rewritten =
        backend_->write(object, 0, m->payload, info.size_bytes, info.version, info.shard, nullptr);
    if (!rewritten.ok()) return rewritten;
    count(&OsdStats::read_repairs, 1);
    return std::move(m->payload);
  }
  return Status::unavailable(options_.endpoint_name + ": " + object +
                             ": no peer could repair its copy" +
                             (tried.empty() ? std::string() : " (" + tried + ")"));
}

Result<std::shared_ptr<const redundancy::ReedSolomon>> OsdService::codec(const ErasureCoding& ec) {
  const auto key = std::make_tuple(ec.k, ec.m, ec.stripe_unit_bytes);
  std::lock_guard<EnvMutex> lock(mu_);
  auto it = codecs_.find(key);
  if (it != codecs_.end()) return it->second;
  Result<redundancy::ReedSolomon> rs = redundancy::ReedSolomon::create(profile_of(ec));
  if (!rs.ok()) return rs.status();
  auto made = std::make_shared<const redundancy::ReedSolomon>(std::move(*rs));
  codecs_.emplace(key, made);
  return made;
}

bool OsdService::fetch_shards(const std::string& object,
                              const std::vector<redundancy::ShardExtent>& extents,
                              const std::vector<std::string>& shards, const ErasureCoding& ec,
                              Endpoint& own, const std::function<bool(Result<Message>&)>& receive,
                              Fetched& out) {
  out.data.assign(extents.size(), Payload{});
  out.versions.assign(extents.size(), 0);
  out.failed.assign(extents.size(), false);
  std::map<uint64_t, size_t> waiting;  // request id -> extent
  std::vector<size_t> local;
  for (size_t i = 0; i < extents.size(); ++i) {
    const std::string& to = shards[extents[i].shard];
    if (to == options_.endpoint_name) {
      local.push_back(i);
    } else {
      waiting[send_shard_read(to, object, extents[i], ec, own)] = i;
    }
  }
  if (!local.empty()) {
    Result<ObjectInfo> info = backend_->stat(object);
    for (size_t i : local) {
      if (info.ok() && info->shard >= 0 && info->shard != extents[i].shard) {
        out.failed[i] = true;  // another shard of the object (see handle_read)
        if (out.error.empty()) {
          out.error = options_.endpoint_name + ": holds shard " + std::to_string(info->shard) +
                      " of " + object + ", not shard " + std::to_string(extents[i].shard);
        }
        continue;
      }
      const uint64_t held = info.ok() ? info->size_bytes : 0;
      Result<Payload> d = read_own(object, extents[i].offset_bytes, extents[i].length_bytes, held);
      if (d.ok()) {
        out.data[i] = std::move(*d);
        out.versions[i] = info.ok() ? info->version : 0;
      } else {
        out.failed[i] = true;
        if (out.error.empty()) out.error = d.status().message();
      }
    }
  }
  while (!waiting.empty()) {
    Result<Message> m = Status::io_error("unset");
    if (!receive(m)) return false;
    if (!m.ok()) {  // timed out: the shards still silent are read around
      for (const auto& [id, i] : waiting) out.failed[i] = true;
      if (out.error.empty()) out.error = "shard read timed out";
      break;
    }
    const auto* r = std::get_if<ReadReply>(&m->body);
    if (r == nullptr) continue;
    auto it = waiting.find(r->request_id);
    if (it == waiting.end()) continue;  // stale
    const size_t i = it->second;
    waiting.erase(it);
    if (!r->ok) {
      out.failed[i] = true;
      if (out.error.empty()) out.error = r->error;
      continue;
    }
    out.data[i] = m->payload;
    out.versions[i] = r->version;
  }
  return true;
}

uint64_t OsdService::send_shard_read(const std::string& to, const std::string& object,
                                     const redundancy::ShardExtent& extent, const ErasureCoding& ec,
                                     Endpoint& own) {
  ReadRequest sub;
  {
    std::lock_guard<EnvMutex> lock(mu_);
    sub.request_id = ++sub_request_id_;
  }
  const uint64_t id = sub.request_id;
  sub.object = object;
  sub.offset = extent.offset_bytes;
  sub.length = extent.length_bytes;
  sub.reply_to = own.name();
  sub.sent_at_s = env_.now_s();
  sub.ec = ec;
  sub.shard = extent.shard;
  env_.send(host_, sub_op_endpoint(to), Message{std::move(sub), {}});
  return id;
}

void OsdService::op_thread(const std::string& object, uint64_t bytes, const std::string& reply_to) {
  const double cpu_s = options_.cpu_s_per_op + static_cast<double>(bytes) * options_.cpu_s_per_byte;
  if (options_.op_queue == nullptr) {
    env_.compute_s(cpu_s);
    return;
  }
  uint64_t key = 0;
  if (options_.placement != nullptr) {
    key = options_.placement->group_of(object);
  } else {
    key = 1469598103934665603ull;  // FNV-1a
    for (unsigned char ch : object) key = (key ^ ch) * 1099511628211ull;
  }
  OpItem item;
  const bool sub_op = reply_to.rfind("osd.", 0) == 0;
  item.op_class = sub_op ? OpClass::kImmediate : OpClass::kClient;
  item.priority = kClientOpPriority;
  item.cost = std::max<uint64_t>(bytes, 1);
  item.owner = key;
  options_.op_queue->run(key, item, [&] { env_.compute_s(cpu_s); });
}

void OsdService::handle_read(const ReadRequest& request, Endpoint& own, bool client) {
  op_thread(request.object, request.length, request.reply_to);
  ReadReply reply;
  reply.request_id = request.request_id;
  reply.sent_at_s = request.sent_at_s;
  const bool gather = request.ec.k > 0 && !request.shards.empty();
  const bool shard_op = is_shard_op(request.ec, request.shards);
  auto fail = [&](ReplyError code, std::string error) {
    reply.ok = false;
    reply.error_code = code;
    reply.error = options_.endpoint_name + ": " + std::move(error);
    {
      std::lock_guard<EnvMutex> lock(mu_);
      ++stats_.requests;
      ++stats_.errors;
    }
    env_.send(host_, request.reply_to, Message{std::move(reply), {}});
  };
  Result<ObjectInfo> object = backend_->stat(request.object);
  if (!object.ok() && !(shard_op && object.status().code() == Status::Code::kNotFound)) {
    return fail(ReplyError::kNotFound, "no object " + request.object);
  }
  if (shard_op && object.ok() && request.shard >= 0 && object->shard >= 0 &&
      object->shard != request.shard) {
    return fail(ReplyError::kNotFound, "holds shard " + std::to_string(object->shard) + " of " +
                                           request.object + ", not shard " +
                                           std::to_string(request.shard));
  }
  const uint64_t size = !object.ok() ? 0 : gather ? object->client_bytes() : object->size_bytes;
  if (!shard_op && (request.offset > size || request.length > size - request.offset)) {
    return fail(ReplyError::kOutOfRange, "read of " + std::to_string(request.length) +
                                             " bytes at " + std::to_string(request.offset) +
                                             " goes past the end of " + request.object + " (" +
                                             std::to_string(size) + " bytes)");
  }
  reply.length = request.length;
  if (!gather) {
    // A shard holds zeros past what was written to it (every shard is as long as the
    // longest).
    reply.version = object.ok() ? object->version : 0;
    const bool whole = !shard_op || request.offset + request.length <= size;
    if (whole && request.length > 0) {
      if (auto e = backend_->streamable(request.object, request.offset, request.length)) {
        const Status sent = env_.send_from_device(device_, e->offset_bytes, request.length,
                                                  request.reply_to, Message{reply, {}});
        if (!sent.ok()) return fail(ReplyError::kNone, sent.to_string());
        count_read(request.length);
        return;
      }
    }
    Result<Payload> data = read_own(request.object, request.offset, request.length, size);
    if (!data.ok() && client && options_.peers_of && object.ok() &&
        (data.status().code() == Status::Code::kIOError ||
         data.status().code() == Status::Code::kCorruption)) {
      Result<Payload> whole = repair_from_peers(request.object, *object, own);
      if (whole.ok()) {
        data = Payload::of(whole->bytes.slice(request.offset, request.length));
      } else if (whole.status().code() == Status::Code::kIOError) {
        data = whole.status();  // the rewrite failed: the drive is failing
      } else {
        const std::string both = data.status().message() + "; " + whole.status().message();
        data = data.status().code() == Status::Code::kIOError ? Status::io_error(both)
                                                              : Status::corruption(both);
      }
    }
    device_failed(data.status());
    if (!data.ok()) return fail(ReplyError::kNone, data.status().message());
    count_read(request.length);
    env_.send(host_, request.reply_to, Message{std::move(reply), std::move(*data)});
    return;
  }

  // The primary of an erasure-coded object: gather (and rebuild) the range. A shard that
  // fails, stays silent past shard_timeout_s, or holds an older version than the others is
  // read around: the read is planned again without it.
  const auto profile = profile_of(request.ec);
  std::vector<bool> available(request.shards.size());
  for (size_t i = 0; i < available.size(); ++i) available[i] = !request.shards[i].empty();
  Result<redundancy::ReadPlan> plan = Status::io_error("unplanned");
  Fetched got;
  bool down = false;
  auto receive = [&](Result<Message>& m) {
    m = options_.shard_timeout_s > 0 ? own.recv(options_.shard_timeout_s) : own.recv();
    if (m.ok() || m.status().code() == Status::Code::kNotFound) return true;
    down = true;  // the host went down
    return false;
  };
  for (;;) {
    plan = redundancy::plan_read(profile, request.offset, request.length, available);
    if (!plan.ok()) {
      return fail(ReplyError::kNone,
                  plan.status().message() + (got.error.empty() ? "" : " (" + got.error + ")"));
    }
    if (!fetch_shards(request.object, plan->reads, request.shards, request.ec, own, receive, got)) {
      if (down) return;
    }
    uint64_t newest = 0;
    for (size_t i = 0; i < plan->reads.size(); ++i) {
      if (!got.failed[i]) newest = std::max(newest, got.versions[i]);
    }
    bool replan = false;
    for (size_t i = 0; i < plan->reads.size(); ++i) {
      if (!got.failed[i] && got.versions[i] == newest) continue;
      if (!got.failed[i] && got.error.empty()) {
        got.error = "shard " + std::to_string(plan->reads[i].shard) + " holds version " +
                    std::to_string(got.versions[i]) + ", another " + std::to_string(newest);
      }
      available[plan->reads[i].shard] = false;
      replan = true;
      count(&OsdStats::shard_reads_around, 1);
    }
    if (!replan) {
      reply.version = newest;
      break;
    }
  }
  if (plan->decode_bytes > 0) {
    env_.compute_s(static_cast<double>(plan->decode_bytes) * decode_cpu_s_per_byte());
    count(&OsdStats::ec_reads_degraded, 1);
  }
  Payload out = Payload::of_size(request.length);
  if (backend_->carries_data()) {
    Result<std::shared_ptr<const redundancy::ReedSolomon>> rs = codec(request.ec);
    if (!rs.ok()) return fail(ReplyError::kNone, rs.status().message());
    std::vector<std::span<const uint8_t>> spans;
    for (const Payload& p : got.data) {
      if (!p.bytes) return fail(ReplyError::kNone, "a shard replied without bytes");
      spans.emplace_back(reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size());
    }
    Result<Buffer> bytes =
        redundancy::read_range(**rs, request.offset, request.length, *plan, spans);
    if (!bytes.ok()) return fail(ReplyError::kNone, bytes.status().message());
    out.bytes = std::move(*bytes);
  }
  count_read(request.length);
  env_.send(host_, request.reply_to, Message{std::move(reply), std::move(out)});
}

void OsdService::handle_write(const WriteRequest& request, const Payload& payload, Endpoint& own) {
  op_thread(request.object, request.length, request.reply_to);
  WriteReply reply;
  reply.request_id = request.request_id;
  reply.sent_at_s = request.sent_at_s;
  auto answer = [&](const std::string& error, ReplyError code) {
    {
      std::lock_guard<EnvMutex> lock(mu_);
      ++stats_.writes;
      if (!error.empty()) ++stats_.errors;
    }
    if (!error.empty()) {
      reply.ok = false;
      reply.error_code = code;
      reply.error = options_.endpoint_name + ": " + error;
    } else {
      reply.length = request.length;
    }
    env_.send(host_, request.reply_to, Message{std::move(reply), {}});
  };
  if (std::string refused = write_refusal(request, payload, *backend_); !refused.empty()) {
    return answer(refused, ReplyError::kInvalid);
  }
  const uint64_t logical_end = std::max(request.logical_end_bytes, request.offset + request.length);
  // A write planned in a past interval of its group, or one this OSD can no longer answer
  // (it crashed meanwhile), ends unanswered: the client resends to the group's OSDs now.
  auto stale = [&] {
    return !available() || (options_.placement != nullptr && !request.recovery_push &&
                            interval_of(request.object) != request.interval);
  };
  auto discard = [&] { count(&OsdStats::writes_discarded, 1); };
  if (stale()) return discard();
  // The next reply on `own`; false when the op must end unanswered (the host went down, or
  // the op became stale while it waited).
  const double waits_until_s =
      options_.sub_op_timeout_s > 0 ? env_.now_s() + options_.sub_op_timeout_s : -1;
  auto receive = [&](Result<Message>& m) {
    for (;;) {
      if (options_.placement == nullptr) {
        m = options_.sub_op_timeout_s > 0 ? own.recv(options_.sub_op_timeout_s) : own.recv();
        // A timeout (kNotFound) fails what waited; another error: the host went down.
        return m.ok() || m.status().code() == Status::Code::kNotFound;
      }
      m = own.recv(options_.interval_check_s);
      if (m.ok()) return true;
      if (m.status().code() != Status::Code::kNotFound) {
        return false;  // the host went down
      }
      if (stale() || (waits_until_s >= 0 && env_.now_s() >= waits_until_s)) {
        discard();
        return false;
      }
    }
  };

  // Sends a sub-write of `data` at `offset` to `to` (shard >= 0: that shard of an
  // erasure-coded object) and remembers its id.
  std::set<uint64_t> waiting;
  auto forward = [&](const std::string& to, uint64_t offset, Payload data, int32_t shard) {
    WriteRequest sub;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      sub.request_id = ++sub_request_id_;
      stats_.bytes_forwarded += data.size_bytes;
    }
    sub.object = request.object;
    sub.offset = offset;
    sub.length = data.size_bytes;
    sub.reply_to = own.name();
    sub.sent_at_s = env_.now_s();
    sub.logical_end_bytes = logical_end;
    sub.durable = request.durable;
    sub.interval = request.interval;
    sub.version = request.version;
    if (shard >= 0) sub.ec = request.ec;
    sub.shard = shard;
    waiting.insert(sub.request_id);
    env_.send(host_, sub_op_endpoint(to), Message{std::move(sub), std::move(data)});
  };
  // Waits for every sub-write; false when the op ends unanswered.
  auto collect = [&](std::string& error) {
    while (!waiting.empty()) {
      Result<Message> m = Status::io_error("unset");
      if (!receive(m)) return false;
      if (!m.ok()) {
        if (error.empty()) {
          error = std::to_string(waiting.size()) + " replica or shard writes unanswered after " +
                  std::to_string(options_.sub_op_timeout_s) + " s";
        }
        return true;
      }
      const auto* r = std::get_if<WriteReply>(&m->body);
      if (r == nullptr || waiting.erase(r->request_id) == 0) continue;  // stale
      if (!r->ok && error.empty()) error = r->error;
    }
    return true;
  };
  auto write_local = [&](uint64_t offset, const Payload& data, int32_t shard,
                         std::vector<DeviceExtent>* deferred) {
    // A shard write onto another shard of the object (CRUSH moved this OSD to another
    // position since it was written): refused until peering replaces it (a push does).
    if (shard >= 0 && !request.recovery_push) {
      if (Result<ObjectInfo> held = backend_->stat(request.object);
          held.ok() && held->shard >= 0 && held->shard != shard) {
        return Status::invalid_argument("holds shard " + std::to_string(held->shard) + " of " +
                                        request.object + ", not shard " + std::to_string(shard) +
                                        ": peering must replace it first");
      }
    }
    count(&OsdStats::bytes_written, data.size_bytes);
    Status s = backend_->write(request.object, offset, data, logical_end, request.version, shard,
                               deferred);
    device_failed(s);
    return s;
  };

  std::string error;
  if (request.ec.k > 0 && !request.shards.empty()) {
    std::vector<DeviceExtent> deferred;
    bool unanswered = false;
    if (Status s = write_coded(request, payload, own, receive, forward, write_local, &deferred,
                               &unanswered, error);
        !s.ok()) {
      return unanswered ? void() : answer(s.message(), ReplyError::kNone);
    }
    if (!collect(error)) return;
    if (stale()) return discard();
    answer(error, ReplyError::kNone);
    backend_->write_deferred(deferred);
    return;
  }

  // Replicated primary (or a leaf with no replicas).
  for (const auto& to : request.replicas) forward(to, request.offset, payload, -1);
  if (!request.durable && options_.unstable != nullptr) {
    options_.unstable->begin(request.object);
    answer("", ReplyError::kNone);
    write_behind(request, payload, logical_end);
    return;
  }
  std::vector<DeviceExtent> deferred;
  Status s = write_local(request.offset, payload, request.shard, &deferred);
  if (!s.ok()) error = s.message();
  if (!collect(error)) return;
  if (stale()) return discard();
  answer(error, ReplyError::kNone);
  backend_->write_deferred(deferred);
}

void OsdService::write_behind(const WriteRequest& request, const Payload& payload,
                              uint64_t logical_end) {
  // NFS UNSTABLE: registered with the UnstableWrites and acknowledged from memory by the
  // caller, then written behind by a task of its own (the worker is free for the next RPC, as
  // nfsd threads are); COMMIT waits for it.
  env_.spawn(host_, options_.endpoint_name + ".writeback", [this, request, payload, logical_end] {
    std::vector<DeviceExtent> deferred;
    count(&OsdStats::bytes_written, payload.size_bytes);
    Status s = backend_->write(request.object, request.offset, payload, logical_end,
                               request.version, request.shard, &deferred);
    backend_->write_deferred(deferred);
    options_.unstable->end(request.object, s);  // a failure fails the COMMIT
  });
}

Status OsdService::write_coded(const WriteRequest& request, const Payload& payload, Endpoint& own,
                               const Receive& receive, const Forward& forward,
                               const WriteLocal& write_local, std::vector<DeviceExtent>* deferred,
                               bool* unanswered, std::string& error) {
  const auto profile = profile_of(request.ec);
  const int n = profile.shards();
  if (static_cast<int>(request.shards.size()) != n) {
    return Status::invalid_argument("an erasure-coded write names " +
                                    std::to_string(request.shards.size()) + " shards, the " +
                                    std::to_string(profile.k) + "+" + std::to_string(profile.m) +
                                    " code has " + std::to_string(n));
  }
  const bool data = backend_->carries_data();
  uint64_t before = 0;
  if (auto o = backend_->stat(request.object); o.ok()) before = o->client_bytes();
  const auto plan = redundancy::plan_write(profile, before, request.offset, request.length);

  // The old data chunks a partial stripe needs: from their shards, or, for a missing shard,
  // rebuilt from the same range of k available shards.
  std::vector<int> sources;
  for (int i = 0; i < n && static_cast<int>(sources.size()) < profile.k; ++i) {
    if (!request.shards[i].empty()) sources.push_back(i);
  }
  std::vector<redundancy::ShardExtent> reads;
  std::vector<size_t> first_read(plan.reads.size());  // plan read -> its first entry in reads
  for (size_t j = 0; j < plan.reads.size(); ++j) {
    const auto& e = plan.reads[j];
    first_read[j] = reads.size();
    if (!request.shards[e.shard].empty()) {
      reads.push_back(e);
      continue;
    }
    if (static_cast<int>(sources.size()) < profile.k) {
      return Status::io_error("fewer than k = " + std::to_string(profile.k) + " shards of " +
                              request.object + " are available");
    }
    for (int src : sources) reads.push_back({src, e.offset_bytes, e.length_bytes});
    env_.compute_s(static_cast<double>(e.length_bytes) * decode_cpu_s_per_byte());
  }
  Fetched got;
  if (!fetch_shards(request.object, reads, request.shards, request.ec, own, receive, got)) {
    *unanswered = true;
    return Status::io_error("unanswered");
  }
  for (size_t i = 0; i < reads.size(); ++i) {
    if (got.failed[i]) return Status::io_error(got.error);
    if (got.versions[i] != got.versions[0]) {
      return Status::io_error("the shards of " + request.object + " disagree (versions " +
                              std::to_string(got.versions[0]) + " and " +
                              std::to_string(got.versions[i]) + "): peering must recover it first");
    }
  }
  env_.compute_s(static_cast<double>(plan.encode_bytes) * options_.ec_cpu_s_per_byte);

  std::vector<redundancy::ShardWrite> coded;
  if (data) {
    Result<std::shared_ptr<const redundancy::ReedSolomon>> rs = codec(request.ec);
    if (!rs.ok()) return rs.status();
    auto bytes_of = [](const Payload& p) {
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(p.bytes.data()),
                                      p.bytes.size());
    };
    for (const Payload& p : got.data) {
      if (!p.bytes)
        return Status::io_error("a shard of " + request.object + " replied without bytes");
    }
    std::vector<std::vector<uint8_t>> rebuilt;
    std::vector<std::span<const uint8_t>> old;
    rebuilt.reserve(plan.reads.size());
    for (size_t j = 0; j < plan.reads.size(); ++j) {
      const auto& e = plan.reads[j];
      if (!request.shards[e.shard].empty()) {
        old.push_back(bytes_of(got.data[first_read[j]]));
        continue;
      }
      Result<redundancy::ErasureDecoder> dec = (*rs)->decoder(sources, {e.shard});
      if (!dec.ok()) return dec.status();
      std::vector<std::span<const uint8_t>> in;
      for (size_t k = 0; k < sources.size(); ++k)
        in.push_back(bytes_of(got.data[first_read[j] + k]));
      rebuilt.emplace_back(e.length_bytes);
      std::vector<std::span<uint8_t>> out = {rebuilt.back()};
      if (Status s = dec->decode(in, out); !s.ok()) return s;
      old.push_back(rebuilt.back());
    }
    Result<std::vector<redundancy::ShardWrite>> w = redundancy::write_range(
        **rs, before, request.offset,
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(payload.bytes.data()),
                                 payload.bytes.size()),
        old);
    if (!w.ok()) return w.status();
    coded = std::move(*w);
  }

  std::vector<bool> written(n, false);
  for (size_t i = 0; i < plan.writes.size(); ++i) {
    const auto& e = plan.writes[i];
    const std::string& to = request.shards[e.shard];
    if (to.empty()) continue;  // a missing shard: the write is degraded
    written[e.shard] = true;
    Payload p = Payload::of_size(e.length_bytes);
    if (data) p.bytes = coded[i].bytes;
    if (to == options_.endpoint_name) {
      Status s = write_local(e.offset_bytes, p, e.shard, deferred);
      if (!s.ok() && error.empty()) error = s.message();
    } else {
      forward(to, e.offset_bytes, std::move(p), e.shard);
    }
  }
  if (data) {
    // Versioned objects: every shard learns the write's version and the object's size, even
    // one whose chunks it did not touch (Ceph updates every shard's object info), so that
    // peering can tell a stale shard from a current one.
    for (int i = 0; i < n; ++i) {
      const std::string& to = request.shards[i];
      if (to.empty() || written[i]) continue;
      Payload none = Payload::of(Buffer::zeros(0));
      if (to == options_.endpoint_name) {
        Status s = write_local(0, none, i, deferred);
        if (!s.ok() && error.empty()) error = s.message();
      } else {
        forward(to, 0, std::move(none), i);
      }
    }
  }
  return Status();
}

void OsdService::handle_scan(const ScanRequest& request) {
  env_.compute_s(options_.cpu_s_per_op);
  ScanReply reply;
  reply.request_id = request.request_id;
  if (request.epoch > 0 && options_.await_epoch && !options_.await_epoch(request.epoch)) {
    reply.ok = false;
    reply.error = options_.endpoint_name + ": its map has not reached epoch " +
                  std::to_string(request.epoch) + " yet";
    env_.send(host_, request.reply_to, Message{std::move(reply), {}});
    return;
  }
  Result<std::vector<ObjectListing>> all = backend_->list();
  if (!all.ok()) {
    reply.ok = false;
    reply.error = options_.endpoint_name + ": " + all.status().message();
  } else {
    for (auto& o : *all) {
      if (request.all_pgs || options_.placement == nullptr ||
          options_.placement->group_of(o.name) == request.pg) {
        reply.objects.push_back(std::move(o));
      }
    }
  }
  count(&OsdStats::scans, 1);
  const uint64_t bytes = 64 * reply.objects.size();
  Message m{std::move(reply), {}};
  m.header_bytes += bytes;
  env_.send(host_, request.reply_to, std::move(m));
}

void OsdService::handle_remove(const RemoveRequest& request) {
  env_.compute_s(options_.cpu_s_per_op);
  WriteReply reply;
  reply.request_id = request.request_id;
  if (Status s = backend_->remove(request.object); !s.ok()) {
    reply.ok = false;
    reply.error_code =
        s.code() == Status::Code::kNotFound ? ReplyError::kNotFound : ReplyError::kNone;
    reply.error = options_.endpoint_name + ": " + s.message();
  }
  count(&OsdStats::removes, 1);
  env_.send(host_, request.reply_to, Message{std::move(reply), {}});
}

void OsdService::handle_commit(const CommitRequest& request) {
  env_.compute_s(options_.cpu_s_per_op);
  WriteReply reply;
  reply.request_id = request.request_id;
  reply.sent_at_s = request.sent_at_s;
  if (options_.unstable != nullptr) {
    if (Status s = options_.unstable->wait_durable(request.object); !s.ok()) {
      reply.ok = false;
      reply.error_code = ReplyError::kNone;
      reply.error = options_.endpoint_name + ": commit of " + request.object + ": " + s.message();
    }
  }
  env_.send(host_, request.reply_to, Message{std::move(reply), {}});
}

void OsdService::device_failed(const Status& s) {
  // A data-carrying OSD whose store hit a device error stops, as Ceph's OSD aborts on an EIO
  // from BlueStore: it answers nothing more until restarted over a remounted store.
  if (backend_->carries_data() && s.code() == Status::Code::kIOError) set_available(false);
}

void OsdService::set_available(bool available) {
  available_.store(available, std::memory_order_relaxed);
}

bool OsdService::available() const {
  return available_.load(std::memory_order_relaxed);
}

OsdStats OsdService::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

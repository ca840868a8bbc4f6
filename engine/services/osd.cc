#include "engine/services/osd.h"

#include <algorithm>
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

}  // namespace

OsdService::OsdService(Env& env, HostId host, Device& device, const ObjectIndex& store,
                       OsdServiceOptions options)
    : env_(env),
      host_(host),
      device_(device),
      store_(store),
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
}

OsdService::OsdService(Env& env, HostId host, Device& device, WritableObjectIndex& store,
                       OsdServiceOptions options)
    : OsdService(env, host, device, static_cast<const ObjectIndex&>(store), std::move(options)) {
  writable_ = &store;
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
    if (options_.op_queue != nullptr && (std::holds_alternative<ReadRequest>(m->body) ||
                                         std::holds_alternative<WriteRequest>(m->body))) {
      // Ceph's op threads never wait for replicas: with an op queue (which bounds the
      // requests in their op-thread part) the worker hands the request to a handler task, one
      // more when none is idle, and goes back to the endpoint at once.
      bool spawn = false;
      int slot = 0;
      {
        std::lock_guard<EnvMutex> lock(mu_);
        pending_.push_back(std::make_shared<Message>(std::move(*m)));
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
    if (const auto* r = std::get_if<ReadRequest>(&m->body)) {
      handle_read(*r, own);
    } else if (const auto* w = std::get_if<WriteRequest>(&m->body)) {
      handle_write(*w, m->payload, own);
    } else if (const auto* c = std::get_if<CommitRequest>(&m->body)) {
      handle_commit(*c);
    }
    // Other messages are not for an object service; they are dropped.
  }
}

void OsdService::run_handler(int slot) {
  Endpoint& reply =
      env_.endpoint(host_, options_.endpoint_name + ".d" + std::to_string(device_.id()) + ".h" +
                               std::to_string(slot));
  for (;;) {
    pending_sem_->acquire();
    std::shared_ptr<Message> msg;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      GRANARY_CHECK(!pending_.empty());
      msg = std::move(pending_.front());
      pending_.pop_front();
    }
    if (const auto* r = std::get_if<ReadRequest>(&msg->body)) {
      handle_read(*r, reply);
    } else if (const auto* w = std::get_if<WriteRequest>(&msg->body)) {
      handle_write(*w, msg->payload, reply);
    }
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

Result<StoredObject> OsdService::find(const std::string& object) {
  std::lock_guard<EnvMutex> lock(*store_mu_);
  return store_.find(object);
}

Result<std::vector<DeviceExtent>> OsdService::device_extents(const std::string& object,
                                                             uint64_t offset, uint64_t length) {
  std::lock_guard<EnvMutex> lock(*store_mu_);
  if (writable_ != nullptr) return writable_->map_range(object, offset, length);
  auto o = store_.find(object);
  if (!o.ok()) return o.status();
  return std::vector<DeviceExtent>{{o->offset_bytes + offset, length}};
}

Result<Payload> OsdService::read_local(const std::vector<DeviceExtent>& extents) {
  uint64_t total = 0;
  for (const auto& e : extents) {
    auto p = device_.read(e.offset_bytes, e.length_bytes);
    if (!p.ok()) return p.status();
    total += e.length_bytes;
  }
  return Payload::of_size(total);
}

Status OsdService::write_local(const std::string& object, uint64_t offset, uint64_t length,
                               uint64_t logical_end, const Payload& payload,
                               std::vector<DeviceExtent>* deferred) {
  Result<std::vector<DeviceExtent>> extents = Status::io_error("unset");
  {
    std::lock_guard<EnvMutex> lock(*store_mu_);
    extents = writable_->write(object, offset, length, logical_end);
  }
  if (!extents.ok()) return extents.status();
  count(&OsdStats::bytes_written, length);
  if (options_.journal != nullptr) {
    // Durable once in the journal; the data device is written behind it.
    if (Status s = options_.journal->write(0, Payload::of_size(length)); !s.ok()) return s;
    deferred->insert(deferred->end(), extents->begin(), extents->end());
    return Status();
  }
  for (const auto& e : *extents) {
    Payload piece = extents->size() == 1 ? payload : Payload::of_size(e.length_bytes);
    if (Status s = device_.write(e.offset_bytes, piece); !s.ok()) return s;
  }
  return Status();
}

void OsdService::write_deferred(const std::vector<DeviceExtent>& deferred) {
  for (const auto& e : deferred)
    (void)device_.write(e.offset_bytes, Payload::of_size(e.length_bytes));
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

void OsdService::handle_read(const ReadRequest& request, Endpoint& own) {
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
  Result<StoredObject> object = find(request.object);
  if (!object.ok() && !(shard_op && object.status().code() == Status::Code::kNotFound)) {
    return fail(ReplyError::kNotFound, "no object " + request.object);
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
    const uint64_t have =
        shard_op ? std::min(request.length, size > request.offset ? size - request.offset : 0)
                 : request.length;
    Result<std::vector<DeviceExtent>> extents = std::vector<DeviceExtent>{};
    if (have > 0) extents = device_extents(request.object, request.offset, have);
    if (!extents.ok()) return fail(ReplyError::kOutOfRange, extents.status().message());
    count_read(request.length);
    if (extents->size() == 1 && have == request.length) {
      const Status sent =
          env_.send_from_device(device_, extents->front().offset_bytes, request.length,
                                request.reply_to, Message{reply, {}});
      if (!sent.ok()) return fail(ReplyError::kNone, sent.to_string());
      return;
    }
    auto data = read_local(*extents);
    if (!data.ok()) return fail(ReplyError::kNone, data.status().message());
    env_.send(host_, request.reply_to, Message{std::move(reply), Payload::of_size(request.length)});
    return;
  }

  // The primary of an erasure-coded object: gather (and rebuild) the range. A shard that
  // stays silent past shard_timeout_s is read around: the read is planned again without it.
  const auto profile = profile_of(request.ec);
  std::vector<bool> available(request.shards.size());
  for (size_t i = 0; i < available.size(); ++i) available[i] = !request.shards[i].empty();
  Result<redundancy::ReadPlan> plan = Status::io_error("unplanned");
  std::string error;
  for (;;) {
    plan = redundancy::plan_read(profile, request.offset, request.length, available);
    if (!plan.ok()) return fail(ReplyError::kNone, plan.status().message());
    std::map<uint64_t, int> waiting;  // request id -> shard
    std::vector<redundancy::ShardExtent> local;
    for (const auto& e : plan->reads) {
      if (request.shards[e.shard] == options_.endpoint_name) {
        local.push_back(e);
        continue;
      }
      waiting[send_shard_read(request.shards[e.shard], request.object, e, request.ec, own)] =
          e.shard;
    }
    for (const auto& e : local) {
      const uint64_t have = std::min(e.length_bytes, object->size_bytes > e.offset_bytes
                                                         ? object->size_bytes - e.offset_bytes
                                                         : uint64_t{0});
      if (have == 0) continue;
      auto extents = device_extents(request.object, e.offset_bytes, have);
      if (extents.ok()) {
        if (auto data = read_local(*extents); !data.ok()) error = data.status().message();
      } else {
        error = extents.status().message();
      }
    }
    bool timed_out = false;
    while (!waiting.empty()) {
      Result<Message> m =
          options_.shard_timeout_s > 0 ? own.recv(options_.shard_timeout_s) : own.recv();
      if (!m.ok()) {
        if (m.status().code() != Status::Code::kNotFound) return;  // the host went down
        timed_out = true;
        break;
      }
      const auto* r = std::get_if<ReadReply>(&m->body);
      if (r == nullptr || waiting.erase(r->request_id) == 0) continue;  // stale
      if (!r->ok && error.empty()) error = r->error;
    }
    if (!timed_out) break;
    for (const auto& [id, shard] : waiting) available[shard] = false;
  }
  if (!error.empty()) return fail(ReplyError::kNone, error);
  if (plan->decode_bytes > 0) {
    env_.compute_s(static_cast<double>(plan->decode_bytes) * decode_cpu_s_per_byte());
    count(&OsdStats::ec_reads_degraded, 1);
  }
  count_read(request.length);
  env_.send(host_, request.reply_to, Message{std::move(reply), Payload::of_size(request.length)});
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
  if (writable_ == nullptr) return answer("read-only: no writes accepted", ReplyError::kInvalid);
  if (payload.size_bytes != request.length) {
    return answer("write of " + std::to_string(request.length) + " bytes carries " +
                      std::to_string(payload.size_bytes),
                  ReplyError::kInvalid);
  }
  const uint64_t logical_end = std::max(request.logical_end_bytes, request.offset + request.length);
  // A write planned in a past interval of its group, or one this OSD can no longer answer
  // (it crashed meanwhile), ends unanswered: the client resends to the group's OSDs now.
  auto stale = [&] {
    return !available() ||
           (options_.placement != nullptr && interval_of(request.object) != request.interval);
  };
  auto discard = [&] { count(&OsdStats::writes_discarded, 1); };
  if (stale()) return discard();
  // The next reply on `own`; false when the op must end unanswered (the host went down, or
  // the op became stale while it waited).
  auto receive = [&](Result<Message>& m) {
    for (;;) {
      m = options_.placement != nullptr ? own.recv(options_.interval_check_s) : own.recv();
      if (m.ok()) return true;
      if (options_.placement == nullptr || m.status().code() != Status::Code::kNotFound) {
        return false;  // the host went down
      }
      if (stale()) {
        discard();
        return false;
      }
    }
  };

  // Sends a sub-write to `to` and remembers its id.
  std::set<uint64_t> waiting;
  auto forward = [&](const std::string& to, uint64_t offset, uint64_t length, bool shard) {
    WriteRequest sub;
    {
      std::lock_guard<EnvMutex> lock(mu_);
      sub.request_id = ++sub_request_id_;
      stats_.bytes_forwarded += length;
    }
    sub.object = request.object;
    sub.offset = offset;
    sub.length = length;
    sub.reply_to = own.name();
    sub.sent_at_s = env_.now_s();
    sub.logical_end_bytes = logical_end;
    sub.durable = request.durable;
    sub.interval = request.interval;
    if (shard) sub.ec = request.ec;
    waiting.insert(sub.request_id);
    env_.send(host_, sub_op_endpoint(to), Message{std::move(sub), Payload::of_size(length)});
  };
  // Waits for every sub-write; false when the op ends unanswered.
  auto collect = [&](std::string& error) {
    while (!waiting.empty()) {
      Result<Message> m = Status::io_error("unset");
      if (!receive(m)) return false;
      const auto* r = std::get_if<WriteReply>(&m->body);
      if (r == nullptr || waiting.erase(r->request_id) == 0) continue;  // stale
      if (!r->ok && error.empty()) error = r->error;
    }
    return true;
  };

  std::string error;
  if (request.ec.k > 0 && !request.shards.empty()) {
    // Erasure-coded primary: read what partial stripes need, encode, distribute.
    const auto profile = profile_of(request.ec);
    uint64_t before = 0;
    if (auto o = find(request.object); o.ok()) before = o->client_bytes();
    const auto plan = redundancy::plan_write(profile, before, request.offset, request.length);
    std::set<uint64_t> reads;
    for (const auto& e : plan.reads) {
      int shard = e.shard;
      if (request.shards[shard].empty()) {
        // The shard is missing: its old data is rebuilt from a coding shard.
        for (int c = profile.k; c < profile.shards(); ++c) {
          if (!request.shards[c].empty()) {
            shard = c;
            break;
          }
        }
        if (request.shards[shard].empty()) continue;
        env_.compute_s(static_cast<double>(e.length_bytes) * decode_cpu_s_per_byte());
      }
      if (request.shards[shard] == options_.endpoint_name) {
        auto extents = device_extents(request.object, e.offset_bytes, e.length_bytes);
        if (extents.ok()) (void)read_local(*extents);
        continue;
      }
      reads.insert(send_shard_read(request.shards[shard], request.object, e, request.ec, own));
    }
    while (!reads.empty()) {
      Result<Message> m = Status::io_error("unset");
      if (!receive(m)) return;
      const auto* r = std::get_if<ReadReply>(&m->body);
      if (r == nullptr || reads.erase(r->request_id) == 0) continue;
      if (!r->ok && error.empty()) error = r->error;
    }
    if (!error.empty()) return answer(error, ReplyError::kNone);
    env_.compute_s(static_cast<double>(plan.encode_bytes) * options_.ec_cpu_s_per_byte);
    std::vector<redundancy::ShardExtent> own_writes;
    for (const auto& e : plan.writes) {
      const std::string& to = request.shards[e.shard];
      if (to.empty()) continue;  // a missing shard: the write is degraded
      if (to == options_.endpoint_name) {
        own_writes.push_back(e);
      } else {
        forward(to, e.offset_bytes, e.length_bytes, /*shard=*/true);
      }
    }
    std::vector<DeviceExtent> deferred;
    for (const auto& e : own_writes) {
      Status s = write_local(request.object, e.offset_bytes, e.length_bytes, logical_end,
                             Payload::of_size(e.length_bytes), &deferred);
      if (!s.ok() && error.empty()) error = s.message();
    }
    if (!collect(error)) return;
    if (stale()) return discard();
    answer(error, ReplyError::kNone);
    write_deferred(deferred);
    return;
  }

  // Replicated primary (or a leaf with no replicas).
  for (const auto& to : request.replicas) forward(to, request.offset, request.length, false);
  const bool unstable = !request.durable && options_.unstable != nullptr;
  if (unstable) {
    // NFS UNSTABLE: acknowledged from memory and written behind by a task of its own (the
    // worker is free for the next RPC, as nfsd threads are); COMMIT waits for it.
    options_.unstable->begin(request.object);
    answer("", ReplyError::kNone);
    env_.spawn(host_, options_.endpoint_name + ".writeback", [this, request, payload, logical_end] {
      std::vector<DeviceExtent> deferred;
      Status s = write_local(request.object, request.offset, request.length, logical_end, payload,
                             &deferred);
      write_deferred(deferred);
      options_.unstable->end(request.object, s);  // a failure fails the COMMIT
    });
    return;
  }
  std::vector<DeviceExtent> deferred;
  Status s =
      write_local(request.object, request.offset, request.length, logical_end, payload, &deferred);
  if (!s.ok()) error = s.message();
  if (!collect(error)) return;
  if (stale()) return discard();
  answer(error, ReplyError::kNone);
  write_deferred(deferred);
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

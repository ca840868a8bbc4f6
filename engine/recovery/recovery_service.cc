#include "engine/recovery/recovery_service.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <variant>

#include "engine/recovery/reserver.h"

namespace granary::recovery {

std::string recovery_endpoint_name(int32_t osd) {
  return "recovery." + std::to_string(osd);
}

struct RecoveryService::Lanes {
  uint64_t chunks = 0;
  uint64_t next = 0;  // guarded by the service's mu_
  Status error;       // guarded by the service's mu_
  std::unique_ptr<Semaphore> finished;
  std::unique_ptr<Semaphore> turn;  // one PGRecovery item of the op queued at a time
};

RecoveryService::RecoveryService(Env& env, RecoveryOptions options)
    : env_(env), options_(std::move(options)), done_(env.make_semaphore(0)), mu_(env) {
  GRANARY_CHECK(options_.max_backfills >= 1);
  GRANARY_CHECK(options_.recovery_max_active >= 1);
  GRANARY_CHECK(options_.recovery_sleep_s >= 0);
  GRANARY_CHECK(options_.osd_recovery_bytes_per_s >= 0);
  GRANARY_CHECK(options_.chunk_bytes >= 1);
  GRANARY_CHECK(options_.daemon_workers >= 1);
  GRANARY_CHECK(options_.recovery_max_single_start >= 1 && options_.cpu_s_per_op >= 0);
}

services::OsdOpQueue* RecoveryService::queue_of(int32_t osd) const {
  if (osd < 0 || static_cast<size_t>(osd) >= options_.op_queues.size()) return nullptr;
  return options_.op_queues[static_cast<size_t>(osd)];
}

DeviceId RecoveryService::device_of(int32_t osd) const {
  GRANARY_CHECK(osd >= 0);
  if (options_.osd_devices.empty()) return osd;
  GRANARY_CHECK(static_cast<size_t>(osd) < options_.osd_devices.size());
  return options_.osd_devices[static_cast<size_t>(osd)];
}

HostId RecoveryService::host_of(int32_t osd) {
  return env_.device(device_of(osd)).host();
}

void RecoveryService::grow_per_osd(int32_t osd) {
  const auto n = static_cast<size_t>(osd) + 1;
  if (daemon_started_.size() < n) daemon_started_.resize(n, false);
  while (active_slots_.size() < n) {
    active_slots_.push_back(env_.make_semaphore(options_.recovery_max_active));
  }
  if (read_budget_at_s_.size() < n) {
    read_budget_at_s_.resize(n, 0);
    write_budget_at_s_.resize(n, 0);
  }
}

void RecoveryService::start_daemon(int32_t osd, TaskOptions task_options) {
  grow_per_osd(osd);
  if (daemon_started_[static_cast<size_t>(osd)]) return;
  daemon_started_[static_cast<size_t>(osd)] = true;
  const HostId host = host_of(osd);
  env_.endpoint(host, recovery_endpoint_name(osd));
  for (int i = 0; i < options_.daemon_workers; ++i) {
    env_.spawn(
        host, recovery_endpoint_name(osd) + ".worker" + std::to_string(i),
        [this, osd] { serve_daemon(osd); }, task_options);
  }
  // The OSD's backfill reservers (reserver.h), osd_max_backfills slots each.
  for (const std::string& name : {local_reserver_name(osd), remote_reserver_name(osd)}) {
    env_.endpoint(host, name);
    env_.spawn(
        host, name, [this, host, name] { run_reserver(env_, host, name, options_.max_backfills); },
        task_options);
  }
}

void RecoveryService::serve_daemon(int32_t osd) {
  const HostId host = host_of(osd);
  const std::string name = recovery_endpoint_name(osd);
  Endpoint& ep = env_.endpoint(host, name);
  Device& device = env_.device(device_of(osd));
  for (;;) {
    Result<Message> m = ep.recv();
    if (!m.ok()) return;  // the host went down
    if (std::holds_alternative<Shutdown>(m->body)) {
      env_.send(host, name, Message{Shutdown{}, {}});  // for the next worker
      return;
    }
    if (const auto* push = std::get_if<RecoveryPush>(&m->body)) {
      if (services::OsdOpQueue* q = queue_of(osd)) {
        // MOSDPGPush: queued at osd_recovery_op_priority, cost its bytes; its op-thread CPU,
        // then the write (BlueStore's, asynchronous to the op thread).
        services::OpItem item;
        item.op_class = services::OpClass::kImmediate;
        item.priority = services::kRecoveryOpPriority;
        item.cost = push->length;
        item.owner = push->pg;
        q->run(push->pg, item, [&] { env_.compute_s(options_.cpu_s_per_op); });
      }
      const Status s = device.write(push->offset, m->payload);
      RecoveryPushReply reply;
      reply.op_id = push->op_id;
      reply.ok = s.ok();
      reply.error = s.ok() ? "" : name + ": " + s.to_string();
      reply.length = push->length;
      env_.send(host, push->reply_to, Message{std::move(reply), {}});
    } else if (const auto* read = std::get_if<RecoveryRead>(&m->body)) {
      RecoveryReadReply reply;
      reply.op_id = read->op_id;
      reply.length = read->length;
      const Status sent = env_.send_from_device(device, read->offset, read->length, read->reply_to,
                                                Message{reply, {}});
      if (!sent.ok()) {  // a range the device does not have: say so instead of the data
        reply.ok = false;
        reply.error = name + ": " + sent.to_string();
        env_.send(host, read->reply_to, Message{std::move(reply), {}});
      }
    }
    // Other messages are not for a recovery daemon; they are dropped.
  }
}

uint64_t RecoveryService::device_offset(int32_t osd, uint64_t offset, uint64_t length) {
  const uint64_t capacity = env_.device(device_of(osd)).capacity_bytes();
  const uint64_t base = options_.device_offset_bytes;
  GRANARY_CHECK(base <= capacity && length <= capacity - base);  // a chunk fits the device
  return base + offset % (capacity - base - length + 1);
}

void RecoveryService::execute(RecoveryPlan plan, TaskOptions op_task_options) {
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    GRANARY_CHECK(!running_);  // one plan at a time
    running_ = true;
  }
  plan_ = std::move(plan);
  op_task_options_ = op_task_options;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    done_ = env_.make_semaphore(0);
  }
  int32_t max_osd = -1;
  for (const RecoveryOp& op : plan_.ops) {
    GRANARY_CHECK(!op.sources.empty() && op.target >= 0);
    max_osd = std::max(max_osd, op.target);
    for (int32_t s : op.sources) max_osd = std::max(max_osd, s);
  }
  uint32_t max_pg = 0;
  for (const RecoveryOp& op : plan_.ops) max_pg = std::max(max_pg, op.pg + 1);
  if (max_osd >= 0) grow_per_osd(max_osd);
  for (const RecoveryOp& op : plan_.ops) {
    start_daemon(op.target);
    for (int32_t s : op.sources) start_daemon(s);
  }

  // Ceph's priorities: log recovery, then degraded backfill, then the rest.
  order_.resize(plan_.ops.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  auto rank = [&](size_t i) {
    const RecoveryOp& op = plan_.ops[i];
    return op.kind == RecoveryKind::kRecovery ? 0 : op.restores_redundancy ? 1 : 2;
  };
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });

  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    stats_ = RecoveryStats{};
    stats_.ops_total = plan_.ops.size();
    stats_.started_at_s = env_.now_s();
    stats_.bytes_read_per_osd.assign(static_cast<size_t>(max_osd + 1), 0);
    stats_.bytes_written_per_osd.assign(static_cast<size_t>(max_osd + 1), 0);
    pg_ops_left_.assign(max_pg, 0);
    pg_restoring_left_.assign(max_pg, 0);
    for (const RecoveryOp& op : plan_.ops) {
      if (pg_ops_left_[op.pg]++ == 0) ++stats_.pgs_total;
      if (op.restores_redundancy && pg_restoring_left_[op.pg]++ == 0) {
        ++stats_.degraded_pgs_remaining;
      }
    }
    stats_.pgs_remaining = stats_.pgs_total;
    if (stats_.degraded_pgs_remaining == 0) stats_.redundancy_restored_at_s = stats_.started_at_s;
    records_.assign(plan_.ops.size(), OpRecord{});
    if (plan_.ops.empty()) {
      stats_.finished_at_s = stats_.started_at_s;
      running_ = false;
      done_->release();
      return;
    }
  }
  for (size_t index : order_) {
    const RecoveryOp& op = plan_.ops[index];
    env_.spawn(
        host_of(op.sources.front()), "recovery.op" + std::to_string(index),
        [this, index] { run_op(index); }, op_task_options);
  }
}

void RecoveryService::wait() {
  std::shared_ptr<Semaphore> done;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    done = done_;  // this plan's, even if a later execute() replaces it
  }
  done->acquire();
  done->release();  // for any other waiter
}

void RecoveryService::pace(const RecoveryOp& op, uint64_t length) {
  const double rate = options_.osd_recovery_bytes_per_s;
  if (rate <= 0) return;
  const double span_s = static_cast<double>(length) / rate;
  double start = 0;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    start = std::max(env_.now_s(), write_budget_at_s_[static_cast<size_t>(op.target)]);
    for (int32_t s : op.sources) start = std::max(start, read_budget_at_s_[static_cast<size_t>(s)]);
    write_budget_at_s_[static_cast<size_t>(op.target)] = start + span_s;
    for (int32_t s : op.sources) read_budget_at_s_[static_cast<size_t>(s)] = start + span_s;
  }
  if (start > env_.now_s()) env_.sleep_s(start - env_.now_s());
}

Status RecoveryService::copy_chunk(size_t index, uint64_t offset, uint64_t length,
                                   Endpoint& reply) {
  const RecoveryOp& op = plan_.ops[index];
  const int32_t driver = op.sources.front();
  const HostId host = host_of(driver);
  RecoveryPush push;
  push.op_id = index;
  push.pg = op.pg;
  push.shard = op.shard;
  push.offset = device_offset(op.target, offset, length);
  push.length = length;
  push.reply_to = reply.name();
  if (op.sources.size() == 1) {
    // A copy that exists: straight from the driver's drive to the target (zero copy).
    const Status sent = env_.send_from_device(
        env_.device(device_of(driver)), device_offset(driver, offset, length), length,
        recovery_endpoint_name(op.target), Message{std::move(push), {}});
    if (!sent.ok()) return sent;
  } else {
    // An erasure rebuild: gather the chunk's piece from each source, then push the result.
    for (int32_t source : op.sources) {
      RecoveryRead read;
      read.op_id = index;
      read.offset = device_offset(source, offset, length);
      read.length = length;
      read.reply_to = reply.name();
      env_.send(host, recovery_endpoint_name(source), Message{std::move(read), {}});
    }
    Status gathered;
    for (size_t i = 0; i < op.sources.size(); ++i) {
      Result<Message> m = reply.recv();
      if (!m.ok()) return m.status();
      const auto* r = std::get_if<RecoveryReadReply>(&m->body);
      if (r == nullptr) return Status::corruption(reply.name() + ": unexpected message");
      if (!r->ok && gathered.ok()) gathered = Status::io_error(r->error);
    }
    if (!gathered.ok()) return gathered;
    env_.send(host, recovery_endpoint_name(op.target),
              Message{std::move(push), Payload::of_size(length)});
  }
  Result<Message> m = reply.recv();
  if (!m.ok()) return m.status();
  const auto* r = std::get_if<RecoveryPushReply>(&m->body);
  if (r == nullptr) return Status::corruption(reply.name() + ": unexpected message");
  if (!r->ok) return Status::io_error(r->error);
  return Status::ok_status();
}

Status RecoveryService::queued_chunks(size_t index, Lanes& lanes, uint64_t first, uint64_t count,
                                      Endpoint& reply) {
  const RecoveryOp& op = plan_.ops[index];
  const int32_t driver = op.sources.front();
  const HostId host = host_of(driver);
  const uint64_t chunk = options_.chunk_bytes;
  auto length_of = [&](uint64_t c) { return std::min(chunk, op.bytes_to_write - c * chunk); };
  uint64_t bytes = 0;
  for (uint64_t c = first; c < first + count; ++c) bytes += length_of(c);
  services::OsdOpQueue* q = queue_of(driver);
  GRANARY_CHECK(q != nullptr);
  // The PGRecovery item: one per scheduling pass of the PG, starting `count` objects; a
  // replica copy reads them from the driver's drive in the op thread.
  services::OpItem item;
  item.op_class = options_.misplaced_is_best_effort && !op.restores_redundancy
                      ? services::OpClass::kBackgroundBestEffort
                      : options_.recovery_class;
  item.priority = services::kRecoveryPriority;
  item.cost = options_.recovery_item_cost_bytes > 0 ? options_.recovery_item_cost_bytes : bytes;
  item.owner = op.pg;
  Status read;
  // The PG's turn first (one PGRecovery item of it queued at a time), then a push slot of the
  // driver (osd_recovery_max_active): a PG waiting for its turn holds no slot, as Ceph
  // reserves pushes only for the PG it queues.
  lanes.turn->acquire();
  Semaphore& active = *active_slots_[static_cast<size_t>(driver)];
  active.acquire();
  struct Release {
    Semaphore& s;
    ~Release() { s.release(); }
  } release_active{active};
  q->run(op.pg, item, [&] {
    env_.compute_s(options_.cpu_s_per_op);
    if (op.sources.size() != 1) return;  // an erasure rebuild gathers after (asynchronous)
    Device& device = env_.device(device_of(driver));
    for (uint64_t c = first; c < first + count && read.ok(); ++c) {
      auto r = device.read(device_offset(driver, c * chunk, length_of(c)), length_of(c));
      if (!r.ok()) read = r.status();
    }
  });
  lanes.turn->release();
  if (!read.ok()) return read;
  for (uint64_t c = first; c < first + count; ++c) {
    const uint64_t offset = c * chunk, length = length_of(c);
    pace(op, length);
    Status s;
    if (op.sources.size() == 1) {
      RecoveryPush push;
      push.op_id = index;
      push.pg = op.pg;
      push.shard = op.shard;
      push.offset = device_offset(op.target, offset, length);
      push.length = length;
      push.reply_to = reply.name();
      env_.send(host, recovery_endpoint_name(op.target),
                Message{std::move(push), Payload::of_size(length)});
      Result<Message> m = reply.recv();
      if (!m.ok()) return m.status();
      const auto* r = std::get_if<RecoveryPushReply>(&m->body);
      if (r == nullptr) return Status::corruption(reply.name() + ": unexpected message");
      if (!r->ok) s = Status::io_error(r->error);
    } else {
      s = copy_chunk(index, offset, length, reply);
    }
    if (!s.ok()) return s;
    // MOSDPGPushReply on the driver: queued at priority 3, its op-thread CPU.
    services::OpItem ack;
    ack.op_class = services::OpClass::kImmediate;
    ack.priority = services::kRecoveryOpPriority;
    ack.cost = 1;
    ack.owner = op.pg;
    q->run(op.pg, ack, [&] { env_.compute_s(options_.cpu_s_per_op); });
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      stats_.bytes_written += length;
      stats_.bytes_written_per_osd[static_cast<size_t>(op.target)] += length;
      for (int32_t source : op.sources) {
        stats_.bytes_read += length;
        stats_.bytes_read_per_osd[static_cast<size_t>(source)] += length;
      }
    }
    if (options_.recovery_sleep_s > 0) env_.sleep_s(options_.recovery_sleep_s);
  }
  return Status::ok_status();
}

void RecoveryService::run_lane(size_t index, Lanes& lanes, int lane) {
  const RecoveryOp& op = plan_.ops[index];
  const int32_t driver = op.sources.front();
  Endpoint& reply =
      env_.endpoint(host_of(driver), recovery_endpoint_name(driver) + ".op" +
                                         std::to_string(index) + ".lane" + std::to_string(lane));
  const uint64_t chunk = options_.chunk_bytes;
  if (!options_.op_queues.empty()) {
    for (;;) {
      uint64_t first = 0, count = 0;
      {
        std::lock_guard<services::EnvMutex> lock(mu_);
        if (lanes.next >= lanes.chunks || !lanes.error.ok()) return;
        first = lanes.next;
        count = std::min<uint64_t>(static_cast<uint64_t>(options_.recovery_max_single_start),
                                   lanes.chunks - first);
        lanes.next += count;
      }
      const Status s = queued_chunks(index, lanes, first, count, reply);
      if (!s.ok()) {
        std::lock_guard<services::EnvMutex> lock(mu_);
        ++stats_.chunk_errors;
        if (stats_.first_error.empty()) stats_.first_error = s.to_string();
        if (lanes.error.ok()) lanes.error = s;
        return;
      }
    }
  }
  for (;;) {
    uint64_t c = 0;
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      if (lanes.next >= lanes.chunks || !lanes.error.ok()) return;
      c = lanes.next++;
    }
    const uint64_t offset = c * chunk;
    const uint64_t length = std::min(chunk, op.bytes_to_write - offset);
    active_slots_[static_cast<size_t>(driver)]->acquire();
    pace(op, length);
    const Status s = copy_chunk(index, offset, length, reply);
    active_slots_[static_cast<size_t>(driver)]->release();
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      if (s.ok()) {
        stats_.bytes_written += length;
        stats_.bytes_written_per_osd[static_cast<size_t>(op.target)] += length;
        for (int32_t source : op.sources) {
          stats_.bytes_read += length;
          stats_.bytes_read_per_osd[static_cast<size_t>(source)] += length;
        }
      } else {
        ++stats_.chunk_errors;
        if (stats_.first_error.empty()) stats_.first_error = s.to_string();
        if (lanes.error.ok()) lanes.error = s;
      }
    }
    if (!s.ok()) return;
    if (options_.recovery_sleep_s > 0) env_.sleep_s(options_.recovery_sleep_s);
  }
}

void RecoveryService::run_op(size_t index) {
  const RecoveryOp& op = plan_.ops[index];
  const int32_t driver = op.sources.front();
  // The driver's local reservation, then the target's remote one, by messages (reserver.h).
  const HostId host = host_of(driver);
  uint64_t id = 0;
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    id = ++reserve_requests_;
  }
  // Holders are unique over plans; the reply endpoint is per driver and op (op indices repeat
  // across plans, with other drivers), its grants matched by request id.
  const std::string holder = "op" + std::to_string(index) + "." + std::to_string(id);
  Endpoint& reply = env_.endpoint(
      host, "recovery.osd" + std::to_string(driver) + ".op" + std::to_string(index) + ".reserve");
  const int32_t priority = op.kind == RecoveryKind::kRecovery ? kRecoveryPriority
                           : op.restores_redundancy           ? kDegradedBackfillPriority
                                                              : kBackfillPriority;
  if (!reserve(env_, host, local_reserver_name(driver), holder, priority, 2 * id, reply).ok() ||
      !reserve(env_, host, remote_reserver_name(op.target), holder, priority, 2 * id + 1, reply)
           .ok()) {
    return;  // the driver's host went down
  }
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    records_[index].started_at_s = env_.now_s();
  }
  if (options_.move_objects) {
    move_carried(index, host);
  } else {
    auto lanes = std::make_shared<Lanes>();
    lanes->chunks = (op.bytes_to_write + options_.chunk_bytes - 1) / options_.chunk_bytes;
    lanes->finished = env_.make_semaphore(0);
    lanes->turn = env_.make_semaphore(1);
    const int count = static_cast<int>(
        std::min<uint64_t>(static_cast<uint64_t>(options_.recovery_max_active), lanes->chunks));
    for (int lane = 1; lane < count; ++lane) {
      env_.spawn(
          host_of(driver), "recovery.op" + std::to_string(index) + ".lane" + std::to_string(lane),
          [this, index, lanes, lane] {
            run_lane(index, *lanes, lane);
            lanes->finished->release();
          },
          op_task_options_);
    }
    if (count > 0) run_lane(index, *lanes, 0);
    for (int lane = 1; lane < count; ++lane) lanes->finished->acquire();
  }
  release(env_, host, remote_reserver_name(op.target), holder);
  release(env_, host, local_reserver_name(driver), holder);

  std::shared_ptr<Semaphore> all_done;  // this plan's, when this op was its last
  const double now = env_.now_s();
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    records_[index].finished_at_s = now;
    ++stats_.ops_done;
    if (--pg_ops_left_[op.pg] == 0) --stats_.pgs_remaining;
    if (op.restores_redundancy && --pg_restoring_left_[op.pg] == 0 &&
        --stats_.degraded_pgs_remaining == 0) {
      stats_.redundancy_restored_at_s = now;
    }
    if (stats_.ops_done == stats_.ops_total) {
      stats_.finished_at_s = now;
      running_ = false;
      all_done = done_;
    }
  }
  if (options_.on_op_done) options_.on_op_done(op, index, now);
  if (all_done) all_done->release();
}

void RecoveryService::move_carried(size_t index, HostId host) {
  const RecoveryOp& op = plan_.ops[index];
  pace(op, op.bytes_to_write);
  Result<CarriedMove> moved = options_.move_objects(op, host);
  {
    std::lock_guard<services::EnvMutex> lock(mu_);
    if (!moved.ok()) {
      ++stats_.chunk_errors;
      if (stats_.first_error.empty()) stats_.first_error = moved.status().to_string();
      return;
    }
    stats_.bytes_written += moved->bytes_written;
    stats_.bytes_written_per_osd[static_cast<size_t>(op.target)] += moved->bytes_written;
    stats_.bytes_read += moved->bytes_read;
    // (Each source gives its share; an erasure rebuild reads k shards, a copy one.)
    const uint64_t sources = op.sources.size();
    for (size_t i = 0; i < op.sources.size(); ++i) {
      stats_.bytes_read_per_osd[static_cast<size_t>(op.sources[i])] +=
          moved->bytes_read / sources + (i < moved->bytes_read % sources ? 1 : 0);
    }
  }
  if (options_.recovery_sleep_s > 0 && moved->objects_pushed > 0) {
    env_.sleep_s(options_.recovery_sleep_s * static_cast<double>(moved->objects_pushed));
  }
}

RecoveryStats RecoveryService::stats() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return stats_;
}

std::vector<OpRecord> RecoveryService::op_records() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return records_;
}

}  // namespace granary::recovery

#include "engine/services/osd.h"

#include <mutex>
#include <utility>
#include <variant>

namespace granary::services {

OsdService::OsdService(Env& env, HostId host, Device& device, const ObjectIndex& store,
                       OsdServiceOptions options)
    : env_(env),
      host_(host),
      device_(device),
      store_(store),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      mu_(env) {
  GRANARY_CHECK(!options_.endpoint_name.empty());
  GRANARY_CHECK(options_.worker_tasks >= 1);
  GRANARY_CHECK(options_.cpu_s_per_op >= 0);
}

void OsdService::start(TaskOptions task_options) {
  for (int i = 0; i < options_.worker_tasks; ++i) {
    env_.spawn(
        host_, options_.endpoint_name + ".worker" + std::to_string(i), [this] { serve(); },
        task_options);
  }
}

void OsdService::serve() {
  for (;;) {
    Result<Message> m = endpoint_.recv();
    if (!m.ok()) return;  // the host went down
    if (std::holds_alternative<Shutdown>(m->body)) {
      env_.send(host_, options_.endpoint_name, Message{Shutdown{}, {}});  // for the next worker
      return;
    }
    if (const auto* request = std::get_if<ReadRequest>(&m->body)) handle(*request);
    // Other messages are not for an object service; they are dropped.
  }
}

void OsdService::handle(const ReadRequest& request) {
  env_.compute_s(options_.cpu_s_per_op);
  ReadReply reply;
  reply.request_id = request.request_id;
  reply.sent_at_s = request.sent_at_s;
  Result<StoredObject> object = store_.find(request.object);
  if (!object.ok()) {
    reply.ok = false;
    reply.error_code = ReplyError::kNotFound;
    reply.error = options_.endpoint_name + ": no object " + request.object;
  } else if (request.offset > object->size_bytes ||
             request.length > object->size_bytes - request.offset) {
    reply.ok = false;
    reply.error_code = ReplyError::kOutOfRange;
    reply.error = options_.endpoint_name + ": read of " + std::to_string(request.length) +
                  " bytes at " + std::to_string(request.offset) + " goes past the end of " +
                  request.object + " (" + std::to_string(object->size_bytes) + " bytes)";
  }
  {
    std::lock_guard<EnvMutex> lock(mu_);
    ++stats_.requests;
    if (reply.ok) {
      stats_.bytes_sent += request.length;
    } else {
      ++stats_.errors;
    }
  }
  if (!reply.ok) {
    env_.send(host_, request.reply_to, Message{std::move(reply), {}});
    return;
  }
  reply.length = request.length;
  env_.send_from_device(device_, object->offset_bytes + request.offset, request.length,
                        request.reply_to, Message{std::move(reply), {}});
}

OsdStats OsdService::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

#include "engine/services/mds.h"

#include <cmath>
#include <mutex>
#include <utility>
#include <variant>

namespace granary::services {

MetadataService::MetadataService(Env& env, HostId host,
                                 std::map<std::string, uint64_t, std::less<>> file_sizes,
                                 MetadataServiceOptions options)
    : env_(env),
      host_(host),
      file_sizes_(std::move(file_sizes)),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      mu_(env) {
  GRANARY_CHECK(!options_.endpoint_name.empty());
  GRANARY_CHECK(options_.parallel_ops >= 1);
  GRANARY_CHECK(options_.open_time_s >= 0 && options_.close_time_s >= 0 &&
                options_.create_time_s >= 0 && options_.stat_time_s >= 0);
}

void MetadataService::start(TaskOptions task_options) {
  for (int i = 0; i < options_.parallel_ops; ++i) {
    env_.spawn(
        host_, options_.endpoint_name + ".worker" + std::to_string(i), [this] { serve(); },
        task_options);
  }
}

void MetadataService::serve() {
  for (;;) {
    Result<Message> m = endpoint_.recv();
    if (!m.ok()) return;
    if (std::holds_alternative<Shutdown>(m->body)) {
      env_.send(host_, options_.endpoint_name, Message{Shutdown{}, {}});
      return;
    }
    const auto* request = std::get_if<MetadataRequest>(&m->body);
    if (request == nullptr) continue;  // not a metadata operation: dropped
    double t = 0;
    switch (request->op) {
      case MetadataOp::kOpen:
        t = options_.open_time_s;
        break;
      case MetadataOp::kClose:
        t = options_.close_time_s;
        break;
      case MetadataOp::kCreate:
        t = options_.create_time_s;
        break;
      case MetadataOp::kStat:
        t = options_.stat_time_s;
        break;
    }
    env_.sleep_s(t);
    env_.send(host_, request->reply_to, Message{handle(*request, t), {}});
  }
}

MetadataReply MetadataService::handle(const MetadataRequest& request, double service_s) {
  MetadataReply reply;
  reply.request_id = request.request_id;
  reply.sent_at_s = request.sent_at_s;
  auto fail = [&](ReplyError code, std::string error) {
    reply.ok = false;
    reply.error_code = code;
    reply.error = options_.endpoint_name + ": " + std::move(error);
    ++stats_.errors;
  };
  busy_ns_.fetch_add(static_cast<uint64_t>(std::llround(service_s * 1e9)),
                     std::memory_order_relaxed);
  std::lock_guard<EnvMutex> lock(mu_);
  auto file = file_sizes_.find(request.path);
  switch (request.op) {
    case MetadataOp::kOpen:
      ++stats_.opens;
      if (file == file_sizes_.end()) {
        fail(ReplyError::kNotFound, "no such file " + request.path);
      } else {
        ++open_handles_[request.path];
        reply.size_bytes = file->second;
      }
      break;
    case MetadataOp::kStat:
      ++stats_.stats;
      if (file == file_sizes_.end()) {
        fail(ReplyError::kNotFound, "no such file " + request.path);
      } else {
        reply.size_bytes = file->second;
      }
      break;
    case MetadataOp::kCreate:
      ++stats_.opens;
      if (file == file_sizes_.end()) file = file_sizes_.emplace(request.path, 0).first;
      ++open_handles_[request.path];
      reply.size_bytes = file->second;
      break;
    case MetadataOp::kClose: {
      ++stats_.closes;
      auto open = open_handles_.find(request.path);
      if (open == open_handles_.end()) {
        fail(ReplyError::kInvalid, "close of " + request.path + ", which is not open");
      } else {
        if (--open->second == 0) open_handles_.erase(open);
        if (request.size_bytes >= 0 && file != file_sizes_.end()) {
          file->second = static_cast<uint64_t>(request.size_bytes);
        }
      }
      break;
    }
  }
  return reply;
}

MdsStats MetadataService::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

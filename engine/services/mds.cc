#include "engine/services/mds.h"

#include <cmath>
#include <mutex>
#include <utility>
#include <variant>

namespace granary::services {

namespace {

MdsNamespace namespace_of(std::map<std::string, uint64_t, std::less<>> file_sizes) {
  MdsNamespace files;
  for (auto& [path, size] : file_sizes) files.emplace_hint(files.end(), path, MdsFile{size, 0, {}});
  return files;
}

}  // namespace

MetadataService::MetadataService(Env& env, HostId host,
                                 std::map<std::string, uint64_t, std::less<>> file_sizes,
                                 MetadataServiceOptions options)
    : MetadataService(env, host, namespace_of(std::move(file_sizes)), std::move(options)) {}

MetadataService::MetadataService(Env& env, HostId host, MdsNamespace files,
                                 MetadataServiceOptions options)
    : env_(env),
      host_(host),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      mu_(env),
      files_(std::move(files)),
      layout_rng_(options_.layout_seed) {
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

bool MetadataService::create_locked(const std::string& path, std::string& error, ReplyError& code) {
  MdsFile file;
  if (options_.allocator != nullptr) {
    Result<layout::OstAllocation> a =
        options_.allocator->allocate(options_.layout_spec, layout_rng_);
    if (!a.ok()) {
      code = ReplyError::kIoError;
      error = "no layout for " + path + ": " + a.status().message();
      return false;
    }
    file.stripe_size_bytes = a->layout.stripe_size_bytes();
    file.ost_indices = a->layout.ost_indices();
  }
  if (options_.store != nullptr) {
    if (Status s = options_.store->put(path, file); !s.ok()) {
      code = ReplyError::kIoError;
      error = "creating " + path + ": " + s.message();
      return false;
    }
  }
  files_.emplace(path, std::move(file));
  return true;
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
  auto answer = [&](const MdsFile& f) {
    reply.size_bytes = f.size_bytes;
    reply.stripe_size_bytes = f.stripe_size_bytes;
    reply.ost_indices = f.ost_indices;
  };
  busy_ns_.fetch_add(static_cast<uint64_t>(std::llround(service_s * 1e9)),
                     std::memory_order_relaxed);
  std::lock_guard<EnvMutex> lock(mu_);
  auto file = files_.find(request.path);
  switch (request.op) {
    case MetadataOp::kOpen:
      ++stats_.opens;
      if (file == files_.end()) {
        fail(ReplyError::kNotFound, "no such file " + request.path);
      } else {
        ++open_handles_[request.path];
        answer(file->second);
      }
      break;
    case MetadataOp::kStat:
      ++stats_.stats;
      if (file == files_.end()) {
        fail(ReplyError::kNotFound, "no such file " + request.path);
      } else {
        answer(file->second);
      }
      break;
    case MetadataOp::kCreate: {
      ++stats_.opens;
      std::string error;
      ReplyError code = ReplyError::kNone;
      if (file == files_.end() && !create_locked(request.path, error, code)) {
        fail(code, std::move(error));
        break;
      }
      ++open_handles_[request.path];
      answer(files_.find(request.path)->second);
      break;
    }
    case MetadataOp::kClose: {
      ++stats_.closes;
      auto open = open_handles_.find(request.path);
      if (open == open_handles_.end()) {
        fail(ReplyError::kInvalid, "close of " + request.path + ", which is not open");
        break;
      }
      if (request.size_bytes >= 0 && file != files_.end() &&
          file->second.size_bytes != static_cast<uint64_t>(request.size_bytes)) {
        MdsFile changed = file->second;
        changed.size_bytes = static_cast<uint64_t>(request.size_bytes);
        if (options_.store != nullptr) {
          if (Status s = options_.store->put(request.path, changed); !s.ok()) {
            fail(ReplyError::kIoError, "closing " + request.path + ": " + s.message());
            break;  // the handle stays: the client may close again
          }
        }
        file->second = std::move(changed);
      }
      if (--open->second == 0) open_handles_.erase(open);
      break;
    }
  }
  return reply;
}

MdsNamespace MetadataService::files() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return files_;
}

MdsStats MetadataService::stats() const {
  std::lock_guard<EnvMutex> lock(mu_);
  return stats_;
}

}  // namespace granary::services

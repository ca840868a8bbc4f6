#include "engine/cluster/map_client.h"

#include <mutex>
#include <utility>
#include <variant>

namespace granary::cluster {

MapClient::MapClient(Env& env, HostId host, OsdMap initial, MapClientOptions options)
    : env_(env),
      host_(host),
      options_(std::move(options)),
      endpoint_(env.endpoint(host, options_.endpoint_name)),
      mu_(env),
      map_(std::move(initial)),
      epoch_(map_.epoch()) {
  GRANARY_CHECK(!options_.endpoint_name.empty());
  GRANARY_CHECK(options_.renew_interval_s >= 0);
}

void MapClient::subscribe(std::function<void(const OsdMap&)> callback) {
  callbacks_.push_back(std::move(callback));
}

void MapClient::start(TaskOptions task_options) {
  env_.spawn(
      host_, options_.endpoint_name, [this] { serve(); }, task_options);
}

OsdMap MapClient::map() const {
  std::lock_guard<services::EnvMutex> lock(mu_);
  return map_;
}

void MapClient::send_subscribe() {
  // (The monitor's host down: the next renewal or update asks again.)
  (void)env_.send(host_, options_.monitor_endpoint,
                  Message{MapSubscribe{options_.endpoint_name, epoch(), options_.confirm},
                          {},
                          /*header_bytes=*/64});
}

void MapClient::notify() {
  for (const auto& callback : callbacks_) callback(map_);
}

bool MapClient::on_update(const MapUpdate& u) {
  if (u.full && u.full->epoch() > epoch()) {
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      map_ = *u.full;
      epoch_.store(map_.epoch(), std::memory_order_release);
    }
    notify();
  }
  for (size_t i = 0; i < u.incrementals.size(); ++i) {
    const uint32_t makes = u.first_epoch + static_cast<uint32_t>(i);
    if (makes <= epoch()) continue;         // one it has
    if (makes > epoch() + 1) return false;  // a gap: ask for what is missing
    {
      std::lock_guard<services::EnvMutex> lock(mu_);
      // The monitor applied the same incremental to the same epoch.
      GRANARY_CHECK(map_.apply(*u.incrementals[i]).ok());
      epoch_.store(map_.epoch(), std::memory_order_release);
    }
    notify();
  }
  return true;
}

void MapClient::serve() {
  send_subscribe();
  for (;;) {
    Result<Message> m = options_.renew_interval_s > 0 ? endpoint_.recv(options_.renew_interval_s)
                                                      : endpoint_.recv();
    if (!m.ok()) {
      if (m.status().code() != Status::Code::kNotFound) return;  // the endpoint failed
      resubscriptions_.fetch_add(1, std::memory_order_relaxed);
      send_subscribe();  // silence: renew
      continue;
    }
    if (std::holds_alternative<Shutdown>(m->body)) return;
    if (const auto* u = std::get_if<MapUpdate>(&m->body); u != nullptr) {
      if (on_update(*u)) {
        confirmed_.store(true, std::memory_order_release);
      } else {
        resubscriptions_.fetch_add(1, std::memory_order_relaxed);
        send_subscribe();
      }
    }
  }
}

}  // namespace granary::cluster

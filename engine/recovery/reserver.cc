#include "engine/recovery/reserver.h"

#include <map>
#include <set>
#include <tuple>
#include <variant>

namespace granary::recovery {

std::string local_reserver_name(int32_t osd) {
  return "reserver." + std::to_string(osd) + ".local";
}

std::string remote_reserver_name(int32_t osd) {
  return "reserver." + std::to_string(osd) + ".remote";
}

void run_reserver(Env& env, HostId host, const std::string& endpoint, int slots) {
  GRANARY_CHECK(slots >= 1);
  Endpoint& ep = env.endpoint(host, endpoint);
  std::set<std::string> granted;  // holders
  // Waiting requests: (-priority, arrival) -> request.
  std::map<std::tuple<int32_t, uint64_t>, ReserveRequest> waiting;
  uint64_t arrivals = 0;
  auto grant = [&](const ReserveRequest& r) {
    granted.insert(r.holder);
    env.send(host, r.reply_to, Message{ReserveGrant{r.request_id}, {}});
  };
  for (;;) {
    Result<Message> m = ep.recv();
    if (!m.ok() || std::holds_alternative<Shutdown>(m->body)) return;
    const auto* r = std::get_if<ReserveRequest>(&m->body);
    if (r == nullptr) continue;
    if (r->op == ReserveOp::kRequest) {
      if (static_cast<int>(granted.size()) < slots && waiting.empty()) {
        grant(*r);
      } else {
        waiting.emplace(std::make_tuple(-r->priority, arrivals++), *r);
      }
      continue;
    }
    if (granted.erase(r->holder) == 0) continue;  // not held: a duplicate release
    if (!waiting.empty()) {
      grant(waiting.begin()->second);
      waiting.erase(waiting.begin());
    }
  }
}

Status reserve(Env& env, HostId host, const std::string& reserver, const std::string& holder,
               int32_t priority, uint64_t request_id, Endpoint& reply) {
  ReserveRequest r;
  r.request_id = request_id;
  r.op = ReserveOp::kRequest;
  r.priority = priority;
  r.holder = holder;
  r.reply_to = reply.name();
  env.send(host, reserver, Message{std::move(r), {}});
  for (;;) {
    Result<Message> m = reply.recv();
    if (!m.ok()) return m.status();
    const auto* g = std::get_if<ReserveGrant>(&m->body);
    if (g != nullptr && g->request_id == request_id) return Status();
  }
}

void release(Env& env, HostId host, const std::string& reserver, const std::string& holder) {
  ReserveRequest r;
  r.op = ReserveOp::kRelease;
  r.holder = holder;
  env.send(host, reserver, Message{std::move(r), {}});
}

}  // namespace granary::recovery

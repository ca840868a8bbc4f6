#include "sim/platform.h"

#include <xbt/log.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace granary::sim {

namespace sg4 = simgrid::s4u;

Result<std::vector<std::string>> simgrid_config_from_env() {
  std::vector<std::string> items;
  const char* value = std::getenv("GRANARY_SIMGRID_CFG");
  if (value == nullptr) return items;
  const std::string all(value);
  size_t start = 0;
  while (start < all.size()) {
    const size_t end = std::min(all.find(' ', start), all.size());
    const std::string item = all.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    // (SimGrid aborts the process on an item without a colon: refuse it here.)
    const size_t colon = item.find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 == item.size()) {
      return Status::invalid_argument(
          "GRANARY_SIMGRID_CFG: expected SimGrid settings 'name:value' separated by spaces, "
          "found '" +
          item + "'");
    }
    items.push_back(item);
  }
  return items;
}

void configure_engine(sg4::Engine& engine, const std::vector<std::string>& extra) {
  // Pure max-min sharing (no LV08 bandwidth/latency factors, which Granary's own models
  // replace), no per-flow TCP window bound, no reverse-direction ACK traffic.
  xbt_log_control_set("root.thresh:critical");
  xbt_log_control_set("xbt_cfg.thresh:critical");
  engine.set_config("network/model:CM02");
  engine.set_config("network/TCP-gamma:0");
  engine.set_config("network/crosstraffic:0");
  engine.set_config("network/optim:Lazy");
  engine.set_config("cpu/optim:Lazy");
  engine.set_config("contexts/stack-size:256");
  for (const std::string& item : extra) engine.set_config(item);
}

Result<Platform> build_platform(const models::Topology& t, const PlatformOptions& o) {
  if (!o.link_scale.empty() && o.link_scale.size() != t.links.size()) {
    return Status::invalid_argument("link_scale has " + std::to_string(o.link_scale.size()) +
                                    " entries, the topology " + std::to_string(t.links.size()) +
                                    " links");
  }
  auto* zone = sg4::create_dijkstra_zone("world", true);
  Platform p;
  p.hosts.assign(t.nodes.size(), nullptr);
  std::vector<simgrid::kernel::routing::NetPoint*> points(t.nodes.size(), nullptr);
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const models::TopologyNode& n = t.nodes[i];
    if (n.kind == models::NodeKind::kSwitch) {
      points[i] = zone->create_router(n.name);
      continue;
    }
    int cores = 1;
    if (n.kind == models::NodeKind::kClient || n.kind == models::NodeKind::kClientSink)
      cores = o.client_cores;
    if (n.kind == models::NodeKind::kStorage || n.kind == models::NodeKind::kMds)
      cores = o.storage_cores;
    sg4::Host* h = zone->create_host(n.name, o.core_speed_flops);
    h->set_core_count(cores);
    h->seal();
    p.hosts[i] = h;
    points[i] = h->get_netpoint();
  }
  p.forward.resize(t.links.size());
  p.reverse.resize(t.links.size());
  for (size_t i = 0; i < t.links.size(); ++i) {
    const models::TopologyLink& l = t.links[i];
    double scale = o.link_scale.empty() ? 1.0 : o.link_scale[i];
    const bool network =
        l.role != models::LinkRole::kDrive && l.role != models::LinkRole::kClientMemory;
    if (network) scale *= o.network_efficiency;
    if (!(l.forward_bytes_per_s > 0) || !(l.reverse_bytes_per_s > 0) || !(scale > 0)) {
      return Status::invalid_argument("link " + l.name + " has no capacity");
    }
    auto* fwd = zone->create_link(l.name + ">", l.forward_bytes_per_s * scale);
    fwd->set_latency(l.latency_s);
    fwd->seal();
    auto* rev = zone->create_link(l.name + "<", l.reverse_bytes_per_s * scale);
    rev->set_latency(l.latency_s);
    rev->seal();
    p.forward[i] = fwd;
    p.reverse[i] = rev;
    zone->add_route(points[l.a], points[l.b], nullptr, nullptr, {sg4::LinkInRoute(fwd)}, false);
    zone->add_route(points[l.b], points[l.a], nullptr, nullptr, {sg4::LinkInRoute(rev)}, false);
  }
  zone->seal();
  return p;
}

}  // namespace granary::sim

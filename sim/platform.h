// A SimGrid platform built from a models::Topology: hosts for clients, client sinks, storage
// servers, drives and metadata servers, routers for switches, and two one-way links per
// topology link (forward and reverse capacities may differ: drives read faster than they
// write). Routing is Dijkstra over that graph (the topology guarantees one shortest path per
// pair).
//
// One platform per process, built after the s4u::Engine exists (SimGrid keeps global state).
#pragma once

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "engine/status.h"
#include "models/topology.h"

namespace granary::sim {

struct PlatformOptions {
  // Multiplier on each topology link's capacity (empty: 1 everywhere). The scaled world of
  // the hybrid fidelity shrinks shared resources this way.
  std::vector<double> link_scale;
  // Multiplier on network (NIC and fabric) capacities: the storage protocol's efficiency.
  double network_efficiency = 1.0;
  double core_speed_flops = 1e9;  // one core; compute_s(t) executes t * this many flops
  int client_cores = 64;
  int storage_cores = 32;
};

struct Platform {
  std::vector<simgrid::s4u::Host*> hosts;             // by topology node; nullptr for switches
  std::vector<simgrid::s4u::Link*> forward, reverse;  // by topology link
};

// Builds the platform into the current s4u::Engine. Call once, before running.
Result<Platform> build_platform(const models::Topology& topology, const PlatformOptions& options);

// Extra SimGrid settings for experiments: the environment variable GRANARY_SIMGRID_CFG, items
// "name:value" separated by spaces (e.g. "network/optim:Full"), in order; empty when it is unset
// or blank. An item without a name or a value is an error naming the variable. They can change
// what a run predicts, so the report records them (report "run.simgrid_config",
// docs/report-format.md).
Result<std::vector<std::string>> simgrid_config_from_env();

// The SimGrid configuration Granary runs with (set before the platform is built): the CM02
// max-min model without TCP window limits or cross-traffic, full lazy updates (see
// docs/models.md), small actor stacks, quiet logs; then `extra` (simgrid_config_from_env), whose
// names and values SimGrid itself checks.
void configure_engine(simgrid::s4u::Engine& engine, const std::vector<std::string>& extra);

}  // namespace granary::sim

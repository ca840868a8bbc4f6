// The design points of a plan: every combination of the space's axes (plan.h), each applied to
// every case's scenario file as edits of its JSON, so that a point is a set of ordinary
// scenarios (the GUI opens one, `granary run` runs one). docs/plan-format.md, "Space".
//
// An axis sets (and the base scenario keeps whatever no axis sets):
//   storage_servers    cluster.storage.count
//   drives_per_server  cluster.storage.drive.count
//   drive              cluster.storage.drive.profile (the base's figure overrides are dropped:
//                      the profile's apply)
//   nic, nics_per_server  cluster.storage.nic.profile / .count (likewise)
//   server             cluster.storage.profile (the base's cpu_cores and server_gbytes_per_s
//                      are dropped: the profile's apply)
//   redundancy         storage.rados.replicas or storage.rados.erasure (design rados only)
//   design             storage.design (the base's sections of the other designs are dropped)
//   protocol           storage.protocol; without the axis, the base's protocol when it carries
//                      the design, else the design's default (models/catalog.h)
//   gds                cluster.clients.gpudirect_storage
// A point whose scenarios do not parse (more drives than the server has bays, a protocol that
// does not carry the design, erasure coding wider than the hosts) is invalid, with the reason.
// Points whose edited scenarios are identical to an earlier point's (a redundancy choice on a
// design without pools) are dropped as duplicates.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/catalog.h"
#include "planner/plan.h"

namespace granary::planner {

// One combination of the axes (each set when its axis is in the space).
struct DesignChoice {
  std::optional<int> storage_servers, drives_per_server, nics_per_server;
  std::optional<std::string> drive, nic, server, protocol;
  std::optional<Redundancy> redundancy;
  std::optional<models::StorageDesign> design;
  std::optional<bool> gds;
};

struct DesignPoint {
  int index = 0;  // in enumeration order (the axes' order above, the last varying fastest)
  DesignChoice choice;
  // "16 x nvme-2u-24bay, 24 x samsung-pm9a3-7.68tb, 2 x connectx7-400g, rados 3x over rdma"
  // (the design as resolved, whatever the axes).
  std::string label;
  // Per case: the edited scenario text and the scenario it parses to; or why the point is
  // invalid (then `scenarios` is empty).
  std::vector<std::string> scenario_texts;
  std::vector<models::Scenario> scenarios;
  std::string invalid;
};

// Every point of the plan's space, duplicates dropped, in enumeration order.
std::vector<DesignPoint> enumerate_points(const Plan& plan, const models::Catalog& catalog);

// The points in the space, duplicates included (the product of the axes' sizes).
int64_t space_size(const DesignSpace& space);

}  // namespace granary::planner

// The built-in hardware catalog: drive, NIC, storage server, switch, storage-protocol and
// accelerator profiles, and the MLPerf Storage v1.0 training workloads. catalog.cc gives the
// source of every number; every hardware profile carries it in `source`, and its price_usd is
// an example (an estimate of a 2024 reseller price), never a quote.
// Scenario files name these profiles and may override any field (scenario_json.h).
//
// Profiles are compiled-in constants: every function here is pure and safe to call from any
// thread. Lookups return a copy, or NotFound with a message that lists the known names.
// `Catalog` resolves names against the built-in profiles plus extra ones (a hardware catalog
// database, db/catalog_db.h): scenario parsing takes one (scenario_json.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "models/hardware.h"
#include "models/scenario.h"

namespace granary::models {

// Every profile of a kind, in catalog order (drives from fastest to slowest, NICs by speed).
const std::vector<DriveProfile>& drive_profiles();
const std::vector<NicProfile>& nic_profiles();
const std::vector<ServerProfile>& server_profiles();
const std::vector<SwitchProfile>& switch_profiles();  // by port rate
const std::vector<ProtocolProfile>& protocol_profiles();
const std::vector<AcceleratorProfile>& accelerator_profiles();
const std::vector<TrainingWorkload>& mlperf_workloads();

// The names of the profiles above, in the same order.
std::vector<std::string> drive_profile_names();
std::vector<std::string> nic_profile_names();
std::vector<std::string> server_profile_names();
std::vector<std::string> switch_profile_names();
std::vector<std::string> protocol_profile_names();
std::vector<std::string> accelerator_profile_names();
std::vector<std::string> mlperf_workload_names();

// Lookups by exact name. Unknown names give NotFound, e.g.
// "unknown drive profile 'nvme-gen9' (known: samsung-pm9a3-7.68tb, ...)".
Result<DriveProfile> drive_profile(std::string_view name);
Result<NicProfile> nic_profile(std::string_view name);
Result<ServerProfile> server_profile(std::string_view name);
Result<SwitchProfile> switch_profile(std::string_view name);
Result<ProtocolProfile> protocol_profile(std::string_view name);
Result<AcceleratorProfile> accelerator_profile(std::string_view name);
Result<TrainingWorkload> mlperf_workload(std::string_view name);
// MLPerf Storage v2.0 checkpointing presets: llama3-8b, llama3-70b, llama3-405b, llama3-1t.
const std::vector<CheckpointWorkload>& mlperf_checkpoints();
Result<CheckpointWorkload> mlperf_checkpoint(std::string_view name);

// Extra hardware profiles and where they come from (`source`, e.g.
// "catalog database /home/a/.local/share/granary/granary.sqlite"), for messages.
struct ExtraProfiles {
  std::string source;
  std::vector<DriveProfile> drives;
  std::vector<NicProfile> nics;
  std::vector<AcceleratorProfile> accelerators;
  std::vector<ServerProfile> servers;
  std::vector<SwitchProfile> switches;
};

// The profiles a scenario may name: the built-in ones, then those of each extra source in the
// order added. A built-in name always resolves to the built-in profile (so that a scenario that
// names only built-in hardware gives the same report with or without extras); the first extra
// source holding a name wins over later ones. An unknown name gives NotFound listing the names
// of every place looked in, e.g. "unknown drive profile 'x' (known: built-in: a, b; catalog
// database /p.sqlite: c)"; with no extras the message is the built-in lookup's.
// A value: immutable once built, safe to share between threads for reading.
class Catalog {
 public:
  Catalog() = default;
  // The built-in catalog alone.
  static const Catalog& built_in();

  void add(ExtraProfiles extra) { extras_.push_back(std::move(extra)); }
  const std::vector<ExtraProfiles>& extras() const { return extras_; }

  Result<DriveProfile> drive(std::string_view name) const;
  Result<NicProfile> nic(std::string_view name) const;
  Result<AcceleratorProfile> accelerator(std::string_view name) const;
  Result<ServerProfile> server(std::string_view name) const;
  Result<SwitchProfile> fabric_switch(std::string_view name) const;
  // Protocols and workloads are built-in only.
  Result<ProtocolProfile> protocol(std::string_view name) const { return protocol_profile(name); }

  // Every name, built-in first, then the extras' names that are not already listed.
  std::vector<std::string> drive_names() const;
  std::vector<std::string> nic_names() const;
  std::vector<std::string> accelerator_names() const;
  std::vector<std::string> server_names() const;
  std::vector<std::string> switch_names() const;

 private:
  std::vector<ExtraProfiles> extras_;
};

// The protocols that carry a storage design, the default first: rados runs over Ceph's
// messenger (rdma, tcp), pfs over Lustre's LNet (lnet-rdma, lnet-tcp), nfs over NFS
// (nfs-rdma, nfs-tcp). The block protocols (nvmeof-rdma, nvme-tcp, iscsi) carry no design of
// format 1; they are in the catalog for the block designs to come.
const std::vector<std::string>& protocols_for_design(StorageDesign design);

// "rados", "pfs", "nfs".
std::string_view storage_design_name(StorageDesign design);
// "nvme", "sata-ssd", "hdd".
std::string_view drive_kind_name(DriveKind kind);
// "osd_crash", "drive_failure", ... as in the scenario format's failures[].kind.
std::string_view failure_kind_name(FailureKind kind);
// A workload type as scenarios spell it: "training_read", "checkpoint", "block", "boot_storm".
std::string_view workload_kind_name(WorkloadKind kind);

}  // namespace granary::models

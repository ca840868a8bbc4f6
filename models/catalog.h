// The built-in hardware catalog: drive, NIC, storage-protocol and accelerator profiles, and
// the MLPerf Storage v1.0 training workloads. catalog.cc gives the source of every number.
// Scenario files name these profiles and may override any field (scenario_json.h).
//
// Profiles are compiled-in constants: every function here is pure and safe to call from any
// thread. Lookups return a copy, or NotFound with a message that lists the known names.
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
const std::vector<ProtocolProfile>& protocol_profiles();
const std::vector<AcceleratorProfile>& accelerator_profiles();
const std::vector<TrainingWorkload>& mlperf_workloads();

// The names of the profiles above, in the same order.
std::vector<std::string> drive_profile_names();
std::vector<std::string> nic_profile_names();
std::vector<std::string> protocol_profile_names();
std::vector<std::string> accelerator_profile_names();
std::vector<std::string> mlperf_workload_names();

// Lookups by exact name. Unknown names give NotFound, e.g.
// "unknown drive profile 'nvme-gen9' (known: samsung-pm9a3-7.68tb, ...)".
Result<DriveProfile> drive_profile(std::string_view name);
Result<NicProfile> nic_profile(std::string_view name);
Result<ProtocolProfile> protocol_profile(std::string_view name);
Result<AcceleratorProfile> accelerator_profile(std::string_view name);
Result<TrainingWorkload> mlperf_workload(std::string_view name);
// MLPerf Storage v2.0 checkpointing presets: llama3-8b, llama3-70b, llama3-405b, llama3-1t.
const std::vector<CheckpointWorkload>& mlperf_checkpoints();
Result<CheckpointWorkload> mlperf_checkpoint(std::string_view name);

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

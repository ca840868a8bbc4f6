// Calibration of the simulation from real runs (`granary real calibrate`, realmode/README.md,
// "Calibration"; docs/models.md, "Calibration from real mode"): the figures the simulator
// takes from the catalog's profiles, measured on the cluster that `granary real up` brought up,
// and a copy of the scenario that carries them as per-field overrides.
//
// What is measured (by the launcher, realmode/launcher.h):
//  - the drive (drive_probe.h) on the first storage server's machine, in the cluster's folder:
//    the drive profile's figures;
//  - four cluster probes, block workloads on client node 0's volume through the cluster (its
//    CRUSH pool, its OSD daemons, its transport), each with the CPU time the OSD processes and
//    the granary-bench processes spent: 4 KiB random reads at queue depth 1 (the latency of
//    one request), 4 KiB at queue depth 16 (CPU per request), 1 MiB at queue depth 4 (CPU
//    per byte) and 4 KiB random writes at queue depth 1 (the latency of one write).
//
// How the protocol's figures follow (fit_calibration):
//  - client_cpu_us_per_op, server_cpu_us_per_op: the benches' and the OSDs' CPU time over the
//    requests of the 4 KiB queue-depth-16 probe (its ramp included: the CPU is measured over
//    the whole run, so the requests are its IOPS times ramp + window);
//  - cpu_us_per_mib: what a 1 MiB request costs more than a 4 KiB one, per MiB, the mean of
//    the client's and the server's (the simulator charges one figure on each end); zero_copy
//    false (real mode copies through TCP);
//  - message_latency_us: the simulator run on the queue-depth-1 probe with the figures above and
//    no message latency; what its read p50 falls short of the measured one, halved (a read is a
//    request and a reply, each charged the latency once); then run again with it, to check
//    (the residual is in the calibration). Never negative: when the simulator's other costs
//    already exceed the measurement, 0, and the residual says by how much;
//  - the drive's write_latency_us, likewise from the write probe: what the simulator's write
//    p50 (every copy written at once) falls short of the measured one is added to the drive
//    probe's durable write latency (the store's data, journal record and flush, and the write
//    path's CPU beyond a read's), never below the probe's.
// A replicated pool only (the launcher refuses an erasure-coded one).
// The link itself (NIC profile, efficiency, tc shaping) is left as the scenario says: real
// mode's links are the machine's, not the modelled NICs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

struct ClusterProbe {
  std::string name;  // "4k-qd1", "4k-qd16", "1m-qd4", "4k-qd1-write"
  int block_kib = 4;
  int queue_depth = 1;
  double read_fraction = 1;  // 1: reads only; 0: writes only
};
const std::vector<ClusterProbe>& cluster_probes();

// The scenario of a cluster probe: `scenario` (JSON, without failures) with its workloads
// replaced by one block workload on one node's 32 MiB volume (reads only, `seconds` measured
// after a ramp of a fifth of it).
nlohmann::json probe_scenario(nlohmann::json scenario, const ClusterProbe& probe, double seconds);

// A probe's measurement: the probe, the merged bench report of its run and the CPU seconds the
// OSD processes (`osd_cpu_s`) and the bench processes (`client_cpu_s`) spent over it.
struct ProbeRun {
  ClusterProbe probe;
  nlohmann::json report;
  double osd_cpu_s = 0, client_cpu_s = 0;
};

// The calibration (see the header comment) of `scenario` (JSON, as written, at
// `scenario_path`) from the drive probe's output and the three probes' runs: {"drive": the
// drive overrides, "protocol": the protocol overrides, "probes": per probe its IOPS, read
// latency and CPU per request, "message_latency_fit": {"real_p50_ms", "sim_p50_ms_without",
// "sim_p50_ms"}, "calibrated_scenario": the scenario with both override objects in place}. Runs
// the simulator twice, each in a child process (sim/child_run.h). Errors name the probe or the
// simulation that failed.
Result<nlohmann::json> fit_calibration(const nlohmann::json& scenario,
                                       const std::string& scenario_path,
                                       const nlohmann::json& drive_probe,
                                       const std::vector<ProbeRun>& runs);

}  // namespace granary::realmode

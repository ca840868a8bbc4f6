// The real-mode launcher (`granary real up|run|verify|down SCENARIO.json`, realmode/README.md,
// "granary real"): a cluster of daemons brought up as the scenario's `real` section says, its
// workload run with its failure timeline injected for real, its data verified, and everything
// it made removed.
//
//  - up: the cluster's folder (real.dir, default /tmp/granary-real-<name>) with the cluster key,
//    the cluster file (one host per OSD, drive.count per storage server naming it as their
//    server, each with a drive file of real.drive_mib; a monitor host with the scenario's
//    heartbeat settings; one client host per client node named "bench<c>"; the scenario's pool)
//    and state.json (with real.hosts "ssh", the key and cluster file copied to every lab host
//    of real.lab_hosts, machine.h); with real.hosts "namespaces" (root), one network namespace per
//    machine (storage server, monitor, client node) on a bridge, each veth shaped with tc tbf to
//    the machine's modelled NICs (or real.link_gbps); then granary-mon and every granary-osd
//    (formatting its drive) as detached processes, waited for until they serve.
//  - run: a training read's dataset filled once (granary-bench fill), then one granary-bench
//    per client host (its share), with the scenario's failures (random drive failures drawn
//    from its seed) injected at their times from the run's start (osd_crash: SIGKILL the OSD;
//    osd_restart: start it again on its drive; slow_drive: its fault file; ...); the shares'
//    reports merged into one marked "mode": "real", the scenario's expectations evaluated on
//    it.
//  - verify: every file read back and compared (granary-bench verify, per client host).
//  - down: every daemon stopped (SIGTERM, SIGKILL after 5 s), the namespaces and the bridge
//    deleted, the folder removed; also after a failed up or run (state.json records each
//    resource before it is made).
//
// The binaries are found next to the calling program or in ../realmode/ from it (a build
// tree), else on PATH. Thread-safety: one call at a time.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

struct LaunchOptions {
  std::string scenario_path;
  std::ostream* log = nullptr;  // progress lines (null: none)
};

Status real_up(const LaunchOptions& options);
// The merged report; `*failed_expectations` counts the expectations that do not hold.
Result<nlohmann::json> real_run(const LaunchOptions& options, int* failed_expectations);
Result<nlohmann::json> real_verify(const LaunchOptions& options);
Status real_down(const LaunchOptions& options);

// `granary real calibrate` (calibration.h): on the cluster `up` brought up (design rados), the
// drive probe on the first storage server's machine, then the three cluster probes (each
// bracketed by the OSD processes' CPU time, read from /proc on their machines), then the fit.
// The calibration as calibration.h's fit_calibration returns it, with "machine" (this
// machine's name, cores, kernel), "drive_probe" (the probe's output) and "seconds" added. The
// probes write their own volume, so the next `granary real run` fills its dataset again.
struct CalibrateOptions {
  double probe_seconds = 2;  // each cluster probe's measured window (a fifth of it as ramp)
  double drive_seconds = 1;  // each mode of the drive probe
};
Result<nlohmann::json> real_calibrate(const LaunchOptions& options,
                                      const CalibrateOptions& calibrate);

// The reports of granary-bench processes that each ran a share of the client nodes, as one:
// counts and rates summed, the accelerators' utilisation weighted by their count, latency
// quantiles over every share's samples where all sent them (granary-bench --latency-samples;
// the samples leave the report), else the largest share's, and a checkpoint beside the training
// read timed by its slowest rank over all shares. `shares` is not empty.
nlohmann::json merge_share_reports(const std::vector<nlohmann::json>& shares);

}  // namespace granary::realmode

// Calibration of the simulation from real runs (calibration.h).
#include "realmode/calibration.h"

#include <algorithm>
#include <cmath>

#include "models/scenario_json.h"
#include "sim/child_run.h"

namespace granary::realmode {
namespace {

using nlohmann::json;

// `v` to 4 significant digits (figures measured to a few percent read better so).
double round4(double v) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(v)));
  return std::round(v * scale) / scale;
}

const ProbeRun* run_named(const std::vector<ProbeRun>& runs, const std::string& name) {
  for (const ProbeRun& r : runs) {
    if (r.probe.name == name) return &r;
  }
  return nullptr;
}

// The requests a probe made over its whole run (its ramp included, as its CPU was measured).
double requests_of(const ProbeRun& r) {
  const json& s = r.report.at("summary");
  return s.at("iops").get<double>() *
         (s.at("measured_seconds").get<double>() + s.at("ramp_seconds").get<double>());
}

// A probe's p50 latency (ms): of its reads, or of its writes for a write probe.
double p50_ms(const json& report, const ClusterProbe& probe) {
  return report.at("latency_ms").at(probe.read_fraction > 0 ? "read" : "write").at("p50");
}

// The simulator's p50 (ms) on `probe` of `calibrated`.
Result<double> simulated_p50(const json& calibrated, const std::string& path,
                             const ClusterProbe& probe, double seconds) {
  const json scenario = probe_scenario(calibrated, probe, seconds);
  Result<models::Scenario> s = models::parse_scenario(scenario.dump(), path);
  if (!s.ok()) {
    return Status::invalid_argument("calibration: the probe " + probe.name +
                                    "'s scenario: " + s.status().message());
  }
  Result<json> report = sim::run_in_child(*s);
  if (!report.ok()) {
    return Status::io_error("calibration: simulating the probe " + probe.name + ": " +
                            report.status().message());
  }
  return p50_ms(*report, probe);
}

}  // namespace

const std::vector<ClusterProbe>& cluster_probes() {
  static const std::vector<ClusterProbe> probes = {{"4k-qd1", 4, 1, 1.0},
                                                   {"4k-qd16", 4, 16, 1.0},
                                                   {"1m-qd4", 1024, 4, 1.0},
                                                   {"4k-qd1-write", 4, 1, 0.0}};
  return probes;
}

json probe_scenario(json scenario, const ClusterProbe& probe, double seconds) {
  scenario.erase("failures");
  scenario.erase("expect");
  double object_mib = 4;
  if (scenario.contains("storage") && scenario["storage"].contains("rados")) {
    object_mib = scenario["storage"]["rados"].value("object_size_mib", 4.0);
  }
  const double ramp_s = seconds / 5;
  scenario["workloads"] =
      json::array({{{"name", "calibrate-" + probe.name},
                    {"type", "block"},
                    {"volume", {{"size_gib", std::max(32.0, object_mib) / 1024}}},
                    {"nodes", 1},
                    {"block_size_kib", probe.block_kib},
                    {"queue_depth", probe.queue_depth},
                    {"read_fraction", probe.read_fraction},
                    {"duration_s", seconds},
                    {"ramp_s", ramp_s}}});
  if (scenario.contains("simulation") && scenario["simulation"].contains("max_simulated_s")) {
    json& max_s = scenario["simulation"]["max_simulated_s"];
    if (max_s.is_number() && max_s.get<double>() < seconds + ramp_s + 1)
      max_s = seconds + ramp_s + 1;
  }
  return scenario;
}

Result<json> fit_calibration(const json& scenario, const std::string& scenario_path,
                             const json& drive_probe, const std::vector<ProbeRun>& runs) {
  const ProbeRun* qd1 = run_named(runs, "4k-qd1");
  const ProbeRun* qd16 = run_named(runs, "4k-qd16");
  const ProbeRun* mib = run_named(runs, "1m-qd4");
  const ProbeRun* write = run_named(runs, "4k-qd1-write");
  if (qd1 == nullptr || qd16 == nullptr || mib == nullptr || write == nullptr) {
    return Status::invalid_argument(
        "calibration: the probes 4k-qd1, 4k-qd16, 1m-qd4 and 4k-qd1-write are needed");
  }
  json out = {{"probes", json::array()}};
  for (const ProbeRun& r : runs) {
    const double n = requests_of(r);
    if (!(n > 0)) {
      return Status::io_error("calibration: the probe " + r.probe.name + " completed no request");
    }
    out["probes"].push_back({{"name", r.probe.name},
                             {"block_kib", r.probe.block_kib},
                             {"queue_depth", r.probe.queue_depth},
                             {"iops", r.report["summary"]["iops"]},
                             {"read_fraction", r.probe.read_fraction},
                             {"latency_ms", r.report["latency_ms"]},
                             {"requests", n},
                             {"client_cpu_s", r.client_cpu_s},
                             {"osd_cpu_s", r.osd_cpu_s},
                             {"client_cpu_us_per_op", r.client_cpu_s / n * 1e6},
                             {"server_cpu_us_per_op", r.osd_cpu_s / n * 1e6}});
  }
  const double client_op = qd16->client_cpu_s / requests_of(*qd16) * 1e6;
  const double server_op = qd16->osd_cpu_s / requests_of(*qd16) * 1e6;
  const double mib_extra = (mib->client_cpu_s / requests_of(*mib) * 1e6 - client_op +
                            mib->osd_cpu_s / requests_of(*mib) * 1e6 - server_op) /
                           2 / (1.0 - 4.0 / 1024);
  // The drive's figures, as the drive probe measured them.
  json drive = scenario.at("cluster").at("storage").at("drive");
  for (const auto& [key, value] : drive_probe.at("profile").items()) {
    drive[key] = key == "queue_depth" ? value : json(round4(std::max(value.get<double>(), 0.001)));
  }
  json protocol = {{"profile", "rdma"}};
  const json& given = scenario.at("storage").value("protocol", json("rdma"));
  if (given.is_string()) {
    protocol["profile"] = given;
  } else {
    protocol = given;
  }
  protocol["client_cpu_us_per_op"] = round4(client_op);
  protocol["server_cpu_us_per_op"] = round4(server_op);
  protocol["cpu_us_per_mib"] = round4(std::max(0.0, mib_extra));
  protocol["zero_copy"] = false;
  json calibrated = scenario;
  calibrated["cluster"]["storage"]["drive"] = drive;
  calibrated["storage"]["protocol"] = protocol;
  const double seconds = qd1->report["summary"]["measured_seconds"].get<double>();
  // The message latency: what the simulator's read at queue depth 1 lacks, halved.
  const double read_ms = p50_ms(qd1->report, qd1->probe);
  calibrated["storage"]["protocol"]["message_latency_us"] = 0;
  Result<double> read_without = simulated_p50(calibrated, scenario_path, qd1->probe, seconds);
  if (!read_without.ok()) return read_without.status();
  const double latency_us = round4(std::max(0.0, (read_ms - *read_without) * 1e3 / 2));
  calibrated["storage"]["protocol"]["message_latency_us"] = latency_us;
  // The drive's write latency as the store makes it: what the simulator's write at queue depth
  // 1 lacks (every copy writes at once: the latency adds once).
  const double write_ms = p50_ms(write->report, write->probe);
  Result<double> write_without = simulated_p50(calibrated, scenario_path, write->probe, seconds);
  if (!write_without.ok()) return write_without.status();
  json& drive_write = calibrated["cluster"]["storage"]["drive"]["write_latency_us"];
  const double probed_write_us = drive_write.get<double>();
  drive_write =
      round4(std::max(probed_write_us, probed_write_us + (write_ms - *write_without) * 1e3));
  Result<double> read_with = simulated_p50(calibrated, scenario_path, qd1->probe, seconds);
  if (!read_with.ok()) return read_with.status();
  Result<double> write_with = simulated_p50(calibrated, scenario_path, write->probe, seconds);
  if (!write_with.ok()) return write_with.status();
  out["drive"] = calibrated["cluster"]["storage"]["drive"];
  out["protocol"] = calibrated["storage"]["protocol"];
  out["latency_fit"] = {{"read",
                         {{"probe", qd1->probe.name},
                          {"real_p50_ms", read_ms},
                          {"sim_p50_ms_without", *read_without},
                          {"sim_p50_ms", *read_with},
                          {"fits", "protocol.message_latency_us"}}},
                        {"write",
                         {{"probe", write->probe.name},
                          {"real_p50_ms", write_ms},
                          {"sim_p50_ms_without", *write_without},
                          {"sim_p50_ms", *write_with},
                          {"drive_probe_write_latency_us", probed_write_us},
                          {"fits", "drive.write_latency_us"}}}};
  out["calibrated_scenario"] = std::move(calibrated);
  return out;
}

}  // namespace granary::realmode

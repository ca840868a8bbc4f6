#include "sim/report_writer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "models/catalog.h"
#include "models/durability.h"

namespace granary::sim {

using models::Fidelity;
using models::LinkRole;
using models::Scenario;
using models::StorageDesign;

namespace {

// The report format's version (docs/report-format.md, docs/report.schema.json).
constexpr int kReportFormat = 2;

// MLPerf Storage: the dataset is at least this many times the client nodes' memory.
constexpr double kMlperfDatasetOverMemory = 5;

// A block workload's "series": I/Os per second on the time axis.
nlohmann::json block_series_json(const BlockWorkloadDriver& d, double interval_s, double end_s) {
  nlohmann::json iops = nlohmann::json::array();
  for (double x : d.iops_series(interval_s, end_s)) iops.push_back(round_to(x, 3));
  return {{"interval_s", round_to(interval_s, 6)},
          {"t_s", time_axis_json(interval_s, iops.size(), end_s)},
          {"iops", iops}};
}

// The report's "block" section of a mixed run (docs/report-format.md).
nlohmann::json beside_json(const World& world, const models::WorkloadSpec& beside) {
  const BlockWorkloadDriver& d = *world.block_driver;
  nlohmann::json j = d.summary();
  j["workload"] = beside.kind == models::WorkloadKind::kBootStorm ? "boot_storm" : "block";
  j["name"] = beside.name;
  // The slice's volumes stand for the cluster's: rates scale up, latencies do not.
  j["cluster_volumes"] = static_cast<int64_t>(std::llround(world.block_scale * d.volume_count()));
  for (const char* k : {"iops", "read_iops", "write_iops", "read_mibps", "write_mibps"}) {
    j["cluster_" + std::string(k)] = round_to(j[k].get<double>() * world.block_scale, 3);
  }
  j["latency_ms"] = d.latency_ms();
  j["series"] = block_series_json(d, std::max(0.01, d.end_s() / 100), d.end_s());
  return j;
}

std::string fidelity_name(Fidelity f) {
  switch (f) {
    case Fidelity::kAuto:
      return "auto";
    case Fidelity::kRequest:
      return "request";
    case Fidelity::kSlice:
      return "slice";
  }
  return "?";
}

// The fraction at which a resource counts as saturated in the report's "saturated" list.
constexpr double kSaturatedBusy = 0.9;
// How many resources the "saturated" and "busiest" lists name.
constexpr size_t kListedResources = 20;

// The report's "utilization" (docs/report-format.md, "Utilisation"): every resource's busy
// fraction over time and on average, each kind's mean and busiest resource, and which resources
// saturated first.
nlohmann::json utilization_json(const std::vector<ResourceInfo>& resources,
                                const UtilizationSeries& u) {
  const size_t bins = u.bins();
  nlohmann::json t = nlohmann::json::array();
  for (size_t b = 0; b < bins; ++b) t.push_back(round_to(u.bin_end_s(b), 6));
  struct Kind {
    int count = 0;
    double sum = 0, max = 0;
    std::vector<double> series_sum, series_max;
  };
  std::map<std::string, Kind> kinds;
  nlohmann::json list = nlohmann::json::array();
  struct Saturated {
    double at_s;
    double mean;
    size_t r;
  };
  std::vector<Saturated> saturated;
  std::vector<std::pair<double, size_t>> by_mean;
  for (size_t r = 0; r < resources.size(); ++r) {
    Kind& k = kinds[resources[r].kind];
    k.series_sum.resize(bins, 0.0);
    k.series_max.resize(bins, 0.0);
    const double mean = u.mean(r);
    double peak = 0, first_at = -1;
    nlohmann::json series = nlohmann::json::array();
    for (size_t b = 0; b < bins; ++b) {
      const double x = u.busy(r, b);
      series.push_back(round_to(x, 4));
      peak = std::max(peak, x);
      k.series_sum[b] += x;
      k.series_max[b] = std::max(k.series_max[b], x);
      if (first_at < 0 && x >= kSaturatedBusy) first_at = u.bin_end_s(b);
    }
    ++k.count;
    k.sum += mean;
    k.max = std::max(k.max, mean);
    if (first_at >= 0) saturated.push_back({first_at, mean, r});
    by_mean.push_back({mean, r});
    list.push_back({{"name", resources[r].name},
                    {"kind", resources[r].kind},
                    {"mean", round_to(mean, 6)},
                    {"peak", round_to(peak, 4)},
                    {"saturated_at_s",
                     first_at >= 0 ? nlohmann::json(round_to(first_at, 6)) : nlohmann::json()},
                    {"series", series}});
  }
  nlohmann::json kinds_json = nlohmann::json::object();
  for (const auto& [name, k] : kinds) {
    nlohmann::json mean_series = nlohmann::json::array(), max_series = nlohmann::json::array();
    for (size_t b = 0; b < bins; ++b) {
      mean_series.push_back(round_to(k.series_sum[b] / k.count, 4));
      max_series.push_back(round_to(k.series_max[b], 4));
    }
    kinds_json[name] = {{"resources", k.count},
                        {"mean", round_to(k.sum / k.count, 6)},
                        {"max", round_to(k.max, 6)},
                        {"series_mean", mean_series},
                        {"series_max", max_series}};
  }
  // Saturated first: by the end of the first interval at or above the threshold, then the
  // busier on average, then by name (a total order: the list is deterministic).
  std::sort(saturated.begin(), saturated.end(), [&](const Saturated& x, const Saturated& y) {
    if (x.at_s != y.at_s) return x.at_s < y.at_s;
    if (x.mean != y.mean) return x.mean > y.mean;
    return resources[x.r].name < resources[y.r].name;
  });
  nlohmann::json first = nlohmann::json::array();
  for (size_t i = 0; i < saturated.size() && i < kListedResources; ++i) {
    const Saturated& x = saturated[i];
    first.push_back({{"name", resources[x.r].name},
                     {"kind", resources[x.r].kind},
                     {"at_s", round_to(x.at_s, 6)},
                     {"mean", round_to(x.mean, 6)}});
  }
  std::sort(by_mean.begin(), by_mean.end(), [&](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first > y.first;
    return resources[x.second].name < resources[y.second].name;
  });
  nlohmann::json busiest = nlohmann::json::array();
  for (size_t i = 0; i < by_mean.size() && i < kListedResources; ++i) {
    busiest.push_back({{"name", resources[by_mean[i].second].name},
                       {"kind", resources[by_mean[i].second].kind},
                       {"mean", round_to(by_mean[i].first, 6)}});
  }
  return {
      {"t_s", t},
      {"kinds", kinds_json},
      {"saturated", {{"threshold", kSaturatedBusy}, {"count", saturated.size()}, {"first", first}}},
      {"busiest", busiest},
      {"resources", list}};
}

// The report's "recovery" section (docs/report-format.md): the failure driver's story,
// whole-cluster figures from a slice (x `full_factor`), the requests the clients sent again and
// the time they waited, and the durability the measured detection and recovery times give.
// `writes_discarded`: the OSDs' (read on a task: their counters are behind Env locks);
// `dataset_bytes`: what the simulated clients' data amounts to (before x full_factor).
nlohmann::json recovery_report(const Scenario& s, const World& world,
                               const std::vector<services::ClientStats>& client_stats,
                               uint64_t writes_discarded, double full_factor,
                               double dataset_bytes) {
  nlohmann::json rec = world.failures->report();
  // What the random_drive_failures entries drew (their events are in rec["events"]).
  if (!s.random_drive_failures.empty()) {
    nlohmann::json draws = nlohmann::json::array();
    for (const auto& r : s.random_drive_failures) {
      int failed = 0;
      for (const auto& e : s.failures) {
        failed += e.random && e.entry == r.entry && e.kind == models::FailureKind::kDriveFailure;
      }
      draws.push_back({{"entry", "failures[" + std::to_string(r.entry) + "]"},
                       {"seed", s.seed},
                       {"afr", r.afr},
                       {"time_scale", r.time_scale},
                       {"from_s", r.from_s},
                       {"to_s", r.to_s},
                       {"replace_after_s", r.replace_after_s > 0 ? nlohmann::json(r.replace_after_s)
                                                                 : nlohmann::json()},
                       {"drives_failed", failed}});
    }
    rec["random_drive_failures"] = draws;
  }
  // The slice moved 1/k of the data: whole-cluster figures.
  for (const char* key : {"bytes_moved", "bytes_minimum", "bytes_read", "bytes_lost",
                          "objects_lost", "degraded_objects_max"}) {
    rec[key] = static_cast<uint64_t>(std::llround(rec[key].get<uint64_t>() * full_factor));
  }
  for (auto& x : rec["series"]["recovery_gibps"]) x = round_to(x.get<double>() * full_factor, 6);
  for (auto& x : rec["series"]["bytes_remaining"]) {
    x = static_cast<int64_t>(std::llround(x.get<double>() * full_factor));
  }
  for (auto& o : rec["per_osd"]) {
    for (const char* key : {"bytes_read", "bytes_written"}) {
      o[key] = static_cast<uint64_t>(std::llround(o[key].get<uint64_t>() * full_factor));
    }
  }
  uint64_t resent = 0, writes_resent = 0;
  double blocked = 0, write_blocked = 0;
  for (const auto& cs : client_stats) {
    resent += cs.resent + cs.writes_resent;
    writes_resent += cs.writes_resent;
    blocked += cs.blocked_s + cs.write_blocked_s;
    write_blocked += cs.write_blocked_s;
  }
  rec["requests_resent"] = static_cast<uint64_t>(std::llround(resent * full_factor));
  rec["blocked_io_seconds"] = round_to(blocked * full_factor, 6);
  rec["writes_resent"] = static_cast<uint64_t>(std::llround(writes_resent * full_factor));
  rec["write_blocked_seconds"] = round_to(write_blocked * full_factor, 6);
  rec["writes_discarded"] = static_cast<uint64_t>(std::llround(writes_discarded * full_factor));
  // Durability from what this run measured: a drive's data re-protected in the measured
  // time, after detection and the down-out interval (docs/models.md, "Durability").
  const double failed_at = world.failures->first_failure_s();
  const double restored = world.failures->clean_at_s();
  if (failed_at >= 0 && restored >= 0 && world.failures->out_at_s() >= 0) {
    const auto& rc = s.storage.rados.recovery;
    models::DurabilityInput di;
    di.drives = static_cast<int>(world.object_services.size());
    const bool ec = s.storage.rados.ec_k > 0;
    di.data_chunks = ec ? s.storage.rados.ec_k : 1;
    di.coding_chunks = ec ? s.storage.rados.ec_m : s.storage.rados.replicas - 1;
    di.placement_groups = s.storage.rados.pg_num;
    di.drive_afr = rc.drive_afr;
    di.detect_hours = (world.failures->out_at_s() - failed_at) / 3600;
    di.recovery_hours = std::max(1e-9, restored - world.failures->out_at_s()) / 3600;
    di.pool_bytes = std::max<double>(dataset_bytes * full_factor, s.storage.rados.stored_bytes);
    if (auto d = models::durability(di); d.ok()) {
      rec["durability"] = {{"drive_afr", di.drive_afr},
                           {"detect_hours", round_to(di.detect_hours, 9)},
                           {"recovery_hours", round_to(di.recovery_hours, 9)},
                           {"mttdl_years", d->cluster_mttdl_hours / models::kHoursPerYear},
                           {"annual_loss_probability", d->annual_loss_probability},
                           {"nines", round_to(d->nines, 3)}};
    }
  }
  return rec;
}

}  // namespace

nlohmann::json async_checkpoint_json(const models::WorkloadSpec& spec, const AsyncCheckpoint& a,
                                     int slice_factor) {
  const models::CheckpointWorkload& c = spec.checkpoint;
  // A checkpoint's time is its slowest rank's (MLPerf's rule), over the checkpoints every rank
  // finished before the training read ended.
  double sum = 0;
  int complete = 0;
  for (const auto& ck : a.write_s) {
    if (std::any_of(ck.begin(), ck.end(), [](double x) { return x < 0; })) break;
    sum += *std::max_element(ck.begin(), ck.end());
    ++complete;
  }
  const double seconds = complete > 0 ? sum / complete : 0;
  const double total = c.total_gb() * 1e9;
  return {{"name", spec.name},
          {"ranks", c.ranks()},
          {"simulated_ranks", a.ranks},
          {"rank_bytes", a.rank_bytes},
          {"start_s", c.start_s},
          {"checkpoints", c.checkpoints},
          {"checkpoints_complete", complete},
          {"write_seconds", round_to(seconds, 6)},
          {"write_gibps", round_to(seconds > 0 ? total / seconds / std::ldexp(1.0, 30) : 0, 6)},
          {"slice_factor", slice_factor}};
}

WriteBound write_bound(const Scenario& s, int client_nodes, double efficiency) {
  const auto& c = s.cluster.clients;
  const auto& st = s.cluster.storage;
  double amplification = 1, copies_in = 1;
  if (s.storage.design == StorageDesign::kRados) {
    if (s.storage.rados.ec_k > 0) {
      amplification =
          static_cast<double>(s.storage.rados.ec_k + s.storage.rados.ec_m) / s.storage.rados.ec_k;
      // The client sends the object to the primary, which sends (k + m - 1) / k of it on.
      copies_in = 1 + (amplification - 1.0 / s.storage.rados.ec_k);
    } else {
      amplification = s.storage.rados.replicas;
      copies_in = s.storage.rados.replicas;
    }
  }
  const double client_nic =
      client_nodes * c.nic.count * c.nic.profile.ports * c.nic.profile.gbps * 1e9 / 8 * efficiency;
  const double storage_nic = st.count * st.nic.count * st.nic.profile.ports * st.nic.profile.gbps *
                             1e9 / 8 * efficiency / copies_in;
  const double drives = double{1.0} * st.count * st.drives_per_node * st.drive.write_gbytes_per_s *
                        1e9 / amplification;
  WriteBound b{client_nic, "client NICs"};
  if (storage_nic < b.bytes_per_s) b = {storage_nic, "storage NICs"};
  if (drives < b.bytes_per_s) b = {drives, "drive writes"};
  return b;
}

namespace {

// The analytic IOPS ceiling of a block workload: every drive at its rated IOPS, every storage
// server's cores at the protocol's CPU per request and per byte of each request, every copy of
// a write counted.
struct IopsBound {
  double iops = 0;
  std::string bottleneck;
};

IopsBound iops_bound(const Scenario& s, double read_fraction, uint64_t block_bytes,
                     const DriveTiming& t) {
  const auto& st = s.cluster.storage;
  const int drives = st.count * st.drives_per_node;
  const auto& r = s.storage.rados;
  const int copies = r.ec_k > 0 ? r.ec_k + r.ec_m : std::max(1, r.replicas);
  // Per client I/O: drive operations and server requests. A small read is one drive read
  // (erasure-coded: of the one data shard holding it, through the primary: two requests); a
  // write is one drive write and one request per copy or shard (the primary's included).
  const double w = 1 - read_fraction;
  const double drive_busy =
      t.units > 0 ? (read_fraction * t.read_hold_s + w * copies * t.write_hold_s) / t.units : 0;
  const double cpu = s.storage.protocol.server_cpu_us_per_op * 1e-6;
  // Per byte: each request of a read moves the block; a replicated write's copies each move it,
  // an erasure-coded one's primary at least the block (its shards less each).
  const double block_cpu = static_cast<double>(block_bytes) * s.storage.protocol.cpu_s_per_byte();
  const double server_busy =
      cpu * (read_fraction * (r.ec_k > 0 ? 2 : 1) + w * copies) +
      block_cpu * (read_fraction * (r.ec_k > 0 ? 2 : 1) + w * (r.ec_k > 0 ? 1 : copies));
  IopsBound b{std::numeric_limits<double>::infinity(), "none"};
  if (drive_busy > 0) b = {drives / drive_busy, "drive IOPS"};
  if (server_busy > 0 && st.count * st.cpu_cores / server_busy < b.iops) {
    b = {st.count * st.cpu_cores / server_busy, "storage server CPU"};
  }
  return b;
}

// The report's `bounds` of a training read (docs/report-format.md).
nlohmann::json read_bounds_json(const models::ReadBounds& b) {
  const double gib = std::ldexp(1.0, 30);
  nlohmann::json cut = nlohmann::json::array();
  for (const auto& line : b.data_path.bottleneck) cut.push_back(line);
  nlohmann::json ceilings = nlohmann::json::array();
  for (const auto& c : b.ceilings) {
    ceilings.push_back({{"resource", c.resource},
                        {"gibps", round_to(c.bytes_per_s / gib, 6)},
                        {"files_per_s", round_to(c.files_per_s, 3)},
                        {"detail", c.detail}});
  }
  const models::Ceiling& binding = b.binding();
  return {{"max_flow_gibps", round_to(b.data_path.bytes_per_s / gib, 6)},
          {"line_rate_gibps", round_to(b.line_rate_bytes_per_s / gib, 6)},
          {"efficiency", b.efficiency},
          {"cut", cut},
          {"read_bound_gibps", round_to(binding.bytes_per_s / gib, 6)},
          {"binding", binding.resource},
          {"bottleneck", binding.detail},
          {"ceilings", ceilings},
          {"demand_gibps", round_to(b.demand_bytes_per_s / gib, 6)},
          {"accelerator_utilization_bound",
           b.demand_bytes_per_s > 0
               ? round_to(std::min(1.0, binding.bytes_per_s / b.demand_bytes_per_s), 6)
               : 1.0}};
}

// The client-visible bytes of each object a carried run's drive holds (its DiskStore's onodes).
std::map<std::string, uint64_t> carried_objects(const World& world, size_t d) {
  std::map<std::string, uint64_t> out;
  store::DiskStore& store = *world.carried->stores()[d];
  for (const std::string& name : store.list()) {
    if (Result<ObjectInfo> o = services::StoreBackend::stat_of(store, name); o.ok()) {
      out[name] = o->client_bytes();
    }
  }
  return out;
}

// Every object a checkpoint wrote, against its PG's devices at the end: a complete copy
// (chunk) on each, or it is short of copies (recovery unfinished, or data lost). The drives'
// written-object stores, or with carried data their DiskStores.
void written_objects_json(const Scenario& s, const World& world, double full_factor,
                          nlohmann::json& rec) {
  std::map<std::string, uint64_t> objects;               // name -> logical bytes
  std::vector<std::map<std::string, uint64_t>> carried;  // [drive]: name -> logical bytes
  auto note = [&objects](std::string_view name, uint64_t bytes) {
    uint64_t& b = objects[std::string(name)];
    b = std::max(b, bytes);
  };
  if (world.carried) {
    for (size_t d = 0; d < world.carried->stores().size(); ++d) {
      carried.push_back(carried_objects(world, d));
      for (const auto& [name, bytes] : carried.back()) note(name, bytes);
    }
  } else {
    for (const auto& store : world.written) {
      store->for_each_written([&](std::string_view name, const services::StoredObject& o) {
        note(name, o.client_bytes());
      });
    }
  }
  // Whether drive `d` holds `bytes` of object `name`.
  auto holds = [&](int32_t d, const std::string& name, uint64_t bytes) {
    if (d < 0 || d == placement::kNoDevice) return false;
    if (world.carried) {
      if (static_cast<size_t>(d) >= carried.size()) return false;
      auto o = carried[static_cast<size_t>(d)].find(name);
      return o != carried[static_cast<size_t>(d)].end() && o->second >= bytes;
    }
    auto o = world.written[d]->find(name);
    return o.ok() && o->client_bytes() >= bytes;
  };
  const int copies = s.storage.rados.ec_k > 0 ? s.storage.rados.ec_k + s.storage.rados.ec_m
                                              : s.storage.rados.replicas;
  uint64_t short_of_copies = 0;
  std::vector<int32_t> devices;
  for (const auto& [name, bytes] : objects) {
    cluster::MapPlacement& p = *world.host_maps.begin()->second.placement;
    p.devices_of(p.group_of(name), devices);
    int complete = 0;
    for (int32_t d : devices) complete += holds(d, name, bytes);
    short_of_copies += complete < copies;
  }
  rec["written_objects"] = static_cast<uint64_t>(std::llround(objects.size() * full_factor));
  rec["written_objects_short_of_copies"] =
      static_cast<uint64_t>(std::llround(short_of_copies * full_factor));
}

}  // namespace

nlohmann::json checkpoint_report(const ClusterPlan& plan, const World& world,
                                 const CheckpointMeasurements& m) {
  const Scenario& s = plan.sim;
  const Scenario& full = plan.scenario;
  const models::CheckpointWorkload& ck = plan.run.workloads[0].checkpoint;
  const int sim_ranks = plan.checkpoint_ranks.ranks;
  const auto& files = world.dataset->files();
  const double full_factor = static_cast<double>(ck.ranks()) / sim_ranks;
  const double gib = std::ldexp(1.0, 30);
  const double total_bytes = ck.total_gb() * 1e9;
  // A checkpoint's duration is its slowest rank's (MLPerf Storage); mean over checkpoints.
  auto phase_stats = [&](const std::vector<std::vector<double>>& d, LatencyRecorder& per_rank) {
    double sum = 0;
    for (const auto& c : d) {
      sum += *std::max_element(c.begin(), c.end());
      for (double x : c) per_rank.add(x);
    }
    return sum / static_cast<double>(d.size());
  };
  LatencyRecorder write_ranks, read_ranks;
  const double write_seconds = phase_stats(m.write_s, write_ranks);
  const double read_seconds = ck.read_back ? phase_stats(m.read_s, read_ranks) : 0;
  const double written = static_cast<double>(world.dataset->total_bytes());
  const WriteBound wb =
      write_bound(full, plan.checkpoint_ranks.cluster_nodes, s.storage.protocol.efficiency);

  nlohmann::json report;
  report["granary_report"] = kReportFormat;
  report["scenario"] = {{"name", full.name}, {"source", full.source_path}, {"seed", plan.seed}};
  report["fidelity"] = {
      {"mode", fidelity_name(plan.plan.fidelity)},
      {"slice_factor", plan.plan.slice_factor},
      {"simulated_client_nodes", plan.checkpoint_ranks.nodes},
      {"simulated_ranks", sim_ranks},
      {"simulated_storage_servers", plan.plan.storage_servers},
      {"storage_capacity_share", round_to(1.0 / plan.plan.slice_factor, 6)},
      {"transfer_unit_mib", round_to(s.simulation.transfer_unit_bytes / 1048576.0, 6)},
      {"reason", plan.plan.reason}};
  nlohmann::json summary;
  summary["workload"] = "checkpoint";
  summary["model"] = ck.name;
  summary["ranks"] = ck.ranks();
  summary["accelerators"] = ck.ranks();
  summary["checkpoint_bytes"] = static_cast<uint64_t>(std::llround(total_bytes));
  summary["checkpoint_gb"] = round_to(total_bytes / 1e9, 6);
  summary["checkpoints"] = ck.checkpoints;
  summary["rank_bytes"] = files.front().size_bytes;
  summary["write_seconds"] = round_to(write_seconds, 6);
  summary["write_gibps"] = round_to(write_seconds > 0 ? total_bytes / write_seconds / gib : 0, 6);
  summary["write_gbps"] = round_to(write_seconds > 0 ? total_bytes / write_seconds / 1e9 : 0, 6);
  summary["read_seconds"] = round_to(read_seconds, 6);
  summary["read_gibps"] = round_to(read_seconds > 0 ? total_bytes / read_seconds / gib : 0, 6);
  summary["fsync"] = ck.fsync;
  summary["write_amplification"] = round_to(written > 0 ? m.drive_bytes_written / written : 0, 6);
  summary["drive_bytes_written"] =
      static_cast<uint64_t>(std::llround(m.drive_bytes_written * full_factor));
  summary["simulated_seconds"] = round_to(m.end_s, 6);
  report["summary"] = summary;
  const models::MaxFlowBound& read_bound = plan.bounds.data_path;
  report["bounds"] = {
      {"write_gibps", round_to(wb.bytes_per_s / gib, 6)},
      {"write_bottleneck", wb.bottleneck},
      {"write_seconds_min", round_to(total_bytes / wb.bytes_per_s, 6)},
      {"max_flow_gibps", round_to(read_bound.bytes_per_s / gib, 6)},
      {"bottleneck",
       read_bound.bottleneck.empty() ? std::string() : read_bound.bottleneck.front()}};
  report["latency_ms"]["write"] =
      write_ranks.json_ms("one rank's checkpoint write, fsync included");
  if (ck.read_back) report["latency_ms"]["read"] = read_ranks.json_ms("one rank's checkpoint read");
  report["utilization"] = utilization_json(m.resources, m.utilization);
  {
    // At most UtilizationSeries::kMaxBins intervals: a long run's ticks are summed k at a time.
    const size_t ticks = m.drive_write_gibps.size();
    const size_t k = std::max<size_t>(
        1, (ticks + UtilizationSeries::kMaxBins - 1) / UtilizationSeries::kMaxBins);
    nlohmann::json dw = nlohmann::json::array(), dr = nlohmann::json::array();
    for (size_t i = 0; i < ticks; i += k) {
      const size_t e = std::min(ticks, i + k);
      double w = 0, r = 0;
      for (size_t j = i; j < e; ++j) {
        w += m.drive_write_gibps[j];
        r += m.drive_read_gibps[j];
      }
      dw.push_back(round_to(w / static_cast<double>(e - i), 6));
      dr.push_back(round_to(r / static_cast<double>(e - i), 6));
    }
    const double interval = m.interval_s * static_cast<double>(k);
    report["series"] = {{"interval_s", round_to(interval, 6)},
                        {"t_s", time_axis_json(interval, dw.size(), -1)},
                        {"drive_write_gibps", dw},
                        {"drive_read_gibps", dr}};
  }
  if (world.failures) {
    nlohmann::json rec =
        recovery_report(plan.run, world, m.client_stats, m.writes_discarded, full_factor, written);
    written_objects_json(s, world, full_factor, rec);
    report["recovery"] = rec;
  }
  if (world.block_driver) report["block"] = beside_json(world, *world.beside);
  if (world.carried) report["carry_data"] = carry_data_json(world.carried->counts());
  return report;
}

nlohmann::json block_report(const ClusterPlan& plan, const DriveTiming& drive_timing,
                            const BlockWorkloadDriver& driver, const BlockMeasurements& m) {
  const Scenario& s = plan.sim;
  const models::BlockWorkload& block = plan.block_volumes->spec.block;
  const bool boot = plan.block_volumes->boot;
  nlohmann::json report;
  report["granary_report"] = kReportFormat;
  report["scenario"] = {
      {"name", plan.scenario.name}, {"source", plan.scenario.source_path}, {"seed", plan.seed}};
  report["fidelity"] = {{"mode", fidelity_name(plan.plan.fidelity)},
                        {"slice_factor", plan.plan.slice_factor},
                        {"simulated_client_nodes", plan.plan.clients},
                        {"simulated_storage_servers", plan.plan.storage_servers},
                        {"reason", plan.plan.reason}};
  nlohmann::json summary = driver.summary();
  summary["workload"] = boot ? "boot_storm" : "block";
  summary["simulated_seconds"] = round_to(m.end_s, 6);
  summary["drive_queue_wait_us_mean"] =
      round_to(m.drive_ops > 0 ? m.drive_queued_s / m.drive_ops * 1e6 : 0, 3);
  report["summary"] = summary;
  const IopsBound ib = iops_bound(s,
                                  boot ? static_cast<double>(block.boot_read_bytes) /
                                             (block.boot_read_bytes + block.boot_write_bytes)
                                       : block.read_fraction,
                                  block.block_bytes, drive_timing);
  report["bounds"] = {{"iops", std::isfinite(ib.iops) ? round_to(ib.iops, 1) : 0.0},
                      {"iops_bottleneck", ib.bottleneck},
                      {"drive_units", drive_timing.units},
                      {"drive_read_latency_us", round_to(drive_timing.read_latency_s * 1e6, 3)},
                      {"drive_write_latency_us", round_to(drive_timing.write_latency_s * 1e6, 3)}};
  report["latency_ms"] = driver.latency_ms();
  report["utilization"] = utilization_json(m.resources, m.utilization);
  report["series"] =
      block_series_json(driver, boot ? std::max(0.01, m.end_s / 50) : m.interval_s, m.end_s);
  return report;
}

namespace {

// A training read's "recovery" section: the failure driver's story and what the failure did to
// the accelerators (utilisation before and after it, the dip and the time to recover).
nlohmann::json training_recovery_json(const ClusterPlan& plan, const World& world,
                                      const TrainingMeasurements& m) {
  const models::TrainingWorkload& w = plan.training;
  const int total_gpus = plan.plan.clients * plan.sim.cluster.clients.accelerators_per_node;
  const double end_s = m.end_s;
  // (A training run writes nothing: no write is ever discarded.)
  nlohmann::json rec = recovery_report(plan.sim, world, m.client_stats, 0, plan.plan.slice_factor,
                                       static_cast<double>(world.dataset->total_bytes()));
  // MLPerf AU over windows: compute time of the steps that ended in the window over the
  // accelerators' time in it.
  auto window_au = [&](double t0, double t1) -> nlohmann::json {
    if (!(t1 > t0)) return nullptr;
    double steps = 0;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus) {
        for (double t : gpu->metrics().step_end_s) steps += (t > t0 && t <= t1) ? 1 : 0;
      }
    }
    return round_to(std::min(1.0, steps * w.compute_s_per_step / (total_gpus * (t1 - t0))), 6);
  };
  const double failed_at = world.failures->first_failure_s();
  const double clean_at = world.failures->clean_at_s();
  if (failed_at < 0) return rec;
  const nlohmann::json before = window_au(std::max(0.0, m.warm_at_s), std::min(failed_at, end_s));
  rec["accelerator_utilization_before_failure"] = before;
  rec["accelerator_utilization_after_failure"] =
      window_au(failed_at, clean_at >= 0 ? std::min(clean_at, end_s) : end_s);
  // The dip the failure causes: sliding windows of `span` (5 steps, at least 2 s) from the
  // failure on, one per monitor interval; the dip starts at the first window whose AU is
  // below the target (98% of the workload's threshold, or of the AU before the failure if
  // that was lower) and ends at the start of the first window after it back at the target.
  std::vector<double> ends;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) {
      const auto& e = gpu->metrics().step_end_s;
      ends.insert(ends.end(), e.begin(), e.end());
    }
  }
  std::sort(ends.begin(), ends.end());
  const double span = std::max(2.0, 5 * w.compute_s_per_step);
  const double target =
      std::min(w.au_threshold, before.is_number() ? before.get<double>() : 1.0) * 0.98;
  auto au_in = [&](double t0) {
    const auto a = std::upper_bound(ends.begin(), ends.end(), t0);
    const auto b = std::upper_bound(ends.begin(), ends.end(), t0 + span);
    return static_cast<double>(b - a) * w.compute_s_per_step / (total_gpus * span);
  };
  double dip_from = -1, dip_to = -1;
  for (double t0 = failed_at; t0 + span <= end_s; t0 += m.interval_s) {
    const bool low = au_in(t0) < target;
    if (dip_from < 0 && low) dip_from = t0 + span;  // the window's end: AU fell by then
    if (dip_from >= 0 && !low) {
      dip_to = t0;
      break;
    }
  }
  rec["accelerator_utilization_dip"] = {
      {"target", round_to(target, 6)},
      {"window_s", round_to(span, 6)},
      {"from_s", dip_from >= 0 ? nlohmann::json(round_to(dip_from, 6)) : nlohmann::json()},
      {"to_s", dip_to >= 0 ? nlohmann::json(round_to(dip_to, 6)) : nlohmann::json()}};
  // Time from the failure until the accelerators are fed again: 0 without a dip, null
  // when the run ended in it.
  rec["time_to_accelerator_recovery_s"] = dip_from < 0 ? nlohmann::json(0.0)
                                          : dip_to < 0
                                              ? nlohmann::json()
                                              : nlohmann::json(round_to(dip_to - failed_at, 6));
  return rec;
}

// A training read's "series": the read rate, MLPerf's cumulative AU and the windowed AU on one
// time axis; with a checkpoint beside it, the drives' write rate.
nlohmann::json training_series_json(const TrainingMeasurements& m, double full_factor,
                                    bool checkpoint_beside) {
  const double gib = std::ldexp(1.0, 30);
  auto rounded = [](const std::vector<double>& v, double scale) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(round_to(x * scale, 6));
    return a;
  };
  nlohmann::json j = {{"interval_s", m.interval_s},
                      {"t_s", time_axis_json(m.interval_s, m.read_bytes_per_s.size(), m.end_s)},
                      {"read_gibps", rounded(m.read_bytes_per_s, full_factor / gib)},
                      {"accelerator_utilization", rounded(m.au_series, 1)},
                      {"accelerator_utilization_windowed", rounded(m.au_windowed, 1)}};
  if (checkpoint_beside) {
    j["drive_write_gibps"] = rounded(m.drive_write_bytes_per_s, full_factor / gib);
  }
  return j;
}

// Every simulated accelerator's MLPerf AU, node by node.
nlohmann::json accelerators_json(const TrainingMeasurements& m, int per_node) {
  nlohmann::json au = nlohmann::json::array();
  for (double a : m.aus) au.push_back(round_to(a, 6));
  return {{"simulated", m.aus.size()}, {"per_node", per_node}, {"utilization", au}};
}

// A training read's "summary" (docs/report-format.md).
nlohmann::json training_summary_json(const ClusterPlan& plan, const TrainingMeasurements& m) {
  const Scenario& in = plan.run;
  const models::TrainingWorkload& work = in.workloads[0].training;
  const models::TrainingWorkload& w = plan.training;
  const int accel = plan.sim.cluster.clients.accelerators_per_node;
  const double gib = std::ldexp(1.0, 30);
  const double full_factor = static_cast<double>(plan.plan.slice_factor);
  const double end_s = m.end_s;
  const std::vector<double>& aus = m.aus;
  const double au_mean =
      aus.empty() ? 0 : std::accumulate(aus.begin(), aus.end(), 0.0) / aus.size();
  const double au_min = aus.empty() ? 0 : *std::min_element(aus.begin(), aus.end());
  const double au_max = aus.empty() ? 0 : *std::max_element(aus.begin(), aus.end());
  nlohmann::json summary;
  summary["accelerators"] = in.cluster.clients.count * accel;
  summary["epoch_seconds"] = round_to(m.epoch_s, 6);
  summary["epoch_extrapolated"] = m.extrapolated;
  // Stopped at max_simulated_s before the loaders finished (and not from a steady state): the
  // epoch took at least the simulated time.
  const bool epoch_complete = m.stopped_at_s < 0 || m.extrapolated;
  summary["epoch_complete"] = epoch_complete;
  if (!epoch_complete) summary["epoch_seconds"] = round_to(std::max(m.epoch_s, end_s), 6);
  summary["simulated_seconds"] = round_to(end_s, 6);
  // MLPerf Storage's rule against the page cache: a dataset at least 5x the client nodes'
  // memory. Granary serves every read from storage (no page cache is modelled), which is right
  // only when the rule holds.
  {
    const double dataset =
        static_cast<double>(work.files) * work.samples_per_file * work.sample_bytes_mean;
    const double memory = in.cluster.clients.count * in.cluster.clients.memory_gib * gib;
    const double ratio = memory > 0 ? dataset / memory : 0;
    summary["dataset_over_client_memory"] = round_to(ratio, 6);
    summary["page_cache_rule_met"] = ratio >= kMlperfDatasetOverMemory;
  }
  summary["read_gibps_mean"] = round_to(end_s > 0 ? m.bytes * full_factor / end_s / gib : 0, 6);
  // The rate once every loader's prefetch queue had filled (start-up excluded).
  // The bytes delivered since every loader's prefetch fill, per second.
  const double steady_span = m.warm_at_s >= 0 ? end_s - m.warm_at_s : 0;
  double steady_bytes_per_s = steady_span > 0 ? (m.bytes - m.bytes_at_warm) / steady_span : 0;
  if (m.extrapolated) {
    // The long-run rate is at most what the steps consume (loaders may still be deepening
    // their queues during the window) and at most what was delivered.
    const double consumed = m.steady_steps_per_s * w.batch_size * m.mean_sample_bytes;
    steady_bytes_per_s = steady_bytes_per_s > 0 ? std::min(steady_bytes_per_s, consumed) : consumed;
  }
  summary["read_gibps_steady"] = round_to(steady_bytes_per_s * full_factor / gib, 6);
  // The epoch's rate as MLPerf Storage reports throughput: the samples an epoch consumes
  // (steps x batch x accelerators) at the mean sample size, over the (extrapolated) epoch;
  // null when the epoch did not end within the simulated time.
  {
    const double epoch_bytes = static_cast<double>(m.steps_per_epoch) * w.batch_size *
                               in.cluster.clients.count * accel * m.mean_sample_bytes;
    summary["read_gibps_epoch"] = epoch_complete && m.epoch_s > 0
                                      ? nlohmann::json(round_to(epoch_bytes / m.epoch_s / gib, 6))
                                      : nlohmann::json();
  }
  summary["bytes_read"] = static_cast<uint64_t>(std::llround(m.bytes * full_factor));
  summary["samples_read"] = m.samples * plan.plan.slice_factor;
  summary["steps_per_epoch"] = m.steps_per_epoch;
  summary["accelerator_utilization"] = {{"mean", round_to(au_mean, 6)},
                                        {"min", round_to(au_min, 6)},
                                        {"max", round_to(au_max, 6)},
                                        {"threshold", w.au_threshold},
                                        {"meets_threshold", au_mean >= w.au_threshold}};
  return summary;
}

}  // namespace

nlohmann::json training_report(const ClusterPlan& plan, const World& world,
                               const TrainingMeasurements& m, const AsyncCheckpoint& async) {
  const Scenario& in = plan.run;
  const models::TrainingWorkload& work = in.workloads[0].training;
  const int k = plan.plan.slice_factor;
  const double full_factor = static_cast<double>(k);
  nlohmann::json report;
  report["granary_report"] = kReportFormat;
  report["scenario"] = {{"name", in.name}, {"source", in.source_path}, {"seed", plan.seed}};
  report["fidelity"] = {{"mode", fidelity_name(plan.plan.fidelity)},
                        {"slice_factor", k},
                        {"simulated_client_nodes", plan.plan.clients},
                        {"simulated_storage_servers", plan.plan.storage_servers},
                        {"storage_capacity_share", round_to(plan.storage_share, 6)},
                        {"simulated_requests", m.simulated_requests},
                        {"reason", plan.plan.reason},
                        {"stopped_at_steady_state", m.stopped_at_s >= 0 && m.extrapolated}};
  report["summary"] = training_summary_json(plan, m);
  const DriveTiming full_drive = DriveTiming::from_profile(in.cluster.storage.drive);
  std::function<double(double)> hdd_positioning;
  if (full_drive.hard_disk) {
    hdd_positioning = [&](double q) { return full_drive.head.positioning_s(q, /*write=*/false); };
  }
  report["bounds"] = read_bounds_json(models::read_bounds(
      in, work, plan.full_topology, plan.client_cores, &m.load, hdd_positioning));
  report["latency_ms"]["read"] =
      m.file_latency.json_ms("one file (sample) read, request to last byte");
  report["utilization"] = utilization_json(m.resources, m.utilization);
  report["series"] = training_series_json(m, full_factor, plan.async_checkpoint.has_value());
  report["accelerators"] = accelerators_json(m, plan.sim.cluster.clients.accelerators_per_node);
  if (world.failures) report["recovery"] = training_recovery_json(plan, world, m);
  if (world.block_driver) report["block"] = beside_json(world, *world.beside);
  if (world.carried) report["carry_data"] = carry_data_json(world.carried->counts());
  if (plan.async_checkpoint) {
    report["checkpoint"] = async_checkpoint_json(plan.async_checkpoint->spec, async, k);
  }
  return report;
}

}  // namespace granary::sim

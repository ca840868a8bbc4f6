// granary durability: mean time to data loss, annual probability of data loss and expected
// data lost per year of a replicated or erasure-coded pool (models/durability.h).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "models/durability.h"

namespace granary::cli {

namespace {

// Ceph's mon_osd_down_out_interval: 600 s before a down OSD is marked out and recovery starts.
constexpr double kDefaultDetectHours = 600.0 / 3600;
// Ceph's PG autoscaler aims at mon_target_pg_per_osd = 100 PG chunks per OSD.
constexpr double kTargetPgChunksPerDrive = 100;
constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;

struct DurabilityArgs {
  int drives = 0;
  std::optional<int> replicas;
  std::optional<std::string> ec;
  std::optional<int64_t> pgs;
  double afr = 0;
  double recovery_hours = 0;
  double detect_hours = kDefaultDetectHours;
  double pool_tib = 0;
  std::string repair = "parallel";
  bool json = false;
};

std::string format(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// "3.1 GiB", "512 B", "2.4e-05 B".
std::string format_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1) return bytes == 0 ? "0 B" : format("%.2g B", bytes);
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  return format(bytes < 10 ? "%.2f " : bytes < 100 ? "%.1f " : "%.0f ", bytes) + kUnits[unit];
}

// Hours, with years beside them: "1.23e+21 h (1.40e+17 years)".
std::string format_hours(double hours) {
  return format("%.3g h", hours) + " (" + format("%.3g years", hours / models::kHoursPerYear) + ")";
}

// Parses "K+M".
bool parse_ec(const std::string& text, int& k, int& m) {
  const size_t plus = text.find('+');
  if (plus == std::string::npos || plus == 0 || plus + 1 == text.size()) return false;
  try {
    size_t used = 0;
    k = std::stoi(text.substr(0, plus), &used);
    if (used != plus) return false;
    const std::string rest = text.substr(plus + 1);
    m = std::stoi(rest, &used);
    if (used != rest.size()) return false;
  } catch (const std::exception&) {
    return false;
  }
  return k >= 1 && m >= 0 && text.find_first_not_of("0123456789+") == std::string::npos;
}

void run_durability(const DurabilityArgs& a, ExitCode& code) {
  models::DurabilityInput in;
  std::string redundancy;
  if (a.replicas.has_value() == a.ec.has_value()) {
    return fail_input(code, "durability: expected exactly one of --replicas R or --ec K+M");
  }
  if (a.replicas) {
    if (*a.replicas < 1 || *a.replicas > 64) {
      return fail_input(
          code, "--replicas: expected an integer in 1..64, got " + std::to_string(*a.replicas));
    }
    in.data_chunks = 1;
    in.coding_chunks = *a.replicas - 1;
    redundancy = std::to_string(*a.replicas) + " replicas";
  } else {
    int k = 0, m = 0;
    if (!parse_ec(*a.ec, k, m) || k + m > 64) {
      return fail_input(code,
                        "--ec: expected K+M with K >= 1, M >= 0 and K + M <= 64 (e.g. 8+3), "
                        "got '" +
                            *a.ec + "'");
    }
    in.data_chunks = k;
    in.coding_chunks = m;
    redundancy = "EC " + *a.ec;
  }
  const int n = in.data_chunks + in.coding_chunks;
  if (a.drives < n) {
    return fail_input(code, "--drives: expected at least " + std::to_string(n) +
                                " (one drive per chunk of a placement group with " + redundancy +
                                "), got " + std::to_string(a.drives));
  }
  in.drives = a.drives;
  if (a.pgs) {
    if (*a.pgs < 1 || *a.pgs > (int64_t{1} << 32) - 1) {
      return fail_input(
          code, "--pgs: expected an integer in 1..4294967295, got " + std::to_string(*a.pgs));
    }
    in.placement_groups = static_cast<uint32_t>(*a.pgs);
  } else {
    const double target = a.drives * kTargetPgChunksPerDrive / n;
    in.placement_groups = static_cast<uint32_t>(
        std::exp2(std::min(31.0, std::max(0.0, std::round(std::log2(target))))));
  }
  if (!(std::isfinite(a.afr) && a.afr > 0 && a.afr < 1)) {
    return fail_input(code, "--afr: expected an annual failure rate in (0, 1) (0.01 = 1%), got " +
                                format("%g", a.afr));
  }
  in.drive_afr = a.afr;
  if (!(std::isfinite(a.recovery_hours) && a.recovery_hours > 0)) {
    return fail_input(code, "--recovery-hours: expected a number of hours > 0, got " +
                                format("%g", a.recovery_hours));
  }
  in.recovery_hours = a.recovery_hours;
  if (!(std::isfinite(a.detect_hours) && a.detect_hours >= 0)) {
    return fail_input(code, "--detect-hours: expected a number of hours >= 0, got " +
                                format("%g", a.detect_hours));
  }
  in.detect_hours = a.detect_hours;
  if (!(std::isfinite(a.pool_tib) && a.pool_tib >= 0)) {
    return fail_input(code,
                      "--pool-tib: expected a number of TiB >= 0, got " + format("%g", a.pool_tib));
  }
  in.pool_bytes = a.pool_tib * kTiB;
  in.repair = a.repair == "serial" ? models::RepairMode::kSerial : models::RepairMode::kParallel;

  auto r = models::durability(in);
  if (!r.ok()) return fail_input(code, r.status());

  if (a.json) {
    nlohmann::json j;
    j["redundancy"] =
        a.replicas
            ? nlohmann::json{{"type", "replicated"}, {"replicas", *a.replicas}}
            : nlohmann::json{{"type", "erasure"}, {"k", in.data_chunks}, {"m", in.coding_chunks}};
    j["drives"] = in.drives;
    j["placement_groups"] = in.placement_groups;
    j["drive_afr"] = in.drive_afr;
    j["detect_hours"] = in.detect_hours;
    j["recovery_hours"] = in.recovery_hours;
    j["repair"] = a.repair;
    j["pool_bytes"] = in.pool_bytes;
    j["drive_failures_per_hour"] = r->drive_failures_per_hour;
    j["repair_hours"] = r->repair_hours;
    j["copyset_coverage"] = r->copyset_coverage;
    j["group_mttdl_hours"] = r->group_mttdl_hours;
    j["cluster_mttdl_hours"] = r->cluster_mttdl_hours;
    j["loss_events_per_year"] = r->loss_events_per_year;
    j["annual_loss_probability"] = r->annual_loss_probability;
    j["nines"] = r->nines;
    j["pgs_lost_per_event"] = r->pgs_lost_per_event;
    j["bytes_lost_per_event"] = r->bytes_lost_per_event;
    j["expected_bytes_lost_per_year"] = r->expected_bytes_lost_per_year;
    j["mean_failed_drives"] = r->mean_failed_drives;
    j["mean_degraded_pgs"] = r->mean_degraded_pgs;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::ostringstream o;
  o << "Durability of " << redundancy << " on " << in.drives << " drives, " << in.placement_groups
    << " PGs" << (a.pgs ? "" : " (about 100 PG chunks per drive)") << "\n";
  o << "  drive AFR " << format("%.3g%%", 100 * in.drive_afr) << " ("
    << format("%.3g", r->drive_failures_per_hour) << " failures per drive-hour); re-protected in "
    << format("%.3g h", r->repair_hours) << " (detect " << format("%.3g h", in.detect_hours)
    << " + recovery " << format("%.3g h", in.recovery_hours) << ", " << a.repair << " repair)\n";
  o << "  MTTDL of one PG               " << format_hours(r->group_mttdl_hours) << "\n";
  o << "  MTTDL of the pool             " << format_hours(r->cluster_mttdl_hours) << "\n";
  o << "  annual probability of loss    " << format("%.3g", r->annual_loss_probability) << " ("
    << format("%.1f", r->nines) << " nines)\n";
  if (in.pool_bytes > 0) {
    o << "  data lost per loss event      " << format_bytes(r->bytes_lost_per_event) << " ("
      << format("%.3g", r->pgs_lost_per_event) << " x a PG of "
      << format_bytes(in.pool_bytes / in.placement_groups) << ")\n";
    o << "  expected data lost per year   " << format_bytes(r->expected_bytes_lost_per_year)
      << "\n";
  } else {
    o << "  data lost per loss event      " << format("%.3g", r->pgs_lost_per_event)
      << " x a PG (give --pool-tib for bytes)\n";
  }
  o << "  at a time, on average         " << format("%.3g", r->mean_failed_drives)
    << " drives failed, " << format("%.3g", r->mean_degraded_pgs) << " PGs degraded\n";
  o << "  (independent exponential failures and repairs; docs/models.md, \"Durability\")\n";
  std::cout << o.str();
}

}  // namespace

void register_durability_command(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<DurabilityArgs>();
  CLI::App* cmd = app.add_subcommand(
      "durability",
      "Mean time to data loss, annual loss probability and data lost per year of a pool");
  cmd->add_option("--drives", args->drives, "drives (OSDs) the pool spreads over")->required();
  cmd->add_option("--replicas", args->replicas, "replicated pool: copies of each object");
  cmd->add_option("--ec", args->ec, "erasure-coded pool: K+M (e.g. 8+3)")->type_name("K+M");
  cmd->add_option("--pgs", args->pgs,
                  "placement groups (default: the power of two nearest 100 x drives / (K+M), "
                  "as Ceph's autoscaler)");
  cmd->add_option("--afr", args->afr, "annual failure rate of a drive (0.01 = 1%)")->required();
  cmd->add_option("--recovery-hours", args->recovery_hours,
                  "hours to re-protect a failed drive's data once recovery starts")
      ->required();
  cmd->add_option("--detect-hours", args->detect_hours,
                  "hours before recovery starts (default 0.167: Ceph's 600 s down-out interval)");
  cmd->add_option("--pool-tib", args->pool_tib, "user data in the pool, TiB (for bytes lost)");
  cmd->add_option("--repair", args->repair, "parallel (default) or serial repair")
      ->check(CLI::IsMember({"parallel", "serial"}));
  cmd->add_flag("--json", args->json, "print the figures as JSON");
  cmd->callback([args, &code] { run_durability(*args, code); });
}

}  // namespace granary::cli

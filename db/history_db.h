// RunHistoryDb: the runs recorded in the Granary database (database.h), table `runs`: when a
// run started (UTC, ISO-8601), the scenario (name, path, SHA-256, seed, its JSON text), the
// granary that ran it, how it ended, its wall time, key figures taken from the report, and the
// report itself (JSON text, empty when the run produced none).
//
// Thread-safety: one connection (see Database); use an instance from one thread at a time.
// Other processes may record into the same file at once (WAL, busy timeout).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace granary::db {

enum class RunStatus { kPassed, kFailed, kError, kCancelled };
// "passed" (the report came, every expectation passed), "failed" (an expectation failed),
// "error" (the run stopped with an error), "cancelled".
const char* run_status_name(RunStatus status);
Result<RunStatus> parse_run_status(const std::string& text);

struct RunRecord {
  int64_t id = 0;          // assigned by record()
  std::string started_at;  // "2025-01-31T12:00:00Z"
  std::string scenario_name, scenario_path, scenario_sha256;
  std::string seed;  // decimal (seeds are unsigned 64-bit)
  std::string granary_version, granary_build;
  RunStatus status = RunStatus::kPassed;
  double wall_s = 0;
  // Key figures from the report's summary; empty when the workload has none.
  std::optional<double> accelerator_utilization_mean;  // summary.accelerator_utilization.mean
  std::optional<double> read_gibps_epoch;              // summary.read_gibps_epoch
  std::optional<double> read_gibps_steady;             // summary.read_gibps_steady
  std::optional<double> write_gibps;                   // summary.write_gibps (checkpoint)
  std::optional<double> iops;                          // summary.iops (block, boot_storm)
  std::optional<double> expectations_passed, expectations_total;
  std::string message;  // the error for status error; empty otherwise
  std::string scenario_json;
  std::string report_json;  // as granary wrote it; empty without a report
};

// A record from a report (scenario.*, run.granary.*, summary.*, expectations[]): the status is
// passed or failed from the expectations. started_at is left for the caller (now by default).
RunRecord record_from_report(const nlohmann::json& report, std::string scenario_json,
                             double wall_s);

struct ListOptions {
  // Keeps runs whose scenario name, path or SHA-256 contains the text, or whose scenario JSON
  // does (case-insensitive for ASCII letters, as SQLite's LIKE); empty: every run.
  std::string search;
  int limit = 1000;
};

class RunHistoryDb {
 public:
  static Result<RunHistoryDb> open(const std::string& path, OpenOptions options = {});

  const std::string& path() const { return db_.path(); }

  // Stores a run (started_at now when empty) and returns its id.
  Result<int64_t> record(const RunRecord& run);
  // Newest first (by id). The scenario and report texts are left empty: get() has them.
  Result<std::vector<RunRecord>> list(const ListOptions& options = {});
  // NotFound "PATH: no run 12 in the history".
  Result<RunRecord> get(int64_t id);
  Status remove(int64_t id);

 private:
  explicit RunHistoryDb(Database db) : db_(std::move(db)) {}
  Database db_;
};

}  // namespace granary::db

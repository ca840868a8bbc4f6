#include "db/history_db.h"

namespace granary::db {

namespace {

constexpr const char* kColumns =
    "id, started_at, scenario_name, scenario_path, scenario_sha256, seed, granary_version, "
    "granary_build, status, wall_s, accelerator_utilization_mean, read_gibps_epoch, "
    "read_gibps_steady, write_gibps, iops, expectations_passed, expectations_total, message";

std::optional<double> number_at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object() || !at->contains(k)) return std::nullopt;
    at = &(*at)[k];
  }
  if (!at->is_number()) return std::nullopt;
  return at->get<double>();
}

std::string text_at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object() || !at->contains(k)) return "";
    at = &(*at)[k];
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_number()) return at->dump();
  return "";
}

Result<RunRecord> read_row(const std::string& path, const Statement& st) {
  RunRecord r;
  r.id = st.int64(0);
  r.started_at = st.text(1);
  r.scenario_name = st.text(2);
  r.scenario_path = st.text(3);
  r.scenario_sha256 = st.text(4);
  r.seed = st.text(5);
  r.granary_version = st.text(6);
  r.granary_build = st.text(7);
  auto status = parse_run_status(st.text(8));
  if (!status.ok())
    return Status::corruption(path + ": run " + std::to_string(r.id) + ": " +
                              status.status().message());
  r.status = *status;
  r.wall_s = st.real(9);
  r.accelerator_utilization_mean = st.optional_real(10);
  r.read_gibps_epoch = st.optional_real(11);
  r.read_gibps_steady = st.optional_real(12);
  r.write_gibps = st.optional_real(13);
  r.iops = st.optional_real(14);
  r.expectations_passed = st.optional_real(15);
  r.expectations_total = st.optional_real(16);
  r.message = st.text(17);
  return r;
}

}  // namespace

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::kPassed:
      return "passed";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kError:
      return "error";
    case RunStatus::kCancelled:
      return "cancelled";
  }
  return "?";
}

Result<RunStatus> parse_run_status(const std::string& text) {
  for (RunStatus s :
       {RunStatus::kPassed, RunStatus::kFailed, RunStatus::kError, RunStatus::kCancelled}) {
    if (text == run_status_name(s)) return s;
  }
  return Status::invalid_argument("status: expected passed, failed, error or cancelled, found '" +
                                  text + "'");
}

RunRecord record_from_report(const nlohmann::json& report, std::string scenario_json,
                             double wall_s) {
  RunRecord r;
  r.scenario_name = text_at(report, {"scenario", "name"});
  r.scenario_path = text_at(report, {"scenario", "source"});
  r.scenario_sha256 = text_at(report, {"scenario", "sha256"});
  r.seed = text_at(report, {"scenario", "seed"});
  r.granary_version = text_at(report, {"run", "granary", "version"});
  r.granary_build = text_at(report, {"run", "granary", "build"});
  r.wall_s = wall_s;
  r.accelerator_utilization_mean =
      number_at(report, {"summary", "accelerator_utilization", "mean"});
  r.read_gibps_epoch = number_at(report, {"summary", "read_gibps_epoch"});
  r.read_gibps_steady = number_at(report, {"summary", "read_gibps_steady"});
  r.write_gibps = number_at(report, {"summary", "write_gibps"});
  r.iops = number_at(report, {"summary", "iops"});
  r.status = RunStatus::kPassed;
  if (report.contains("expectations") && report["expectations"].is_array()) {
    int passed = 0, total = 0;
    for (const nlohmann::json& e : report["expectations"]) {
      ++total;
      if (e.is_object() && e.value("passed", false)) ++passed;
    }
    r.expectations_passed = passed;
    r.expectations_total = total;
    if (passed < total) r.status = RunStatus::kFailed;
  }
  r.scenario_json = std::move(scenario_json);
  r.report_json = report.dump(2);
  return r;
}

Result<RunHistoryDb> RunHistoryDb::open(const std::string& path, OpenOptions options) {
  auto db = Database::open(path, options);
  if (!db.ok()) return db.status();
  return RunHistoryDb(std::move(db).value());
}

Result<int64_t> RunHistoryDb::record(const RunRecord& run) {
  auto st = db_.prepare(
      "INSERT INTO runs (started_at, scenario_name, scenario_path, scenario_sha256, seed, "
      "granary_version, granary_build, status, wall_s, accelerator_utilization_mean, "
      "read_gibps_epoch, read_gibps_steady, write_gibps, iops, expectations_passed, "
      "expectations_total, message, scenario_json, report_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
      "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)");
  if (!st.ok()) return st.status();
  st->bind(1, run.started_at.empty() ? utc_now_iso8601() : run.started_at);
  st->bind(2, run.scenario_name).bind(3, run.scenario_path).bind(4, run.scenario_sha256);
  st->bind(5, run.seed).bind(6, run.granary_version).bind(7, run.granary_build);
  st->bind(8, std::string(run_status_name(run.status))).bind(9, run.wall_s);
  st->bind(10, run.accelerator_utilization_mean).bind(11, run.read_gibps_epoch);
  st->bind(12, run.read_gibps_steady).bind(13, run.write_gibps).bind(14, run.iops);
  st->bind(15, run.expectations_passed).bind(16, run.expectations_total);
  st->bind(17, run.message).bind(18, run.scenario_json).bind(19, run.report_json);
  if (Status s = st->run(); !s.ok()) return s;
  return db_.last_insert_rowid();
}

Result<std::vector<RunRecord>> RunHistoryDb::list(const ListOptions& options) {
  const std::string sql = std::string("SELECT ") + kColumns +
                          " FROM runs WHERE ?1 = '' OR scenario_name LIKE ?2 ESCAPE '\\' OR "
                          "scenario_path LIKE ?2 ESCAPE '\\' OR scenario_sha256 LIKE ?2 "
                          "ESCAPE '\\' OR scenario_json LIKE ?2 ESCAPE '\\' "
                          "ORDER BY id DESC LIMIT ?3";
  auto st = db_.prepare(sql.c_str());
  if (!st.ok()) return st.status();
  std::string pattern = "%";
  for (char c : options.search) {
    if (c == '%' || c == '_' || c == '\\') pattern += '\\';
    pattern += c;
  }
  pattern += '%';
  st->bind(1, options.search).bind(2, pattern).bind(3, int64_t{options.limit});
  std::vector<RunRecord> runs;
  while (true) {
    auto more = st->step();
    if (!more.ok()) return more.status();
    if (!*more) break;
    auto r = read_row(path(), *st);
    if (!r.ok()) return r.status();
    runs.push_back(std::move(r).value());
  }
  return runs;
}

Result<RunRecord> RunHistoryDb::get(int64_t id) {
  const std::string sql =
      std::string("SELECT ") + kColumns + ", scenario_json, report_json FROM runs WHERE id = ?1";
  auto st = db_.prepare(sql.c_str());
  if (!st.ok()) return st.status();
  st->bind(1, id);
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!*row)
    return Status::not_found(path() + ": no run " + std::to_string(id) + " in the history");
  auto r = read_row(path(), *st);
  if (!r.ok()) return r.status();
  r->scenario_json = st->text(18);
  r->report_json = st->text(19);
  return r;
}

Status RunHistoryDb::remove(int64_t id) {
  auto st = db_.prepare("DELETE FROM runs WHERE id = ?1");
  if (!st.ok()) return st.status();
  st->bind(1, id);
  if (Status s = st->run(); !s.ok()) return s;
  if (db_.changes() == 0) {
    return Status::not_found(path() + ": no run " + std::to_string(id) + " in the history");
  }
  return Status();
}

}  // namespace granary::db

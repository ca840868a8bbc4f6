// The database options of granary run and granary validate (docs/history-and-catalog.md):
// --catalog-db PATH resolves profile names the built-in catalog lacks from a hardware catalog
// database ($GRANARY_DB when the flag is absent and the variable is set); --history [PATH]
// records a run in the run history (PATH: the default database, db/database.h).
// Thread-safety: called from the command's thread only.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "db/history_db.h"
#include "models/catalog.h"

namespace granary::cli {

void add_catalog_db_option(CLI::App& cmd, std::string& path);
// The catalog to parse scenarios with: the built-in one, plus the database's profiles when
// --catalog-db names one (which must exist: NotFound otherwise) or $GRANARY_DB is set (a file
// that does not exist yet adds no profiles, and the unknown-name message says so).
Result<models::Catalog> load_catalog(const std::string& catalog_db_flag);

struct HistoryArgs {
  CLI::Option* option = nullptr;  // --history [PATH]
  std::string path;
  bool requested() const { return option && option->count() > 0; }
};
void add_history_option(CLI::App& cmd, HistoryArgs& args);
// The run history database when --history was given (created when missing), else nullopt.
Result<std::optional<db::RunHistoryDb>> open_history(const HistoryArgs& args);

// The database a history or catalog command works on: --db PATH, else the default.
Result<std::string> database_path(const std::string& db_flag);

}  // namespace granary::cli

namespace granary::cli {

// Records a finished run: from its report (status passed or failed by its expectations), or,
// without one, as an error with `error` as the message. Prints "granary: recorded run N in
// PATH" on stderr.
struct FinishedRun {
  std::string scenario_path;
  std::string scenario_name, scenario_sha256;
  uint64_t seed = 0;
  double wall_s = 0;
  const nlohmann::json* report = nullptr;  // null: the run stopped with `error`
  std::string error;
};
Status record_run(db::RunHistoryDb& history, const FinishedRun& run);

}  // namespace granary::cli

#include "cli/db_options.h"

#include <cstdlib>
#include <filesystem>

#include "db/catalog_db.h"

namespace granary::cli {

void add_catalog_db_option(CLI::App& cmd, std::string& path) {
  cmd.add_option("--catalog-db", path,
                 "resolve profile names the built-in catalog lacks from this hardware catalog "
                 "database (default: $GRANARY_DB when set)")
      ->type_name("PATH");
}

Result<models::Catalog> load_catalog(const std::string& catalog_db_flag) {
  models::Catalog catalog;
  std::string path = catalog_db_flag;
  if (path.empty()) {
    const char* env = std::getenv("GRANARY_DB");
    if (!env || !*env) return catalog;
    path = env;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      models::ExtraProfiles none;
      none.source = "catalog database $GRANARY_DB=" + path + " (no such file)";
      catalog.add(std::move(none));
      return catalog;
    }
  }
  auto db = db::HardwareCatalogDb::open(path, {.create_if_missing = false});
  if (!db.ok()) {
    return Status(db.status().code() == Status::Code::kNotFound
                      ? Status::not_found("--catalog-db: " + db.status().message())
                      : db.status());
  }
  auto extra = db->extra_profiles();
  if (!extra.ok()) return extra.status();
  catalog.add(std::move(extra).value());
  return catalog;
}

void add_history_option(CLI::App& cmd, HistoryArgs& args) {
  args.option = cmd.add_option("--history", args.path,
                               "record the run in the run history database (default: "
                               "$GRANARY_DB, else $XDG_DATA_HOME/granary/granary.sqlite, else "
                               "~/.local/share/granary/granary.sqlite); created when missing")
                    ->expected(0, 1)
                    ->type_name("[PATH]");
}

Result<std::optional<db::RunHistoryDb>> open_history(const HistoryArgs& args) {
  if (!args.requested()) return std::optional<db::RunHistoryDb>();
  auto path = database_path(args.path);
  if (!path.ok()) return Status::not_found("--history: " + path.status().message());
  auto db = db::RunHistoryDb::open(*path);
  if (!db.ok()) return db.status();
  return std::optional<db::RunHistoryDb>(std::move(db).value());
}

Result<std::string> database_path(const std::string& db_flag) {
  if (!db_flag.empty()) return db_flag;
  return db::default_database_path();
}

}  // namespace granary::cli

#include <fstream>
#include <iostream>
#include <sstream>

#include "granary/version.h"

namespace granary::cli {

Status record_run(db::RunHistoryDb& history, const FinishedRun& run) {
  std::ifstream in(run.scenario_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  db::RunRecord r;
  if (run.report) {
    r = db::record_from_report(*run.report, text.str(), run.wall_s);
  } else {
    r.scenario_name = run.scenario_name;
    r.scenario_path = run.scenario_path;
    r.scenario_sha256 = run.scenario_sha256;
    r.seed = std::to_string(run.seed);
    r.granary_version = GRANARY_VERSION;
    r.granary_build = GRANARY_BUILD;
    r.status = db::RunStatus::kError;
    r.wall_s = run.wall_s;
    r.message = run.error;
    r.scenario_json = text.str();
  }
  auto id = history.record(r);
  if (!id.ok()) return id.status();
  std::cerr << "granary: recorded run " << *id << " in " << history.path() << "\n";
  return Status();
}

}  // namespace granary::cli

// granary history (list, show, delete): the runs recorded in the Granary database (db/,
// docs/history-and-catalog.md). Every database error is one line naming the file (exit 2).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/db_options.h"
#include "db/catalog_db.h"
#include "db/history_db.h"

namespace granary::cli {

namespace {

std::string fixed(std::optional<double> v, int digits) {
  if (!v) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, *v);
  return b;
}

struct HistoryCommandArgs {
  std::string db;
  std::string search;
  int64_t id = 0;
  bool report = false;
  int limit = 50;
};

Result<db::RunHistoryDb> open_existing_history(const std::string& flag) {
  auto path = database_path(flag);
  if (!path.ok()) return path.status();
  return db::RunHistoryDb::open(*path, {.create_if_missing = false});
}

void history_list(const HistoryCommandArgs& a, ExitCode& code) {
  auto h = open_existing_history(a.db);
  if (!h.ok()) return fail_input(code, h.status());
  auto runs = h->list({.search = a.search, .limit = a.limit});
  if (!runs.ok()) return fail_input(code, runs.status());
  std::printf("%-5s %-20s %-9s %-36s %6s %9s %8s  %s\n", "id", "started_at (UTC)", "status",
              "scenario", "AU", "read_GiBps", "wall_s", "sha256");
  for (const db::RunRecord& r : *runs) {
    std::printf("%-5lld %-20s %-9s %-36s %6s %9s %8s  %s\n", static_cast<long long>(r.id),
                r.started_at.c_str(), db::run_status_name(r.status), r.scenario_name.c_str(),
                fixed(r.accelerator_utilization_mean, 3).c_str(),
                fixed(r.read_gibps_epoch ? r.read_gibps_epoch : r.write_gibps, 1).c_str(),
                fixed(r.wall_s, 2).c_str(), r.scenario_sha256.c_str());
  }
}

void history_show(const HistoryCommandArgs& a, ExitCode& code) {
  auto h = open_existing_history(a.db);
  if (!h.ok()) return fail_input(code, h.status());
  auto r = h->get(a.id);
  if (!r.ok()) return fail_input(code, r.status());
  if (a.report) {
    if (r->report_json.empty()) {
      return fail_input(code, h->path() + ": run " + std::to_string(a.id) +
                                  " has no report (status " + db::run_status_name(r->status) + ")");
    }
    std::cout << r->report_json << "\n";
    return;
  }
  std::cout << "id:               " << r->id << "\n"
            << "started_at:       " << r->started_at << "\n"
            << "status:           " << db::run_status_name(r->status) << "\n"
            << "scenario:         " << r->scenario_name << " (" << r->scenario_path << ")\n"
            << "scenario.sha256:  " << r->scenario_sha256 << "\n"
            << "seed:             " << r->seed << "\n"
            << "granary:          " << r->granary_version << " (" << r->granary_build << ")\n"
            << "wall_s:           " << fixed(r->wall_s, 2) << "\n"
            << "AU mean:          " << fixed(r->accelerator_utilization_mean, 3) << "\n"
            << "read_gibps_epoch: " << fixed(r->read_gibps_epoch, 2) << "\n"
            << "read_gibps_steady:"
            << " " << fixed(r->read_gibps_steady, 2) << "\n"
            << "write_gibps:      " << fixed(r->write_gibps, 2) << "\n"
            << "iops:             " << fixed(r->iops, 0) << "\n"
            << "expectations:     " << fixed(r->expectations_passed, 0) << " of "
            << fixed(r->expectations_total, 0) << " passed\n";
  if (!r->message.empty()) std::cout << "message:          " << r->message << "\n";
}

void history_delete(const HistoryCommandArgs& a, ExitCode& code) {
  auto h = open_existing_history(a.db);
  if (!h.ok()) return fail_input(code, h.status());
  if (Status s = h->remove(a.id); !s.ok()) return fail_input(code, s);
  std::cout << "deleted run " << a.id << " from " << h->path() << "\n";
}

void add_db_flag(CLI::App* cmd, std::string& db) {
  cmd->add_option("--db", db,
                  "the database file (default: $GRANARY_DB, else "
                  "$XDG_DATA_HOME/granary/granary.sqlite, else "
                  "~/.local/share/granary/granary.sqlite)")
      ->type_name("PATH");
}

}  // namespace

void register_history_commands(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<HistoryCommandArgs>();
  CLI::App* history =
      app.add_subcommand("history", "The runs recorded with granary run --history and the GUI");
  history->require_subcommand(1);
  CLI::App* list = history->add_subcommand("list", "Recorded runs, newest first");
  list->add_option("--search", args->search,
                   "keep runs whose scenario name, path, SHA-256 or JSON text contains TEXT");
  list->add_option("--limit", args->limit, "at most this many runs (default 50)")
      ->check(CLI::Range(1, 1000000));
  add_db_flag(list, args->db);
  list->callback([args, &code] { history_list(*args, code); });
  CLI::App* show = history->add_subcommand("show", "One run's record, or its report (--report)");
  show->add_option("id", args->id, "the run's id (granary history list)")->required();
  show->add_flag("--report", args->report, "print the stored report (JSON) as granary wrote it");
  add_db_flag(show, args->db);
  show->callback([args, &code] { history_show(*args, code); });
  CLI::App* del = history->add_subcommand("delete", "Delete a run from the history");
  del->add_option("id", args->id, "the run's id")->required();
  add_db_flag(del, args->db);
  del->callback([args, &code] { history_delete(*args, code); });
}

}  // namespace granary::cli

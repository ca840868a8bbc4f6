// One Granary SQLite file, shared by the hardware catalog (catalog_db.h) and the run history
// (history_db.h): where it lives by default, opening it (WAL journal, a busy timeout, foreign
// keys), creating the schema or checking the one found, and prepared statements with bound
// parameters (no SQL is ever built from user text).
//
// The schema is versioned in the table `schema_version` (component 'schema'). Opening a file
// of an older version migrates it; a newer version (written by a newer Granary) is refused with
// a message naming both versions, and so is a file that is not an SQLite database.
//
// Thread-safety: a Database is one SQLite connection; use it from one thread at a time. Several
// connections, in this process or others (granary run --history beside granary-gui), may use
// the same file at once: WAL lets readers run beside a writer, and a writer waits up to
// kBusyTimeoutMs for another.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace granary::db {

// The schema version this build writes and reads.
inline constexpr int kSchemaVersion = 2;
inline constexpr int kBusyTimeoutMs = 5000;

// The default database file: $GRANARY_DB when set and not empty, else
// $XDG_DATA_HOME/granary/granary.sqlite, else $HOME/.local/share/granary/granary.sqlite.
// NotFound when none of the three variables is set.
Result<std::string> default_database_path();

struct OpenOptions {
  // Create the file (and its directory) when it does not exist; otherwise a missing file is
  // NotFound ("PATH: no such database file").
  bool create_if_missing = true;
};

// A prepared statement. bind() indices start at 1 as in SQLite; column() indices at 0.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, std::optional<double> value);  // NULL when empty
  Statement& bind_null(int index);
  // Advances: true with a row, false when done; an error names the database file.
  Result<bool> step();
  // Runs a statement that returns no rows.
  Status run();

  bool is_null(int col) const;
  int64_t int64(int col) const;
  double real(int col) const;
  std::optional<double> optional_real(int col) const;
  std::string text(int col) const;

 private:
  friend class Database;
  Statement(sqlite3_stmt* stmt, std::string path) : stmt_(stmt), path_(std::move(path)) {}
  sqlite3_stmt* stmt_;
  std::string path_;
};

class Database {
 public:
  // Opens (or creates) the file and brings its schema to kSchemaVersion. Errors:
  // "PATH: no such database file", "PATH: not a Granary database (file is not a database)",
  // "PATH: schema version 3 is newer than this granary's (1): use a newer granary".
  static Result<Database> open(const std::string& path, OpenOptions options = {});

  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;
  ~Database();

  const std::string& path() const { return path_; }
  // Runs SQL with no parameters (schema statements, BEGIN/COMMIT).
  Status exec(const char* sql);
  Result<Statement> prepare(const char* sql);
  // The schema version stored in the file (kSchemaVersion once open() succeeded).
  Result<int> schema_version();
  int64_t last_insert_rowid() const;
  int changes() const;
  // "PATH: WHAT: SQLite's message".
  Status error(const std::string& what) const;

 private:
  Database(sqlite3* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  Status migrate();
  sqlite3* handle_;
  std::string path_;
};

// Runs `body` inside BEGIN IMMEDIATE ... COMMIT (ROLLBACK when it fails).
template <typename F>
Status in_transaction(Database& db, F body) {
  if (Status s = db.exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  Status s = body();
  if (!s.ok()) {
    (void)db.exec("ROLLBACK");
    return s;
  }
  return db.exec("COMMIT");
}

// The current time in UTC, ISO-8601 to the second: "2025-01-31T12:00:00Z".
std::string utc_now_iso8601();

}  // namespace granary::db

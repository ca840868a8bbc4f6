#include "db/database.h"

#include <sqlite3.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "db/schema.h"

namespace granary::db {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

Result<std::string> default_database_path() {
  if (std::string p = env("GRANARY_DB"); !p.empty()) return p;
  if (std::string x = env("XDG_DATA_HOME"); !x.empty()) return x + "/granary/granary.sqlite";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.local/share/granary/granary.sqlite";
  return Status::not_found(
      "no database path: set GRANARY_DB, XDG_DATA_HOME or HOME, or name the file (--db)");
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

// ---- Statement

Statement::Statement(Statement&& other) noexcept
    : stmt_(other.stmt_), path_(std::move(other.path_)) {
  other.stmt_ = nullptr;
}
Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}
Statement& Statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
Statement& Statement::bind(int index, const std::string& value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}
Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}
Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* h = sqlite3_db_handle(stmt_);
  return Status::io_error(path_ + ": " + sqlite3_errmsg(h));
}
Status Statement::run() {
  Result<bool> r = step();
  return r.ok() ? Status() : r.status();
}
bool Statement::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
int64_t Statement::int64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}
double Statement::real(int col) const {
  return sqlite3_column_double(stmt_, col);
}
std::optional<double> Statement::optional_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}
std::string Statement::text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(n)) : std::string();
}

// ---- Database

Database::Database(Database&& other) noexcept
    : handle_(other.handle_), path_(std::move(other.path_)) {
  other.handle_ = nullptr;
}
Database::~Database() {
  if (handle_) sqlite3_close_v2(handle_);
}

Status Database::error(const std::string& what) const {
  return Status::io_error(path_ + ": " + what + ": " + sqlite3_errmsg(handle_));
}

Status Database::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(handle_, sql, nullptr, nullptr, &message) == SQLITE_OK) return Status();
  std::string m = message ? message : "unknown error";
  sqlite3_free(message);
  return Status::io_error(path_ + ": " + m);
}

Result<Statement> Database::prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(handle_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return error("cannot prepare a statement");
  }
  return Statement(stmt, path_);
}

int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(handle_);
}
int Database::changes() const {
  return sqlite3_changes(handle_);
}

Result<int> Database::schema_version() {
  auto st = prepare("SELECT version FROM schema_version WHERE component = 'schema'");
  if (!st.ok()) return st.status();
  auto row = st->step();
  if (!row.ok()) return row.status();
  if (!*row) return 0;
  return static_cast<int>(st->int64(0));
}

Status Database::migrate() {
  // An empty file, or one of this schema: the statements are all IF NOT EXISTS.
  return in_transaction(*this, [&]() -> Status {
    // Probing first: a file that is not a database fails here with SQLITE_NOTADB.
    auto tables = prepare(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'");
    if (!tables.ok()) return tables.status();
    if (auto r = tables->step(); !r.ok()) return r.status();
    if (tables->int64(0) == 1) {
      Result<int> v = schema_version();
      if (!v.ok()) return v.status();
      if (*v > kSchemaVersion) {
        return Status::not_supported(
            path_ + ": schema version " + std::to_string(*v) + " is newer than this granary's (" +
            std::to_string(kSchemaVersion) + "): use the granary that wrote it, or a newer one");
      }
      // Older versions: version 1 lacks the tables servers and switches, which the statements
      // below (all IF NOT EXISTS) add.
    }
    if (Status s = exec(kSchema); !s.ok()) return s;
    auto set = prepare(
        "INSERT INTO schema_version (component, version) VALUES ('schema', ?1) "
        "ON CONFLICT (component) DO UPDATE SET version = ?1");
    if (!set.ok()) return set.status();
    set->bind(1, int64_t{kSchemaVersion});
    return set->run();
  });
}

Result<Database> Database::open(const std::string& path, OpenOptions options) {
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (!exists && !options.create_if_missing) {
    return Status::not_found(path + ": no such database file");
  }
  if (exists && fs::is_directory(path, ec)) {
    return Status::invalid_argument(path + ": expected a database file, found a directory");
  }
  if (!exists) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) return Status::io_error(path + ": cannot create its directory: " + ec.message());
  }
  sqlite3* h = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &h, flags, nullptr);
  Database db(h, path);
  if (rc != SQLITE_OK) {
    return Status::io_error(
        path + ": cannot open the database: " + (h ? sqlite3_errmsg(h) : "out of memory"));
  }
  sqlite3_busy_timeout(h, kBusyTimeoutMs);
  sqlite3_extended_result_codes(h, 1);
  // journal_mode answers with a row; exec ignores it. A non-database fails in migrate() (or
  // here), both with SQLITE_NOTADB.
  Status s = db.exec("PRAGMA journal_mode = WAL");
  if (s.ok()) s = db.exec("PRAGMA foreign_keys = ON");
  if (s.ok()) s = db.migrate();
  if (!s.ok()) {
    if (sqlite3_errcode(h) == SQLITE_NOTADB ||
        s.message().find("not a database") != std::string::npos) {
      return Status::corruption(path +
                                ": expected a Granary SQLite database, found a file SQLite "
                                "cannot read (file is not a database)");
    }
    return s;
  }
  return db;
}

}  // namespace granary::db

#include "db/catalog_db.h"

namespace granary::db {

namespace {

constexpr const char* kBuiltInSource =
    "built-in catalog (models/catalog.cc gives the source of every figure)";

const char* kind_text(models::DriveKind k) {
  return std::string_view(models::drive_kind_name(k)).data();
}

Result<models::DriveKind> parse_kind(const std::string& path, const std::string& name,
                                     const std::string& text) {
  for (models::DriveKind k :
       {models::DriveKind::kNvme, models::DriveKind::kSataSsd, models::DriveKind::kHdd}) {
    if (models::drive_kind_name(k) == text) return k;
  }
  return Status::corruption(path + ": drive '" + name +
                            "': kind: expected nvme, sata-ssd or hdd, found '" + text + "'");
}

RowOrigin origin_at(const Statement& st, int col) {
  return {st.text(col), st.int64(col + 1) != 0, st.int64(col + 2) != 0};
}

constexpr const char* kDriveColumns =
    "name, kind, capacity_tb, read_gbytes_per_s, write_gbytes_per_s, read_kiops, write_kiops, "
    "read_latency_us, write_latency_us, queue_depth, price_usd, source, builtin, user_edited";
constexpr const char* kNicColumns =
    "name, gbps, ports, latency_us, price_usd, source, builtin, user_edited";
constexpr const char* kAcceleratorColumns =
    "name, unet3d_compute_s_per_step, resnet50_compute_s_per_step, "
    "cosmoflow_compute_s_per_step, price_usd, source, builtin, user_edited";

Result<CatalogRow<models::DriveProfile>> drive_at(const std::string& path, const Statement& st) {
  CatalogRow<models::DriveProfile> r;
  models::DriveProfile& d = r.profile;
  d.name = st.text(0);
  auto kind = parse_kind(path, d.name, st.text(1));
  if (!kind.ok()) return kind.status();
  d.kind = *kind;
  d.capacity_tb = st.real(2);
  d.read_gbytes_per_s = st.real(3);
  d.write_gbytes_per_s = st.real(4);
  d.read_kiops = st.real(5);
  d.write_kiops = st.real(6);
  d.read_latency_us = st.real(7);
  d.write_latency_us = st.real(8);
  d.queue_depth = static_cast<int>(st.int64(9));
  d.price_usd = st.real(10);
  r.origin = origin_at(st, 11);
  return r;
}

Result<CatalogRow<models::NicProfile>> nic_at(const std::string&, const Statement& st) {
  CatalogRow<models::NicProfile> r;
  r.profile.name = st.text(0);
  r.profile.gbps = st.real(1);
  r.profile.ports = static_cast<int>(st.int64(2));
  r.profile.latency_us = st.real(3);
  r.profile.price_usd = st.real(4);
  r.origin = origin_at(st, 5);
  return r;
}

Result<CatalogRow<models::AcceleratorProfile>> accelerator_at(const std::string&,
                                                              const Statement& st) {
  CatalogRow<models::AcceleratorProfile> r;
  r.profile.name = st.text(0);
  for (int i = 0; i < 3; ++i)
    r.profile.compute_s_per_step[kAcceleratorWorkloads[i]] = st.real(1 + i);
  r.profile.price_usd = st.real(4);
  r.origin = origin_at(st, 5);
  return r;
}

// SELECT columns FROM table [WHERE name = ?] ORDER BY builtin DESC, rowid.
template <typename Row>
Result<std::vector<Row>> select_rows(Database& db, const char* table, const char* columns,
                                     Result<Row> (*read)(const std::string&, const Statement&),
                                     const std::string* name) {
  const std::string sql = std::string("SELECT ") + columns + " FROM " + table +
                          (name ? " WHERE name = ?1" : "") + " ORDER BY builtin DESC, rowid";
  auto st = db.prepare(sql.c_str());  // table and columns are constants of this file
  if (!st.ok()) return st.status();
  if (name) st->bind(1, *name);
  std::vector<Row> rows;
  while (true) {
    auto more = st->step();
    if (!more.ok()) return more.status();
    if (!*more) break;
    auto row = read(db.path(), *st);
    if (!row.ok()) return row.status();
    rows.push_back(std::move(row).value());
  }
  return rows;
}

template <typename Row>
Result<Row> one_row(Result<std::vector<Row>> rows, const std::string& path, const char* what,
                    const std::string& name) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return Status::not_found(path + ": no " + what + " '" + name + "' in the catalog");
  }
  return std::move(rows->front());
}

// InvalidArgument when `name` is built-in (see upsert and remove in catalog_db.h).
Status refuse_builtin(const std::string& path, CatalogTable table, const char* what,
                      const std::string& name, bool deleting = false) {
  if (!is_builtin_name(table, name)) return Status();
  return Status::invalid_argument(
      path + ": " + what + " '" + name + "' is built-in: runs always use the built-in figures, " +
      (deleting ? "so deleting it would have no effect"
                : "so this edit would have no effect; save it under a new name"));
}

Status check_failed(Database& db, Status s, const char* what, const std::string& name) {
  if (s.ok()) return s;
  if (s.message().find("constraint failed") != std::string::npos) {
    return Status::invalid_argument(db.path() + ": " + what + " '" + name +
                                    "': a figure out of range (" +
                                    s.message().substr(db.path().size() + 2) + ")");
  }
  return s;
}

// Binds a drive's figures to ?1..?11 (name first).
void bind_drive(Statement& st, const models::DriveProfile& d) {
  st.bind(1, d.name).bind(2, std::string(kind_text(d.kind))).bind(3, d.capacity_tb);
  st.bind(4, d.read_gbytes_per_s).bind(5, d.write_gbytes_per_s).bind(6, d.read_kiops);
  st.bind(7, d.write_kiops).bind(8, d.read_latency_us).bind(9, d.write_latency_us);
  st.bind(10, static_cast<int64_t>(d.queue_depth)).bind(11, d.price_usd);
}
void bind_nic(Statement& st, const models::NicProfile& n) {
  st.bind(1, n.name).bind(2, n.gbps).bind(3, static_cast<int64_t>(n.ports));
  st.bind(4, n.latency_us).bind(5, n.price_usd);
}
Status bind_accelerator(Statement& st, const models::AcceleratorProfile& a,
                        const std::string& path) {
  st.bind(1, a.name);
  for (int i = 0; i < 3; ++i) {
    auto it = a.compute_s_per_step.find(kAcceleratorWorkloads[i]);
    if (it == a.compute_s_per_step.end()) {
      return Status::invalid_argument(path + ": accelerator '" + a.name +
                                      "': expected a compute time per step for " +
                                      kAcceleratorWorkloads[i] + ", found none");
    }
    st.bind(2 + i, it->second);
  }
  st.bind(5, a.price_usd);
  return Status();
}

constexpr const char* kUpsertDrive =
    "INSERT INTO drives (name, kind, capacity_tb, read_gbytes_per_s, write_gbytes_per_s, "
    "read_kiops, write_kiops, read_latency_us, write_latency_us, queue_depth, price_usd, source, "
    "builtin, user_edited) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (name) DO UPDATE SET kind = ?2, capacity_tb = ?3, read_gbytes_per_s = ?4, "
    "write_gbytes_per_s = ?5, read_kiops = ?6, write_kiops = ?7, read_latency_us = ?8, "
    "write_latency_us = ?9, queue_depth = ?10, price_usd = ?11, source = ?12";
constexpr const char* kUpsertNic =
    "INSERT INTO nics (name, gbps, ports, latency_us, price_usd, source, builtin, user_edited) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?12, ?13, ?14) ON CONFLICT (name) DO UPDATE SET gbps = ?2, "
    "ports = ?3, latency_us = ?4, price_usd = ?5, source = ?12";
constexpr const char* kUpsertAccelerator =
    "INSERT INTO accelerators (name, unet3d_compute_s_per_step, resnet50_compute_s_per_step, "
    "cosmoflow_compute_s_per_step, price_usd, source, builtin, user_edited) VALUES (?1, ?2, ?3, "
    "?4, ?5, ?12, ?13, ?14) ON CONFLICT (name) DO UPDATE SET unet3d_compute_s_per_step = ?2, "
    "resnet50_compute_s_per_step = ?3, cosmoflow_compute_s_per_step = ?4, price_usd = ?5, "
    "source = ?12";

// Runs an upsert statement: the figures bound by `bind`, then source and origin flags.
template <typename Bind>
Status run_upsert(Database& db, const char* sql, Bind bind, const std::string& source,
                  bool builtin) {
  auto st = db.prepare(sql);
  if (!st.ok()) return st.status();
  if (Status s = bind(*st); !s.ok()) return s;
  st->bind(12, source).bind(13, int64_t{builtin ? 1 : 0}).bind(14, int64_t{builtin ? 0 : 1});
  return st->run();
}

}  // namespace

const char* catalog_table_name(CatalogTable table) {
  switch (table) {
    case CatalogTable::kDrives:
      return "drives";
    case CatalogTable::kNics:
      return "nics";
    case CatalogTable::kAccelerators:
      return "accelerators";
  }
  return "?";
}

Result<CatalogTable> parse_catalog_table(const std::string& name) {
  for (CatalogTable t : {CatalogTable::kDrives, CatalogTable::kNics, CatalogTable::kAccelerators}) {
    if (name == catalog_table_name(t)) return t;
  }
  return Status::not_found("expected a catalog table (drives, nics, accelerators), found '" + name +
                           "'");
}

bool is_builtin_name(CatalogTable table, const std::string& name) {
  switch (table) {
    case CatalogTable::kDrives:
      return models::drive_profile(name).ok();
    case CatalogTable::kNics:
      return models::nic_profile(name).ok();
    case CatalogTable::kAccelerators:
      return models::accelerator_profile(name).ok();
  }
  return false;
}

Result<HardwareCatalogDb> HardwareCatalogDb::open(const std::string& path, OpenOptions options) {
  auto db = Database::open(path, options);
  if (!db.ok()) return db.status();
  HardwareCatalogDb catalog(std::move(db).value());
  if (Status s = catalog.seed(); !s.ok()) return s;
  return catalog;
}

Result<std::vector<CatalogRow<models::DriveProfile>>> HardwareCatalogDb::drives() {
  return select_rows(db_, "drives", kDriveColumns, &drive_at, nullptr);
}
Result<std::vector<CatalogRow<models::NicProfile>>> HardwareCatalogDb::nics() {
  return select_rows(db_, "nics", kNicColumns, &nic_at, nullptr);
}
Result<std::vector<CatalogRow<models::AcceleratorProfile>>> HardwareCatalogDb::accelerators() {
  return select_rows(db_, "accelerators", kAcceleratorColumns, &accelerator_at, nullptr);
}
Result<CatalogRow<models::DriveProfile>> HardwareCatalogDb::drive(const std::string& name) {
  return one_row(select_rows(db_, "drives", kDriveColumns, &drive_at, &name), path(), "drive",
                 name);
}
Result<CatalogRow<models::NicProfile>> HardwareCatalogDb::nic(const std::string& name) {
  return one_row(select_rows(db_, "nics", kNicColumns, &nic_at, &name), path(), "NIC", name);
}
Result<CatalogRow<models::AcceleratorProfile>> HardwareCatalogDb::accelerator(
    const std::string& name) {
  return one_row(select_rows(db_, "accelerators", kAcceleratorColumns, &accelerator_at, &name),
                 path(), "accelerator", name);
}

Status HardwareCatalogDb::upsert(const models::DriveProfile& d, const std::string& source) {
  auto bind = [&](Statement& st) {
    bind_drive(st, d);
    return Status();
  };
  if (Status s = refuse_builtin(path(), CatalogTable::kDrives, "drive", d.name); !s.ok()) return s;
  return check_failed(db_, run_upsert(db_, kUpsertDrive, bind, source, false), "drive", d.name);
}
Status HardwareCatalogDb::upsert(const models::NicProfile& n, const std::string& source) {
  auto bind = [&](Statement& st) {
    bind_nic(st, n);
    return Status();
  };
  if (Status s = refuse_builtin(path(), CatalogTable::kNics, "NIC", n.name); !s.ok()) return s;
  return check_failed(db_, run_upsert(db_, kUpsertNic, bind, source, false), "NIC", n.name);
}
Status HardwareCatalogDb::upsert(const models::AcceleratorProfile& a, const std::string& source) {
  auto bind = [&](Statement& st) { return bind_accelerator(st, a, path()); };
  if (Status s = refuse_builtin(path(), CatalogTable::kAccelerators, "accelerator", a.name);
      !s.ok())
    return s;
  return check_failed(db_, run_upsert(db_, kUpsertAccelerator, bind, source, false), "accelerator",
                      a.name);
}

Status HardwareCatalogDb::remove(CatalogTable table, const std::string& name) {
  static constexpr const char* kWhat[] = {"drive", "NIC", "accelerator"};
  if (Status s = refuse_builtin(path(), table, kWhat[static_cast<int>(table)], name, true);
      !s.ok()) {
    return s;
  }
  const std::string sql = std::string("DELETE FROM ") + catalog_table_name(table) +
                          " WHERE name = ?1";  // the table name is a constant
  auto st = db_.prepare(sql.c_str());
  if (!st.ok()) return st.status();
  st->bind(1, name);
  if (Status s = st->run(); !s.ok()) return s;
  if (db_.changes() == 0) {
    return Status::not_found(path() + ": no row '" + name + "' in table " +
                             catalog_table_name(table));
  }
  return Status();
}

Result<models::ExtraProfiles> HardwareCatalogDb::extra_profiles() {
  models::ExtraProfiles e;
  e.source = "catalog database " + path();
  auto d = drives();
  if (!d.ok()) return d.status();
  for (auto& r : *d) e.drives.push_back(std::move(r.profile));
  auto n = nics();
  if (!n.ok()) return n.status();
  for (auto& r : *n) e.nics.push_back(std::move(r.profile));
  auto a = accelerators();
  if (!a.ok()) return a.status();
  for (auto& r : *a) e.accelerators.push_back(std::move(r.profile));
  return e;
}

Status HardwareCatalogDb::seed() {
  auto version =
      db_.prepare("SELECT version FROM schema_version WHERE component = 'builtin_catalog'");
  if (!version.ok()) return version.status();
  auto row = version->step();
  if (!row.ok()) return row.status();
  if (*row && version->int64(0) >= kBuiltInCatalogVersion) return Status();
  return in_transaction(db_, [&]() -> Status {
    // Rows never edited are replaced by the built-in figures; edited ones stay (the INSERT
    // then finds the name taken and does nothing).
    for (const char* table : {"drives", "nics", "accelerators"}) {
      const std::string sql =
          std::string("DELETE FROM ") + table + " WHERE builtin = 1 AND user_edited = 0";
      if (Status s = db_.exec(sql.c_str()); !s.ok()) return s;
    }
    auto add = [&](const char* sql, auto bind) {
      std::string ignore = std::string(sql).substr(0, std::string(sql).find(" ON CONFLICT"));
      ignore.replace(0, 6, "INSERT OR IGNORE");
      return run_upsert(db_, ignore.c_str(), bind, kBuiltInSource, true);
    };
    for (const auto& d : models::drive_profiles()) {
      Status s = add(kUpsertDrive, [&](Statement& st) { return bind_drive(st, d), Status(); });
      if (!s.ok()) return s;
    }
    for (const auto& n : models::nic_profiles()) {
      Status s = add(kUpsertNic, [&](Statement& st) { return bind_nic(st, n), Status(); });
      if (!s.ok()) return s;
    }
    for (const auto& a : models::accelerator_profiles()) {
      Status s =
          add(kUpsertAccelerator, [&](Statement& st) { return bind_accelerator(st, a, path()); });
      if (!s.ok()) return s;
    }
    auto set = db_.prepare(
        "INSERT INTO schema_version (component, version) VALUES ('builtin_catalog', ?1) "
        "ON CONFLICT (component) DO UPDATE SET version = ?1");
    if (!set.ok()) return set.status();
    set->bind(1, int64_t{kBuiltInCatalogVersion});
    return set->run();
  });
}

}  // namespace granary::db

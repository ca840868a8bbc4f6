#include "db/catalog_db.h"

namespace granary::db {

namespace {

constexpr const char* kBuiltInSource = "models/catalog.cc gives the source of every figure";

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
constexpr const char* kServerColumns =
    "name, cpu_cores, drive_bays, nic_slots, server_gbytes_per_s, rack_units, power_watts, "
    "price_usd, source, builtin, user_edited";
constexpr const char* kSwitchColumns =
    "name, ports, port_gbps, max_split, latency_us, rack_units, power_watts, price_usd, source, "
    "builtin, user_edited";

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

int int_at(const Statement& st, int col) {
  return static_cast<int>(st.int64(col));
}

Result<CatalogRow<models::ServerProfile>> server_at(const std::string&, const Statement& st) {
  CatalogRow<models::ServerProfile> r;
  models::ServerProfile& p = r.profile;
  p.name = st.text(0);
  p.cpu_cores = int_at(st, 1);
  p.drive_bays = int_at(st, 2);
  p.nic_slots = int_at(st, 3);
  p.server_gbytes_per_s = st.real(4);
  p.rack_units = int_at(st, 5);
  p.power_watts = st.real(6);
  p.price_usd = st.real(7);
  r.origin = origin_at(st, 8);
  return r;
}

Result<CatalogRow<models::SwitchProfile>> switch_at(const std::string&, const Statement& st) {
  CatalogRow<models::SwitchProfile> r;
  models::SwitchProfile& p = r.profile;
  p.name = st.text(0);
  p.ports = int_at(st, 1);
  p.port_gbps = st.real(2);
  p.max_split = int_at(st, 3);
  p.latency_us = st.real(4);
  p.rack_units = int_at(st, 5);
  p.power_watts = st.real(6);
  p.price_usd = st.real(7);
  r.origin = origin_at(st, 8);
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
    row->profile.source = row->origin.source;  // the profile says where its figures come from
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

// Binds a profile's figures to ?1.. (name first); the path names the file in errors.
Status bind_row(Statement& st, const models::DriveProfile& d, const std::string&) {
  st.bind(1, d.name).bind(2, std::string(kind_text(d.kind))).bind(3, d.capacity_tb);
  st.bind(4, d.read_gbytes_per_s).bind(5, d.write_gbytes_per_s).bind(6, d.read_kiops);
  st.bind(7, d.write_kiops).bind(8, d.read_latency_us).bind(9, d.write_latency_us);
  st.bind(10, static_cast<int64_t>(d.queue_depth)).bind(11, d.price_usd);
  return Status();
}
Status bind_row(Statement& st, const models::NicProfile& n, const std::string&) {
  st.bind(1, n.name).bind(2, n.gbps).bind(3, static_cast<int64_t>(n.ports));
  st.bind(4, n.latency_us).bind(5, n.price_usd);
  return Status();
}
Status bind_row(Statement& st, const models::AcceleratorProfile& a, const std::string& path) {
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

Status bind_row(Statement& st, const models::ServerProfile& p, const std::string&) {
  st.bind(1, p.name).bind(2, int64_t{p.cpu_cores}).bind(3, int64_t{p.drive_bays});
  st.bind(4, int64_t{p.nic_slots}).bind(5, p.server_gbytes_per_s);
  st.bind(6, int64_t{p.rack_units}).bind(7, p.power_watts).bind(8, p.price_usd);
  return Status();
}
Status bind_row(Statement& st, const models::SwitchProfile& p, const std::string&) {
  st.bind(1, p.name).bind(2, int64_t{p.ports}).bind(3, p.port_gbps);
  st.bind(4, int64_t{p.max_split}).bind(5, p.latency_us).bind(6, int64_t{p.rack_units});
  st.bind(7, p.power_watts).bind(8, p.price_usd);
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

constexpr const char* kUpsertServer =
    "INSERT INTO servers (name, cpu_cores, drive_bays, nic_slots, server_gbytes_per_s, "
    "rack_units, power_watts, price_usd, source, builtin, user_edited) VALUES (?1, ?2, ?3, ?4, "
    "?5, ?6, ?7, ?8, ?12, ?13, ?14) ON CONFLICT (name) DO UPDATE SET cpu_cores = ?2, "
    "drive_bays = ?3, nic_slots = ?4, server_gbytes_per_s = ?5, rack_units = ?6, "
    "power_watts = ?7, price_usd = ?8, source = ?12";
constexpr const char* kUpsertSwitch =
    "INSERT INTO switches (name, ports, port_gbps, max_split, latency_us, rack_units, "
    "power_watts, price_usd, source, builtin, user_edited) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
    "?8, ?12, ?13, ?14) ON CONFLICT (name) DO UPDATE SET ports = ?2, port_gbps = ?3, "
    "max_split = ?4, latency_us = ?5, rack_units = ?6, power_watts = ?7, price_usd = ?8, "
    "source = ?12";

// Each profile's table, the word messages use for a row, and its upsert.
struct RowKind {
  CatalogTable table;
  const char* what;
  const char* upsert;
};
constexpr RowKind row_kind(const models::DriveProfile*) {
  return {CatalogTable::kDrives, "drive", kUpsertDrive};
}
constexpr RowKind row_kind(const models::NicProfile*) {
  return {CatalogTable::kNics, "NIC", kUpsertNic};
}
constexpr RowKind row_kind(const models::AcceleratorProfile*) {
  return {CatalogTable::kAccelerators, "accelerator", kUpsertAccelerator};
}
constexpr RowKind row_kind(const models::ServerProfile*) {
  return {CatalogTable::kServers, "server", kUpsertServer};
}
constexpr RowKind row_kind(const models::SwitchProfile*) {
  return {CatalogTable::kSwitches, "switch", kUpsertSwitch};
}

// Runs an upsert statement (`sql`, or its INSERT OR IGNORE part when seeding): the profile's
// figures, then source and origin flags.
template <typename Profile>
Status run_upsert(Database& db, const Profile& p, const std::string& source, bool builtin) {
  std::string sql = row_kind(&p).upsert;
  if (builtin) {
    sql = "INSERT OR IGNORE" + sql.substr(6, sql.find(" ON CONFLICT") - 6);
  }
  auto st = db.prepare(sql.c_str());
  if (!st.ok()) return st.status();
  if (Status s = bind_row(*st, p, db.path()); !s.ok()) return s;
  st->bind(12, source).bind(13, int64_t{builtin ? 1 : 0}).bind(14, int64_t{builtin ? 0 : 1});
  return st->run();
}

// Adds or replaces a row the user gives (never a built-in name).
template <typename Profile>
Status upsert_row(Database& db, const Profile& p, const std::string& source) {
  const RowKind k = row_kind(&p);
  if (Status s = refuse_builtin(db.path(), k.table, k.what, p.name); !s.ok()) return s;
  return check_failed(db, run_upsert(db, p, source, false), k.what, p.name);
}

// Adds the built-in profiles not in the table, each saying where its figures come from.
template <typename Profile>
Status seed_rows(Database& db, const std::vector<Profile>& profiles) {
  for (const Profile& p : profiles) {
    const std::string source =
        "built-in: " + (p.source.empty() ? std::string(kBuiltInSource) : p.source);
    if (Status s = run_upsert(db, p, source, true); !s.ok()) return s;
  }
  return Status();
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
    case CatalogTable::kServers:
      return "servers";
    case CatalogTable::kSwitches:
      return "switches";
  }
  return "?";
}

Result<CatalogTable> parse_catalog_table(const std::string& name) {
  for (CatalogTable t : kCatalogTables) {
    if (name == catalog_table_name(t)) return t;
  }
  return Status::not_found(
      "expected a catalog table (drives, nics, accelerators, servers, switches), found '" + name +
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
    case CatalogTable::kServers:
      return models::server_profile(name).ok();
    case CatalogTable::kSwitches:
      return models::switch_profile(name).ok();
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
Result<std::vector<CatalogRow<models::ServerProfile>>> HardwareCatalogDb::servers() {
  return select_rows(db_, "servers", kServerColumns, &server_at, nullptr);
}
Result<std::vector<CatalogRow<models::SwitchProfile>>> HardwareCatalogDb::switches() {
  return select_rows(db_, "switches", kSwitchColumns, &switch_at, nullptr);
}
Result<CatalogRow<models::ServerProfile>> HardwareCatalogDb::server(const std::string& name) {
  return one_row(select_rows(db_, "servers", kServerColumns, &server_at, &name), path(), "server",
                 name);
}
Result<CatalogRow<models::SwitchProfile>> HardwareCatalogDb::fabric_switch(
    const std::string& name) {
  return one_row(select_rows(db_, "switches", kSwitchColumns, &switch_at, &name), path(), "switch",
                 name);
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
  return upsert_row(db_, d, source);
}
Status HardwareCatalogDb::upsert(const models::NicProfile& n, const std::string& source) {
  return upsert_row(db_, n, source);
}
Status HardwareCatalogDb::upsert(const models::AcceleratorProfile& a, const std::string& source) {
  return upsert_row(db_, a, source);
}
Status HardwareCatalogDb::upsert(const models::ServerProfile& p, const std::string& source) {
  return upsert_row(db_, p, source);
}
Status HardwareCatalogDb::upsert(const models::SwitchProfile& p, const std::string& source) {
  return upsert_row(db_, p, source);
}

Status HardwareCatalogDb::remove(CatalogTable table, const std::string& name) {
  static constexpr const char* kWhat[] = {"drive", "NIC", "accelerator", "server", "switch"};
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
  auto sv = servers();
  if (!sv.ok()) return sv.status();
  for (auto& r : *sv) e.servers.push_back(std::move(r.profile));
  auto sw = switches();
  if (!sw.ok()) return sw.status();
  for (auto& r : *sw) e.switches.push_back(std::move(r.profile));
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
    for (CatalogTable t : kCatalogTables) {
      const std::string sql = std::string("DELETE FROM ") + catalog_table_name(t) +
                              " WHERE builtin = 1 AND user_edited = 0";
      if (Status s = db_.exec(sql.c_str()); !s.ok()) return s;
    }
    for (Status s :
         {seed_rows(db_, models::drive_profiles()), seed_rows(db_, models::nic_profiles()),
          seed_rows(db_, models::accelerator_profiles()), seed_rows(db_, models::server_profiles()),
          seed_rows(db_, models::switch_profiles())}) {
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

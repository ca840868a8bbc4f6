// HardwareCatalogDb: the hardware catalog in the Granary database (database.h): tables drives,
// nics, accelerators, servers and switches, one column per figure with its unit in the name, a
// free-text `source` and `price_usd`. Prices are examples (the built-in catalog's are estimates
// of 2024 reseller prices): check a vendor's quote before using them for procurement.
//
// On open, the built-in catalog (models/catalog.h) is seeded into the tables when the file's
// stored built-in catalog version (schema_version component 'builtin_catalog') is older than
// kBuiltInCatalogVersion: seeding adds the built-in rows and refreshes those the user never
// edited; a row edited after seeding (user_edited = 1, set by a trigger whatever program wrote
// it) is never overwritten. Opening again with the same version changes nothing, so a built-in
// row deleted by another program (the sqlite3 shell) stays deleted until the built-in catalog's
// version changes.
//
// Scenarios name profiles; `granary run --catalog-db` resolves a name the built-in catalog does
// not have through extra_profiles() (models::Catalog). A built-in name always resolves to the
// built-in figures, so built-in rows are read-only here: upsert() and remove() refuse a built-in
// name (an edit that changed no run), and the GUI offers "Duplicate as new name" instead.
//
// Thread-safety: one connection (see Database); use an instance from one thread at a time.
#pragma once

#include <string>
#include <vector>

#include "db/database.h"
#include "models/catalog.h"

namespace granary::db {

// Bumped whenever models/catalog.cc's hardware profiles change (2: example prices, sources,
// servers and switches).
inline constexpr int kBuiltInCatalogVersion = 2;

enum class CatalogTable { kDrives, kNics, kAccelerators, kServers, kSwitches };
inline constexpr CatalogTable kCatalogTables[] = {CatalogTable::kDrives, CatalogTable::kNics,
                                                  CatalogTable::kAccelerators,
                                                  CatalogTable::kServers, CatalogTable::kSwitches};
// "drives", "nics", "accelerators", "servers", "switches"; parse: NotFound naming the choices.
const char* catalog_table_name(CatalogTable table);
Result<CatalogTable> parse_catalog_table(const std::string& name);

// Whether `name` is a profile of the built-in catalog (models/catalog.h) for that table: runs
// always use its built-in figures, whatever the database holds under that name.
bool is_builtin_name(CatalogTable table, const std::string& name);

// How a row came to be: seeded from the built-in catalog (and whether edited since), or added.
struct RowOrigin {
  std::string source;
  bool builtin = false;
  bool user_edited = false;
};

template <typename Profile>
struct CatalogRow {
  Profile profile;
  RowOrigin origin;
};

class HardwareCatalogDb {
 public:
  // Opens the file (database.h: OpenOptions) and seeds it (see above).
  static Result<HardwareCatalogDb> open(const std::string& path, OpenOptions options = {});

  const std::string& path() const { return db_.path(); }
  Database& database() { return db_; }

  // Rows by name.
  Result<std::vector<CatalogRow<models::DriveProfile>>> drives();
  Result<std::vector<CatalogRow<models::NicProfile>>> nics();
  Result<std::vector<CatalogRow<models::AcceleratorProfile>>> accelerators();
  Result<std::vector<CatalogRow<models::ServerProfile>>> servers();
  Result<std::vector<CatalogRow<models::SwitchProfile>>> switches();
  // One row; NotFound "PATH: no drive 'x' in the catalog".
  Result<CatalogRow<models::DriveProfile>> drive(const std::string& name);
  Result<CatalogRow<models::NicProfile>> nic(const std::string& name);
  Result<CatalogRow<models::AcceleratorProfile>> accelerator(const std::string& name);
  Result<CatalogRow<models::ServerProfile>> server(const std::string& name);
  Result<CatalogRow<models::SwitchProfile>> fabric_switch(const std::string& name);

  // Adds a row or replaces the figures of the row of that name (which then counts as edited).
  // `source` says where the figures come from. Figures the models refuse (a zero bandwidth, an
  // accelerator without the three MLPerf workloads' step times, ...) give InvalidArgument, and
  // so does a built-in name (is_builtin_name): "PATH: drive 'x' is built-in: runs always use
  // the built-in figures, so this edit would have no effect; save it under a new name".
  Status upsert(const models::DriveProfile& d, const std::string& source);
  Status upsert(const models::NicProfile& n, const std::string& source);
  Status upsert(const models::AcceleratorProfile& a, const std::string& source);
  Status upsert(const models::ServerProfile& p, const std::string& source);
  Status upsert(const models::SwitchProfile& p, const std::string& source);
  // Deletes a row; NotFound when there is none of that name, InvalidArgument for a built-in
  // name ("PATH: drive 'x' is built-in: runs always use the built-in figures, so deleting it
  // would have no effect").
  Status remove(CatalogTable table, const std::string& name);

  // Every row as models profiles, for models::Catalog::add (source "catalog database PATH";
  // each profile's own `source` is its row's).
  Result<models::ExtraProfiles> extra_profiles();

  // Seeds the built-in catalog (called by open(); public for tests).
  Status seed();

 private:
  explicit HardwareCatalogDb(Database db) : db_(std::move(db)) {}
  Database db_;
};

// The workloads whose step times an accelerators row holds, in column order.
inline constexpr const char* kAcceleratorWorkloads[] = {"unet3d", "resnet50", "cosmoflow"};

}  // namespace granary::db

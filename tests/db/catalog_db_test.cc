// HardwareCatalogDb: schema, seeding from the built-in catalog (idempotent, never over a user's
// edit), upsert/delete, export into a models::Catalog, and the errors for a newer schema and a
// file that is not a database.
#include "db/catalog_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "models/catalog.h"
#include "models/scenario_json.h"
#include "tests/db/db_test_util.h"

namespace granary::db {
namespace {

models::DriveProfile lab_drive() {
  models::DriveProfile d;
  d.name = "lab-nvme-3.84tb";
  d.kind = models::DriveKind::kNvme;
  d.capacity_tb = 3.84;
  d.read_gbytes_per_s = 5.5;
  d.write_gbytes_per_s = 2.5;
  d.read_kiops = 800;
  d.write_kiops = 150;
  d.read_latency_us = 90;
  d.write_latency_us = 25;
  d.queue_depth = 64;
  d.price_usd = 450;
  return d;
}

void sql(const std::string& path, const char* statement) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, statement, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(CatalogDb, CreatesTheSchemaAndSeedsTheBuiltInCatalog) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("sub/dir/g.sqlite"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(*db->database().schema_version(), kSchemaVersion);
  auto drives = db->drives();
  ASSERT_TRUE(drives.ok());
  ASSERT_EQ(drives->size(), models::drive_profiles().size());
  auto pm9a3 = db->drive("samsung-pm9a3-7.68tb");
  ASSERT_TRUE(pm9a3.ok());
  EXPECT_DOUBLE_EQ(pm9a3->profile.read_gbytes_per_s, 6.9);
  EXPECT_EQ(pm9a3->profile.queue_depth, 128);
  EXPECT_TRUE(pm9a3->origin.builtin);
  EXPECT_FALSE(pm9a3->origin.user_edited);
  EXPECT_EQ(db->nics()->size(), models::nic_profiles().size());
  auto a100 = db->accelerator("a100");
  ASSERT_TRUE(a100.ok());
  EXPECT_DOUBLE_EQ(a100->profile.compute_s_per_step.at("unet3d"), 0.636);
}

TEST(CatalogDb, SeedingIsIdempotentAndKeepsUserEdits) {
  testing::TempDir dir;
  const std::string path = dir.path("g.sqlite");
  ASSERT_TRUE(HardwareCatalogDb::open(path).ok());
  // Built-in rows are read-only to this library and the GUI, but another program (the sqlite3
  // shell) may still edit one: the trigger marks it edited and seeding keeps it.
  sql(path,
      "UPDATE drives SET price_usd = 1234, source = 'our quote 2025-01' "
      "WHERE name = 'samsung-pm9a3-7.68tb'");
  sql(path, "UPDATE nics SET price_usd = 999 WHERE name = 'connectx7-400g'");
  // A newer built-in catalog: seeding runs again.
  sql(path, "UPDATE schema_version SET version = 0 WHERE component = 'builtin_catalog'");
  sql(path, "UPDATE drives SET read_kiops = 1 WHERE name = 'kioxia-cm7r-7.68tb'");
  sql(path, "UPDATE drives SET user_edited = 0 WHERE name = 'kioxia-cm7r-7.68tb'");
  for (int i = 0; i < 2; ++i) {
    auto db = HardwareCatalogDb::open(path);
    ASSERT_TRUE(db.ok()) << db.status().message();
    EXPECT_EQ(db->drives()->size(), models::drive_profiles().size());
    auto pm = db->drive("samsung-pm9a3-7.68tb");
    EXPECT_DOUBLE_EQ(pm->profile.price_usd, 1234);
    EXPECT_TRUE(pm->origin.user_edited);
    EXPECT_EQ(pm->origin.source, "our quote 2025-01");
    EXPECT_DOUBLE_EQ(db->nic("connectx7-400g")->profile.price_usd, 999);
    // A row not edited by the user is refreshed from the built-in catalog.
    EXPECT_DOUBLE_EQ(db->drive("kioxia-cm7r-7.68tb")->profile.read_kiops, 2700);
  }
}

TEST(CatalogDb, UpsertAddsReplacesAndDeleteRemoves) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->upsert(lab_drive(), "lab measurement").ok());
  auto got = db->drive("lab-nvme-3.84tb");
  ASSERT_TRUE(got.ok());
  EXPECT_DOUBLE_EQ(got->profile.read_gbytes_per_s, 5.5);
  EXPECT_FALSE(got->origin.builtin);
  models::DriveProfile faster = lab_drive();
  faster.read_gbytes_per_s = 6.5;
  ASSERT_TRUE(db->upsert(faster, "lab measurement 2").ok());
  EXPECT_DOUBLE_EQ(db->drive("lab-nvme-3.84tb")->profile.read_gbytes_per_s, 6.5);
  EXPECT_EQ(db->drives()->size(), models::drive_profiles().size() + 1);
  ASSERT_TRUE(db->remove(CatalogTable::kDrives, "lab-nvme-3.84tb").ok());
  EXPECT_EQ(db->drive("lab-nvme-3.84tb").status().code(), Status::Code::kNotFound);
  const Status again = db->remove(CatalogTable::kDrives, "lab-nvme-3.84tb");
  EXPECT_EQ(again.code(), Status::Code::kNotFound);
  EXPECT_NE(again.message().find("no row 'lab-nvme-3.84tb' in table drives"), std::string::npos);
}

// An edit of a built-in row would change no run (built-in names resolve to the built-in
// figures): upsert refuses it, names the row, says what to do, and leaves the row as it was.
TEST(CatalogDb, RefusesToEditABuiltInRow) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  models::DriveProfile pm = db->drive("samsung-pm9a3-7.68tb")->profile;
  pm.read_gbytes_per_s = 1;
  const Status d = db->upsert(pm, "edit");
  EXPECT_EQ(d.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(d.message(), db->path() +
                             ": drive 'samsung-pm9a3-7.68tb' is built-in: runs always use the "
                             "built-in figures, so this edit would have no effect; save it under "
                             "a new name");
  auto kept = db->drive("samsung-pm9a3-7.68tb");
  EXPECT_DOUBLE_EQ(kept->profile.read_gbytes_per_s, 6.9);
  EXPECT_FALSE(kept->origin.user_edited);
  models::NicProfile nic = db->nic("connectx7-400g")->profile;
  nic.price_usd = 5;
  const Status n = db->upsert(nic, "edit");
  EXPECT_NE(n.message().find("NIC 'connectx7-400g' is built-in"), std::string::npos) << n.message();
  EXPECT_DOUBLE_EQ(db->nic("connectx7-400g")->profile.price_usd,
                   models::nic_profile("connectx7-400g")->price_usd);
  models::AcceleratorProfile a100 = db->accelerator("a100")->profile;
  const Status a = db->upsert(a100, "edit");
  EXPECT_NE(a.message().find("accelerator 'a100' is built-in"), std::string::npos) << a.message();
  // Deleting a built-in row is refused too: runs would go on using its figures.
  const Status r = db->remove(CatalogTable::kDrives, "samsung-pm9a3-7.68tb");
  EXPECT_EQ(r.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(r.message(), db->path() +
                             ": drive 'samsung-pm9a3-7.68tb' is built-in: runs always use the "
                             "built-in figures, so deleting it would have no effect");
  EXPECT_NE(db->remove(CatalogTable::kAccelerators, "a100")
                .message()
                .find("accelerator 'a100' is built-in"),
            std::string::npos);
  EXPECT_TRUE(db->drive("samsung-pm9a3-7.68tb").ok());
  // A built-in row deleted by another program (the sqlite3 shell) is still built-in: its name
  // stays refused.
  ASSERT_TRUE(db->database().exec("DELETE FROM drives WHERE name = 'samsung-pm9a3-7.68tb'").ok());
  EXPECT_EQ(db->upsert(pm, "edit").code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(db->drive("samsung-pm9a3-7.68tb").status().code(), Status::Code::kNotFound);
  // The same figures under a new name are a new, editable row.
  pm.name = "pm9a3-as-measured";
  EXPECT_TRUE(db->upsert(pm, "edit").ok());
  EXPECT_TRUE(is_builtin_name(CatalogTable::kDrives, "samsung-pm9a3-7.68tb"));
  EXPECT_FALSE(is_builtin_name(CatalogTable::kDrives, "pm9a3-as-measured"));
  EXPECT_FALSE(is_builtin_name(CatalogTable::kNics, "samsung-pm9a3-7.68tb"));
}

TEST(CatalogDb, RefusesFiguresTheModelsRefuse) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  models::DriveProfile d = lab_drive();
  d.read_gbytes_per_s = 0;
  const Status s = db->upsert(d, "");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("drive 'lab-nvme-3.84tb': a figure out of range"), std::string::npos)
      << s.message();
  models::AcceleratorProfile a;
  a.name = "b200";
  a.compute_s_per_step = {{"unet3d", 0.2}};
  const Status missing = db->upsert(a, "");
  EXPECT_NE(missing.message().find("expected a compute time per step for resnet50"),
            std::string::npos)
      << missing.message();
  // Other writers are held to the same ranges (CHECK constraints).
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db->path().c_str(), &h), SQLITE_OK);
  EXPECT_NE(sqlite3_exec(h, "UPDATE nics SET gbps = 'fast'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
}

TEST(CatalogDb, ExportedProfilesResolveInScenarios) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->upsert(lab_drive(), "lab").ok());
  auto extra = db->extra_profiles();
  ASSERT_TRUE(extra.ok());
  models::Catalog catalog;
  catalog.add(*extra);
  auto d = catalog.drive("lab-nvme-3.84tb");
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->read_gbytes_per_s, 5.5);
  // Built-in names resolve to the built-in figures even when another program (the sqlite3
  // shell) edited the database row.
  sql(db->path(), "UPDATE drives SET read_gbytes_per_s = 1 WHERE name = 'samsung-pm9a3-7.68tb'");
  ASSERT_DOUBLE_EQ(db->drive("samsung-pm9a3-7.68tb")->profile.read_gbytes_per_s, 1);
  models::Catalog again;
  again.add(*db->extra_profiles());
  EXPECT_DOUBLE_EQ(again.drive("samsung-pm9a3-7.68tb")->read_gbytes_per_s, 6.9);
  // An unknown name lists where it looked.
  const Status s = again.drive("nvme-gen9").status();
  EXPECT_NE(s.message().find("unknown drive profile 'nvme-gen9' (known: built-in: "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("; catalog database " + db->path() + ": "), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("lab-nvme-3.84tb"), std::string::npos);
}

TEST(CatalogDb, AScenarioNamingADatabaseDriveGetsItsFigures) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->upsert(lab_drive(), "lab").ok());
  std::ifstream in(std::string(GRANARY_SOURCE_DIR) + "/scenarios/mlperf-cosmoflow-a100-nfs.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["cluster"]["storage"]["drive"]["profile"] = "lab-nvme-3.84tb";
  // Without the database the name is unknown; with it, the scenario has the database's figures.
  auto refused = models::parse_scenario(j.dump(), "s.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unknown drive profile 'lab-nvme-3.84tb'"),
            std::string::npos);
  models::Catalog catalog;
  catalog.add(*db->extra_profiles());
  auto s = models::parse_scenario(j.dump(), "s.json", catalog);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.storage.drive.name, "lab-nvme-3.84tb");
  EXPECT_DOUBLE_EQ(s->cluster.storage.drive.read_gbytes_per_s, 5.5);
  EXPECT_DOUBLE_EQ(s->cluster.storage.drive.price_usd, 450);
}

TEST(CatalogDb, ServersAndSwitchesAreSeededWithSourcesAndExamplePrices) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  ASSERT_EQ(db->servers()->size(), models::server_profiles().size());
  ASSERT_EQ(db->switches()->size(), models::switch_profiles().size());
  auto server = db->server("nvme-2u-24bay");
  ASSERT_TRUE(server.ok()) << server.status().message();
  EXPECT_EQ(server->profile.drive_bays, 24);
  EXPECT_EQ(server->profile.cpu_cores, 64);
  EXPECT_EQ(server->profile.rack_units, 2);
  EXPECT_DOUBLE_EQ(server->profile.price_usd, models::server_profile("nvme-2u-24bay")->price_usd);
  EXPECT_TRUE(server->origin.builtin);
  auto q = db->fabric_switch("quantum2-qm9700");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->profile.ports, 64);
  EXPECT_DOUBLE_EQ(q->profile.port_gbps, 400);
  EXPECT_EQ(q->profile.max_split, 2);
  // Every built-in row says where its figures come from and that its price is an example.
  auto switches = db->switches();
  ASSERT_TRUE(switches.ok());
  for (const auto& r : *switches) {
    EXPECT_EQ(r.origin.source.rfind("built-in: ", 0), 0u) << r.origin.source;
    EXPECT_NE(r.origin.source.find("price: example"), std::string::npos) << r.origin.source;
  }
  EXPECT_NE(db->drive("samsung-pm9a3-7.68tb")->origin.source.find("PM9A3 data sheet"),
            std::string::npos);
  EXPECT_GT(db->nic("connectx7-400g")->profile.price_usd, 0);
  EXPECT_EQ(db->server("x").status().message(), db->path() + ": no server 'x' in the catalog");
}

TEST(CatalogDb, AddedServersAndSwitchesResolveInScenarios) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  models::ServerProfile server = *models::server_profile("nvme-1u-12bay");
  server.name = "lab-1u-10bay";
  server.drive_bays = 10;
  server.cpu_cores = 48;
  ASSERT_TRUE(db->upsert(server, "lab inventory").ok());
  models::SwitchProfile sw = *models::switch_profile("quantum2-qm9700");
  sw.name = "lab-32x400";
  sw.ports = 32;
  ASSERT_TRUE(db->upsert(sw, "lab inventory").ok());
  // Built-in names are read-only; figures the schema refuses are refused.
  EXPECT_EQ(db->upsert(*models::switch_profile("quantum2-qm9700"), "x").message(),
            db->path() +
                ": switch 'quantum2-qm9700' is built-in: runs always use the built-in figures, "
                "so this edit would have no effect; save it under a new name");
  models::SwitchProfile bad = sw;
  bad.name = "bad";
  bad.port_gbps = 0;
  EXPECT_NE(db->upsert(bad, "x").message().find("switch 'bad': a figure out of range"),
            std::string::npos);
  EXPECT_EQ(db->remove(CatalogTable::kServers, "nvme-1u-12bay").code(),
            Status::Code::kInvalidArgument);
  std::ifstream in(std::string(GRANARY_SOURCE_DIR) + "/scenarios/mlperf-cosmoflow-a100-nfs.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["cluster"]["storage"]["profile"] = "lab-1u-10bay";
  j["cluster"]["storage"].erase("cpu_cores");
  j["cluster"]["fabric"]["switch"] = "lab-32x400";
  j["cluster"]["fabric"].erase("link_gbps");
  j["cluster"]["fabric"].erase("link_latency_us");
  models::Catalog catalog;
  catalog.add(*db->extra_profiles());
  auto s = models::parse_scenario(j.dump(), "s.json", catalog);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cluster.storage.server.name, "lab-1u-10bay");
  EXPECT_EQ(s->cluster.storage.cpu_cores, 48);
  EXPECT_EQ(s->cluster.fabric.edge_switch.ports, 32);
  EXPECT_EQ(s->cluster.fabric.edge_switch.source, "lab inventory");
  EXPECT_DOUBLE_EQ(s->cluster.fabric.link_gbps, 400);
  // The rows go and the names are unknown again.
  ASSERT_TRUE(db->remove(CatalogTable::kSwitches, "lab-32x400").ok());
  models::Catalog after;
  after.add(*db->extra_profiles());
  auto refused = models::parse_scenario(j.dump(), "s.json", after);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "s.json: cluster.fabric.switch: unknown switch profile 'lab-32x400' (known: "
                "built-in: "),
            std::string::npos)
      << refused.status().message();
}

// A file of schema version 1 (before servers and switches) gains their tables and rows.
TEST(CatalogDb, MigratesASchemaVersion1File) {
  testing::TempDir dir;
  const std::string path = dir.path("g.sqlite");
  ASSERT_TRUE(HardwareCatalogDb::open(path).ok());
  sql(path,
      "DROP TABLE servers; DROP TABLE switches; UPDATE schema_version SET version = 1; "
      "INSERT INTO drives (name, source) VALUES ('kept', 'lab')");
  auto db = HardwareCatalogDb::open(path);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ(*db->database().schema_version(), 2);
  EXPECT_EQ(db->servers()->size(), models::server_profiles().size());
  EXPECT_EQ(db->switches()->size(), models::switch_profiles().size());
  EXPECT_TRUE(db->drive("kept").ok());
}

TEST(CatalogDb, RefusesANewerSchemaVersion) {
  testing::TempDir dir;
  const std::string path = dir.path("g.sqlite");
  ASSERT_TRUE(HardwareCatalogDb::open(path).ok());
  sql(path, "UPDATE schema_version SET version = 7 WHERE component = 'schema'");
  auto db = HardwareCatalogDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(),
            path +
                ": schema version 7 is newer than this granary's (2): use the granary that "
                "wrote it, or a newer one");
}

TEST(CatalogDb, ACorruptFileGivesAClearError) {
  testing::TempDir dir;
  const std::string path = dir.path("g.sqlite");
  std::ofstream(path) << "this is not a database, just some text long enough to look like a "
                         "header of a file, repeated. this is not a database.\n";
  auto db = HardwareCatalogDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(), path +
                                       ": expected a Granary SQLite database, found a file "
                                       "SQLite cannot read (file is not a database)");
}

TEST(CatalogDb, AMissingFileIsNotFoundWhenNotCreating) {
  testing::TempDir dir;
  auto db = HardwareCatalogDb::open(dir.path("none.sqlite"), {.create_if_missing = false});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(), dir.path("none.sqlite") + ": no such database file");
}

TEST(DatabasePath, FollowsGranaryDbThenXdgThenHome) {
  const char* keep[] = {"GRANARY_DB", "XDG_DATA_HOME", "HOME"};
  std::string saved[3];
  bool had[3];
  for (int i = 0; i < 3; ++i) {
    const char* v = std::getenv(keep[i]);
    had[i] = v != nullptr;
    saved[i] = v ? v : "";
  }
  setenv("GRANARY_DB", "/a/g.sqlite", 1);
  setenv("XDG_DATA_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(*default_database_path(), "/a/g.sqlite");
  unsetenv("GRANARY_DB");
  EXPECT_EQ(*default_database_path(), "/x/granary/granary.sqlite");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(*default_database_path(), "/h/.local/share/granary/granary.sqlite");
  unsetenv("HOME");
  EXPECT_FALSE(default_database_path().ok());
  for (int i = 0; i < 3; ++i) {
    if (had[i]) setenv(keep[i], saved[i].c_str(), 1);
  }
}

}  // namespace
}  // namespace granary::db

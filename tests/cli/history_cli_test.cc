// granary run --history, granary history and granary catalog as a user runs them, and a
// scenario naming a drive that only the catalog database has (--catalog-db). Temporary
// databases only (--db, --history=PATH), never the user's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "db/catalog_db.h"
#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";
const std::string kSmall = kScenarios + "/mlperf-cosmoflow-a100-nfs.json";  // ~0.5 s

testing::CommandResult granary(const std::string& args) {
  // GRANARY_DB unset: the tests name every database.
  return testing::run_command("env -u GRANARY_DB " + kGranary + " " + args);
}

TEST(HistoryCli, ARecordedRunIsListedWithTheReportsSha256AndShown) {
  const std::string tmp = testing::make_temp_dir();
  const std::string db = tmp + "/g.sqlite";
  auto run = granary("run " + kSmall + " --quiet --out " + tmp + "/r.json --history=" + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("granary: recorded run 1 in " + db), std::string::npos) << run.err;
  const nlohmann::json report = nlohmann::json::parse(testing::read_file(tmp + "/r.json"));
  const std::string sha = report["scenario"]["sha256"];
  auto list = granary("history list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("mlperf-cosmoflow-a100-nfs"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(sha), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("passed"), std::string::npos) << list.out;
  EXPECT_EQ(granary("history list --db " + db + " --search " + sha.substr(5, 20)).out, list.out);
  EXPECT_EQ(granary("history list --db " + db + " --search no-such-thing").out.find("cosmoflow"),
            std::string::npos);
  auto show = granary("history show 1 --report --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out), report);
  auto text = granary("history show 1 --db " + db);
  EXPECT_NE(text.out.find("scenario.sha256:  " + sha), std::string::npos) << text.out;
  auto del = granary("history delete 1 --db " + db);
  EXPECT_EQ(del.exit_code, 0) << del.err;
  auto gone = granary("history show 1 --db " + db);
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_EQ(gone.err, "granary: " + db + ": no run 1 in the history\n");
}

TEST(HistoryCli, AFailedExpectationRunIsRecordedARefusedOneIsNot) {
  const std::string tmp = testing::make_temp_dir();
  const std::string db = tmp + "/g.sqlite";
  nlohmann::json s = nlohmann::json::parse(testing::read_file(kSmall));
  s["expect"] = {{{"metric", "summary.accelerator_utilization.mean"}, {"at_least", 2}}};
  std::ofstream(tmp + "/fail.json") << s.dump(2);
  auto run = granary("run " + tmp + "/fail.json --quiet --history=" + db);
  ASSERT_EQ(run.exit_code, 1) << run.err;
  auto list = granary("history list --db " + db);
  EXPECT_NE(list.out.find("failed"), std::string::npos) << list.out;
  s["cluster"]["clients"]["count"] = -3;
  std::ofstream(tmp + "/bad.json") << s.dump(2);
  const std::string db2 = tmp + "/other.sqlite";
  auto refused = granary("run " + tmp + "/bad.json --quiet --history=" + db2);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(db2));
}

TEST(HistoryCli, MissingCorruptDatabasesAndUnknownIdsExitTwoWithOneLine) {
  const std::string tmp = testing::make_temp_dir();
  auto missing = granary("history list --db " + tmp + "/none.sqlite");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "granary: " + tmp + "/none.sqlite: no such database file\n");
  std::ofstream(tmp + "/junk.sqlite") << std::string(4096, 'x');
  auto corrupt = granary("catalog list --db " + tmp + "/junk.sqlite");
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_EQ(corrupt.err, "granary: " + tmp +
                             "/junk.sqlite: expected a Granary SQLite database, found a file "
                             "SQLite cannot read (file is not a database)\n");
  ASSERT_EQ(granary("catalog init --db " + tmp + "/g.sqlite").exit_code, 0);
  auto unknown = granary("history delete 42 --db " + tmp + "/g.sqlite");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "granary: " + tmp + "/g.sqlite: no run 42 in the history\n");
}

TEST(CatalogCli, InitListAndExport) {
  const std::string tmp = testing::make_temp_dir();
  const std::string db = tmp + "/g.sqlite";
  auto init = granary("catalog init --db " + db);
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, db + ": 4 drives, 4 NICs, 3 accelerators, 3 servers, 4 switches\n");
  auto drives = granary("catalog list drives --db " + db);
  ASSERT_EQ(drives.exit_code, 0) << drives.err;
  EXPECT_NE(drives.out.find("samsung-pm9a3-7.68tb"), std::string::npos) << drives.out;
  EXPECT_NE(drives.out.find("read_gbytes_per_s 6.9"), std::string::npos) << drives.out;
  EXPECT_EQ(drives.out.find("connectx6-100g"), std::string::npos);
  EXPECT_NE(drives.out.find("example prices"), std::string::npos);
  auto switches = granary("catalog list switches --db " + db);
  ASSERT_EQ(switches.exit_code, 0) << switches.err;
  EXPECT_NE(switches.out.find("quantum2-qm9700"), std::string::npos) << switches.out;
  EXPECT_NE(switches.out.find("port_gbps 400.0"), std::string::npos) << switches.out;
  EXPECT_EQ(switches.out.find("nvme-2u-24bay"), std::string::npos);
  auto bad = granary("catalog list routers --db " + db);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "granary: expected a catalog table (drives, nics, accelerators, servers, switches), "
            "found 'routers'\n");
  auto exported = granary("catalog export --db " + db);
  ASSERT_EQ(exported.exit_code, 0);
  const nlohmann::json j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["drives"].size(), 4u);
  EXPECT_EQ(j["accelerators"][1]["name"], "a100");
  EXPECT_EQ(j["nics"][0]["builtin"], true);
  EXPECT_EQ(j["servers"].size(), 3u);
  EXPECT_EQ(j["servers"][1]["name"], "nvme-2u-24bay");
  EXPECT_EQ(j["servers"][1]["drive_bays"], 24);
  EXPECT_EQ(j["switches"].size(), 4u);
  EXPECT_GT(j["switches"][2]["price_usd"].get<double>(), 0);
}

// The drive of the small scenario, renamed and ten times slower to read, in the database only.
void add_slow_drive(const std::string& db) {
  auto c = db::HardwareCatalogDb::open(db);
  ASSERT_TRUE(c.ok()) << c.status().message();
  models::DriveProfile d = c->drive("samsung-pm9a3-7.68tb")->profile;
  d.name = "lab-slow-nvme";
  d.read_gbytes_per_s = 0.69;
  ASSERT_TRUE(c->upsert(d, "test").ok());
}

TEST(CatalogCli, AScenarioNamingADatabaseDriveRunsWithItsFigures) {
  const std::string tmp = testing::make_temp_dir();
  const std::string db = tmp + "/g.sqlite";
  add_slow_drive(db);
  nlohmann::json s = nlohmann::json::parse(testing::read_file(kSmall));
  s["cluster"]["storage"]["drive"]["profile"] = "lab-slow-nvme";
  std::ofstream(tmp + "/s.json") << s.dump(2);
  auto unknown = granary("validate " + tmp + "/s.json");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown drive profile 'lab-slow-nvme' (known: kioxia"),
            std::string::npos)
      << unknown.err;
  auto valid = granary("validate --catalog-db " + db + " " + tmp + "/s.json");
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_NE(valid.out.find("2 storage nodes x 8 lab-slow-nvme"), std::string::npos) << valid.out;
  // $GRANARY_DB serves as the catalog too.
  auto env = testing::run_command("GRANARY_DB=" + db + " " + kGranary + " run " + tmp +
                                  "/s.json --quiet --out " + tmp + "/db.json");
  ASSERT_EQ(env.exit_code, 0) << env.err;
  ASSERT_EQ(granary("run " + kSmall + " --quiet --out " + tmp + "/builtin.json").exit_code, 0);
  const auto slow = nlohmann::json::parse(testing::read_file(tmp + "/db.json"));
  const auto fast = nlohmann::json::parse(testing::read_file(tmp + "/builtin.json"));
  // The drives' read ceiling scales with the database's figure (a tenth of the built-in's).
  auto drive_ceiling = [](const nlohmann::json& r) {
    for (const auto& c : r["bounds"]["ceilings"]) {
      if (c["resource"] == "drives as placed") return c["gibps"].get<double>();
    }
    return -1.0;
  };
  ASSERT_GT(drive_ceiling(fast), 0) << fast["bounds"].dump();
  EXPECT_NEAR(drive_ceiling(slow), drive_ceiling(fast) / 10, drive_ceiling(fast) * 1e-6);
  // Where it looked, when the name is in neither place.
  s["cluster"]["storage"]["drive"]["profile"] = "nvme-gen9";
  std::ofstream(tmp + "/u.json") << s.dump(2);
  auto nowhere = granary("validate --catalog-db " + db + " " + tmp + "/u.json");
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_NE(nowhere.err.find("(known: built-in: kioxia-cm7r-7.68tb"), std::string::npos)
      << nowhere.err;
  EXPECT_NE(nowhere.err.find("; catalog database " + db + ": kioxia-cm7r-7.68tb"),
            std::string::npos)
      << nowhere.err;
  auto no_db = granary("validate --catalog-db " + tmp + "/none.sqlite " + tmp + "/s.json");
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_EQ(no_db.err, "granary: --catalog-db: " + tmp + "/none.sqlite: no such database file\n");
}

}  // namespace
}  // namespace granary

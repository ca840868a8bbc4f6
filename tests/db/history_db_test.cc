// RunHistoryDb: record, list (newest first, search), get, delete; figures taken from a report.
#include "db/history_db.h"

#include <gtest/gtest.h>

#include "tests/db/db_test_util.h"

namespace granary::db {
namespace {

nlohmann::json report(const std::string& name, const std::string& sha, double au,
                      bool expectation_passed) {
  return {{"scenario",
           {{"name", name}, {"source", "/s/" + name + ".json"}, {"sha256", sha}, {"seed", 42}}},
          {"run", {{"granary", {{"version", "0.1.0"}, {"build", "abc123"}}}}},
          {"summary",
           {{"accelerator_utilization", {{"mean", au}}},
            {"read_gibps_epoch", 12.5},
            {"read_gibps_steady", 13.0}}},
          {"expectations", {{{"metric", "x"}, {"passed", expectation_passed}}}}};
}

TEST(HistoryDb, RecordFromReportTakesTheKeyFigures) {
  const RunRecord r = record_from_report(report("a", "ff00", 0.93, false), "{\"granary\": 1}", 2.5);
  EXPECT_EQ(r.scenario_name, "a");
  EXPECT_EQ(r.scenario_path, "/s/a.json");
  EXPECT_EQ(r.scenario_sha256, "ff00");
  EXPECT_EQ(r.seed, "42");
  EXPECT_EQ(r.granary_version, "0.1.0");
  EXPECT_EQ(r.granary_build, "abc123");
  EXPECT_EQ(r.status, RunStatus::kFailed);
  EXPECT_DOUBLE_EQ(*r.accelerator_utilization_mean, 0.93);
  EXPECT_DOUBLE_EQ(*r.read_gibps_epoch, 12.5);
  EXPECT_FALSE(r.write_gibps.has_value());
  EXPECT_FALSE(r.iops.has_value());
  EXPECT_EQ(*r.expectations_passed, 0);
  EXPECT_EQ(*r.expectations_total, 1);
}

TEST(HistoryDb, RecordsListsNewestFirstGetsAndDeletes) {
  testing::TempDir dir;
  auto db = RunHistoryDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok()) << db.status().message();
  auto first = db->record(record_from_report(report("alpha", "aa11", 0.9, true), "{}", 1.0));
  ASSERT_TRUE(first.ok()) << first.status().message();
  RunRecord failed;
  failed.scenario_name = "beta";
  failed.scenario_path = "/s/beta.json";
  failed.status = RunStatus::kError;
  failed.message = "the simulation process failed";
  failed.scenario_json = "{\"name\": \"beta\", \"drive\": \"special-drive\"}";
  auto second = db->record(failed);
  ASSERT_TRUE(second.ok());
  EXPECT_GT(*second, *first);
  auto all = db->list();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].scenario_name, "beta");
  EXPECT_EQ((*all)[0].status, RunStatus::kError);
  EXPECT_EQ((*all)[1].scenario_name, "alpha");
  EXPECT_EQ((*all)[1].started_at.size(), 20u);  // 2025-01-31T12:00:00Z
  EXPECT_EQ((*all)[1].started_at.back(), 'Z');
  auto got = db->get(*first);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->scenario_sha256, "aa11");
  EXPECT_EQ(got->status, RunStatus::kPassed);
  EXPECT_EQ(nlohmann::json::parse(got->report_json)["summary"]["read_gibps_epoch"], 12.5);
  EXPECT_DOUBLE_EQ(*got->accelerator_utilization_mean, 0.9);
  ASSERT_TRUE(db->remove(*first).ok());
  EXPECT_EQ(db->get(*first).status().message(),
            dir.path("g.sqlite") + ": no run " + std::to_string(*first) + " in the history");
  EXPECT_EQ(db->remove(*first).code(), Status::Code::kNotFound);
  EXPECT_EQ(db->list()->size(), 1u);
}

TEST(HistoryDb, SearchMatchesNamePathShaAndScenarioText) {
  testing::TempDir dir;
  auto db = RunHistoryDb::open(dir.path("g.sqlite"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->record(record_from_report(report("alpha", "aa11", 0.9, true),
                                            "{\"drive\": \"kioxia\"}", 1))
                  .ok());
  ASSERT_TRUE(db->record(record_from_report(report("beta", "bb22", 0.9, true), "{}", 1)).ok());
  auto names = [&](const std::string& search) {
    std::vector<std::string> out;
    auto runs = db->list({.search = search});
    EXPECT_TRUE(runs.ok());
    if (runs.ok()) {
      for (const RunRecord& r : *runs) out.push_back(r.scenario_name);
    }
    return out;
  };
  EXPECT_EQ(names("ALPHA"), std::vector<std::string>{"alpha"});
  EXPECT_EQ(names("/s/beta"), std::vector<std::string>{"beta"});
  EXPECT_EQ(names("bb2"), std::vector<std::string>{"beta"});
  EXPECT_EQ(names("kioxia"), std::vector<std::string>{"alpha"});
  EXPECT_EQ(names(""), (std::vector<std::string>{"beta", "alpha"}));
  // LIKE's wildcards in the search are plain characters; quotes are plain text too.
  EXPECT_TRUE(names("%").empty());
  EXPECT_TRUE(names("' OR 1=1 --").empty());
}

TEST(HistoryDb, ACatalogAndAHistoryShareOneFile) {
  testing::TempDir dir;
  const std::string path = dir.path("g.sqlite");
  auto history = RunHistoryDb::open(path);
  ASSERT_TRUE(history.ok());
  auto again = RunHistoryDb::open(path, {.create_if_missing = false});
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_TRUE(history->record(record_from_report(report("a", "1", 1, true), "{}", 1)).ok());
  EXPECT_EQ(again->list()->size(), 1u);  // a second connection sees the first's commit
}

}  // namespace
}  // namespace granary::db

// The Run History window (a run recorded by the GUI is listed; reopening it loads its scenario
// and report) and the Hardware Catalog window (an edit persists in the database, a value the
// schema refuses is reverted, an added drive is offered to scenarios). Temporary databases.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTemporaryDir>

#include "db/catalog_db.h"
#include "db/history_db.h"
#include "gui/catalog_view.h"
#include "gui/history_view.h"
#include "gui/main_window.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

MainWindowOptions options_with(const QString& db) {
  MainWindowOptions o;
  o.use_settings = false;
  o.ask_to_save = [](QWidget*, const QString&) { return QMessageBox::Discard; };
  o.show_error = [](QWidget*, const QString& m) { ADD_FAILURE() << m.toStdString(); };
  o.database_path = db;
  return o;
}

TEST(HistoryWindow, ARecordedRunIsListedAndReopensWithItsReport) {
  QTemporaryDir dir;
  const QString db = dir.filePath("g.sqlite");
  MainWindow w(options_with(db));
  ASSERT_TRUE(w.open_file(testing::scenario("mlperf-cosmoflow-a100-nfs.json")));
  QSignalSpy recorded(w.recorder(), &RunRecorder::recorded);
  ASSERT_TRUE(w.start_run());
  ASSERT_TRUE(recorded.wait(60000));
  ASSERT_EQ(w.runs()->state(), RunState::kSucceeded);
  const nlohmann::json report = *w.last_report();
  HistoryView* h = w.show_history();
  ASSERT_EQ(h->table()->rowCount(), 1) << h->status_line().toStdString();
  EXPECT_EQ(h->table()->item(0, 2)->text(), "passed");
  EXPECT_EQ(h->table()->item(0, 3)->text(), "mlperf-cosmoflow-a100-nfs");
  EXPECT_EQ(h->table()->item(0, 8)->text().toStdString(), report["scenario"]["sha256"]);
  h->search_box()->setText("no-such-scenario");
  EXPECT_EQ(h->table()->rowCount(), 0);
  h->search_box()->setText("cosmoflow");
  ASSERT_EQ(h->table()->rowCount(), 1);
  // Reopen into a fresh document: the stored scenario and report come back.
  ASSERT_TRUE(w.new_document());
  ASSERT_TRUE(h->open_row(0));
  EXPECT_EQ(w.document()->json()["name"], "mlperf-cosmoflow-a100-nfs");
  EXPECT_TRUE(w.document()->validation().ok);
  ASSERT_TRUE(w.last_report().has_value());
  EXPECT_EQ(*w.last_report(), report);
  EXPECT_TRUE(h->delete_row(0));
  EXPECT_EQ(h->table()->rowCount(), 0);
}

TEST(CatalogWindow, AnEditPersistsARefusedValueIsRevertedAnAddedDriveIsOffered) {
  QTemporaryDir dir;
  const QString db = dir.filePath("g.sqlite");
  MainWindow w(options_with(db));
  CatalogView* c = w.show_catalog();
  ASSERT_TRUE(c->is_open()) << c->status_line().toStdString();
  EXPECT_EQ(c->tabs()->count(), 3);
  QSqlTableModel* drives = c->model(0);
  int row = -1;
  for (int r = 0; r < drives->rowCount(); ++r) {
    if (drives->data(drives->index(r, 0)).toString() == "samsung-pm9a3-7.68tb") row = r;
  }
  ASSERT_GE(row, 0);
  ASSERT_TRUE(c->set_cell(0, row, "price_usd", 777.0)) << c->status_line().toStdString();
  EXPECT_FALSE(c->set_cell(0, row, "read_gbytes_per_s", -1.0));
  EXPECT_TRUE(c->status_line().startsWith("Refused")) << c->status_line().toStdString();
  ASSERT_TRUE(c->add_row(0, "lab-nvme")) << c->status_line().toStdString();
  {
    auto catalog = db::HardwareCatalogDb::open(db.toStdString());
    ASSERT_TRUE(catalog.ok());
    auto pm = catalog->drive("samsung-pm9a3-7.68tb");
    EXPECT_DOUBLE_EQ(pm->profile.price_usd, 777);
    EXPECT_DOUBLE_EQ(pm->profile.read_gbytes_per_s, 6.9);
    EXPECT_TRUE(pm->origin.user_edited);
    EXPECT_TRUE(catalog->drive("lab-nvme").ok());
  }
  // The document resolves the new drive (scenarios may name it).
  const auto names = w.document()->catalog().drive_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "lab-nvme"), names.end());
  auto j = w.document()->json();
  j["cluster"]["storage"]["drive"] = {{"profile", "lab-nvme"}, {"count", 4}};
  w.document()->replace_all(j, "drive");
  EXPECT_TRUE(w.document()->validate().ok) << w.document()->validation().message;
}

}  // namespace
}  // namespace granary::gui

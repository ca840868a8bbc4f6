// The Run History window (a run recorded by the GUI is listed; reopening it loads its scenario
// and report) and the Hardware Catalog window (built-in rows are read-only, a duplicate under a
// new name is editable and persists, a value the schema refuses is reverted, an added drive is
// offered to scenarios). Temporary databases.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "db/catalog_db.h"
#include "db/history_db.h"
#include "gui/catalog_view.h"
#include "gui/editor_view.h"
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

int row_named(QSqlTableModel* m, const QString& name) {
  for (int r = 0; r < m->rowCount(); ++r) {
    if (m->data(m->index(r, 0)).toString() == name) return r;
  }
  return -1;
}

// Built-in rows are read-only (an edit would change no run); a duplicate under a new name is
// editable, persists, is held to the schema, and is what a scenario naming it runs with.
TEST(CatalogWindow, BuiltInRowsAreReadOnlyADuplicateIsEditableAndOffered) {
  QTemporaryDir dir;
  const QString db = dir.filePath("g.sqlite");
  MainWindow w(options_with(db));
  CatalogView* c = w.show_catalog();
  ASSERT_TRUE(c->is_open()) << c->status_line().toStdString();
  ASSERT_EQ(c->tabs()->count(), 5);
  EXPECT_EQ(c->tabs()->tabText(3), "servers");
  EXPECT_EQ(c->tabs()->tabText(4), "switches");
  QSqlTableModel* drives = c->model(0);
  const int pm = row_named(drives, "samsung-pm9a3-7.68tb");
  ASSERT_GE(pm, 0);
  const int price = drives->fieldIndex("price_usd");
  EXPECT_TRUE(c->is_builtin_row(0, pm));
  EXPECT_FALSE(drives->flags(drives->index(pm, price)) & Qt::ItemIsEditable);
  EXPECT_FALSE(c->set_cell(0, pm, "price_usd", 777.0));
  EXPECT_TRUE(c->status_line().contains("drive 'samsung-pm9a3-7.68tb' is built-in"))
      << c->status_line().toStdString();
  EXPECT_FALSE(c->delete_row(0, pm));
  EXPECT_FALSE(c->add_row(0, "kioxia-cm7r-7.68tb"));  // a built-in name: refused
  EXPECT_TRUE(c->status_line().contains("is a built-in name")) << c->status_line().toStdString();
  EXPECT_TRUE(c->is_builtin_row(2, row_named(c->model(2), "a100")));
  ASSERT_TRUE(c->duplicate_row(0, pm, "pm9a3-quoted")) << c->status_line().toStdString();
  const int copy = row_named(drives, "pm9a3-quoted");
  ASSERT_GE(copy, 0);
  EXPECT_FALSE(c->is_builtin_row(0, copy));
  EXPECT_TRUE(drives->flags(drives->index(copy, price)) & Qt::ItemIsEditable);
  ASSERT_TRUE(c->set_cell(0, copy, "price_usd", 777.0)) << c->status_line().toStdString();
  ASSERT_TRUE(c->set_cell(0, copy, "read_gbytes_per_s", 3.5)) << c->status_line().toStdString();
  EXPECT_FALSE(c->set_cell(0, copy, "read_gbytes_per_s", -1.0));
  EXPECT_TRUE(c->status_line().startsWith("Refused")) << c->status_line().toStdString();
  EXPECT_FALSE(c->set_cell(0, copy, "name", "kioxia-cm7r-7.68tb"));
  ASSERT_TRUE(c->add_row(0, "lab-nvme")) << c->status_line().toStdString();
  {
    auto catalog = db::HardwareCatalogDb::open(db.toStdString());
    ASSERT_TRUE(catalog.ok());
    auto builtin = catalog->drive("samsung-pm9a3-7.68tb");
    EXPECT_DOUBLE_EQ(builtin->profile.price_usd,
                     models::drive_profile("samsung-pm9a3-7.68tb")->price_usd);
    EXPECT_FALSE(builtin->origin.user_edited);
    auto q = catalog->drive("pm9a3-quoted");
    ASSERT_TRUE(q.ok()) << q.status().message();
    EXPECT_DOUBLE_EQ(q->profile.price_usd, 777);
    EXPECT_DOUBLE_EQ(q->profile.read_gbytes_per_s, 3.5);
    EXPECT_DOUBLE_EQ(q->profile.write_gbytes_per_s, builtin->profile.write_gbytes_per_s);
    EXPECT_EQ(q->profile.queue_depth, builtin->profile.queue_depth);
    EXPECT_FALSE(q->origin.builtin);
    EXPECT_EQ(q->origin.source.rfind("copy of samsung-pm9a3-7.68tb (", 0), 0u) << q->origin.source;
    EXPECT_TRUE(catalog->drive("lab-nvme").ok());
    EXPECT_EQ(catalog->drive("kioxia-cm7r-7.68tb")->profile.read_gbytes_per_s,
              models::drive_profile("kioxia-cm7r-7.68tb")->read_gbytes_per_s);
  }
  // The document resolves the copy with its edited figures (scenarios may name it).
  const auto names = w.document()->catalog().drive_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "lab-nvme"), names.end());
  // The editor's drive list offers the new rows at once, not after a restart.
  auto* drive_box = qobject_cast<QComboBox*>(w.editor()->field_editor("/cluster/storage/drive"));
  ASSERT_NE(drive_box, nullptr);
  EXPECT_GE(drive_box->findData("lab-nvme"), 0);
  EXPECT_GE(drive_box->findData("pm9a3-quoted"), 0);
  EXPECT_DOUBLE_EQ(w.document()->catalog().drive("pm9a3-quoted")->read_gbytes_per_s, 3.5);
  auto j = w.document()->json();
  j["cluster"]["storage"]["drive"] = {{"profile", "pm9a3-quoted"}, {"count", 4}};
  w.document()->replace_all(j, "drive");
  EXPECT_TRUE(w.document()->validate().ok) << w.document()->validation().message;
}

// Servers and switches: built-in rows read-only, a copy editable, and the editor's server and
// switch lists offer it; a scenario naming it validates, one exceeding its bays does not.
TEST(CatalogWindow, ServersAndSwitchesAreEditedAndOfferedLikeTheOthers) {
  QTemporaryDir dir;
  const QString db = dir.filePath("g.sqlite");
  MainWindow w(options_with(db));
  CatalogView* c = w.show_catalog();
  ASSERT_TRUE(c->is_open()) << c->status_line().toStdString();
  QSqlTableModel* servers = c->model(3);
  QSqlTableModel* switches = c->model(4);
  const int two_u = row_named(servers, "nvme-2u-24bay");
  ASSERT_GE(two_u, 0);
  EXPECT_TRUE(c->is_builtin_row(3, two_u));
  EXPECT_FALSE(c->set_cell(3, two_u, "drive_bays", 30));
  EXPECT_TRUE(c->status_line().contains("server 'nvme-2u-24bay' is built-in"))
      << c->status_line().toStdString();
  EXPECT_TRUE(c->is_builtin_row(4, row_named(switches, "quantum2-qm9700")));
  ASSERT_TRUE(c->duplicate_row(3, two_u, "lab-2u-12bay")) << c->status_line().toStdString();
  const int lab = row_named(servers, "lab-2u-12bay");
  ASSERT_GE(lab, 0);
  ASSERT_TRUE(c->set_cell(3, lab, "drive_bays", 12)) << c->status_line().toStdString();
  EXPECT_FALSE(c->set_cell(3, lab, "drive_bays", 0));  // the schema's CHECK
  ASSERT_TRUE(c->add_row(4, "lab-switch")) << c->status_line().toStdString();
  auto* server_box = qobject_cast<QComboBox*>(w.editor()->field_editor("/cluster/storage/profile"));
  auto* switch_box = qobject_cast<QComboBox*>(w.editor()->field_editor("/cluster/fabric/switch"));
  ASSERT_NE(server_box, nullptr);
  ASSERT_NE(switch_box, nullptr);
  EXPECT_GE(server_box->findData("lab-2u-12bay"), 0);
  EXPECT_GE(server_box->findData("hdd-4u-60bay"), 0);
  EXPECT_GE(switch_box->findData("lab-switch"), 0);
  EXPECT_GE(switch_box->findData("spectrum4-sn5600"), 0);
  auto j = w.document()->json();
  j["cluster"]["storage"]["profile"] = "lab-2u-12bay";
  j["cluster"]["storage"]["drive"]["count"] = 12;
  w.document()->replace_all(j, "server");
  EXPECT_TRUE(w.document()->validate().ok) << w.document()->validation().message;
  j["cluster"]["storage"]["drive"]["count"] = 13;
  w.document()->replace_all(j, "server");
  EXPECT_FALSE(w.document()->validate().ok);
  EXPECT_NE(w.document()->validation().message.find(
                "cluster.storage.drive.count: expected at most 12 (the drive bays of server "
                "profile 'lab-2u-12bay'), found 13"),
            std::string::npos)
      << w.document()->validation().message;
}

}  // namespace
}  // namespace granary::gui

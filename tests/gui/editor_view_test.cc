// EditorView: the forms show the scenario, form edits become undoable JSON edits, the
// validator's message appears at the field it names, the raw JSON tab syncs both ways.
#include "gui/editor_view.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QTabBar>
#include <QTableWidget>

#include "gui/editor_tables.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

QLineEdit* line(const EditorView& e, const std::string& pointer) {
  auto* w = qobject_cast<QLineEdit*>(e.field_editor(pointer));
  EXPECT_NE(w, nullptr) << pointer;
  return w;
}

QComboBox* combo(const EditorView& e, const std::string& pointer) {
  auto* w = qobject_cast<QComboBox*>(e.field_editor(pointer));
  EXPECT_NE(w, nullptr) << pointer;
  return w;
}

// Types `text` into a line edit as a user does (then Enter).
void enter(QLineEdit* w, const QString& text) {
  w->setText(text);
  emit w->editingFinished();
}

// The red line under the field holding `w`.
QLabel* error_label_of(QWidget* w) {
  for (QLabel* l : w->parentWidget()->findChildren<QLabel*>()) return l;
  return nullptr;
}

TEST(EditorView, ShowsTheScenarioInTheForms) {
  auto doc = testing::load(testing::scenario("ci/checkpoint-llama3-70b.json"));
  EditorView e(doc.get());
  EXPECT_EQ(line(e, "/cluster/clients/count")->text(), "128");
  EXPECT_EQ(line(e, "/cluster/clients/accelerators_per_node")->text(), "8");
  EXPECT_EQ(combo(e, "/cluster/clients/accelerator")->currentText(), "a100");
  EXPECT_EQ(combo(e, "/cluster/clients/nic")->currentText(), "connectx6-200g");
  EXPECT_EQ(line(e, "/cluster/storage/count")->text(), "16");
  EXPECT_EQ(line(e, "/cluster/storage/drive/count")->text(), "24");
  EXPECT_EQ(combo(e, "/cluster/storage/drive")->currentText(), "samsung-pm9a3-7.68tb");
  EXPECT_EQ(line(e, "/cluster/storage/cpu_cores")->text(), "64");
  EXPECT_EQ(line(e, "/cluster/fabric/hosts_per_leaf")->text(), "8");
  EXPECT_EQ(combo(e, "/storage/design")->currentText(), "rados");
  EXPECT_EQ(line(e, "/storage/rados/replicas")->text(), "3");
  // An absent key: empty, with the default as placeholder.
  EXPECT_EQ(line(e, "/cluster/fabric/spines")->text(), "");
  EXPECT_EQ(line(e, "/cluster/fabric/spines")->placeholderText(), "default: 0");
  EXPECT_EQ(combo(e, "/workloads/0/type")->currentText(), "checkpoint");
  EXPECT_EQ(combo(e, "/workloads/0/mlperf")->currentText(), "llama3-70b");
  QTableWidget* expect = e.expectations_table()->table();
  ASSERT_EQ(expect->rowCount(), 4);
  EXPECT_EQ(expect->item(0, 0)->text(), "summary.write_seconds");
  EXPECT_EQ(e.expectations_table()->combo(0)->currentText(), "at_most");
  EXPECT_EQ(expect->item(0, 2)->text(), "7");
  EXPECT_EQ(expect->item(1, 3)->text(), "0.001");
  EXPECT_EQ(expect->item(0, 4)->text(), "the 70B checkpoint lands within 7 s");
  EXPECT_NE(e.raw_editor()->toPlainText().indexOf("\"llama3-70b\""), -1);
}

TEST(EditorView, AFormEditChangesTheJsonAndUndoRestoresIt) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  enter(line(e, "/cluster/storage/count"), "24");
  EXPECT_EQ(doc->json()["cluster"]["storage"]["count"], 24);
  EXPECT_NE(e.raw_editor()->toPlainText().indexOf("\"count\": 24"), -1);  // the text follows
  combo(e, "/cluster/clients/accelerator")->setCurrentText("h100");
  EXPECT_EQ(doc->json()["cluster"]["clients"]["accelerator"], "h100");
  // Emptying a field removes the key (the default applies).
  enter(line(e, "/cluster/clients/memory_gib"), "");
  EXPECT_FALSE(doc->json()["cluster"]["clients"].contains("memory_gib"));
  doc->undo_stack()->undo();
  EXPECT_EQ(line(e, "/cluster/clients/memory_gib")->text(), "1024");
  doc->undo_stack()->undo();
  doc->undo_stack()->undo();
  EXPECT_EQ(doc->json()["cluster"]["storage"]["count"], 16);
  EXPECT_EQ(line(e, "/cluster/storage/count")->text(), "16");
  EXPECT_EQ(combo(e, "/cluster/clients/accelerator")->currentText(), "a100");
  EXPECT_FALSE(doc->is_modified());
}

TEST(EditorView, ABadValueShowsTheValidatorsMessageAtItsField) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  QLineEdit* count = line(e, "/cluster/clients/count");
  enter(count, "0");
  doc->validate();
  EXPECT_EQ(e.error_widget(), count);
  EXPECT_NE(count->toolTip().indexOf("cluster.clients.count: expected an integer in 1..65536"), -1)
      << count->toolTip().toStdString();
  QLabel* label = error_label_of(count);
  ASSERT_NE(label, nullptr);
  EXPECT_FALSE(label->isHidden());
  EXPECT_EQ(label->text(), "expected an integer in 1..65536, found 0");  // after the path
  EXPECT_NE(e.status_text().indexOf("cluster.clients.count"), -1);
  EXPECT_EQ(e.tabs()->tabText(0), "Cluster");
  EXPECT_EQ(e.tabs()->tabBar()->tabTextColor(0), QColor(0xc6, 0x28, 0x28));
  // Fixed: the error goes.
  enter(count, "128");
  doc->validate();
  EXPECT_EQ(e.error_widget(), nullptr);
  EXPECT_TRUE(label->isHidden());
  EXPECT_TRUE(e.status_text().startsWith("Valid:")) << e.status_text().toStdString();
}

TEST(EditorView, ANegativeBandwidthShowsAtTheFabricField) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  QLineEdit* link = line(e, "/cluster/fabric/link_gbps");
  enter(link, "-400");
  EXPECT_EQ(doc->json()["cluster"]["fabric"]["link_gbps"], -400);
  doc->validate();
  EXPECT_EQ(e.error_widget(), link);
  EXPECT_NE(link->toolTip().indexOf("cluster.fabric.link_gbps"), -1)
      << link->toolTip().toStdString();
}

TEST(EditorView, AWorkloadErrorShowsAtTheSelectedWorkloadsField) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  QLineEdit* files = line(e, "/workloads/0/files");
  EXPECT_EQ(files->text(), "750000");
  enter(files, "many");
  EXPECT_EQ(doc->json()["workloads"][0]["files"], "many");  // kept for the validator to judge
  doc->validate();
  EXPECT_EQ(e.error_widget(), files);
  EXPECT_NE(files->toolTip().indexOf("workloads[0].files"), -1) << files->toolTip().toStdString();
}

TEST(EditorView, RawJsonEditsReachTheForms) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  QString text = e.raw_editor()->toPlainText();
  text.replace("\"hosts_per_leaf\": 8", "\"hosts_per_leaf\": 12");
  e.raw_editor()->setPlainText(text);
  EXPECT_TRUE(e.apply_raw_text());
  EXPECT_EQ(doc->json()["cluster"]["fabric"]["hosts_per_leaf"], 12);
  EXPECT_EQ(line(e, "/cluster/fabric/hosts_per_leaf")->text(), "12");
  doc->undo_stack()->undo();
  EXPECT_EQ(line(e, "/cluster/fabric/hosts_per_leaf")->text(), "8");
  EXPECT_NE(e.raw_editor()->toPlainText().indexOf("\"hosts_per_leaf\": 8"), -1);
}

TEST(EditorView, InvalidRawJsonShowsTheParsersLineAndColumn) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  const Json before = doc->json();
  e.raw_editor()->setPlainText("{\n  \"granary\": 1,\n  \"name\" 3\n}\n");
  EXPECT_FALSE(e.apply_raw_text());
  EXPECT_TRUE(e.raw_error().startsWith("Line 3, column 10: ")) << e.raw_error().toStdString();
  EXPECT_EQ(doc->json(), before);  // the document keeps its last valid JSON
  EXPECT_EQ(line(e, "/cluster/clients/count")->text(), "128");
}

TEST(EditorView, ChangingTheDesignDropsTheOtherDesignsSection) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  combo(e, "/storage/design")->setCurrentText("nfs");
  EXPECT_EQ(doc->json()["storage"]["design"], "nfs");
  EXPECT_FALSE(doc->json()["storage"].contains("rados"));
  EXPECT_FALSE(doc->json()["storage"].contains("protocol"));  // rdma is no NFS protocol
  EXPECT_TRUE(doc->validate().ok) << doc->validation().message;
  EXPECT_FALSE(
      e.field_editor("/storage/nfs/rsize_kib")->parentWidget()->parentWidget()->isHidden());
  EXPECT_TRUE(e.field_editor("/storage/rados/pg_num")->parentWidget()->parentWidget()->isHidden());
  doc->undo_stack()->undo();  // one step
  EXPECT_EQ(doc->json()["storage"]["rados"]["pg_num"], 4096);
}

TEST(EditorView, TheFailureTableEditsTheTimeline) {
  auto doc = testing::load(testing::scenario("ci/osd-failure-read-storm.json"));
  EditorView e(doc.get());
  FailuresTable* failures = e.failures_table();
  ASSERT_EQ(failures->table()->rowCount(), 1);
  EXPECT_EQ(failures->table()->item(0, 0)->text(), "5");
  EXPECT_EQ(failures->combo(0)->currentText(), "osd_crash");
  EXPECT_EQ(failures->table()->item(0, 2)->text(), "osd 5");
  failures->table()->item(0, 2)->setText("osd 3");
  EXPECT_EQ(doc->json()["failures"][0]["osd"], 3);
  failures->combo(0)->setCurrentText("host_down");  // the target moves to "host"
  EXPECT_EQ(doc->json()["failures"][0]["kind"], "host_down");
  EXPECT_EQ(doc->json()["failures"][0]["host"], 3);
  EXPECT_FALSE(doc->json()["failures"][0].contains("osd"));
  // Host 3 of 6 exists: valid. Host 99 does not: the message shows in the target cell.
  EXPECT_TRUE(doc->validate().ok) << doc->validation().message;
  failures->table()->item(0, 2)->setText("99");
  doc->validate();
  EXPECT_EQ(e.error_widget(), failures->table());
  EXPECT_NE(failures->error_at(0, 2).indexOf("failures[0].host"), -1)
      << failures->error_at(0, 2).toStdString();
  failures->add_row();
  EXPECT_EQ(doc->json()["failures"].size(), 2u);
}

TEST(EditorView, TheExpectationTableEditsConditions) {
  auto doc = testing::load(testing::flagship());
  EditorView e(doc.get());
  ExpectationsTable* expect = e.expectations_table();
  ASSERT_EQ(expect->table()->rowCount(), 3);
  EXPECT_EQ(expect->table()->item(0, 2)->text(), "[0.68,0.76]");
  expect->combo(2)->setCurrentText("at_most");
  EXPECT_EQ(doc->json()["expect"][2]["at_most"], 1050);
  EXPECT_FALSE(doc->json()["expect"][2].contains("at_least"));
  expect->table()->item(1, 2)->setText("client NICs");
  EXPECT_EQ(doc->json()["expect"][1]["contains"], "client NICs");
  EXPECT_TRUE(doc->validate().ok) << doc->validation().message;
}

}  // namespace
}  // namespace granary::gui

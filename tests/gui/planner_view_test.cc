// The Planner tab: a plan opened into the form, edited, run as a `granary plan capacity` child
// whose points fill the chart as they finish; the recommendation; a point opened as a scenario;
// the result exported as PDF, HTML and CSV.
#include "gui/planner_view.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "gui/main_window.h"
#include "gui/run_controller.h"
#include "gui/scenario_document.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

template <class T>
T* series(QChart* chart, const QString& name) {
  for (QAbstractSeries* s : chart->series()) {
    if (s->objectName() == name) return qobject_cast<T*>(s);
  }
  return nullptr;
}

// The plan is copied into a temporary folder (with its scenario) so that the run cache the GUI
// keeps beside the plan stays out of the source tree.
class PlannerTab : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    const QString data =
        QString::fromStdString(std::string(GRANARY_SOURCE_DIR) + "/tests/planner/data/");
    ASSERT_TRUE(QFile::copy(data + "small-plan.json", dir_.filePath("small-plan.json")));
    ASSERT_TRUE(QFile::copy(data + "storm.json", dir_.filePath("storm.json")));
  }
  QString plan() const { return dir_.filePath("small-plan.json"); }
  QTemporaryDir dir_;
};

TEST_F(PlannerTab, OpensAPlanIntoTheFormAndRefusesWhatIsNotOne) {
  PlannerView v;
  QString error;
  EXPECT_FALSE(v.open_plan(testing::flagship(), &error));
  EXPECT_NE(error.indexOf("not a plan file (no granary_plan key"), -1) << error.toStdString();
  ASSERT_TRUE(v.open_plan(plan(), &error)) << error.toStdString();
  EXPECT_EQ(v.axis_edit("storage_servers")->text(), "2, 3, 4, 6");
  EXPECT_EQ(v.axis_edit("redundancy")->text(), "3x, ec4+2");
  EXPECT_EQ(v.axis_edit("drive")->text(), "");  // the base scenario's
  EXPECT_EQ(v.target_edit("usable_capacity_tb")->text(), "40");
  ASSERT_EQ(v.case_targets()->rowCount(), 1);
  EXPECT_EQ(v.case_targets()->item(0, 2)->text(), "0.9");
  EXPECT_EQ(v.max_points()->value(), 20);
  EXPECT_TRUE(v.run_button()->isEnabled());
  // An edit the plan reader refuses is said before anything runs.
  v.axis_edit("drive")->setText("nvme-gen9");
  auto edited = v.edited_plan();
  ASSERT_FALSE(edited.ok());
  EXPECT_NE(edited.status().message().find("space.drive[0]: unknown drive profile 'nvme-gen9'"),
            std::string::npos)
      << edited.status().message();
  v.axis_edit("drive")->setText("");
  v.target_edit("usable_capacity_tb")->setText("50");
  edited = v.edited_plan();
  ASSERT_TRUE(edited.ok()) << edited.status().message();
  EXPECT_EQ((*edited)["targets"]["usable_capacity_tb"], 50.0);
  EXPECT_FALSE((*edited)["space"].contains("drive"));
}

TEST_F(PlannerTab, RunsThePlanFillsTheFrontOpensAPointAndExportsTheReport) {
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_plan(plan()));
  PlannerView* v = w.planner_view();
  QSignalSpy progress(w.plans(), &RunController::progress_changed);
  QSignalSpy finished(w.plans(), &RunController::finished);
  ASSERT_TRUE(w.start_plan());
  ASSERT_TRUE(finished.wait(120000));
  EXPECT_EQ(w.plans()->state(), RunState::kSucceeded) << w.plans()->outcome().message.toStdString();
  // Points arrived one by one while the search ran: a progress line each, at least.
  int points = 0;
  ASSERT_TRUE(v->result().has_value());
  const nlohmann::json& r = *v->result();
  for (const auto& p : r["points"]) points += p.contains("margin") ? 1 : 0;
  EXPECT_GE(progress.count(), points);
  auto* simulated = series<QScatterSeries>(v->chart(), "data:simulated");
  auto* choice = series<QScatterSeries>(v->chart(), "data:choice");
  ASSERT_TRUE(simulated && choice);
  EXPECT_EQ(simulated->count(), points);
  ASSERT_EQ(choice->count(), 1);
  const auto& chosen = r["points"][r["choice"]["point"].get<size_t>()];
  EXPECT_DOUBLE_EQ(choice->at(0).x(), chosen["cost_usd"].get<double>() / 1000);
  EXPECT_EQ(v->points_table()->rowCount(), points);
  EXPECT_NE(v->headline().indexOf("Recommended"), -1) << v->headline().toStdString();
  EXPECT_NE(v->headline().indexOf("storm: AU"), -1);
  EXPECT_TRUE(QFile::exists(plan() + ".runs.jsonl"));  // resumable

  // Open the chosen point as a scenario: the editor holds its design.
  const QString scenario = dir_.filePath("chosen.json");
  ASSERT_TRUE(w.open_plan_point(r["choice"]["point"].get<int>(), scenario));
  EXPECT_EQ(w.document()->json()["cluster"]["storage"]["count"], 6);
  EXPECT_EQ(w.document()->json()["storage"]["rados"]["erasure"]["k"], 4);

  // Export as each format.
  for (const char* name : {"plan.pdf", "plan.html", "plan.csv"}) {
    const Status s = v->export_report(dir_.filePath(name));
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_GT(QFileInfo(dir_.filePath(name)).size(), 100) << name;
  }
  EXPECT_FALSE(v->export_report(dir_.filePath("plan.docx")).ok());
}

}  // namespace
}  // namespace granary::gui

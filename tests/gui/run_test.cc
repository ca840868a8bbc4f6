// Runs as child processes: progress to 1 and the report loaded; cancel ends the child; a
// refused scenario fails with granary's message.
#include <gtest/gtest.h>
#include <signal.h>

#include <QSignalSpy>
#include <QTableWidget>
#include <cerrno>

#include "gui/main_window.h"
#include "gui/results_view.h"
#include "gui/run_controller.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

// A run of about half a second (64 readers, design nfs, request level).
TEST(Run, ASmallScenarioReachesProgressOneAndItsReportIsLoaded) {
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(testing::scenario("mlperf-cosmoflow-a100-nfs.json")));
  QSignalSpy progress(w.runs(), &RunController::progress_changed);
  QSignalSpy finished(&w, &MainWindow::run_finished);
  ASSERT_TRUE(w.start_run());
  EXPECT_TRUE(w.progress_bar()->isVisibleTo(&w));
  ASSERT_TRUE(finished.wait(60000));
  EXPECT_EQ(w.runs()->state(), RunState::kSucceeded) << w.runs()->outcome().message.toStdString();
  ASSERT_GE(progress.count(), 2);
  double last = 0;
  for (const QList<QVariant>& p : progress) {
    EXPECT_GE(p[0].toDouble(), last);
    last = p[0].toDouble();
  }
  EXPECT_EQ(last, 1.0);
  EXPECT_EQ(w.runs()->progress(), 1.0);
  ASSERT_TRUE(w.last_report().has_value());
  const nlohmann::json& report = *w.last_report();
  EXPECT_EQ(report["scenario"]["name"], "mlperf-cosmoflow-a100-nfs");
  ASSERT_TRUE(report["summary"].contains("accelerator_utilization"));
  // The results panel shows the summary's keys with the report's values.
  QTableWidget* table = w.results()->table();
  bool found = false;
  for (int r = 0; r < table->rowCount(); ++r) {
    if (table->item(r, 0)->text() == "accelerator_utilization.mean") {
      found = true;
      EXPECT_DOUBLE_EQ(table->item(r, 1)->text().toDouble(),
                       report["summary"]["accelerator_utilization"]["mean"].get<double>());
    }
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(w.runs()->outcome().summary_text.isEmpty());  // granary run's readable summary
}

// A run of some 20 s, cancelled once it reports progress: the child is gone, the run cancelled.
TEST(Run, CancelEndsTheChildProcess) {
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(testing::scenario("mlperf-unet3d-a100-rados.json")));
  QSignalSpy progress(w.runs(), &RunController::progress_changed);
  QSignalSpy finished(&w, &MainWindow::run_finished);
  ASSERT_TRUE(w.start_run());
  const qint64 pid = w.runs()->child_pid();
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(progress.wait(30000));
  ASSERT_EQ(finished.count(), 0);
  w.cancel_run();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(w.runs()->state(), RunState::kCancelled);
  EXPECT_FALSE(w.runs()->is_running());
  EXPECT_FALSE(w.last_report().has_value());
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), -1);  // reaped: no such process
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(w.results()->headline(), "Run cancelled.");
}

// The controller runs what it is given: a scenario granary refuses ends as a failed run with
// granary's one-line message (the main window validates before it runs).
TEST(Run, ARefusedScenarioFailsWithGranarysMessage) {
  auto doc = testing::load(testing::flagship());
  doc->set_value(JsonPointer("/cluster/clients/count"), 0);
  RunController runs;
  QSignalSpy finished(&runs, &RunController::finished);
  ASSERT_TRUE(runs.start(*doc));
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_EQ(runs.state(), RunState::kFailed);
  EXPECT_EQ(runs.outcome().exit_code, 2);
  EXPECT_NE(runs.outcome().message.indexOf("cluster.clients.count"), -1)
      << runs.outcome().message.toStdString();
  // The window refuses it before starting anything.
  MainWindow w(testing::quiet_options());
  w.document()->set_value(JsonPointer("/cluster/clients/count"), 0);
  EXPECT_FALSE(w.start_run());
  EXPECT_FALSE(w.runs()->is_running());
}

}  // namespace
}  // namespace granary::gui

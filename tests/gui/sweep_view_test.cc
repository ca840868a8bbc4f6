// The sweep view: sweep files read (and refused with the key or file named), the values typed
// and their defaults, charts and table filled from a sweep's JSON, a sweep run from the main
// window (`granary plan sweep`, three points of a small read storm, a few seconds) and one
// cancelled, the screenshot mode's --view sweep and --sweep.
#include "gui/sweep_view.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <QAbstractAxis>
#include <QFile>
#include <QImage>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <cerrno>
#include <fstream>

#include "gui/main_window.h"
#include "gui/sweep_data.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

using nlohmann::json;

json point(int value, double read, double au, bool meets) {
  return {
      {"value", value},
      {"client_nodes", value},
      {"accelerators", 4 * value},
      {"read_gibps", read},
      {"read_gibps_of", "epoch"},
      {"demand_gibps", 6.0 * value},
      {"read_bound_gibps", 18.4},
      {"binding", "drives as placed"},
      {"accelerator_utilization", au},
      {"meets_threshold", meets},
      {"saturated_count", meets ? 0 : 3},
      {"saturated_first", json::array({{{"name", "drive0"}, {"kind", "drive"}, {"at_s", 1.5}}})},
      {"busiest_kind", "drive"},
      {"busiest_kind_mean", meets ? 0.4 : 0.97},
      {"fidelity", "request"}};
}

// A sweep shaped as granary plan sweep writes it (docs/report-format.md "Sweeps").
json a_sweep() {
  return {{"granary_sweep", 1},
          {"scenario", {{"name", "small-read-storm"}, {"seed", 7}}},
          {"parameter", "cluster.clients.count"},
          {"au_threshold", 0.9},
          {"points", json::array({point(1, 5.9, 0.98, true), point(2, 11.7, 0.97, true),
                                  point(4, 17.8, 0.74, false), point(8, 18.1, 0.38, false)})},
          {"saturation",
           {{"au_below_threshold_at", 4},
            {"throughput_plateau_at", 8},
            {"at", 4},
            {"limited_by", "saturated drive (97% busy on average)"}}}};
}

QLineSeries* series(QChart* chart, const QString& object_name) {
  for (QAbstractSeries* s : chart->series()) {
    if (s->objectName() == object_name) return qobject_cast<QLineSeries*>(s);
  }
  return nullptr;
}

// The small read storm of PlanCli's sweep test: 3 storage servers of one drive each, 1600 files,
// one epoch, no failures; its drives saturate at about 3 client nodes.
QString small_read_storm(const QTemporaryDir& dir) {
  QFile in(testing::scenario("ci/osd-failure-read-storm.json"));
  EXPECT_TRUE(in.open(QIODevice::ReadOnly));
  json s = json::parse(in.readAll().toStdString());
  s.erase("failures");
  s.erase("expect");
  s["storage"]["rados"].erase("recovery");
  s["cluster"]["storage"]["count"] = 3;
  s["cluster"]["storage"]["drive"]["count"] = 1;
  s["cluster"]["clients"]["count"] = 4;
  s["workloads"][0]["files"] = 1600;
  s["workloads"][0]["epochs"] = 1;
  const QString path = dir.filePath("small.json");
  std::ofstream(path.toStdString()) << s.dump(2);
  return path;
}

TEST(SweepData, ReadsASweepAndNamesWhatIsWrong) {
  auto s = sweep_of(a_sweep());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->scenario_name, "small-read-storm");
  EXPECT_EQ(s->seed, "7");
  EXPECT_EQ(s->parameter, SweepParameter::kClientNodes);
  ASSERT_EQ(s->points.size(), 4u);
  EXPECT_EQ(s->points[2].saturated_first, "drive0");
  EXPECT_EQ(s->saturation_at, 4);
  EXPECT_EQ(s->throughput_plateau_at, 8);

  json bad = a_sweep();
  bad["points"][1].erase("read_gibps");
  EXPECT_EQ(sweep_of(bad).status().message(),
            "points[1].read_gibps: expected a number, found nothing");
  bad = a_sweep();
  bad["points"][2]["value"] = 2;
  EXPECT_EQ(sweep_of(bad).status().message(),
            "points[2].value: expected values ascending, found 2 after 2");
  bad = a_sweep();
  bad["parameter"] = "cluster.storage.count";
  EXPECT_NE(sweep_of(bad).status().message().find("parameter: expected cluster.clients.count"),
            std::string::npos);
  bad = a_sweep();
  bad["saturation"]["at"] = "four";
  EXPECT_EQ(sweep_of(bad).status().message(),
            "saturation.at: expected a whole number or null, found \"four\"");

  QTemporaryDir dir;
  auto write = [&dir](const char* name, const std::string& text) {
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << text;
    return path;
  };
  const QString not_json = write("a.json", "{ nope");
  EXPECT_NE(load_sweep_file(not_json).status().message().find("a.json: not JSON"),
            std::string::npos);
  const QString report = write("r.json", R"({"granary_report": 2})");
  EXPECT_NE(load_sweep_file(report).status().message().find(
                "r.json: not a Granary sweep (no granary_sweep key"),
            std::string::npos);
  json v2 = a_sweep();
  v2["granary_sweep"] = 2;
  EXPECT_NE(load_sweep_file(write("v2.json", v2.dump()))
                .status()
                .message()
                .find("v2.json: sweep format 2, expected 1"),
            std::string::npos);
  bad = a_sweep();
  bad["points"][0]["meets_threshold"] = 1;
  EXPECT_NE(load_sweep_file(write("b.json", bad.dump()))
                .status()
                .message()
                .find("b.json: points[0].meets_threshold: expected true or false, found 1"),
            std::string::npos);
  EXPECT_NE(load_sweep_file(dir.filePath("missing.json"))
                .status()
                .message()
                .find("missing.json: cannot read"),
            std::string::npos);
  json read;
  ASSERT_TRUE(load_sweep_file(write("ok.json", a_sweep().dump()), &read).ok());
  EXPECT_EQ(read, a_sweep());
}

TEST(SweepData, ValuesParseAsPlanSweepTakesThem) {
  EXPECT_EQ(*parse_sweep_values("8, 16 32,64"), (std::vector<int>{8, 16, 32, 64}));
  EXPECT_EQ(parse_sweep_values("").status().message(), "expected values such as 8, 16, 32");
  EXPECT_EQ(parse_sweep_values("8, x").status().message(), "expected whole numbers, found 'x'");
  EXPECT_EQ(parse_sweep_values("0, 2").status().message(),
            "expected values of at least 1, found 0");
  EXPECT_EQ(parse_sweep_values("4, 2").status().message(),
            "expected ascending values, found 4 before 2");
  QString many;
  for (int i = 1; i <= 33; ++i) many += QString::number(i) + ",";
  EXPECT_EQ(parse_sweep_values(many).status().message(), "at most 32 values, found 33");
  EXPECT_EQ(default_sweep_values(128), (std::vector<int>{8, 16, 32, 64, 128}));
  EXPECT_EQ(default_sweep_values(12), (std::vector<int>{1, 2, 4, 8, 12}));
  EXPECT_EQ(default_sweep_values(4), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(default_sweep_values(1), (std::vector<int>{1}));
  EXPECT_EQ(sweep_values_text({1, 2, 4}), "1, 2, 4");
}

TEST(SweepView, ChartsAndTableFollowTheSweep) {
  SweepView v;
  QString error;
  ASSERT_TRUE(v.set_sweep(a_sweep(), "sweep s.json", &error)) << error.toStdString();
  QLineSeries* read = series(v.throughput_chart(), "data:read_gibps");
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->count(), 4);
  EXPECT_EQ(read->at(2), QPointF(4, 17.8));
  EXPECT_TRUE(read->pointsVisible());
  ASSERT_NE(series(v.throughput_chart(), "data:demand_gibps"), nullptr);
  EXPECT_EQ(series(v.throughput_chart(), "data:demand_gibps")->at(3), QPointF(8, 48));
  ASSERT_NE(series(v.throughput_chart(), "data:read_bound_gibps"), nullptr);
  QLineSeries* au = series(v.au_chart(), "data:accelerator_utilization");
  ASSERT_NE(au, nullptr);
  EXPECT_EQ(au->at(3), QPointF(8, 0.38));
  QLineSeries* threshold = series(v.au_chart(), "ref:threshold 0.90");
  ASSERT_NE(threshold, nullptr);
  EXPECT_EQ(threshold->at(0).y(), 0.9);
  for (QChart* c : {v.throughput_chart(), v.au_chart()}) {
    QLineSeries* marker = series(c, "marker:saturation");
    ASSERT_NE(marker, nullptr);
    EXPECT_EQ(marker->at(0).x(), 4);
    // 1..8 spans 8x: a log2 axis.
    auto* x = qobject_cast<QLogValueAxis*>(c->axes(Qt::Horizontal).front());
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->base(), 2);
    EXPECT_EQ(x->titleText(), "client nodes (log2 scale)");
  }
  EXPECT_EQ(v.table()->rowCount(), 4);
  EXPECT_EQ(v.table()->horizontalHeaderItem(0)->text(), "client nodes (swept)");
  EXPECT_EQ(v.table()->horizontalHeaderItem(1)->text(), "accelerators per node");
  EXPECT_EQ(v.table()->item(2, 1)->text(), "4");
  EXPECT_EQ(v.table()->item(2, 3)->text(), "17.80");
  EXPECT_EQ(v.table()->item(2, 9)->text(), "no");
  EXPECT_TRUE(v.table()->item(2, 0)->font().bold());  // the saturation point
  EXPECT_FALSE(v.table()->item(1, 0)->font().bold());
  EXPECT_TRUE(v.saturation_text().contains("AU falls below 0.90 at 4 client nodes"))
      << v.saturation_text().toStdString();
  EXPECT_TRUE(v.saturation_text().contains("throughput stops growing at 8 client nodes"));
  EXPECT_TRUE(v.saturation_text().contains("saturated drive (97% busy on average)"));
  EXPECT_TRUE(v.headline().contains("small-read-storm (seed 7) over client nodes: 4 points"));
  // The controls show what was swept.
  EXPECT_EQ(v.values_edit()->text(), "1, 2, 4, 8");
  EXPECT_EQ(v.parameter(), SweepParameter::kClientNodes);

  // Values spanning less than 8x: a linear axis; nothing saturated: no marker.
  json flat = a_sweep();
  flat["points"] = json::array({point(2, 11.7, 0.97, true), point(4, 17.8, 0.93, true)});
  flat["saturation"] = {{"au_below_threshold_at", nullptr},
                        {"throughput_plateau_at", nullptr},
                        {"at", nullptr},
                        {"limited_by", nullptr}};
  ASSERT_TRUE(v.set_sweep(flat, {}, &error)) << error.toStdString();
  EXPECT_EQ(qobject_cast<QLogValueAxis*>(v.au_chart()->axes(Qt::Horizontal).front()), nullptr);
  EXPECT_EQ(series(v.au_chart(), "marker:saturation"), nullptr);
  EXPECT_TRUE(v.saturation_text().contains("AU stays at or above 0.90 at every point, up to 4"));
  // Not a sweep: refused, the sweep shown stays.
  json bad = flat;
  bad.erase("points");
  EXPECT_FALSE(v.set_sweep(bad, {}, &error));
  EXPECT_EQ(error, "points: expected an array of at least one point");
  EXPECT_EQ(v.table()->rowCount(), 2);
}

TEST(SweepView, ValuesDefaultFromTheScenarioUntilTyped) {
  SweepView v;
  QSignalSpy requested(&v, &SweepView::run_requested);
  v.set_scenario_sizes(128, 8);
  EXPECT_EQ(v.values_edit()->text(), "8, 16, 32, 64, 128");
  v.set_parameter(SweepParameter::kAcceleratorsPerNode);
  EXPECT_EQ(v.values_edit()->text(), "1, 2, 4, 8");
  v.run_button()->click();
  ASSERT_EQ(requested.count(), 1);
  EXPECT_EQ(requested[0][0].value<SweepParameter>(), SweepParameter::kAcceleratorsPerNode);
  // Typed values stay when the scenario changes; bad ones are named and not run.
  v.values_edit()->setText("2, 1");
  emit v.values_edit()->textEdited("2, 1");
  EXPECT_EQ(v.values_error()->text(), "sweep values: expected ascending values, found 2 before 1");
  EXPECT_FALSE(v.run_button()->isEnabled());
  v.set_scenario_sizes(64, 4);
  EXPECT_EQ(v.values_edit()->text(), "2, 1");
  v.set_values({2, 4});
  EXPECT_TRUE(v.run_button()->isEnabled());
  EXPECT_TRUE(v.values_error()->text().isEmpty());
  v.set_running(true);
  EXPECT_FALSE(v.run_button()->isEnabled());
  EXPECT_TRUE(v.cancel_button()->isEnabled());
}

// A scenario without accelerators_per_node has the format's default, 8, to sweep up to.
TEST(SweepRun, DefaultsFollowTheFormatsDefaults) {
  QTemporaryDir dir;
  const QString path = small_read_storm(dir);
  QFile in(path);
  ASSERT_TRUE(in.open(QIODevice::ReadOnly));
  json s = json::parse(in.readAll().toStdString());
  in.close();
  s["cluster"]["clients"].erase("accelerators_per_node");
  s["workloads"][0]["files"] = 6400;  // enough files for 8 accelerators on each node
  std::ofstream(path.toStdString()) << s.dump(2);
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(path));
  ASSERT_TRUE(w.document()->validation().ok) << w.document()->validation().message;
  w.sweep_view()->set_parameter(SweepParameter::kAcceleratorsPerNode);
  EXPECT_EQ(w.sweep_view()->values_edit()->text(), "1, 2, 4, 8");
}

// Three points of a small read storm: the sweep view shows them, the progress bar advanced
// through the points, and the drives saturate inside the sweep.
TEST(SweepRun, ASweepFromTheWindowShowsItsPoints) {
  QTemporaryDir dir;
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(small_read_storm(dir)));
  EXPECT_EQ(w.sweep_view()->values_edit()->text(), "1, 2, 4");  // from the 4 client nodes
  QSignalSpy progress(w.sweeps(), &RunController::progress_changed);
  QSignalSpy finished(&w, &MainWindow::sweep_finished);
  ASSERT_TRUE(w.start_sweep(SweepParameter::kClientNodes, {1, 2, 4}));
  EXPECT_TRUE(w.progress_bar()->isVisibleTo(&w));
  EXPECT_FALSE(w.start_run());  // one child at a time
  ASSERT_TRUE(finished.wait(120000));
  EXPECT_EQ(w.sweeps()->state(), RunState::kSucceeded)
      << w.sweeps()->outcome().message.toStdString();
  ASSERT_GE(progress.count(), 3);
  double last = 0;
  int last_point = 0;
  for (const QList<QVariant>& p : progress) {
    EXPECT_GE(p[0].toDouble(), last);
    last = p[0].toDouble();
  }
  last_point = w.sweeps()->last_progress().value("point", 0);
  EXPECT_EQ(last, 1.0);
  EXPECT_EQ(last_point, 3);
  EXPECT_EQ(w.sweeps()->last_progress().value("points", 0), 3);
  ASSERT_TRUE(w.sweep_view()->sweep().has_value());
  const Sweep& s = *w.sweep_view()->sweep();
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[2].accelerators, 16);
  EXPECT_EQ(s.au_below_threshold_at, 4);
  EXPECT_TRUE(w.sweep_view()->saturation_text().contains("saturated drive"))
      << w.sweep_view()->saturation_text().toStdString();
  EXPECT_FALSE(w.progress_bar()->isVisibleTo(&w));
  EXPECT_FALSE(w.last_report().has_value());  // a sweep is not a run's report
}

TEST(SweepRun, CancelEndsTheSweep) {
  QTemporaryDir dir;
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(small_read_storm(dir)));
  QSignalSpy progress(w.sweeps(), &RunController::progress_changed);
  QSignalSpy finished(&w, &MainWindow::sweep_finished);
  ASSERT_TRUE(w.start_sweep(SweepParameter::kClientNodes, {1, 2, 4, 8, 16, 32}));
  const qint64 pid = w.sweeps()->child_pid();
  ASSERT_TRUE(progress.wait(30000));
  ASSERT_EQ(finished.count(), 0);
  w.sweep_view()->cancel_button()->click();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(w.sweeps()->state(), RunState::kCancelled);
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(w.sweep_view()->headline(), "Sweep cancelled.");
  EXPECT_FALSE(w.sweep_view()->sweep().has_value());
  EXPECT_TRUE(w.sweep_view()->run_button()->isEnabled());
}

// granary-gui as a child, with this test's environment (the offscreen platform: an option
// error without --screenshot still needs a platform).
int run_gui(const QStringList& args, QString* err) {
  QProcess p;
  p.start(GRANARY_GUI_BINARY, args);
  if (!p.waitForFinished(120000)) return -1;
  *err = QString::fromUtf8(p.readAllStandardError());
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

TEST(SweepScreenshot, ASweepFileAndASweepRunBecomePngs) {
  QTemporaryDir dir;
  const QString sweep = dir.filePath("sweep.json");
  std::ofstream(sweep.toStdString()) << a_sweep().dump();
  QString err;
  ASSERT_EQ(run_gui({"--screenshot", dir.filePath("a.png"), "--sweep", sweep}, &err), 0)
      << err.toStdString();
  EXPECT_EQ(QImage(dir.filePath("a.png")).size(), QSize(1400, 900));
  ASSERT_EQ(run_gui({"--screenshot", dir.filePath("b.png"), "--view", "sweep", "--size", "1000x700",
                     small_read_storm(dir)},
                    &err),
            0)
      << err.toStdString();
  EXPECT_EQ(QImage(dir.filePath("b.png")).size(), QSize(1000, 700));
  EXPECT_EQ(
      run_gui({"--screenshot", dir.filePath("c.png"), "--sweep", dir.filePath("no.json")}, &err),
      2);
  EXPECT_TRUE(err.contains("no.json: cannot read")) << err.toStdString();
  EXPECT_EQ(err.count('\n'), 1);
  EXPECT_EQ(run_gui({"--sweep", sweep}, &err), 2);
  EXPECT_TRUE(err.contains("--sweep: only with --screenshot")) << err.toStdString();
}

}  // namespace
}  // namespace granary::gui

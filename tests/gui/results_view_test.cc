// The results view on real reports, made in the test by running the granary binary on small
// shipped scenarios (osd-failure-read-storm ~1 s, mlperf-resnet50-h100-pfs ~3 s,
// carry-data-checkpoint-3x ~4 s): chart series with the report's point counts, axis titles with
// units, failure markers, the heat map's rows, the CDF's points, compare mode, a run filling
// the charts and the topology's bottleneck, a report without recovery, bad report files, and
// the screenshot of the results view.
#include "gui/results_view.h"

#include <gtest/gtest.h>

#include <QAbstractAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QImage>
#include <QLineSeries>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <map>
#include <set>

#include "gui/heat_map.h"
#include "gui/main_window.h"
#include "gui/report_data.h"
#include "gui/run_controller.h"
#include "gui/topology_view.h"
#include "tests/gui/gui_test_util.h"

namespace granary::gui {
namespace {

using nlohmann::json;

QTemporaryDir& report_dir() {
  static QTemporaryDir dir;
  return dir;
}

// The report of a shipped scenario, written by `granary run` once per test program.
QString report_path(const std::string& scenario) {
  static std::map<std::string, QString> done;
  if (done.count(scenario)) return done[scenario];
  const QString out = report_dir().filePath(QString::fromStdString(scenario).replace('/', '_'));
  QProcess p;
  p.start(granary_binary(),
          {"run", testing::scenario(scenario), "--out", out, "--progress", "none"});
  EXPECT_TRUE(p.waitForFinished(120000));
  // 0, or 1 when an expectation failed (the report is written all the same).
  EXPECT_LE(p.exitCode(), 1) << p.readAllStandardError().toStdString();
  done[scenario] = out;
  return out;
}

json report_of(const std::string& scenario) {
  json r;
  const Status s = load_report_file(report_path(scenario), &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

const char* kFailure = "ci/osd-failure-read-storm.json";
const char* kTraining = "mlperf-resnet50-h100-pfs.json";
const char* kCheckpoint = "ci/carry-data-checkpoint-3x.json";

QList<QAbstractSeries*> series_named(QChart* chart, const QString& prefix) {
  QList<QAbstractSeries*> out;
  for (QAbstractSeries* s : chart->series()) {
    if (s->objectName().startsWith(prefix)) out << s;
  }
  return out;
}

QLineSeries* line(QChart* chart, const QString& object_name) {
  for (QAbstractSeries* s : chart->series()) {
    if (s->objectName() == object_name) return qobject_cast<QLineSeries*>(s);
  }
  return nullptr;
}

QStringList axis_titles(QChart* chart) {
  QStringList out;
  for (QAbstractAxis* a : chart->axes()) out << a->titleText();
  return out;
}

ResultsView::Options quiet_view_options() {
  ResultsView::Options o;
  o.ask_report_file = [](QWidget*) { return QString(); };
  o.show_error = [](QWidget*, const QString& m) { ADD_FAILURE() << m.toStdString(); };
  return o;
}

TEST(ResultsView, ThroughputAndAuSeriesHaveTheReportsPointsAndUnits) {
  const json r = report_of(kFailure);
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  ASSERT_NE(v.throughput_chart(), nullptr);
  const size_t n = r["series"]["t_s"].size();
  ASSERT_GT(n, 2u);
  QLineSeries* read = line(v.throughput_chart(), "data:read");
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(static_cast<size_t>(read->count()), n);
  EXPECT_DOUBLE_EQ(read->at(3).x(), r["series"]["t_s"][3].get<double>());
  EXPECT_DOUBLE_EQ(read->at(3).y(), r["series"]["read_gibps"][3].get<double>());
  EXPECT_TRUE(axis_titles(v.throughput_chart()).contains("time (s)"));
  EXPECT_TRUE(axis_titles(v.throughput_chart()).contains("throughput (GiB/s)"));
  // The bound, dashed, at read_bound_gibps.
  const auto refs = series_named(v.throughput_chart(), "ref:");
  ASSERT_EQ(refs.size(), 1);
  EXPECT_DOUBLE_EQ(qobject_cast<QLineSeries*>(refs[0])->at(0).y(),
                   r["bounds"]["read_bound_gibps"].get<double>());
  ASSERT_NE(v.au_chart(), nullptr);
  QLineSeries* windowed = line(v.au_chart(), "data:windowed");
  QLineSeries* cumulative = line(v.au_chart(), "data:cumulative");
  ASSERT_TRUE(windowed && cumulative);
  EXPECT_EQ(static_cast<size_t>(windowed->count()), n);
  EXPECT_EQ(static_cast<size_t>(cumulative->count()), n);
  EXPECT_EQ(series_named(v.au_chart(), "ref:").size(), 1);  // the AU threshold
  EXPECT_TRUE(axis_titles(v.au_chart()).contains("AU (fraction, 0..1)"));
  // AU per accelerator: one bar per simulated accelerator (or a histogram of 10 bins).
  const size_t accelerators = r["accelerators"]["utilization"].size();
  auto* bars = qobject_cast<QBarSeries*>(v.au_per_accelerator_chart()->series().front());
  ASSERT_NE(bars, nullptr);
  EXPECT_EQ(static_cast<size_t>(bars->barSets().front()->count()),
            accelerators <= 64 ? accelerators : 10u);
  for (QChart* c :
       {v.throughput_chart(), v.au_chart(), v.latency_chart(), v.kind_chart(),
        v.recovery_pgs_chart(), v.recovery_rate_chart(), v.au_per_accelerator_chart()}) {
    ASSERT_NE(c, nullptr);
    for (QAbstractAxis* a : c->axes()) {
      if (!a->isTitleVisible()) continue;  // past 16 accelerators: the chart's title says it
      EXPECT_TRUE(a->titleText().contains('('))
          << c->title().toStdString() << ": " << a->titleText().toStdString();
    }
  }
}

// Past 64 accelerators the per-accelerator chart is a histogram of 10 bins of 0.1 AU.
TEST(ResultsView, ManyAcceleratorsGiveAnAuHistogram) {
  json r = report_of(kFailure);
  json au = json::array();
  for (int i = 0; i < 100; ++i) au.push_back((i + 0.5) / 100);  // ten in each bin
  au.push_back(1.0);                                            // AU 1: the last bin
  r["accelerators"]["utilization"] = au;
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  ASSERT_NE(v.au_per_accelerator_chart(), nullptr);
  EXPECT_EQ(v.au_per_accelerator_chart()->title(),
            "MLPerf AU per accelerator: histogram of 101 simulated");
  auto* bars = qobject_cast<QBarSeries*>(v.au_per_accelerator_chart()->series().front());
  ASSERT_NE(bars, nullptr);
  const QBarSet* set = bars->barSets().front();
  ASSERT_EQ(set->count(), 10);
  for (int b = 0; b < 9; ++b) EXPECT_EQ(set->at(b), 10) << "bin " << b;
  EXPECT_EQ(set->at(9), 11);
  EXPECT_TRUE(
      axis_titles(v.au_per_accelerator_chart())
          .contains("MLPerf AU (fraction; bins of 0.1 from the value shown, 1 in the last)"));
}

TEST(ResultsView, AFailureRunHasItsTimelineAsMarkersAndRecoveryCharts) {
  const json r = report_of(kFailure);
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  const json& events = r["recovery"]["events"];
  ASSERT_GE(events.size(), 1u);
  const auto markers = series_named(v.throughput_chart(), "marker:");
  ASSERT_EQ(static_cast<size_t>(markers.size()), events.size());
  EXPECT_EQ(markers[0]->objectName(),
            "marker:" + QString::fromStdString(events[0]["kind"].get<std::string>()));
  EXPECT_DOUBLE_EQ(qobject_cast<QLineSeries*>(markers[0])->at(0).x(),
                   events[0]["at_s"].get<double>());
  if (events[0]["marked_out_at_s"].is_number()) {
    EXPECT_GE(series_named(v.throughput_chart(), "marker-light:out").size(), 1);
  }
  ASSERT_NE(v.recovery_pgs_chart(), nullptr);
  QLineSeries* degraded = line(v.recovery_pgs_chart(), "data:degraded_pgs");
  ASSERT_NE(degraded, nullptr);
  EXPECT_EQ(static_cast<size_t>(degraded->count()), r["recovery"]["series"]["t_s"].size());
  EXPECT_TRUE(axis_titles(v.recovery_pgs_chart()).contains("bytes remaining (GiB)"));
  EXPECT_EQ(series_named(v.recovery_pgs_chart(), "marker:").size(), markers.size());
  ASSERT_NE(v.recovery_rate_chart(), nullptr);
}

TEST(ResultsView, HeatMapHasOneRowPerResourceGroupedByKind) {
  const json r = report_of(kFailure);
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  ASSERT_NE(v.heat_map(), nullptr);
  const json& u = r["utilization"];
  EXPECT_EQ(static_cast<size_t>(v.heat_map()->row_count()), u["resources"].size());
  EXPECT_EQ(static_cast<size_t>(v.heat_map()->column_count()), u["t_s"].size());
  // Each kind once, in one block of rows.
  const QStringList kinds = v.heat_map()->kinds();
  EXPECT_EQ(static_cast<size_t>(kinds.size()), u["kinds"].size());
  EXPECT_EQ(QSet<QString>(kinds.begin(), kinds.end()).size(), kinds.size());
  // The kinds' mean series, one line each, and the tables of what saturated and the busiest.
  for (const auto& [kind, k] : u["kinds"].items()) {
    QLineSeries* s = line(v.kind_chart(), "data:" + QString::fromStdString(kind));
    ASSERT_NE(s, nullptr) << kind;
    EXPECT_EQ(static_cast<size_t>(s->count()), u["t_s"].size());
  }
  EXPECT_EQ(static_cast<size_t>(v.saturated_table()->rowCount()), u["saturated"]["first"].size());
  EXPECT_EQ(static_cast<size_t>(v.busiest_table()->rowCount()), u["busiest"].size());
  EXPECT_EQ(HeatMap::color_of(1.0), QColor(170, 20, 30));
}

TEST(ResultsView, LatencyCdfPointsAreTheReports) {
  const json r = report_of(kCheckpoint);
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  ASSERT_NE(v.latency_chart(), nullptr);
  for (const char* op : {"read", "write"}) {
    if (!r["latency_ms"].contains(op)) continue;
    const json& cdf = r["latency_ms"][op]["cdf"];
    QLineSeries* s = line(v.latency_chart(), QString("data:") + op);
    ASSERT_NE(s, nullptr) << op;
    ASSERT_EQ(static_cast<size_t>(s->count()), cdf["ms"].size());
    for (int i = 0; i < s->count(); ++i) {
      EXPECT_DOUBLE_EQ(s->at(i).x(), cdf["ms"][static_cast<size_t>(i)].get<double>());
      EXPECT_DOUBLE_EQ(s->at(i).y(), cdf["percent"][static_cast<size_t>(i)].get<double>());
    }
    EXPECT_EQ(series_named(v.latency_chart(), QString("p99:") + op).size(), 1);
  }
  const QStringList titles = axis_titles(v.latency_chart());
  EXPECT_TRUE(titles.contains("operations at or below (%)"));
  EXPECT_TRUE(titles.contains("latency (ms)") || titles.contains("latency (ms, log scale)"));
  // A checkpoint: drive write and read on the throughput chart, no AU, no recovery.
  QLineSeries* write = line(v.throughput_chart(), "data:drive write");
  ASSERT_NE(write, nullptr);
  EXPECT_EQ(static_cast<size_t>(write->count()), r["series"]["t_s"].size());
  EXPECT_EQ(v.au_chart(), nullptr);
  EXPECT_EQ(v.recovery_pgs_chart(), nullptr);
}

TEST(ResultsView, AReportWithoutRecoveryHasNoRecoveryChartAndShowsItsTables) {
  const json r = report_of(kTraining);
  ASSERT_FALSE(r.contains("recovery"));
  ResultsView v(quiet_view_options());
  v.set_report(r, "done");
  EXPECT_EQ(v.recovery_pgs_chart(), nullptr);
  EXPECT_EQ(v.recovery_rate_chart(), nullptr);
  EXPECT_TRUE(series_named(v.throughput_chart(), "marker").isEmpty());
  ASSERT_NE(v.ceilings_table(), nullptr);
  EXPECT_EQ(static_cast<size_t>(v.ceilings_table()->rowCount()), r["bounds"]["ceilings"].size());
  ASSERT_NE(v.bounds_table(), nullptr);
  bool binding = false;
  for (int i = 0; i < v.bounds_table()->rowCount(); ++i) {
    if (v.bounds_table()->item(i, 0)->text() == "binding") {
      binding = v.bounds_table()->item(i, 1)->text().toStdString() == r["bounds"]["binding"];
    }
  }
  EXPECT_TRUE(binding);
  if (r.contains("expectations")) {
    ASSERT_NE(v.expectations_table(), nullptr);
    ASSERT_EQ(static_cast<size_t>(v.expectations_table()->rowCount()), r["expectations"].size());
    for (size_t i = 0; i < r["expectations"].size(); ++i) {
      EXPECT_EQ(v.expectations_table()->item(static_cast<int>(i), 0)->text(),
                r["expectations"][i]["passed"].get<bool>() ? "PASS" : "FAIL");
    }
  }
}

TEST(ResultsView, CompareDrawsBothRunsAndTwoSummaryColumns) {
  const json a = report_of(kFailure);
  const json b = report_of(kTraining);
  ResultsView v(quiet_view_options());
  v.set_report(a, "done");
  QString error;
  ASSERT_TRUE(v.compare_with_file(report_path(kTraining), &error)) << error.toStdString();
  EXPECT_TRUE(v.comparing());
  const auto data = series_named(v.throughput_chart(), "data:read");
  ASSERT_EQ(data.size(), 2);
  EXPECT_EQ(data[0]->name(), run_label(a) + ": read");
  EXPECT_EQ(data[1]->name(), run_label(b) + ": read");
  EXPECT_TRUE(data[0]->name().contains("(seed "));
  EXPECT_EQ(series_named(v.au_chart(), "data:windowed").size(), 2);
  ASSERT_EQ(v.table()->columnCount(), 3);
  EXPECT_EQ(v.table()->horizontalHeaderItem(1)->text(), run_label(a));
  EXPECT_EQ(v.table()->horizontalHeaderItem(2)->text(), run_label(b));
  v.clear_comparison();
  EXPECT_EQ(series_named(v.throughput_chart(), "data:read").size(), 1);
  // The previous run's report: the one shown before the last.
  v.set_report(b, "second");
  ASSERT_TRUE(v.has_previous());
  ASSERT_TRUE(v.compare_with_previous());
  EXPECT_EQ(series_named(v.throughput_chart(), "data:read").size(), 2);
}

TEST(ResultsView, BadReportFilesGiveAClearError) {
  QTemporaryDir dir;
  json r;
  Status s = load_report_file(dir.filePath("missing.json"), &r);
  EXPECT_NE(s.message().find("missing.json: cannot read"), std::string::npos) << s.message();
  QFile text(dir.filePath("text.json"));
  ASSERT_TRUE(text.open(QIODevice::WriteOnly));
  text.write("{ not json");
  text.close();
  s = load_report_file(text.fileName(), &r);
  EXPECT_NE(s.message().find("text.json: not JSON"), std::string::npos) << s.message();
  s = load_report_file(testing::scenario(kFailure), &r);
  EXPECT_NE(s.message().find("not a Granary report"), std::string::npos) << s.message();
  // The window shows the error and keeps its results view as it was.
  QString shown;
  MainWindowOptions o = testing::quiet_options();
  o.show_error = [&shown](QWidget*, const QString& m) { shown = m; };
  MainWindow w(o);
  EXPECT_FALSE(w.open_report(testing::scenario(kFailure)));
  EXPECT_TRUE(shown.contains("not a Granary report")) << shown.toStdString();
  EXPECT_EQ(w.results()->throughput_chart(), nullptr);
  EXPECT_TRUE(w.open_report(report_path(kFailure)));
  EXPECT_NE(w.results()->throughput_chart(), nullptr);
  QString error;
  EXPECT_FALSE(w.results()->compare_with_file(text.fileName(), &error));
  EXPECT_TRUE(error.contains("not JSON"));
  EXPECT_FALSE(w.results()->comparing());
}

TEST(ResultsView, ARunFillsTheChartsAndHighlightsTheBottleneck) {
  MainWindow w(testing::quiet_options());
  ASSERT_TRUE(w.open_file(testing::scenario(kFailure)));
  QSignalSpy finished(&w, &MainWindow::run_finished);
  ASSERT_TRUE(w.start_run());
  ASSERT_TRUE(finished.wait(60000));
  ASSERT_TRUE(w.last_report().has_value());
  const json& r = *w.last_report();
  ASSERT_NE(w.results()->throughput_chart(), nullptr);
  EXPECT_EQ(static_cast<size_t>(line(w.results()->throughput_chart(), "data:read")->count()),
            r["series"]["t_s"].size());
  EXPECT_EQ(static_cast<size_t>(w.results()->heat_map()->row_count()),
            r["utilization"]["resources"].size());
  const BottleneckLinks b = bottleneck_links_of(r);
  const std::vector<std::string> lit = w.topology()->highlighted_links();
  for (const std::string& name : b.names) {
    EXPECT_NE(std::find(lit.begin(), lit.end(), name), lit.end()) << name;
  }
  EXPECT_FALSE(lit.empty());
}

struct Exit {
  int code = -1;
  QString err;
};

Exit run_gui(const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("QT_QPA_PLATFORM");
  env.remove("DISPLAY");
  p.setProcessEnvironment(env);
  p.start(GRANARY_GUI_BINARY, args);
  if (!p.waitForFinished(120000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardError())};
}

// Distinct colours in a grid of samples: a blank window has a handful, charts many.
int colors_sampled(const QImage& image) {
  std::set<QRgb> colors;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) colors.insert(image.pixel(x, y));
  }
  return static_cast<int>(colors.size());
}

TEST(ResultsView, ScreenshotsOfTheResultsViewShowCharts) {
  QTemporaryDir dir;
  const QString from_report = dir.filePath("report.png");
  Exit a = run_gui({"--screenshot", from_report, "--report", report_path(kFailure)});
  ASSERT_EQ(a.code, 0) << a.err.toStdString();
  const QImage image(from_report);
  EXPECT_EQ(image.size(), QSize(1400, 900));
  EXPECT_GT(colors_sampled(image), 40);
  const QString from_run = dir.filePath("run.png");
  Exit b = run_gui({"--screenshot", from_run, "--view", "results", "--size", "1200x800",
                    testing::scenario(kFailure)});
  ASSERT_EQ(b.code, 0) << b.err.toStdString();
  EXPECT_EQ(QImage(from_run).size(), QSize(1200, 800));
  EXPECT_GT(colors_sampled(QImage(from_run)), 40);
  Exit compare = run_gui({"--screenshot", from_run, "--report", report_path(kFailure), "--compare",
                          report_path(kFailure)});
  EXPECT_EQ(compare.code, 0) << compare.err.toStdString();
  Exit bad = run_gui({"--screenshot", from_run, "--report", testing::scenario(kFailure)});
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(bad.err.contains("not a Granary report")) << bad.err.toStdString();
  EXPECT_EQ(bad.err.count('\n'), 1);
}

}  // namespace
}  // namespace granary::gui

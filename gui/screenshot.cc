// Screenshot mode (screenshot.h).
#include "gui/screenshot.h"

#include <QApplication>
#include <QEventLoop>
#include <QFile>
#include <QImage>
#include <QPixmap>
#include <QRegularExpression>
#include <functional>

#include "gui/planner_view.h"
#include "gui/results_view.h"
#include "gui/sweep_view.h"

namespace granary::gui {

std::optional<View> parse_view(const QString& text) {
  if (text == "editor") return View::kEditor;
  if (text == "topology") return View::kTopology;
  if (text == "results") return View::kResults;
  if (text == "sweep") return View::kSweep;
  if (text == "planner") return View::kPlanner;
  return std::nullopt;
}

std::optional<QSize> parse_size(const QString& text) {
  const QRegularExpression re("^(\\d{3,4})x(\\d{3,4})$");
  const QRegularExpressionMatch m = re.match(text);
  if (!m.hasMatch()) return std::nullopt;
  const int w = m.captured(1).toInt(), h = m.captured(2).toInt();
  if (w < 200 || h < 200 || w > 8000 || h > 8000) return std::nullopt;
  return QSize(w, h);
}

namespace {

// Starts a run or a sweep with `start` and waits until `controller` ends it (`finished` is the
// window's signal for it). An error when it could not start, or ended other than succeeded
// (or, with `expectation_failure_ok`, with an expectation failed: its report is shown).
Status run_and_wait(MainWindow& w, RunController* controller,
                    void (MainWindow::*finished)(const RunOutcome&),
                    const std::function<bool()>& start, const QString& scenario, const char* what,
                    bool expectation_failure_ok) {
  QEventLoop loop;
  RunOutcome outcome;
  QObject::connect(&w, finished, &loop, [&](const RunOutcome& r) {
    outcome = r;
    loop.quit();
  });
  if (!start() && !controller->is_running()) {
    return Status::invalid_argument(controller->outcome().message.toStdString());
  }
  if (controller->is_running()) loop.exec();
  if (outcome.state != RunState::kSucceeded &&
      !(expectation_failure_ok && outcome.state == RunState::kExpectationsFailed)) {
    return Status::invalid_argument(scenario.toStdString() + ": the " + what +
                                    " failed: " + outcome.message.simplified().toStdString());
  }
  return Status();
}

}  // namespace

Status write_screenshot(const ScreenshotOptions& o) {
  QString error;
  MainWindowOptions options;
  options.use_settings = false;
  options.ask_to_save = [](QWidget*, const QString&) { return QMessageBox::Discard; };
  options.ask_file_name = [](QWidget*, bool) { return QString(); };
  options.show_error = [&error](QWidget*, const QString& message) { error = message; };
  MainWindow w(options);
  if (!o.scenario.isEmpty() && !w.open_file(o.scenario)) {
    return Status::invalid_argument(error.toStdString());
  }
  if (!o.report.isEmpty()) {
    if (!w.open_report(o.report)) return Status::invalid_argument(error.toStdString());
  } else if (!o.sweep.isEmpty()) {
    if (!w.open_sweep(o.sweep)) return Status::invalid_argument(error.toStdString());
  } else if (!o.plan.isEmpty()) {
    if (!w.open_plan(o.plan)) return Status::invalid_argument(error.toStdString());
    if (!o.plan_result.isEmpty()) {
      QFile f(o.plan_result);
      const auto j = f.open(QIODevice::ReadOnly)
                         ? nlohmann::json::parse(f.readAll().toStdString(), nullptr, false)
                         : nlohmann::json(nullptr);
      if (!j.is_object() || !j.contains("granary_plan_result")) {
        return Status::invalid_argument(o.plan_result.toStdString() +
                                        ": not a plan result (granary plan capacity --out)");
      }
      w.planner_view()->set_result(j);
    }
  } else {
    const Validation& v = w.document()->validation();
    if (o.view != View::kEditor && !v.ok) return Status::invalid_argument(v.message);
  }
  if (o.view == View::kResults && o.report.isEmpty()) {
    if (Status s = run_and_wait(
            w, w.runs(), &MainWindow::run_finished, [&w] { return w.start_run(); }, o.scenario,
            "run", /*expectation_failure_ok=*/true);
        !s.ok()) {
      return s;
    }
  }
  if (o.view == View::kSweep && o.sweep.isEmpty()) {
    auto values = w.sweep_view()->values();  // the defaults from the scenario
    if (!values.ok()) return values.status();
    if (Status s = run_and_wait(
            w, w.sweeps(), &MainWindow::sweep_finished,
            [&] { return w.start_sweep(w.sweep_view()->parameter(), *values); }, o.scenario,
            "sweep", /*expectation_failure_ok=*/false);
        !s.ok()) {
      return s;
    }
  }
  if (!o.compare.isEmpty()) {
    QString compare_error;
    if (!w.results()->compare_with_file(o.compare, &compare_error)) {
      return Status::invalid_argument(compare_error.toStdString());
    }
  }
  w.show_view(o.view);
  w.resize(o.size);
  w.show();
  QApplication::processEvents();
  w.resize(o.size);  // after show: the window manager of a real platform may have changed it
  // Layout requests travel up one parent per round of events.
  for (int i = 0; i < 8; ++i) QApplication::processEvents();
  const QPixmap shot = w.grab();
  if (!shot.save(o.out_png, "PNG")) {
    return Status::io_error(o.out_png.toStdString() + ": cannot write the PNG");
  }
  return Status();
}

}  // namespace granary::gui

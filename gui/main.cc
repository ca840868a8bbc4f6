// granary-gui: the Qt planner (docs/gui.md). `granary-gui [SCENARIO]` opens the window;
// `granary-gui --screenshot OUT.png [--view editor|topology|results|sweep] [--size WxH] SCENARIO`
// (or `--screenshot OUT.png --report REPORT.json [SCENARIO]`: a report's results; `--sweep
// SWEEP.json [SCENARIO]`: a sweep file's) writes a view as a PNG without a display (exit 0;
// errors: one line on stderr, exit 2).
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>
#include <cstring>

#include "gui/main_window.h"
#include "gui/screenshot.h"

namespace {

int fail(const QString& message) {
  std::fprintf(stderr, "granary-gui: %s\n", message.simplified().toUtf8().constData());
  return 2;
}

// Screenshot mode: Qt's informational warnings (no XDG_RUNTIME_DIR, the offscreen platform's
// missing features) would break the one-line-on-error contract; critical messages still print.
void quiet_messages(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtCriticalMsg || type == QtFatalMsg) {
    std::fprintf(stderr, "granary-gui: %s\n", message.simplified().toUtf8().constData());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The screenshot mode needs no display: Qt's offscreen platform, unless one was chosen.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") != 0) continue;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler(quiet_messages);
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Granary");
  QApplication::setApplicationName("granary-gui");
  QApplication::setApplicationVersion("0.1.0");
  QCommandLineParser parser;
  parser.setApplicationDescription("Granary: plan GPU-cluster storage, run its simulation");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOption({"screenshot", "Write the view as a PNG and exit.", "OUT.png"});
  parser.addOption({"view", "The view to capture: editor, topology, results, sweep or planner.",
                    "VIEW", "editor"});
  parser.addOption({"report",
                    "With --screenshot: show this report (granary run --out) in the "
                    "results view instead of running the scenario.",
                    "REPORT.json"});
  parser.addOption({"sweep",
                    "With --screenshot: show this sweep (granary plan sweep --out) in the "
                    "sweep view instead of sweeping the scenario.",
                    "SWEEP.json"});
  parser.addOption(
      {"compare", "With --screenshot: draw this report beside the results.", "OTHER.json"});
  parser.addOption({"plan", "With --screenshot: open this plan in the planner view.", "PLAN.json"});
  parser.addOption({"plan-result",
                    "With --screenshot and --plan: show this result (granary plan capacity "
                    "--out) in the planner view.",
                    "RESULT.json"});
  parser.addOption({"size", "The window size in pixels (default 1400x900).", "WxH", "1400x900"});
  parser.addPositionalArgument("scenario", "A scenario file (JSON) to open.", "[SCENARIO.json]");
  if (!parser.parse(QApplication::arguments())) return fail(parser.errorText());
  if (parser.isSet("help")) parser.showHelp(0);
  if (parser.isSet("version")) parser.showVersion();
  const QStringList files = parser.positionalArguments();
  if ((parser.isSet("report") || parser.isSet("compare") || parser.isSet("sweep")) &&
      !parser.isSet("screenshot")) {
    return fail(
        "--report, --compare, --sweep: only with --screenshot (File > Open Report…, File > "
        "Open Sweep… and the results view's Compare buttons in the window)");
  }
  if (parser.isSet("report") && parser.isSet("sweep")) {
    return fail("--report, --sweep: expected one of them, found both");
  }
  if (files.size() > 1) return fail("expected one scenario file, found " + files.join(" "));

  if (parser.isSet("screenshot")) {
    granary::gui::ScreenshotOptions o;
    o.out_png = parser.value("screenshot");
    o.report = parser.value("report");
    o.compare = parser.value("compare");
    o.sweep = parser.value("sweep");
    o.plan = parser.value("plan");
    o.plan_result = parser.value("plan-result");
    if (files.isEmpty() && o.report.isEmpty() && o.sweep.isEmpty() && o.plan.isEmpty()) {
      return fail(
          "--screenshot: expected a scenario file, --report REPORT.json or --sweep SWEEP.json");
    }
    if (!files.isEmpty()) o.scenario = files.front();
    QString view_name = parser.value("view");
    if (!parser.isSet("view") && !o.report.isEmpty()) view_name = "results";
    if (!parser.isSet("view") && !o.sweep.isEmpty()) view_name = "sweep";
    if (!parser.isSet("view") && !o.plan.isEmpty()) view_name = "planner";
    const auto view = granary::gui::parse_view(view_name);
    if (!view)
      return fail("--view: expected editor, topology, results, sweep or planner, found '" +
                  parser.value("view") + "'");
    o.view = *view;
    const auto size = granary::gui::parse_size(parser.value("size"));
    if (!size)
      return fail("--size: expected WxH (200..8000 each), found '" + parser.value("size") + "'");
    o.size = *size;
    const granary::Status s = granary::gui::write_screenshot(o);
    return s.ok() ? 0 : fail(QString::fromStdString(s.message()));
  }
  granary::gui::MainWindow window;
  if (!files.isEmpty()) window.open_file(files.front());
  window.show();
  return QApplication::exec();
}

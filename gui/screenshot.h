// `granary-gui --screenshot OUT.png [--view editor|topology|results|sweep] [--size WxH] SCENARIO`:
// opens the scenario in a main window of the given size (default 1400x900), shows the view and
// writes the window as a PNG, with no display (main() selects Qt's offscreen platform). The
// results view first runs the scenario as a child process (`granary run`, run_controller.h);
// `--report REPORT.json` shows an existing report's results view instead, without a run;
// `--compare OTHER.json` draws a second report beside it. The sweep view first sweeps the
// scenario over its default values (`granary plan sweep`, sweep_view.h); `--sweep SWEEP.json`
// shows a sweep file instead. `--plan PLAN.json [--plan-result RESULT.json]` shows the planner
// view with the plan's form and the result's front.
//
// Thread-safety: GUI thread only; needs a QApplication.
#pragma once

#include <QSize>
#include <QString>

#include "engine/status.h"
#include "gui/main_window.h"

namespace granary::gui {

struct ScreenshotOptions {
  QString out_png;
  QString scenario;
  // A report file (`granary run --out`) to show in the results view without running; the
  // scenario is then optional (opened for the window's title and topology when given).
  QString report;
  // A second report drawn beside the first in the results view (compare mode); optional.
  QString compare;
  // A sweep file (`granary plan sweep --out`) to show in the sweep view without sweeping.
  QString sweep;
  // A plan file (docs/plan-format.md) for the planner view, and a plan result
  // (`granary plan capacity --out`) to show in it without running.
  QString plan;
  QString plan_result;
  View view = View::kEditor;
  QSize size{1400, 900};
};

// "editor", "topology", "results", "sweep", "planner" -> the view; nullopt otherwise.
std::optional<View> parse_view(const QString& text);
// "1400x900" -> the size (each side 200..8000); nullopt otherwise.
std::optional<QSize> parse_size(const QString& text);

// Writes the screenshot. Errors (a missing or unreadable scenario, an invalid one for the
// topology and results views, a run that fails, a PNG that cannot be written) are one line.
Status write_screenshot(const ScreenshotOptions& options);

}  // namespace granary::gui

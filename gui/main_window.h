// granary-gui's main window: the scenario editor, the topology, the results of the last run and
// the sweep as tabs; File (New, Open, Open Recent, Open Report, Open Sweep, Save, Save As, Quit),
// Edit (Undo, Redo), View and Run (Run F5, Run Sweep Ctrl+F5, Cancel Esc) menus; a status bar
// with the validation line and the progress of a run or sweep (one at a time).
//
// Runs go through RunController (a `granary run` child process), sweeps through a second one
// (`granary plan sweep`) and show in the Sweep tab; the last report is kept as
// granary wrote it (last_report()), shown by the results view, and its saturated links
// highlighted on the topology. Recent files and the window's geometry and state live in
// QSettings (IniFormat, user scope, organization "Granary", application "granary-gui"; tests
// point QSettings::setPath at a temporary directory). The title shows the file name and a
// modified marker; closing or replacing a modified document asks whether to save it, through
// MainWindowOptions so that tests and the screenshot mode never block on a dialog.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QProgressBar>
#include <QStringList>
#include <QTabWidget>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "gui/run_controller.h"
#include "gui/scenario_document.h"

class QMenu;

namespace granary::gui {

class EditorView;
class HistoryView;
class CatalogView;
class RunRecorder;
class TopologyView;
class ResultsView;
class SweepView;
class PlannerView;

struct MainWindowOptions {
  // Whether to read and write QSettings (recent files, geometry); off for screenshots.
  bool use_settings = true;
  // Asked before a modified document is closed or replaced: Save, Discard or Cancel. Default:
  // a QMessageBox.
  std::function<QMessageBox::StandardButton(QWidget* parent, const QString& file_name)> ask_to_save;
  // Asked for a file to open (save == false) or to save to; empty: cancelled. Default: a
  // QFileDialog.
  std::function<QString(QWidget* parent, bool save)> ask_file_name;
  // Shows an error (a file that cannot be read or written). Default: a QMessageBox.
  std::function<void(QWidget* parent, const QString& message)> show_error;
  // The Granary database (run history, hardware catalog; db/database.h); empty: the default
  // ($GRANARY_DB, else the XDG data directory). Every run is recorded there.
  QString database_path;
};

enum class View { kEditor = 0, kTopology = 1, kResults = 2, kSweep = 3, kPlanner = 4 };

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // File actions without dialogs (the menus ask, then call these). false on error or cancel.
  bool open_file(const QString& path);
  bool save();
  bool save_as(const QString& path);
  bool new_document();
  // Starts a run of the current document (validated first: an invalid one is not run).
  bool start_run();
  void cancel_run();
  // Shows a report file (`granary run --out`) in the results view; false (and the error shown)
  // when it is not one.
  bool open_report(const QString& path);
  // Starts a sweep of the current document (validated first) over `values` of `parameter`;
  // the Sweep tab shows it when it ends. false when it cannot start.
  bool start_sweep(SweepParameter parameter, const std::vector<int>& values);
  // Shows a sweep file (`granary plan sweep --out`) in the Sweep tab; false (and the error
  // shown) when it is not one.
  bool open_sweep(const QString& path);
  bool is_busy() const {
    return runs_->is_running() || sweeps_->is_running() || plans_->is_running();
  }
  // Opens a plan file in the Planner tab; false (and the error shown) when it is not one.
  bool open_plan(const QString& path);
  // Runs the Planner tab's edited plan (`granary plan capacity`); false when it cannot start.
  bool start_plan();
  // Writes point `point`'s scenario (the plan's first case) to `path` and opens it.
  bool open_plan_point(int point, const QString& path);

  void show_view(View view);
  // Tools > Run History / Hardware Catalog: the windows (created on first use) and the file.
  HistoryView* show_history();
  CatalogView* show_catalog();
  QString database_path() const { return options_.database_path; }
  RunRecorder* recorder() const { return recorder_; }
  // A run from the history: its scenario as a new, unsaved document and its report as the
  // last report (shown in Results). false (the error shown) when the JSON cannot be read.
  bool open_history_run(const QString& scenario_json, const QString& report_json,
                        const QString& title = {});
  ScenarioDocument* document() const { return doc_; }
  EditorView* editor() const { return editor_; }
  TopologyView* topology() const { return topology_; }
  ResultsView* results() const { return results_; }
  RunController* runs() const { return runs_; }
  SweepView* sweep_view() const { return sweep_view_; }
  PlannerView* planner_view() const { return planner_view_; }
  RunController* plans() const { return plans_; }
  RunController* sweeps() const { return sweeps_; }
  QProgressBar* progress_bar() const { return progress_; }
  QStringList recent_files() const;
  // The report of the last run that produced one (exit status 0 or 1), as granary wrote it.
  const std::optional<nlohmann::json>& last_report() const { return runs_->report(); }

 signals:
  void run_finished(const granary::gui::RunOutcome& outcome);
  void sweep_finished(const granary::gui::RunOutcome& outcome);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void update_title();
  void update_recent_menu();
  void add_recent(const QString& path);
  bool maybe_save();  // true: go on (saved or discarded)
  void on_validated(const Validation& v);
  void on_run_finished(const RunOutcome& outcome);
  void on_sweep_finished(const RunOutcome& outcome);
  void set_busy(bool busy);  // the run actions and the progress bar for a run or a sweep

  MainWindowOptions options_;
  ScenarioDocument* doc_;
  RunController* runs_;
  RunController* sweeps_;
  RunController* plans_;
  QTabWidget* views_;
  EditorView* editor_;
  TopologyView* topology_;
  ResultsView* results_;
  SweepView* sweep_view_;
  PlannerView* planner_view_;
  QProgressBar* progress_;
  QLabel* status_;
  QMenu* recent_menu_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* sweep_action_ = nullptr;
  RunRecorder* recorder_ = nullptr;
  HistoryView* history_ = nullptr;
  CatalogView* catalog_ = nullptr;
  void load_catalog();  // the database's profiles into the document's catalog
};

}  // namespace granary::gui

// Runs a scenario as a child process, `granary run SCENARIO --out REPORT --progress json`, or
// sweeps it, `granary plan sweep SCENARIO --clients 8,16,.. --out SWEEP --progress json`:
// SimGrid keeps global state and allows one simulation per process, so granary-gui never
// simulates in its own. Progress comes from the child's JSON lines on stderr; the report (or
// the sweep's JSON) is read once the child exits. cancel() ends the child (SIGTERM, then SIGKILL
// after a grace period) and the run counts as cancelled.
//
// A document that is unsaved or modified runs from a copy written to a temporary directory,
// its relative crush_map made absolute; a saved, unmodified one runs from its own file, so
// that the report names (and hashes) that file.
//
// Thread-safety: a QObject of the GUI thread; one run at a time.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

#include "gui/scenario_document.h"
#include "gui/sweep_data.h"

namespace granary::gui {

enum class RunState {
  kIdle,
  kRunning,
  kSucceeded,           // exit 0: the report was read
  kExpectationsFailed,  // exit 1: an expectation failed; the report was read
  kFailed,              // the scenario was refused, the child crashed, or no report came
  kCancelled,
};

struct RunOutcome {
  RunState state = RunState::kIdle;
  int exit_code = -1;
  QString message;       // the child's error line(s) for kFailed; a one-line description otherwise
  QString summary_text;  // the child's stdout: granary run's readable summary
};

// The granary binary: $GRANARY_CLI, else `granary` beside this program, else the build's
// (GRANARY_BINARY).
QString granary_binary();

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  // Starts a run of the document's current JSON; false (and finished(kFailed)) when it cannot
  // start (a run in progress, a file that cannot be written, no granary binary).
  bool start(const ScenarioDocument& doc);
  // Starts a sweep of the document over `values` of `parameter`; its JSON becomes report().
  // The child exits 0 with a sweep, anything else is a failure.
  bool start_sweep(const ScenarioDocument& doc, SweepParameter parameter,
                   const std::vector<int>& values);
  // Starts `granary plan capacity PLAN --out RESULT --progress json --cache CACHE`: `write_plan`
  // writes the plan to run at the path it is given (in the run's temporary directory). Exit 0
  // (a design) and 1 (none meets the targets) both give the result as report(); each
  // simulated point arrives in a progress line's "point" (last_progress()).
  bool start_plan(const std::function<Status(const QString& path)>& write_plan,
                  const QString& cache_path);
  // Ends the running child; finished(kCancelled) follows once it is gone.
  void cancel();
  bool is_running() const { return process_.state() != QProcess::NotRunning; }
  qint64 child_pid() const { return pid_; }

  RunState state() const { return outcome_.state; }
  const RunOutcome& outcome() const { return outcome_; }
  double progress() const { return progress_; }
  double simulated_s() const { return simulated_s_; }
  // The last progress line as the child wrote it (a sweep's has "point", "points", "value").
  const nlohmann::json& last_progress() const { return last_progress_; }
  // The last report read (exit 0 or 1), as granary wrote it; a sweep's JSON for a sweep.
  const std::optional<nlohmann::json>& report() const { return report_; }

  // A hardware catalog database the child resolves profile names with (--catalog-db), when
  // the file exists at start(); empty: none.
  void set_catalog_db(QString path) { catalog_db_ = std::move(path); }
  // A report from elsewhere (the run history) becomes the last report.
  void adopt_report(nlohmann::json report) { report_ = std::move(report); }

  // How long cancel() waits after SIGTERM before SIGKILL.
  void set_kill_grace_ms(int ms) { kill_timer_.setInterval(ms); }

 signals:
  void started();
  void progress_changed(double fraction, double simulated_s);
  void finished(const granary::gui::RunOutcome& outcome);

 private:
  // The scenario file to run: the document's own, or a copy in dir_; empty on error
  // (finished(kFailed) sent).
  QString scenario_file(const ScenarioDocument& doc);
  bool launch(const QString& command, QStringList args);
  void read_stderr();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  void finish(RunOutcome outcome);
  QProcess process_;
  QTimer kill_timer_;
  std::unique_ptr<QTemporaryDir> dir_;
  QString report_path_;
  QByteArray stderr_buffer_;
  QStringList error_lines_;
  bool cancelling_ = false;
  qint64 pid_ = 0;
  double progress_ = 0, simulated_s_ = 0;
  nlohmann::json last_progress_;
  QString command_;  // "granary run", "granary plan sweep"
  bool sweep_ = false;
  bool plan_ = false;
  RunOutcome outcome_;
  std::optional<nlohmann::json> report_;
  QString catalog_db_;
};

}  // namespace granary::gui

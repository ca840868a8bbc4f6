// Runs as child processes (run_controller.h).
#include "gui/run_controller.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace granary::gui {

QString granary_binary() {
  const QString env = qEnvironmentVariable("GRANARY_CLI");
  if (!env.isEmpty()) return env;
  if (QCoreApplication::instance()) {
    const QString beside = QCoreApplication::applicationDirPath() + "/granary";
    if (QFileInfo(beside).isExecutable()) return beside;
  }
  return QStringLiteral(GRANARY_BINARY);
}

RunController::RunController(QObject* parent) : QObject(parent) {
  kill_timer_.setSingleShot(true);
  kill_timer_.setInterval(3000);
  connect(&kill_timer_, &QTimer::timeout, this, [this] {
    if (is_running()) process_.kill();
  });
  connect(&process_, &QProcess::readyReadStandardError, this, &RunController::read_stderr);
  connect(&process_, &QProcess::finished, this, &RunController::on_finished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;  // the others end in finished()
    finish({RunState::kFailed,
            -1,
            tr("cannot start %1: %2").arg(process_.program(), process_.errorString()),
            {}});
  });
}

RunController::~RunController() {
  if (is_running()) {
    process_.kill();
    process_.waitForFinished(2000);
  }
}

QString RunController::scenario_file(const ScenarioDocument& doc) {
  dir_ = std::make_unique<QTemporaryDir>(QDir::tempPath() + "/granary-gui-run-XXXXXX");
  QString scenario = doc.path();
  if (!doc.is_modified() && !scenario.isEmpty()) return scenario;
  // A copy: relative paths made absolute against the document's directory.
  Json j = doc.json();
  const JsonPointer crush("/storage/rados/crush_map");
  const QString base =
      scenario.isEmpty() ? QDir::currentPath() : QFileInfo(scenario).absolutePath();
  if (j.contains(crush) && j.at(crush).is_string()) {
    const QString path = QString::fromStdString(j.at(crush).get<std::string>());
    if (QFileInfo(path).isRelative()) j[crush] = QDir(base).absoluteFilePath(path).toStdString();
  }
  const QString name =
      scenario.isEmpty() ? QString("untitled.json") : QFileInfo(scenario).fileName();
  scenario = dir_->filePath(name);
  QSaveFile f(scenario);
  const std::string text = j.dump(2) + "\n";
  if (!dir_->isValid() || !f.open(QIODevice::WriteOnly) ||
      f.write(text.data(), static_cast<qint64>(text.size())) < 0 || !f.commit()) {
    finish({RunState::kFailed, -1, tr("cannot write the scenario to run: %1").arg(scenario), {}});
    return {};
  }
  return scenario;
}

bool RunController::start(const ScenarioDocument& doc) {
  if (is_running()) return false;
  sweep_ = plan_ = false;
  const QString scenario = scenario_file(doc);
  if (scenario.isEmpty()) return false;
  report_path_ = dir_->filePath("report.json");
  return launch("granary run", {"run", scenario, "--out", report_path_, "--progress", "json"});
}

bool RunController::start_sweep(const ScenarioDocument& doc, SweepParameter parameter,
                                const std::vector<int>& values) {
  if (is_running()) return false;
  sweep_ = true;
  plan_ = false;
  const QString scenario = scenario_file(doc);
  if (scenario.isEmpty()) return false;
  report_path_ = dir_->filePath("sweep.json");
  return launch("granary plan sweep", {"plan", "sweep", scenario, sweep_flag(parameter),
                                       sweep_values_text(values).remove(' '), "--out", report_path_,
                                       "--progress", "json"});
}

bool RunController::start_plan(const std::function<Status(const QString& path)>& write_plan,
                               const QString& cache_path) {
  if (is_running()) return false;
  sweep_ = false;
  plan_ = true;
  dir_ = std::make_unique<QTemporaryDir>(QDir::tempPath() + "/granary-gui-plan-XXXXXX");
  const QString plan = dir_->filePath("plan.json");
  if (Status s = dir_->isValid() ? write_plan(plan) : Status::io_error("no temporary directory");
      !s.ok()) {
    finish({RunState::kFailed, -1, QString::fromStdString(s.message()), {}});
    return false;
  }
  report_path_ = dir_->filePath("plan-result.json");
  return launch("granary plan capacity", {"plan", "capacity", plan, "--out", report_path_,
                                          "--cache", cache_path, "--progress", "json"});
}

bool RunController::launch(const QString& command, QStringList args) {
  command_ = command;
  report_.reset();
  progress_ = simulated_s_ = 0;
  last_progress_ = nlohmann::json();
  stderr_buffer_.clear();
  error_lines_.clear();
  cancelling_ = false;
  outcome_ = {RunState::kRunning, -1, {}, {}};
  process_.setProgram(granary_binary());
  if (!catalog_db_.isEmpty() && QFileInfo::exists(catalog_db_))
    args << "--catalog-db" << catalog_db_;
  process_.setArguments(args);
  process_.start();
  if (!process_.waitForStarted(10000)) return false;  // finished(kFailed) came from errorOccurred
  pid_ = process_.processId();
  emit started();
  return true;
}

void RunController::cancel() {
  if (!is_running()) return;
  cancelling_ = true;
  process_.terminate();  // SIGTERM
  kill_timer_.start();
}

void RunController::read_stderr() {
  stderr_buffer_ += process_.readAllStandardError();
  for (qsizetype end; (end = stderr_buffer_.indexOf('\n')) >= 0;) {
    const QByteArray line = stderr_buffer_.left(end).trimmed();
    stderr_buffer_.remove(0, end + 1);
    if (line.startsWith('{')) {
      const auto j = nlohmann::json::parse(line.toStdString(), nullptr, false);
      if (!j.is_discarded() && j.contains("progress") && j["progress"].is_number()) {
        progress_ = j["progress"].get<double>();
        simulated_s_ = j.value("simulated_s", 0.0);
        last_progress_ = j;
        emit progress_changed(progress_, simulated_s_);
        continue;
      }
    }
    if (line.startsWith("granary: ") && !line.startsWith("granary: wall time") &&
        !line.contains(": seed ") && !line.startsWith("granary: estimate:")) {
      error_lines_ << QString::fromUtf8(line);
    }
  }
}

void RunController::on_finished(int exit_code, QProcess::ExitStatus status) {
  kill_timer_.stop();
  read_stderr();
  const QString summary = QString::fromUtf8(process_.readAllStandardOutput());
  if (cancelling_) {
    finish({RunState::kCancelled, exit_code,
            plan_    ? tr("Plan cancelled.")
            : sweep_ ? tr("Sweep cancelled.")
                     : tr("Run cancelled."),
            summary});
    return;
  }
  if (status == QProcess::CrashExit) {
    finish({RunState::kFailed, -1, tr("%1 crashed (%2)").arg(command_, process_.errorString()),
            summary});
    return;
  }
  if (exit_code == 0 || (exit_code == 1 && !sweep_)) {
    QFile f(report_path_);
    if (f.open(QIODevice::ReadOnly)) {
      auto j = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
      if (!j.is_discarded()) {
        report_ = std::move(j);
        finish({exit_code == 0 ? RunState::kSucceeded : RunState::kExpectationsFailed, exit_code,
                plan_            ? (exit_code == 0 ? tr("Plan finished.")
                                                   : tr("Plan finished: no design meets every target."))
                : sweep_         ? tr("Sweep finished.")
                : exit_code == 0 ? tr("Run finished.")
                                 : tr("Run finished; an expectation failed."),
                summary});
        return;
      }
    }
    finish({RunState::kFailed, exit_code,
            tr("%1 wrote no readable %2").arg(command_, sweep_ ? tr("sweep") : tr("report")),
            summary});
    return;
  }
  finish({RunState::kFailed, exit_code,
          error_lines_.isEmpty() ? tr("%1 exited with status %2").arg(command_).arg(exit_code)
                                 : error_lines_.join("\n"),
          summary});
}

void RunController::finish(RunOutcome outcome) {
  outcome_ = std::move(outcome);
  emit finished(outcome_);
}

}  // namespace granary::gui

// granary-gui's main window (main_window.h).
#include "gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStatusBar>
#include <memory>

#include "db/catalog_db.h"
#include "gui/catalog_view.h"
#include "gui/editor_view.h"
#include "gui/history_view.h"
#include "gui/planner_view.h"
#include "gui/report_data.h"
#include "gui/results_view.h"
#include "gui/sweep_view.h"
#include "gui/topology_view.h"
#include "models/scenario.h"

namespace granary::gui {

namespace {

constexpr int kMaxRecent = 8;

std::unique_ptr<QSettings> settings() {
  return std::make_unique<QSettings>(QSettings::IniFormat, QSettings::UserScope, "Granary",
                                     "granary-gui");
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent),
      options_(std::move(options)),
      doc_(new ScenarioDocument(this)),
      runs_(new RunController(this)),
      sweeps_(new RunController(this)),
      plans_(new RunController(this)) {
  if (!options_.ask_to_save) {
    options_.ask_to_save = [](QWidget* parent, const QString& file) {
      return QMessageBox::warning(
          parent, tr("Save changes?"), tr("%1 has unsaved changes. Save them?").arg(file),
          QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    };
  }
  if (!options_.ask_file_name) {
    options_.ask_file_name = [](QWidget* parent, bool save) {
      const QString filter = tr("Scenarios (*.json)");
      return save ? QFileDialog::getSaveFileName(parent, tr("Save scenario"), {}, filter)
                  : QFileDialog::getOpenFileName(parent, tr("Open scenario"), {}, filter);
    };
  }
  if (!options_.show_error) {
    options_.show_error = [](QWidget* parent, const QString& message) {
      QMessageBox::critical(parent, tr("Granary"), message);
    };
  }
  if (options_.database_path.isEmpty()) {
    auto path = db::default_database_path();
    if (path.ok()) options_.database_path = QString::fromStdString(*path);
  }
  load_catalog();  // before the editor: its profile lists come from the document's catalog
  recorder_ = new RunRecorder(options_.database_path, runs_, doc_, this);
  views_ = new QTabWidget;
  editor_ = new EditorView(doc_);
  topology_ = new TopologyView;
  ResultsView::Options results_options;
  results_options.ask_report_file = [this](QWidget* parent) {
    return options_.ask_file_name(parent, false);
  };
  results_options.show_error = options_.show_error;
  results_ = new ResultsView(results_options);
  sweep_view_ = new SweepView;
  planner_view_ = new PlannerView;
  views_->addTab(editor_, tr("Editor"));
  views_->addTab(topology_, tr("Topology"));
  views_->addTab(results_, tr("Results"));
  views_->addTab(sweep_view_, tr("Sweep"));
  views_->addTab(planner_view_, tr("Planner"));
  views_->setDocumentMode(true);
  setCentralWidget(views_);
  status_ = new QLabel;
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(260);
  progress_->setFormat("%p%");
  progress_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  build_menus();

  connect(doc_, &ScenarioDocument::validated, this, &MainWindow::on_validated);
  connect(doc_, &ScenarioDocument::modified_changed, this, &MainWindow::update_title);
  connect(doc_, &ScenarioDocument::path_changed, this, &MainWindow::update_title);
  connect(runs_, &RunController::progress_changed, this, [this](double f, double sim_s) {
    progress_->setValue(static_cast<int>(f * 1000));
    status_->setText(tr("Running: %1 simulated s").arg(sim_s, 0, 'f', 2));
  });
  connect(runs_, &RunController::finished, this, &MainWindow::on_run_finished);
  connect(sweeps_, &RunController::progress_changed, this, [this](double f, double sim_s) {
    progress_->setValue(static_cast<int>(f * 1000));
    const nlohmann::json& p = sweeps_->last_progress();
    status_->setText(tr("Sweeping: point %1 of %2 (%3), %4 simulated s")
                         .arg(p.value("point", 0))
                         .arg(p.value("points", 0))
                         .arg(p.value("value", 0))
                         .arg(sim_s, 0, 'f', 2));
  });
  connect(sweeps_, &RunController::finished, this, &MainWindow::on_sweep_finished);
  connect(sweep_view_, &SweepView::run_requested, this,
          [this](SweepParameter p, const std::vector<int>& v) { start_sweep(p, v); });
  connect(sweep_view_, &SweepView::cancel_requested, this, &MainWindow::cancel_run);
  connect(sweep_view_, &SweepView::open_requested, this, [this] {
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_sweep(path);
  });
  connect(plans_, &RunController::progress_changed, this, [this](double f, double) {
    progress_->setValue(static_cast<int>(f * 1000));
    const nlohmann::json& p = plans_->last_progress();
    if (p.contains("point")) planner_view_->add_point(p["point"]);
    if (p.contains("message")) {
      status_->setText(tr("Planning: %1").arg(QString::fromStdString(p["message"])));
    }
  });
  connect(plans_, &RunController::finished, this, [this](const RunOutcome& outcome) {
    set_busy(false);
    if (plans_->report() &&
        (outcome.state == RunState::kSucceeded || outcome.state == RunState::kExpectationsFailed)) {
      planner_view_->set_result(*plans_->report());
    } else {
      planner_view_->set_message(outcome.message.toHtmlEscaped());
    }
    status_->setText(outcome.message.split('\n').front());
  });
  connect(planner_view_, &PlannerView::open_requested, this, [this] {
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_plan(path);
  });
  connect(planner_view_, &PlannerView::run_requested, this, [this] { start_plan(); });
  connect(planner_view_, &PlannerView::cancel_requested, this, &MainWindow::cancel_run);
  connect(planner_view_, &PlannerView::open_scenario_requested, this, [this](int point) {
    if (!maybe_save()) return;
    const QString path = options_.ask_file_name(this, true);
    if (!path.isEmpty()) open_plan_point(point, path);
  });
  connect(planner_view_, &PlannerView::export_requested, this, [this] {
    const QString path = options_.ask_file_name(this, true);
    if (path.isEmpty()) return;
    if (Status s = planner_view_->export_report(path); !s.ok()) {
      options_.show_error(this, QString::fromStdString(s.message()));
    } else {
      status_->setText(tr("Exported %1").arg(path));
    }
  });
  if (options_.use_settings) {
    const auto s = settings();
    restoreGeometry(s->value("geometry").toByteArray());
    restoreState(s->value("state").toByteArray());
  }
  resize(size().isEmpty() ? QSize(1400, 900) : size());
  update_recent_menu();
  update_title();
  doc_->validate();
}

MainWindow::~MainWindow() = default;

void MainWindow::load_catalog() {
  models::Catalog catalog;
  runs_->set_catalog_db(options_.database_path);
  sweeps_->set_catalog_db(options_.database_path);
  if (!options_.database_path.isEmpty() && QFileInfo::exists(options_.database_path)) {
    auto db = db::HardwareCatalogDb::open(options_.database_path.toStdString(),
                                          {.create_if_missing = false});
    auto extra = db.ok() ? db->extra_profiles() : Result<models::ExtraProfiles>(db.status());
    if (extra.ok()) catalog.add(std::move(extra).value());
  }
  doc_->set_catalog(std::move(catalog));
}

HistoryView* MainWindow::show_history() {
  if (!history_) {
    history_ = new HistoryView(options_.database_path, this);
    history_->setWindowFlag(Qt::Window);
    history_->resize(1000, 500);
    connect(history_, &HistoryView::open_requested, this,
            [this](const QString& scenario, const QString& report, const QString& title) {
              open_history_run(scenario, report, title);
            });
    connect(recorder_, &RunRecorder::recorded, history_, [this] { history_->refresh(); });
  }
  history_->refresh();
  history_->show();
  history_->raise();
  return history_;
}

CatalogView* MainWindow::show_catalog() {
  if (!catalog_) {
    catalog_ = new CatalogView(options_.database_path, this);
    catalog_->setWindowFlag(Qt::Window);
    catalog_->resize(1100, 500);
    connect(catalog_, &CatalogView::catalog_changed, this, [this] {
      load_catalog();
      doc_->validate();
    });
  }
  catalog_->show();
  catalog_->raise();
  return catalog_;
}

bool MainWindow::open_history_run(const QString& scenario_json, const QString& report_json,
                                  const QString& title) {
  const auto scenario = nlohmann::json::parse(scenario_json.toStdString(), nullptr, false);
  if (scenario.is_discarded()) {
    options_.show_error(this, tr("The stored scenario is not JSON: %1").arg(title));
    return false;
  }
  if (!maybe_save()) return false;
  doc_->reset(scenario);
  const auto report = nlohmann::json::parse(report_json.toStdString(), nullptr, false);
  if (report_json.isEmpty() || report.is_discarded()) {
    results_->set_message(tr("No report stored for %1.").arg(title));
  } else {
    runs_->adopt_report(report);
    results_->set_report(report, tr("From the run history: %1").arg(title));
  }
  show_view(View::kEditor);
  return true;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&New"), QKeySequence::New, this, [this] { new_document(); });
  file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
    if (!maybe_save()) return;
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_file(path);
  });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("Open Re&port…"), this, [this] {
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_report(path);
  });
  file->addAction(tr("Open S&weep…"), this, [this] {
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_sweep(path);
  });
  file->addAction(tr("Open P&lan…"), this, [this] {
    const QString path = options_.ask_file_name(this, false);
    if (!path.isEmpty()) open_plan(path);
  });
  file->addAction(tr("&Save"), QKeySequence::Save, this, [this] { save(); });
  file->addAction(tr("Save &As…"), QKeySequence::SaveAs, this, [this] {
    const QString path = options_.ask_file_name(this, true);
    if (!path.isEmpty()) save_as(path);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = doc_->undo_stack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = doc_->undo_stack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Editor"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                  [this] { show_view(View::kEditor); });
  view->addAction(tr("&Topology"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                  [this] { show_view(View::kTopology); });
  view->addAction(tr("&Results"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                  [this] { show_view(View::kResults); });
  view->addAction(tr("S&weep"), QKeySequence(Qt::CTRL | Qt::Key_4), this,
                  [this] { show_view(View::kSweep); });
  view->addAction(tr("&Planner"), QKeySequence(Qt::CTRL | Qt::Key_5), this,
                  [this] { show_view(View::kPlanner); });

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  tools->addAction(tr("Run &History..."), this, [this] { show_history(); });
  tools->addAction(tr("Hardware &Catalog..."), this, [this] { show_catalog(); });
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run_action_ = run->addAction(tr("&Run"), QKeySequence(Qt::Key_F5), this, [this] { start_run(); });
  sweep_action_ =
      run->addAction(tr("Run &Sweep"), QKeySequence(Qt::CTRL | Qt::Key_F5), this, [this] {
        show_view(View::kSweep);
        sweep_view_->request_run();
      });
  cancel_action_ =
      run->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), this, [this] { cancel_run(); });
  cancel_action_->setEnabled(false);
}

void MainWindow::update_title() {
  const QString name =
      doc_->path().isEmpty() ? tr("untitled.json") : QFileInfo(doc_->path()).fileName();
  setWindowTitle(name + "[*] — Granary");
  setWindowModified(doc_->is_modified());
}

QStringList MainWindow::recent_files() const {
  if (!options_.use_settings) return {};
  return settings()->value("recent_files").toStringList();
}

void MainWindow::add_recent(const QString& path) {
  if (!options_.use_settings) return;
  QStringList files = recent_files();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecent) files.removeLast();
  settings()->setValue("recent_files", files);
  update_recent_menu();
}

void MainWindow::update_recent_menu() {
  recent_menu_->clear();
  const QStringList files = recent_files();
  for (const QString& f : files) {
    recent_menu_->addAction(QFileInfo(f).fileName() + "  (" + QFileInfo(f).absolutePath() + ")",
                            this, [this, f] {
                              if (maybe_save()) open_file(f);
                            });
  }
  recent_menu_->setEnabled(!files.isEmpty());
}

bool MainWindow::maybe_save() {
  if (!doc_->is_modified()) return true;
  const QString name =
      doc_->path().isEmpty() ? tr("untitled.json") : QFileInfo(doc_->path()).fileName();
  switch (options_.ask_to_save(this, name)) {
    case QMessageBox::Save:
      return save();
    case QMessageBox::Discard:
      return true;
    default:
      return false;
  }
}

bool MainWindow::open_file(const QString& path) {
  if (Status s = doc_->load(path); !s.ok()) {
    options_.show_error(this, QString::fromStdString(s.message()));
    return false;
  }
  add_recent(doc_->path());
  doc_->validate();
  return true;
}

bool MainWindow::save() {
  if (doc_->path().isEmpty()) {
    const QString path = options_.ask_file_name(this, true);
    return !path.isEmpty() && save_as(path);
  }
  return save_as(doc_->path());
}

bool MainWindow::save_as(const QString& path) {
  if (Status s = doc_->save(path); !s.ok()) {
    options_.show_error(this, QString::fromStdString(s.message()));
    return false;
  }
  add_recent(doc_->path());
  statusBar()->showMessage(tr("Saved %1").arg(doc_->path()), 4000);
  return true;
}

bool MainWindow::new_document() {
  if (!maybe_save()) return false;
  doc_->reset(new_scenario_json());
  doc_->validate();
  return true;
}

void MainWindow::show_view(View view) {
  views_->setCurrentIndex(static_cast<int>(view));
}

void MainWindow::set_busy(bool busy) {
  if (busy) progress_->setValue(0);
  progress_->setVisible(busy);
  run_action_->setEnabled(!busy);
  sweep_action_->setEnabled(!busy);
  cancel_action_->setEnabled(busy);
  sweep_view_->set_running(busy);
  if (!busy) planner_view_->set_running(false);
}

bool MainWindow::open_plan(const QString& path) {
  QString error;
  if (!planner_view_->open_plan(path, &error)) {
    options_.show_error(this, error);
    return false;
  }
  show_view(View::kPlanner);
  return true;
}

bool MainWindow::start_plan() {
  if (is_busy() || planner_view_->plan_path().isEmpty()) return false;
  planner_view_->set_running(true);
  planner_view_->set_message(tr("Screening and simulating …"));
  status_->setText(tr("Starting granary plan capacity …"));
  set_busy(true);
  const bool started = plans_->start_plan(
      [this](const QString& path) { return planner_view_->write_plan_copy(path); },
      planner_view_->plan_path() + ".runs.jsonl");
  if (!started && !plans_->is_running()) set_busy(false);
  return started;
}

bool MainWindow::open_plan_point(int point, const QString& path) {
  if (Status s = planner_view_->write_point_scenario(point, 0, path); !s.ok()) {
    options_.show_error(this, QString::fromStdString(s.message()));
    return false;
  }
  if (!open_file(path)) return false;
  show_view(View::kEditor);
  return true;
}

bool MainWindow::start_run() {
  if (is_busy()) return false;
  const Validation& v = doc_->validate();
  if (!v.ok) {
    status_->setText(tr("Not run: %1").arg(QString::fromStdString(v.message)));
    show_view(View::kEditor);
    return false;
  }
  set_busy(true);
  results_->set_message(
      tr("Running %1 …").arg(QString::fromStdString(doc_->json().value("name", ""))));
  status_->setText(tr("Starting granary run …"));
  return runs_->start(*doc_);
}

bool MainWindow::open_report(const QString& path) {
  nlohmann::json report;
  if (Status s = load_report_file(path, &report); !s.ok()) {
    options_.show_error(this, QString::fromStdString(s.message()));
    return false;
  }
  results_->set_report(report, tr("report %1").arg(QFileInfo(path).fileName()));
  show_view(View::kResults);
  return true;
}

bool MainWindow::start_sweep(SweepParameter parameter, const std::vector<int>& values) {
  if (is_busy()) return false;
  const Validation& v = doc_->validate();
  if (!v.ok) {
    status_->setText(tr("Not swept: %1").arg(QString::fromStdString(v.message)));
    show_view(View::kEditor);
    return false;
  }
  sweep_view_->set_message(tr("Sweeping %1 over %2 %3 …")
                               .arg(QString::fromStdString(doc_->json().value("name", "")),
                                    sweep_axis_title(parameter), sweep_values_text(values)));
  status_->setText(tr("Starting granary plan sweep …"));
  if (!sweeps_->start_sweep(*doc_, parameter, values)) return false;
  set_busy(true);
  return true;
}

bool MainWindow::open_sweep(const QString& path) {
  auto sweep = load_sweep_file(path);
  if (!sweep.ok()) {
    options_.show_error(this, QString::fromStdString(sweep.status().message()));
    return false;
  }
  sweep_view_->show_sweep(std::move(sweep).value(), tr("sweep %1").arg(QFileInfo(path).fileName()));
  show_view(View::kSweep);
  return true;
}

void MainWindow::cancel_run() {
  for (RunController* c : {runs_, sweeps_, plans_}) {
    if (c->is_running()) {
      status_->setText(tr("Cancelling …"));
      c->cancel();
    }
  }
}

void MainWindow::on_sweep_finished(const RunOutcome& outcome) {
  set_busy(false);
  QString error;
  if (outcome.state == RunState::kSucceeded &&
      !sweep_view_->set_sweep(*sweeps_->report(), outcome.message, &error)) {
    sweep_view_->set_message(tr("Sweep failed: granary plan sweep wrote a sweep the view cannot "
                                "read: %1")
                                 .arg(error));
  } else if (outcome.state == RunState::kSucceeded) {
    show_view(View::kSweep);
  } else {
    sweep_view_->set_message(outcome.state == RunState::kCancelled
                                 ? outcome.message
                                 : tr("Sweep failed: %1").arg(outcome.message));
  }
  status_->setText(outcome.state == RunState::kFailed ? tr("Sweep failed: %1").arg(outcome.message)
                                                      : outcome.message);
  emit sweep_finished(outcome);
}

void MainWindow::on_run_finished(const RunOutcome& outcome) {
  set_busy(false);
  switch (outcome.state) {
    case RunState::kSucceeded:
    case RunState::kExpectationsFailed:
      results_->set_report(*runs_->report(), outcome.message);
      {
        const BottleneckLinks b = bottleneck_links_of(*runs_->report());
        topology_->set_bottleneck(b.names, b.roles);
      }
      show_view(View::kResults);
      break;
    case RunState::kCancelled:
      results_->set_message(tr("Run cancelled."));
      break;
    default:
      results_->set_message(tr("Run failed: %1").arg(outcome.message));
      break;
  }
  status_->setText(outcome.state == RunState::kFailed ? tr("Run failed: %1").arg(outcome.message)
                                                      : outcome.message);
  emit run_finished(outcome);
}

void MainWindow::on_validated(const Validation& v) {
  if (v.ok) {
    const Json& j = doc_->json();
    const JsonPointer count("/cluster/clients/count"),
        per_node("/cluster/clients/accelerators_per_node");
    // An absent key has the format's default (models::ClientNodesSpec).
    const models::ClientNodesSpec defaults;
    auto int_at = [&j](const JsonPointer& p, int fallback) {
      return j.contains(p) && j.at(p).is_number_integer() ? j.at(p).get<int>() : fallback;
    };
    sweep_view_->set_scenario_sizes(int_at(count, defaults.count),
                                    int_at(per_node, defaults.accelerators_per_node));
  }
  if (!is_busy()) {
    // The editor's own status line has the details.
    status_->setText(v.ok ? tr("Scenario valid. Run > Run (F5) simulates it.")
                          : tr("Invalid scenario: %1").arg(QString::fromStdString(v.message)));
  }
  if (v.ok && v.topology) {
    topology_->set_topology(*v.topology, QString::fromStdString(v.summary));
  } else if (!v.ok) {
    topology_->set_unavailable(QString::fromStdString(v.message));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!maybe_save()) {
    event->ignore();
    return;
  }
  cancel_run();
  if (options_.use_settings) {
    const auto s = settings();
    s->setValue("geometry", saveGeometry());
    s->setValue("state", saveState());
  }
  event->accept();
}

}  // namespace granary::gui

#include "gui/history_view.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QVBoxLayout>

#include "db/history_db.h"

namespace granary::gui {

namespace {

QString fixed(std::optional<double> v, int digits) {
  return v ? QString::number(*v, 'f', digits) : QString("-");
}

}  // namespace

HistoryView::HistoryView(QString database_path, QWidget* parent)
    : QWidget(parent),
      path_(std::move(database_path)),
      search_(new QLineEdit(this)),
      table_(new QTableWidget(this)),
      status_(new QLabel(this)) {
  setWindowTitle(tr("Run History"));
  search_->setPlaceholderText(tr("Search scenario name, path, SHA-256 or JSON"));
  search_->setClearButtonEnabled(true);
  table_->setColumnCount(9);
  table_->setHorizontalHeaderLabels({tr("id"), tr("started (UTC)"), tr("status"), tr("scenario"),
                                     tr("AU mean"), tr("read GiB/s (epoch)"), tr("write GiB/s"),
                                     tr("wall s"), tr("scenario SHA-256")});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* open = new QPushButton(tr("&Open"), this);
  auto* remove = new QPushButton(tr("&Delete"), this);
  auto* reload = new QPushButton(tr("&Refresh"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(open);
  buttons->addWidget(remove);
  buttons->addWidget(reload);
  buttons->addStretch();
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(search_);
  layout->addWidget(table_);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  connect(search_, &QLineEdit::textChanged, this, [this] { refresh(); });
  connect(reload, &QPushButton::clicked, this, [this] { refresh(); });
  connect(open, &QPushButton::clicked, this, [this] { open_row(table_->currentRow()); });
  connect(remove, &QPushButton::clicked, this, [this] { delete_row(table_->currentRow()); });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { open_row(row); });
  refresh();
}

bool HistoryView::refresh() {
  table_->setRowCount(0);
  auto db = db::RunHistoryDb::open(path_.toStdString());
  if (!db.ok()) {
    status_->setText(QString::fromStdString(db.status().message()));
    return false;
  }
  auto runs = db->list({.search = search_->text().toStdString()});
  if (!runs.ok()) {
    status_->setText(QString::fromStdString(runs.status().message()));
    return false;
  }
  table_->setRowCount(static_cast<int>(runs->size()));
  for (int row = 0; row < table_->rowCount(); ++row) {
    const db::RunRecord& r = (*runs)[static_cast<size_t>(row)];
    const QStringList cells = {QString::number(r.id),
                               QString::fromStdString(r.started_at),
                               db::run_status_name(r.status),
                               QString::fromStdString(r.scenario_name),
                               fixed(r.accelerator_utilization_mean, 3),
                               fixed(r.read_gibps_epoch, 2),
                               fixed(r.write_gibps, 2),
                               fixed(r.wall_s, 2),
                               QString::fromStdString(r.scenario_sha256)};
    for (int c = 0; c < cells.size(); ++c) table_->setItem(row, c, new QTableWidgetItem(cells[c]));
    table_->item(row, 3)->setToolTip(QString::fromStdString(r.scenario_path));
  }
  status_->setText(tr("%1 runs in %2").arg(runs->size()).arg(path_));
  return true;
}

qint64 HistoryView::run_id(int row) const {
  const QTableWidgetItem* item = row >= 0 ? table_->item(row, 0) : nullptr;
  return item ? item->text().toLongLong() : -1;
}

bool HistoryView::open_row(int row) {
  const qint64 id = run_id(row);
  if (id < 0) return false;
  auto db = db::RunHistoryDb::open(path_.toStdString(), {.create_if_missing = false});
  auto run = db.ok() ? db->get(id) : Result<db::RunRecord>(db.status());
  if (!run.ok()) {
    status_->setText(QString::fromStdString(run.status().message()));
    return false;
  }
  emit open_requested(QString::fromStdString(run->scenario_json),
                      QString::fromStdString(run->report_json),
                      tr("run %1 of %2 (%3)")
                          .arg(id)
                          .arg(QString::fromStdString(run->scenario_name),
                               QString::fromStdString(run->started_at)));
  return true;
}

bool HistoryView::delete_row(int row) {
  const qint64 id = run_id(row);
  if (id < 0) return false;
  auto db = db::RunHistoryDb::open(path_.toStdString(), {.create_if_missing = false});
  const Status s = db.ok() ? db->remove(id) : db.status();
  if (!s.ok()) {
    status_->setText(QString::fromStdString(s.message()));
    return false;
  }
  return refresh();
}

// ---- RunRecorder

RunRecorder::RunRecorder(QString database_path, RunController* runs, const ScenarioDocument* doc,
                         QObject* parent)
    : QObject(parent), path_(std::move(database_path)), runs_(runs), doc_(doc) {
  connect(runs_, &RunController::started, this, [this] {
    timer_.start();
    scenario_json_ = doc_->json().dump(2) + "\n";
  });
  connect(runs_, &RunController::finished, this, &RunRecorder::on_finished);
}

void RunRecorder::on_finished(const RunOutcome& outcome) {
  if (!timer_.isValid()) return;  // never started (a scenario that could not be written)
  const double wall_s = static_cast<double>(timer_.elapsed()) / 1000;
  timer_.invalidate();
  db::RunRecord r;
  if (runs_->report()) {
    r = db::record_from_report(*runs_->report(), scenario_json_, wall_s);
  } else {
    // Refused before simulating, as `granary run` refuses bad input: not a run.
    if (outcome.state == RunState::kFailed && outcome.exit_code == 2) return;
    const nlohmann::json& j = doc_->json();
    r.scenario_name = j.contains("name") && j["name"].is_string()
                          ? j["name"].get<std::string>()
                          : QFileInfo(doc_->path()).completeBaseName().toStdString();
    r.scenario_path = doc_->path().toStdString();
    r.status =
        outcome.state == RunState::kCancelled ? db::RunStatus::kCancelled : db::RunStatus::kError;
    r.wall_s = wall_s;
    r.message = outcome.message.toStdString();
    r.scenario_json = scenario_json_;
  }
  // The document's file (a modified or unsaved one runs from a temporary copy).
  if (!doc_->path().isEmpty()) r.scenario_path = doc_->path().toStdString();
  auto db = db::RunHistoryDb::open(path_.toStdString());
  auto id = db.ok() ? db->record(r) : Result<int64_t>(db.status());
  if (!id.ok()) {
    emit record_failed(QString::fromStdString(id.status().message()));
    return;
  }
  emit recorded(*id);
}

}  // namespace granary::gui

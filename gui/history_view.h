// The Run History window: the runs recorded in the Granary database (db/history_db.h), newest
// first, with a search box (scenario name, path, SHA-256 or JSON text), and Open (the stored
// scenario into the editor and the stored report as the last report, through
// open_requested), Delete and Refresh. RunRecorder records every run granary-gui starts.
//
// Thread-safety: GUI thread only. Each refresh opens the database anew, so runs recorded by
// other processes (granary run --history) appear on Refresh.
#pragma once

#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QObject>
#include <QPushButton>
#include <QString>
#include <QTableWidget>
#include <QWidget>

#include "gui/run_controller.h"

namespace granary::gui {

class HistoryView : public QWidget {
  Q_OBJECT
 public:
  explicit HistoryView(QString database_path, QWidget* parent = nullptr);

  // Re-reads the runs matching the search box; false (and the error in status_line()) when the
  // database cannot be read.
  bool refresh();
  // Opens the run of table row `row`: emits open_requested. false when it cannot be read.
  bool open_row(int row);
  bool delete_row(int row);

  QLineEdit* search_box() const { return search_; }
  QTableWidget* table() const { return table_; }
  QString status_line() const { return status_->text(); }
  qint64 run_id(int row) const;

 signals:
  void open_requested(const QString& scenario_json, const QString& report_json,
                      const QString& title);

 private:
  QString path_;
  QLineEdit* search_;
  QTableWidget* table_;
  QLabel* status_;
};

// Records every run of a RunController into the database: a run that ended with a report as
// passed or failed (its expectations), a cancelled one as cancelled, a child that crashed or
// stopped with an error as error. A run granary refused before simulating (exit status 2 with no
// report) is not recorded, as with granary run --history. recorded(id) follows each record;
// record_failed(message) when the database cannot be written.
class RunRecorder : public QObject {
  Q_OBJECT
 public:
  RunRecorder(QString database_path, RunController* runs, const ScenarioDocument* doc,
              QObject* parent = nullptr);

 signals:
  void recorded(qint64 id);
  void record_failed(const QString& message);

 private:
  void on_finished(const RunOutcome& outcome);
  QString path_;
  RunController* runs_;
  const ScenarioDocument* doc_;
  QElapsedTimer timer_;
  std::string scenario_json_;
};

}  // namespace granary::gui

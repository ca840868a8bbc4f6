// The results of the last run, kept minimal until the results view lands: the run's outcome,
// the report's `summary` object as a key/value table (nested objects as dotted keys, values as
// the report has them) and the expectations' PASS/FAIL lines when the report has them.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QLabel>
#include <QTableWidget>
#include <QWidget>
#include <nlohmann/json.hpp>

namespace granary::gui {

class SummaryPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryPanel(QWidget* parent = nullptr);

  // Shows `report` (granary's JSON report); `headline` says how the run ended.
  void set_report(const nlohmann::json& report, const QString& headline);
  // No report: says why (no run yet, a run in progress, failed or cancelled).
  void set_message(const QString& message);

  QTableWidget* table() const { return table_; }
  QString headline() const { return headline_->text(); }

 private:
  QLabel* headline_;
  QTableWidget* table_;
  QLabel* expectations_;
};

}  // namespace granary::gui

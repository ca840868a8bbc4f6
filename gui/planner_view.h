// The Planner tab: a capacity plan (docs/plan-format.md) to edit, run and export. Open Plan
// reads a plan file; the form edits its storage targets, each case's targets (the threshold
// column of the case table), the
// design space (one line of comma-separated values per axis; empty keeps the base scenario's)
// and the search budget. Run Plan asks the main window to run `granary plan capacity --progress
// json` on the edited plan (written beside nothing: a temporary copy whose case paths are made
// absolute); each simulated point arrives as the child finishes it and fills the cost-versus-
// margin chart and the table, so the front grows while the search runs. When it ends, the
// headline names the recommended design and the target that binds. Select a point and Open as
// Scenario writes its scenario (the plan's first case, edited by the point's axes) to a file
// and opens it in the editor; Export Report writes the result as PDF, HTML or CSV
// (gui/report/report_render.h, by the file's suffix).
//
// Chart series: "data:simulated", "data:front", "data:choice" (QScatterSeries / QLineSeries).
//
// Thread-safety: GUI thread only.
#pragma once

#include <QChart>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/status.h"

namespace granary::gui {

class PlannerView : public QWidget {
  Q_OBJECT
 public:
  explicit PlannerView(QWidget* parent = nullptr);

  // Reads a plan file into the form; false (and *error) when it cannot be read or is not one.
  bool open_plan(const QString& path, QString* error);
  const QString& plan_path() const { return path_; }
  // The plan as the form says (the file's JSON with the form's values), or what is wrong
  // (validated by the planner's reader, messages naming the plan file).
  Result<nlohmann::json> edited_plan() const;
  // Writes the edited plan to `path` with its case paths absolute (what a run reads).
  Status write_plan_copy(const QString& path) const;

  // Whether a plan is running: Run off, Cancel on.
  void set_running(bool running);
  // A point the running search recorded (a `points[]` entry): added to the chart and table.
  void add_point(const nlohmann::json& point);
  // The finished result (`granary plan capacity --out`): every simulated point, the front,
  // the choice.
  void set_result(nlohmann::json result);
  void set_message(const QString& message);
  const std::optional<nlohmann::json>& result() const { return result_; }

  // Writes point `index`'s scenario for case `case_index` to `path`. Errors: no plan, a point
  // the plan does not have, an invalid point, a file that cannot be written.
  Status write_point_scenario(int index, int case_index, const QString& path) const;
  // Writes the result as PDF, HTML or CSV, by `path`'s suffix.
  Status export_report(const QString& path) const;
  // The point of the selected table row, or -1.
  int selected_point() const;

  QLineEdit* axis_edit(const std::string& axis) const { return axes_.at(axis); }
  QLineEdit* target_edit(const std::string& key) const { return targets_.at(key); }
  QTableWidget* case_targets() const { return case_targets_; }
  QSpinBox* max_points() const { return max_points_; }
  QTableWidget* points_table() const { return table_; }
  QChart* chart() const { return chart_; }
  QString headline() const { return headline_->text(); }
  QLabel* error_label() const { return error_; }
  QPushButton* run_button() const { return run_; }

 signals:
  void run_requested();
  void cancel_requested();
  void open_requested();
  void open_scenario_requested(int point);
  void export_requested();

 private:
  void fill_form();
  void redraw();
  void add_row(const nlohmann::json& point);

  QString path_;
  nlohmann::json plan_;
  std::optional<nlohmann::json> result_;
  std::vector<nlohmann::json> points_;  // simulated points shown, in arrival order
  std::map<std::string, QLineEdit*> targets_;
  std::map<std::string, QLineEdit*> axes_;
  QTableWidget* case_targets_;
  QSpinBox* max_points_;
  QSpinBox* front_points_;
  QLabel* plan_label_;
  QLabel* error_;
  QLabel* headline_;
  QPushButton* open_;
  QPushButton* run_;
  QPushButton* cancel_;
  QPushButton* open_scenario_;
  QPushButton* export_;
  QTableWidget* table_;
  QChart* chart_;
};

}  // namespace granary::gui

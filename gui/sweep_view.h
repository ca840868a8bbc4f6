// The Sweep tab: where a read storm stops feeding the accelerators as the cluster grows. Its
// controls choose what to sweep (client nodes or accelerators per node) and the values
// ("1, 2, 4, 8"); Run Sweep asks for `granary plan sweep` (the main window runs it through a
// RunController), Open Sweep shows a sweep file (`granary plan sweep --out`, docs/
// report-format.md "Sweeps"). A sweep is drawn against the swept value:
//   read throughput (GiB/s) with what the accelerators demand at AU 1 and the analytic bound
//   dashed; accelerator utilization with the AU threshold dashed; both with a vertical marker
//   at the saturation point labelled with what limits the read there; a log2 axis when the
//   values span 8x or more. A line above the charts says where AU falls below the threshold,
//   where throughput stops growing and what limits it; a table lists every point.
//
// Chart series follow charts.h's naming ("data:read_gibps", "ref:..."); the saturation marker
// is "marker:saturation".
//
// Thread-safety: GUI thread only.
#pragma once

#include <QChart>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "gui/sweep_data.h"

namespace granary::gui {

class SweepView : public QWidget {
  Q_OBJECT
 public:
  explicit SweepView(QWidget* parent = nullptr);

  // The scenario's current sizes: the values shown become their defaults
  // (default_sweep_values) unless the values were typed.
  void set_scenario_sizes(int client_nodes, int accelerators_per_node);
  void set_parameter(SweepParameter p);
  SweepParameter parameter() const;
  // The values typed, or what is wrong with them (also shown under the field).
  Result<std::vector<int>> values() const;
  void set_values(const std::vector<int>& values);
  // Whether a sweep is running: Run Sweep and the fields off, Cancel on.
  void set_running(bool running);
  // What Run Sweep does: run_requested with the values typed, unless they are wrong (the
  // error is under the field) or a sweep is running.
  void request_run();

  // Shows `sweep` (a sweep file's JSON); false (nothing changed, *error set) when it is not one.
  bool set_sweep(const nlohmann::json& sweep, const QString& headline, QString* error);
  // Shows a sweep already read (load_sweep_file).
  void show_sweep(Sweep sweep, const QString& headline);
  // No sweep shown: says why (none yet, running, failed, cancelled).
  void set_message(const QString& message);
  const std::optional<Sweep>& sweep() const { return sweep_; }

  QComboBox* parameter_box() const { return parameter_; }
  QLineEdit* values_edit() const { return values_; }
  QLabel* values_error() const { return values_error_; }
  QPushButton* run_button() const { return run_; }
  QPushButton* cancel_button() const { return cancel_; }
  QString headline() const { return headline_->text(); }
  // The saturation line (empty while no sweep is shown).
  QString saturation_text() const { return saturation_->text(); }
  QChart* throughput_chart() const { return throughput_; }
  QChart* au_chart() const { return au_; }
  QTableWidget* table() const { return table_; }

 signals:
  void run_requested(granary::gui::SweepParameter parameter, const std::vector<int>& values);
  void cancel_requested();
  void open_requested();

 private:
  void rebuild();
  void check_values();
  void apply_defaults();
  QWidget* build_throughput();
  QWidget* build_au();
  QWidget* build_table();
  // The x axis for the sweep's values (linear, or log2 when they span 8x or more).
  QAbstractAxis* add_x_axis(QChart* chart) const;

  std::optional<Sweep> sweep_;
  int client_nodes_ = 1, accelerators_per_node_ = 1;
  bool values_typed_ = false;
  bool running_ = false;
  QComboBox* parameter_;
  QLineEdit* values_;
  QLabel* values_error_;
  QPushButton* run_;
  QPushButton* cancel_;
  QPushButton* open_;
  QLabel* headline_;
  QLabel* saturation_;
  QScrollArea* scroll_;
  QChart* throughput_ = nullptr;
  QChart* au_ = nullptr;
  QTableWidget* table_ = nullptr;
};

}  // namespace granary::gui

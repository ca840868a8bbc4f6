// The Results tab: a run report (docs/report-format.md, format 2) as charts and tables, in a
// scroll area, two charts a row at 1400 px:
//   throughput over time (read GiB/s, drive write/read GiB/s of a checkpoint, block IOPS) with
//   the analytic bound dashed and the failure timeline as vertical markers; AU over time
//   (windowed and cumulative MLPerf AU, the threshold dashed); the latency CDF of each
//   operation with its p99; AU per accelerator (bars, or a histogram past 64 accelerators);
//   the utilisation heat map (heat_map.h); each resource kind's mean busy fraction over time;
//   what saturated first and the busiest resources; recovery progress (only with `recovery`);
//   a mixed run's block IOPS; the summary, bounds (with ceilings) and expectations tables.
// Compare: a second report (a file, or the previous run's) drawn on the throughput and AU
// charts beside the first, legend names "scenario (seed N)", and a second summary column.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QChart>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QWidget>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

namespace granary::gui {

class HeatMap;

class ResultsView : public QWidget {
  Q_OBJECT
 public:
  struct Options {
    // Asked for a report file to compare with; empty: cancelled. Default: a QFileDialog.
    std::function<QString(QWidget* parent)> ask_report_file;
    // Shows an error (a file that is not a report). Default: a QMessageBox.
    std::function<void(QWidget* parent, const QString& message)> show_error;
  };
  explicit ResultsView(Options options = {}, QWidget* parent = nullptr);

  // Shows `report`; `headline` says how the run ended. The report shown before, if any,
  // becomes the "previous run" that compare_with_previous() draws beside it. Ends a comparison.
  void set_report(const nlohmann::json& report, const QString& headline);
  // No report: says why (no run yet, a run in progress, failed or cancelled); charts cleared.
  void set_message(const QString& message);
  // Compares with the report in `path`; false (and *error set) when it cannot be read.
  bool compare_with_file(const QString& path, QString* error);
  // Compares with the previous report; false when there is none.
  bool compare_with_previous();
  void clear_comparison();

  bool comparing() const { return other_.has_value(); }
  bool has_previous() const { return previous_.has_value(); }
  QString headline() const { return headline_->text(); }

  // The charts shown now (nullptr when the report has no data for them).
  QChart* throughput_chart() const { return throughput_; }
  QChart* au_chart() const { return au_; }
  QChart* au_per_accelerator_chart() const { return au_per_accelerator_; }
  QChart* latency_chart() const { return latency_; }
  QChart* kind_chart() const { return kinds_; }
  QChart* recovery_pgs_chart() const { return recovery_pgs_; }
  QChart* recovery_rate_chart() const { return recovery_rate_; }
  QChart* block_chart() const { return block_; }
  HeatMap* heat_map() const { return heat_map_; }
  // The summary: key, value (and the compared run's value).
  QTableWidget* table() const { return summary_; }
  QTableWidget* bounds_table() const { return bounds_; }
  QTableWidget* ceilings_table() const { return ceilings_; }
  QTableWidget* expectations_table() const { return expectations_; }
  QTableWidget* saturated_table() const { return saturated_; }
  QTableWidget* busiest_table() const { return busiest_; }
  QScrollArea* scroll_area() const { return scroll_; }

 private:
  void rebuild();
  void clear_pointers();
  void update_buttons();
  QWidget* build_throughput();
  QWidget* build_au();
  QWidget* build_au_per_accelerator();
  QWidget* build_latency();
  QWidget* build_kinds();
  QWidget* build_recovery_pgs();
  QWidget* build_recovery_rate();
  QWidget* build_block();
  QWidget* build_utilization_tables();
  QWidget* build_summary();
  QWidget* build_bounds();
  QWidget* build_expectations();
  // The runs drawn: the report, and the compared one.
  std::vector<const nlohmann::json*> runs() const;

  Options options_;
  std::optional<nlohmann::json> report_, previous_, other_;
  QString headline_text_;
  QLabel* headline_;
  QPushButton* compare_previous_;
  QPushButton* compare_file_;
  QPushButton* clear_compare_;
  QScrollArea* scroll_;
  QChart* throughput_ = nullptr;
  QChart* au_ = nullptr;
  QChart* au_per_accelerator_ = nullptr;
  QChart* latency_ = nullptr;
  QChart* kinds_ = nullptr;
  QChart* recovery_pgs_ = nullptr;
  QChart* recovery_rate_ = nullptr;
  QChart* block_ = nullptr;
  HeatMap* heat_map_ = nullptr;
  QTableWidget* summary_ = nullptr;
  QTableWidget* bounds_ = nullptr;
  QTableWidget* ceilings_ = nullptr;
  QTableWidget* expectations_ = nullptr;
  QTableWidget* saturated_ = nullptr;
  QTableWidget* busiest_ = nullptr;
};

}  // namespace granary::gui

// The scenario editor: a tab per section of the scenario format (Scenario, Cluster, Fabric,
// Storage design, Workloads, Failures, Expectations) with forms and tables bound to the keys
// that docs/scenario-format.md documents for them, and a Raw JSON tab for everything else,
// kept in sync both ways (form edits rewrite the text; text that parses updates the forms;
// text that does not shows the parser's line, column and message).
//
// Every edit goes through the document's undo stack. The document is validated a moment after
// each change; the validator's one-line message is shown at the field (or table cell) whose
// JSON path it names, on the tab holding it, and in the status line under the tabs.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <string>
#include <vector>

#include "gui/scenario_document.h"

class QGroupBox;
class QStackedWidget;

namespace granary::gui {

class FieldSet;
class FailuresTable;
class ExpectationsTable;

class EditorView : public QWidget {
  Q_OBJECT
 public:
  explicit EditorView(ScenarioDocument* doc, QWidget* parent = nullptr);

  // Shows the document's values in every tab (called on each change of the document).
  void refresh();
  // Shows a validation's outcome: the error at its field, the tab marked, the status line.
  void show_validation(const Validation& v);
  // The profile lists (accelerator, NIC and drive models) from the document's catalog; called
  // when it changes (the hardware catalog window added or removed a row).
  void update_profile_lists();

  QTabWidget* tabs() const { return tabs_; }
  // The widget that edits the key at `pointer` ("/cluster/clients/count"; a workload's keys
  // while that workload is selected), or null.
  QWidget* field_editor(const std::string& pointer) const;
  // The widget that shows the current validation error (a field, a table, the raw text), or
  // null when valid or when no widget concerns the path.
  QWidget* error_widget() const { return error_widget_; }
  QString status_text() const;
  QPlainTextEdit* raw_editor() const { return raw_; }
  // Parses the Raw JSON tab's text now (it is otherwise parsed a moment after typing stops):
  // valid JSON becomes the document; true then.
  bool apply_raw_text();
  QString raw_error() const { return raw_error_->text(); }
  void select_workload(int index);
  int selected_workload() const;
  QListWidget* workload_list() const { return workload_list_; }
  FailuresTable* failures_table() const { return failures_; }
  ExpectationsTable* expectations_table() const { return expectations_; }

 private:
  QWidget* build_scenario_tab();
  QWidget* build_cluster_tab();
  QWidget* build_fabric_tab();
  QWidget* build_storage_tab();
  QWidget* build_workloads_tab();
  QWidget* build_workload_form();
  QWidget* build_raw_tab();
  void refresh_workloads();
  void refresh_raw();
  void add_workload(const QString& type);
  void remove_workload();
  std::vector<Edit> design_edits(const std::optional<Json>& design) const;
  std::vector<Edit> workload_type_edits(const std::optional<Json>& type) const;
  void mark_tab(QWidget* page, bool error);

  ScenarioDocument* doc_;
  QTabWidget* tabs_ = nullptr;
  QLabel* status_ = nullptr;
  // Forms of the fixed sections (keys from the root), of the selected workload.
  FieldSet* fields_ = nullptr;
  FieldSet* workload_fields_ = nullptr;
  std::vector<std::pair<QString, QGroupBox*>> design_groups_;    // design -> its section
  std::vector<std::pair<QString, QGroupBox*>> workload_groups_;  // workload type -> its keys
  QListWidget* workload_list_ = nullptr;
  QWidget* workload_form_ = nullptr;
  FailuresTable* failures_ = nullptr;
  ExpectationsTable* expectations_ = nullptr;
  QPlainTextEdit* raw_ = nullptr;
  QLabel* raw_error_ = nullptr;
  QTimer raw_timer_;
  QTimer validate_timer_;
  bool updating_raw_ = false;
  QWidget* error_widget_ = nullptr;
};

}  // namespace granary::gui

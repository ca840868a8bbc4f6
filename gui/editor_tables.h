// The editor's tables of array sections: the failure timeline (failures[]: at_s, kind, target,
// factor) and the expectations (expect[]: metric, condition, value, tolerance, name). A row is
// an element of the array; a cell edit becomes an undoable edit of that element's key, a kind
// or condition chosen in a row's combo box moves the element's keys along. Keys a table has no
// column for (random_drive_failures' own keys, cables) stay as they are and are edited in the
// Raw JSON tab; such a row shows them in its target cell, read-only.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QComboBox>
#include <QStringList>
#include <QTableWidget>
#include <QWidget>
#include <optional>
#include <string>

#include "gui/scenario_document.h"

namespace granary::gui {

// A table over the array at `array_pointer`, one combo-box column (`combo_column`).
class ArrayTable : public QWidget {
  Q_OBJECT
 public:
  ArrayTable(ScenarioDocument* doc, JsonPointer array_pointer, QStringList headers,
             int combo_column, QStringList combo_items, QWidget* parent = nullptr);

  void refresh();
  // Marks the cell the pointer concerns (a key of an element, an element, the array); returns
  // true when the pointer is in this table's array.
  bool show_error(const JsonPointer& pointer, const QString& message);
  void clear_errors();
  QTableWidget* table() const { return table_; }
  QComboBox* combo(int row) const;
  // The error message shown in a cell ("" when none).
  QString error_at(int row, int column) const;
  // Appends the default element; removes the selected rows' elements.
  void add_row();
  void remove_selected_rows();

 protected:
  // The texts of a row's cells (the combo column's text selects the combo item).
  virtual QStringList cells_of(const Json& element) const = 0;
  // The element after its cell `column` became `text` (the combo column: its item).
  virtual Json edited(const Json& element, int column, const QString& text) const = 0;
  // The column that shows an element's key.
  virtual int column_of_key(const std::string& key) const = 0;
  // Whether a row's cell may be edited in the table.
  virtual bool editable(const Json& element, int column) const;
  virtual Json new_element() const = 0;
  const Json& elements() const;

 private:
  void on_cell_changed(int row, int column);
  void set_element(int row, Json element);
  ScenarioDocument* doc_;
  JsonPointer array_;
  int combo_column_;
  QStringList combo_items_;
  QTableWidget* table_;
};

class FailuresTable : public ArrayTable {
  Q_OBJECT
 public:
  explicit FailuresTable(ScenarioDocument* doc, QWidget* parent = nullptr);

 protected:
  QStringList cells_of(const Json& element) const override;
  Json edited(const Json& element, int column, const QString& text) const override;
  int column_of_key(const std::string& key) const override;
  bool editable(const Json& element, int column) const override;
  Json new_element() const override;
};

class ExpectationsTable : public ArrayTable {
  Q_OBJECT
 public:
  explicit ExpectationsTable(ScenarioDocument* doc, QWidget* parent = nullptr);

 protected:
  QStringList cells_of(const Json& element) const override;
  Json edited(const Json& element, int column, const QString& text) const override;
  int column_of_key(const std::string& key) const override;
  Json new_element() const override;
};

// The key a failure kind names its target with ("osd", "host", "hosts", "link"), or "" (none).
std::string failure_target_key(const std::string& kind);

}  // namespace granary::gui

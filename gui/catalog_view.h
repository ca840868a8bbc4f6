// The Hardware Catalog window: one tab per table of the catalog database (drives, nics,
// accelerators, servers, switches; db/catalog_db.h), cells edited in place (each change written at
// once), Add, Duplicate as new name and Delete row, and a note that prices are examples. The db/
// library creates, migrates and seeds the schema; this window edits rows through Qt SQL
// (QSqlTableModel, driver QSQLITE) on the same file, held to the schema's CHECK constraints: a
// value the models would refuse is refused, the error shown and the cell reverted. The columns
// builtin and user_edited are shown read-only.
//
// Built-in rows (a name of the built-in catalog, db::is_builtin_name) are read-only: runs always
// use the built-in figures under those names, so an edit there would have no effect. They cannot
// be edited, deleted or taken by another row's name; "Duplicate as new name..." copies one into
// a new, editable row that scenarios can name.
//
// Thread-safety: GUI thread only. Each window has its own Qt SQL connection, closed with it.
#pragma once

#include <QLabel>
#include <QSqlDatabase>
#include <QSqlTableModel>
#include <QString>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QWidget>
#include <vector>

namespace granary::gui {

class CatalogView : public QWidget {
  Q_OBJECT
 public:
  explicit CatalogView(QString database_path, QWidget* parent = nullptr);
  ~CatalogView() override;

  // Whether the database opened (else status_line() says why).
  bool is_open() const { return !models_.empty(); }
  QTabWidget* tabs() const { return tabs_; }
  // The model of tab `i` (in db::kCatalogTables order: 0 drives, 1 nics, 2 accelerators,
  // 3 servers, 4 switches).
  QSqlTableModel* model(int i) const { return models_.at(static_cast<size_t>(i)); }
  QTableView* view(int i) const { return views_.at(static_cast<size_t>(i)); }
  QString status_line() const { return status_->text(); }

  // Adds a row named `name` (defaults for the figures) to tab `i`; false with the error shown
  // (a built-in or taken name, ...).
  bool add_row(int i, const QString& name);
  // Adds a copy of row `row` of tab `i` (built-in or not) named `name`, editable, its source
  // saying what it copies; false with the error shown.
  bool duplicate_row(int i, int row, const QString& name);
  // Deletes a row; false with the error shown for a built-in row.
  bool delete_row(int i, int row);
  // Sets one cell; false (and reverted) when the database refuses it or the row is built-in.
  bool set_cell(int i, int row, const QString& column, const QVariant& value);
  // Whether row `row` of tab `i` is a built-in (read-only) row.
  bool is_builtin_row(int i, int row) const;

 signals:
  // The catalog changed (a row added, edited or deleted): the editor's profile lists follow.
  void catalog_changed();

 private:
  void build_table(const QString& table, const QSqlDatabase& sql);
  void build_buttons(QVBoxLayout* layout);
  void show_error(QSqlTableModel* m);
  // Submits the model's pending changes: catalog_changed(), or false with the error shown.
  bool submit(QSqlTableModel* m);
  QString connection_;
  bool batch_ = false;  // add_row, set_cell: they submit themselves
  QTabWidget* tabs_;
  QLabel* status_;
  std::vector<QSqlTableModel*> models_;
  std::vector<QTableView*> views_;
};

}  // namespace granary::gui

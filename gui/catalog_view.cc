#include "gui/catalog_view.h"

#include <QBrush>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QPalette>
#include <QPushButton>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlRecord>
#include <functional>

#include "db/catalog_db.h"

namespace granary::gui {

namespace {

// "drive", "NIC", "accelerator": the words db/catalog_db.cc's messages use.
const char* row_word(db::CatalogTable t) {
  switch (t) {
    case db::CatalogTable::kDrives:
      return "drive";
    case db::CatalogTable::kNics:
      return "NIC";
    case db::CatalogTable::kAccelerators:
      return "accelerator";
    case db::CatalogTable::kServers:
      return "server";
    case db::CatalogTable::kSwitches:
      return "switch";
  }
  return "row";
}

// builtin and user_edited are the database's to set (seeding, the edit trigger). Built-in rows
// are read-only (catalog_view.h), and no row may take a built-in name: setData refuses both and
// tells `refused` why.
class CatalogModel : public QSqlTableModel {
 public:
  CatalogModel(QObject* parent, const QSqlDatabase& sql, db::CatalogTable table)
      : QSqlTableModel(parent, sql), table_(table) {
    setTable(db::catalog_table_name(table));
  }

  std::function<void(const QString&)> refused;

  bool builtin_name(const QString& name) const {
    return db::is_builtin_name(table_, name.toStdString());
  }
  bool builtin_row(int row) const {
    return builtin_name(QSqlTableModel::data(index(row, fieldIndex("name"))).toString());
  }
  QString builtin_refusal(const QString& name) const {
    return QString(
               "%1 '%2' is built-in: runs always use the built-in figures, so it is "
               "read-only here; use Duplicate as new name... to change its figures")
        .arg(row_word(table_), name);
  }

  Qt::ItemFlags flags(const QModelIndex& index) const override {
    Qt::ItemFlags f = QSqlTableModel::flags(index);
    const QString column = record().fieldName(index.column());
    if (column == "builtin" || column == "user_edited" || builtin_row(index.row())) {
      f &= ~Qt::ItemIsEditable;
    }
    return f;
  }

  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override {
    if ((role == Qt::ForegroundRole || role == Qt::ToolTipRole) && builtin_row(index.row())) {
      if (role == Qt::ForegroundRole) return QBrush(QPalette().color(QPalette::PlaceholderText));
      return builtin_refusal(QSqlTableModel::data(this->index(index.row(), 0)).toString());
    }
    return QSqlTableModel::data(index, role);
  }

  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override {
    const QString column = record().fieldName(index.column());
    if (role == Qt::EditRole && (column == "builtin" || column == "user_edited")) {
      return refuse(QString("%1 is set by the database, not edited").arg(column));
    }
    if (role == Qt::EditRole && builtin_row(index.row())) {
      return refuse(builtin_refusal(QSqlTableModel::data(this->index(index.row(), 0)).toString()));
    }
    if (role == Qt::EditRole && index.column() == fieldIndex("name") &&
        builtin_name(value.toString())) {
      return refuse(QString("%1 '%2' is a built-in name: runs would use the built-in figures, "
                            "not this row's; choose another name")
                        .arg(row_word(table_), value.toString()));
    }
    return QSqlTableModel::setData(index, value, role);
  }

 private:
  bool refuse(const QString& why) {
    if (refused) refused(why);
    return false;
  }
  db::CatalogTable table_;
};

int next_connection_id() {
  static int id = 0;
  return ++id;
}

QString ask_name(QWidget* parent, const QString& title, const QString& suggestion, bool* ok) {
  return QInputDialog::getText(parent, title, QObject::tr("Profile name:"), QLineEdit::Normal,
                               suggestion, ok);
}

}  // namespace

CatalogView::CatalogView(QString database_path, QWidget* parent)
    : QWidget(parent),
      connection_(QString("granary-catalog-%1").arg(next_connection_id())),
      tabs_(new QTabWidget(this)),
      status_(new QLabel(this)) {
  setWindowTitle(tr("Hardware Catalog"));
  auto* note = new QLabel(
      tr("Prices are examples (the built-in ones estimate 2024 reseller prices), not quotes: "
         "get a vendor's quote before procurement. Scenarios "
         "name profiles; a built-in name always runs with the built-in figures, so built-in rows "
         "(grey) are read-only: Duplicate as new name... makes an editable copy."),
      this);
  note->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(note);
  layout->addWidget(tabs_);
  // The schema and the seed come from db/ (one code path for the schema).
  auto catalog = db::HardwareCatalogDb::open(database_path.toStdString());
  if (!catalog.ok()) {
    status_->setText(QString::fromStdString(catalog.status().message()));
    layout->addWidget(status_);
    return;
  }
  QSqlDatabase sql = QSqlDatabase::addDatabase("QSQLITE", connection_);
  sql.setDatabaseName(database_path);
  sql.setConnectOptions(QString("QSQLITE_BUSY_TIMEOUT=%1").arg(db::kBusyTimeoutMs));
  if (!sql.open()) {
    status_->setText(database_path + ": " + sql.lastError().text());
    layout->addWidget(status_);
    return;
  }
  for (db::CatalogTable t : db::kCatalogTables) build_table(db::catalog_table_name(t), sql);
  build_buttons(layout);
  layout->addWidget(status_);
  status_->setText(tr("Catalog database: %1").arg(database_path));
}

void CatalogView::build_table(const QString& table, const QSqlDatabase& sql) {
  auto* m = new CatalogModel(this, sql, *db::parse_catalog_table(table.toStdString()));
  m->setEditStrategy(QSqlTableModel::OnManualSubmit);
  m->select();
  // A refused edit changed nothing: only say why.
  m->refused = [this](const QString& why) { status_->setText(tr("Refused: %1").arg(why)); };
  auto* v = new QTableView(this);
  v->setModel(m);
  v->resizeColumnsToContents();
  tabs_->addTab(v, table);
  models_.push_back(m);
  views_.push_back(v);
  // An edit in the view: written at once, or refused and reverted.
  connect(m, &QSqlTableModel::dataChanged, this, [this, m] {
    if (!batch_ && m->isDirty()) submit(m);
  });
}

void CatalogView::build_buttons(QVBoxLayout* layout) {
  auto* add = new QPushButton(tr("&Add row"), this);
  auto* duplicate = new QPushButton(tr("D&uplicate as new name..."), this);
  auto* remove = new QPushButton(tr("&Delete row"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(duplicate);
  buttons->addWidget(remove);
  buttons->addStretch();
  layout->addLayout(buttons);
  connect(add, &QPushButton::clicked, this, [this] {
    bool ok = false;
    const QString name = ask_name(this, tr("Add row"), {}, &ok);
    if (ok && !name.isEmpty()) add_row(tabs_->currentIndex(), name);
  });
  connect(duplicate, &QPushButton::clicked, this, [this] {
    const int i = tabs_->currentIndex();
    const int row = view(i)->currentIndex().row();
    if (row < 0) {
      status_->setText(tr("Select the row to duplicate."));
      return;
    }
    bool ok = false;
    const QString from = model(i)->data(model(i)->index(row, 0)).toString();
    const QString name = ask_name(this, tr("Duplicate as new name"), from + "-copy", &ok);
    if (ok && !name.isEmpty()) duplicate_row(i, row, name);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int i = tabs_->currentIndex();
    delete_row(i, view(i)->currentIndex().row());
  });
}

CatalogView::~CatalogView() {
  for (QSqlTableModel* m : models_) delete m;
  models_.clear();
  QSqlDatabase::database(connection_, false).close();
  QSqlDatabase::removeDatabase(connection_);
}

bool CatalogView::is_builtin_row(int i, int row) const {
  return static_cast<CatalogModel*>(model(i))->builtin_row(row);
}

void CatalogView::show_error(QSqlTableModel* m) {
  status_->setText(tr("Refused: %1").arg(m->lastError().text()));
  m->revertAll();
  m->select();
}

bool CatalogView::submit(QSqlTableModel* m) {
  if (!m->submitAll()) {
    show_error(m);
    return false;
  }
  emit catalog_changed();
  return true;
}

bool CatalogView::add_row(int i, const QString& name) {
  QSqlTableModel* m = model(i);
  const int row = m->rowCount();
  batch_ = true;  // one submit, below
  m->insertRow(row);
  const bool named = m->setData(m->index(row, m->fieldIndex("name")), name);
  m->setData(m->index(row, m->fieldIndex("source")), tr("added in granary-gui"));
  batch_ = false;
  if (!named) {
    m->revertAll();  // the refusal is shown
    return false;
  }
  return submit(m);
}

bool CatalogView::duplicate_row(int i, int row, const QString& name) {
  QSqlTableModel* m = model(i);
  if (row < 0 || row >= m->rowCount()) return false;
  const QSqlRecord from = m->record(row);
  const int copy = m->rowCount();
  batch_ = true;  // one submit, below
  m->insertRow(copy);
  bool ok = m->setData(m->index(copy, m->fieldIndex("name")), name);
  for (int c = 0; ok && c < from.count(); ++c) {
    const QString field = from.fieldName(c);
    if (field == "name" || field == "builtin" || field == "user_edited") continue;
    QVariant value = from.value(c);
    if (field == "source") {
      value = tr("copy of %1 (%2)").arg(from.value("name").toString(), value.toString());
    }
    ok = m->setData(m->index(copy, c), value);
  }
  batch_ = false;
  if (!ok) {
    m->revertAll();  // the refusal is shown
    return false;
  }
  return submit(m);
}

bool CatalogView::delete_row(int i, int row) {
  auto* m = static_cast<CatalogModel*>(model(i));
  if (row < 0 || row >= m->rowCount()) return false;
  if (m->builtin_row(row)) {
    status_->setText(
        tr("Refused: %1").arg(m->builtin_refusal(m->data(m->index(row, 0)).toString())));
    return false;
  }
  m->removeRow(row);
  return submit(m);
}

bool CatalogView::set_cell(int i, int row, const QString& column, const QVariant& value) {
  QSqlTableModel* m = model(i);
  const int col = m->fieldIndex(column);
  if (col < 0 || row < 0 || row >= m->rowCount()) return false;
  batch_ = true;
  const bool set = m->setData(m->index(row, col), value);
  batch_ = false;
  if (!set) return false;  // refused (shown); nothing was changed
  return submit(m);
}

}  // namespace granary::gui

#include "gui/catalog_view.h"

#include <QHBoxLayout>
#include <QInputDialog>
#include <QPushButton>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlRecord>
#include <QVBoxLayout>

#include "db/catalog_db.h"

namespace granary::gui {

namespace {

// builtin and user_edited are the database's to set (seeding, the edit trigger).
class CatalogModel : public QSqlTableModel {
 public:
  using QSqlTableModel::QSqlTableModel;
  Qt::ItemFlags flags(const QModelIndex& index) const override {
    Qt::ItemFlags f = QSqlTableModel::flags(index);
    const QString column = record().fieldName(index.column());
    if (column == "builtin" || column == "user_edited") f &= ~Qt::ItemIsEditable;
    return f;
  }
};

int next_connection_id() {
  static int id = 0;
  return ++id;
}

}  // namespace

CatalogView::CatalogView(QString database_path, QWidget* parent)
    : QWidget(parent),
      connection_(QString("granary-catalog-%1").arg(next_connection_id())),
      tabs_(new QTabWidget(this)),
      status_(new QLabel(this)) {
  setWindowTitle(tr("Hardware Catalog"));
  auto* note = new QLabel(
      tr("Prices are examples (0 where the built-in catalog knows none), not quotes. Scenarios "
         "name profiles; a built-in name always runs with the built-in figures: give an edited "
         "copy a new name."),
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
  for (const char* table : {"drives", "nics", "accelerators"}) {
    auto* m = new CatalogModel(this, sql);
    m->setTable(table);
    m->setEditStrategy(QSqlTableModel::OnManualSubmit);
    m->select();
    auto* v = new QTableView(this);
    v->setModel(m);
    v->resizeColumnsToContents();
    tabs_->addTab(v, table);
    models_.push_back(m);
    views_.push_back(v);
    // An edit in the view: written at once, or refused and reverted.
    connect(m, &QSqlTableModel::dataChanged, this, [this, m] {
      if (batch_ || !m->isDirty()) return;
      if (m->submitAll()) {
        emit catalog_changed();
      } else {
        show_error(m);
      }
    });
  }
  auto* add = new QPushButton(tr("&Add row"), this);
  auto* remove = new QPushButton(tr("&Delete row"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch();
  layout->addLayout(buttons);
  layout->addWidget(status_);
  connect(add, &QPushButton::clicked, this, [this] {
    bool ok = false;
    const QString name =
        QInputDialog::getText(this, tr("Add row"), tr("Profile name:"), QLineEdit::Normal, {}, &ok);
    if (ok && !name.isEmpty()) add_row(tabs_->currentIndex(), name);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int i = tabs_->currentIndex();
    delete_row(i, view(i)->currentIndex().row());
  });
  status_->setText(tr("Catalog database: %1").arg(database_path));
}

CatalogView::~CatalogView() {
  for (QSqlTableModel* m : models_) delete m;
  models_.clear();
  QSqlDatabase::database(connection_, false).close();
  QSqlDatabase::removeDatabase(connection_);
}

void CatalogView::show_error(QSqlTableModel* m) {
  status_->setText(tr("Refused: %1").arg(m->lastError().text()));
  m->revertAll();
  m->select();
}

bool CatalogView::add_row(int i, const QString& name) {
  QSqlTableModel* m = model(i);
  const int row = m->rowCount();
  batch_ = true;  // one submit, below
  m->insertRow(row);
  m->setData(m->index(row, m->fieldIndex("name")), name);
  m->setData(m->index(row, m->fieldIndex("source")), tr("added in granary-gui"));
  batch_ = false;
  if (!m->submitAll()) {
    show_error(m);
    return false;
  }
  emit catalog_changed();
  return true;
}

bool CatalogView::delete_row(int i, int row) {
  QSqlTableModel* m = model(i);
  if (row < 0 || row >= m->rowCount()) return false;
  m->removeRow(row);
  if (!m->submitAll()) {
    show_error(m);
    return false;
  }
  emit catalog_changed();
  return true;
}

bool CatalogView::set_cell(int i, int row, const QString& column, const QVariant& value) {
  QSqlTableModel* m = model(i);
  const int col = m->fieldIndex(column);
  if (col < 0 || row < 0 || row >= m->rowCount()) return false;
  batch_ = true;
  m->setData(m->index(row, col), value);
  batch_ = false;
  if (!m->submitAll()) {
    show_error(m);
    return false;
  }
  emit catalog_changed();
  return true;
}

}  // namespace granary::gui

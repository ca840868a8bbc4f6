// Tables of the failure timeline and the expectations (editor_tables.h).
#include "gui/editor_tables.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <set>

#include "gui/form_fields.h"

namespace granary::gui {

namespace {

const QStringList kFailureKinds = {
    "osd_crash",     "drive_failure", "drive_replace", "osd_restart",
    "host_down",     "host_restart",  "partition",     "heal",
    "nic_down",      "nic_up",        "nic_degraded",  "link_down",
    "link_degraded", "link_up",       "slow_drive",    "random_drive_failures"};
const QStringList kConditions = {"at_least", "at_most", "between", "equals", "is", "contains"};
const QColor kErrorBackground(0xfd, 0xec, 0xea);

bool takes_factor(const std::string& kind) {
  return kind == "slow_drive" || kind == "nic_degraded" || kind == "link_degraded";
}

// "3", "osd 3", "0, 1, 2", "hosts 0 1" -> the integers in the text.
std::vector<Json> numbers_in(const QString& text) {
  std::vector<Json> out;
  for (const QString& part : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts)) {
    if (part == "osd" || part == "host" || part == "hosts") continue;
    out.push_back(*number_from_text(part));
  }
  return out;
}

}  // namespace

std::string failure_target_key(const std::string& kind) {
  static const std::set<std::string> osd = {"osd_crash", "drive_failure", "drive_replace",
                                            "osd_restart", "slow_drive"};
  static const std::set<std::string> host = {"host_down", "host_restart", "nic_down", "nic_up",
                                             "nic_degraded"};
  if (osd.count(kind)) return "osd";
  if (host.count(kind)) return "host";
  if (kind == "partition" || kind == "heal") return "hosts";
  if (kind == "link_down" || kind == "link_degraded" || kind == "link_up") return "link";
  return "";
}

// ---- ArrayTable

ArrayTable::ArrayTable(ScenarioDocument* doc, JsonPointer array_pointer, QStringList headers,
                       int combo_column, QStringList combo_items, QWidget* parent)
    : QWidget(parent),
      doc_(doc),
      array_(std::move(array_pointer)),
      combo_column_(combo_column),
      combo_items_(std::move(combo_items)),
      table_(new QTableWidget(0, static_cast<int>(headers.size()))) {
  table_->setHorizontalHeaderLabels(headers);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->setDefaultSectionSize(30);
  auto* add = new QPushButton(tr("Add"));
  auto* remove = new QPushButton(tr("Remove"));
  add->setObjectName("add");
  remove->setObjectName("remove");
  connect(add, &QPushButton::clicked, this, &ArrayTable::add_row);
  connect(remove, &QPushButton::clicked, this, &ArrayTable::remove_selected_rows);
  connect(table_, &QTableWidget::cellChanged, this, &ArrayTable::on_cell_changed);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch();
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(table_);
  layout->addLayout(buttons);
}

const Json& ArrayTable::elements() const {
  static const Json empty = Json::array();
  const Json& doc = doc_->json();
  return doc.contains(array_) && doc.at(array_).is_array() ? doc.at(array_) : empty;
}

bool ArrayTable::editable(const Json&, int) const {
  return true;
}

QComboBox* ArrayTable::combo(int row) const {
  return qobject_cast<QComboBox*>(table_->cellWidget(row, combo_column_));
}

void ArrayTable::refresh() {
  const QSignalBlocker block(table_);
  const Json& rows = elements();
  const int n = static_cast<int>(rows.size());
  table_->setRowCount(n);
  for (int r = 0; r < n; ++r) {
    const QStringList cells = cells_of(rows[static_cast<size_t>(r)]);
    for (int c = 0; c < table_->columnCount(); ++c) {
      if (c == combo_column_) {
        QComboBox* box = combo(r);
        if (!box) {
          box = new QComboBox;
          box->addItems(combo_items_);
          table_->setCellWidget(r, c, box);
          connect(box, &QComboBox::currentTextChanged, this, [this, box] {
            for (int row = 0; row < table_->rowCount(); ++row) {
              if (combo(row) == box) on_cell_changed(row, combo_column_);
            }
          });
        }
        const QSignalBlocker block_box(box);
        if (box->findText(cells[c]) < 0) box->addItem(cells[c]);
        box->setCurrentText(cells[c]);
        continue;
      }
      QTableWidgetItem* item = table_->item(r, c);
      if (!item) table_->setItem(r, c, item = new QTableWidgetItem);
      item->setText(cells[c]);
      const bool can_edit = editable(rows[static_cast<size_t>(r)], c);
      item->setFlags(can_edit ? item->flags() | Qt::ItemIsEditable
                              : item->flags() & ~Qt::ItemIsEditable);
      item->setForeground(can_edit ? palette().text() : palette().placeholderText());
    }
  }
  table_->resizeColumnsToContents();
}

void ArrayTable::on_cell_changed(int row, int column) {
  const Json& rows = elements();
  if (row < 0 || static_cast<size_t>(row) >= rows.size()) return;
  const QString text =
      column == combo_column_ ? combo(row)->currentText() : table_->item(row, column)->text();
  set_element(row, edited(rows[static_cast<size_t>(row)], column, text));
}

void ArrayTable::set_element(int row, Json element) {
  doc_->apply({Edit{array_ / std::to_string(row), std::move(element)}},
              tr("Edit %1[%2]").arg(QString::fromStdString(array_.back())).arg(row));
}

void ArrayTable::add_row() {
  Json rows = elements();
  rows.push_back(new_element());
  doc_->apply({Edit{array_, rows}}, tr("Add to %1").arg(QString::fromStdString(array_.back())));
}

void ArrayTable::remove_selected_rows() {
  std::set<int> selected;
  for (const QModelIndex& i : table_->selectionModel()->selectedRows()) selected.insert(i.row());
  if (selected.empty() && table_->currentRow() >= 0) selected.insert(table_->currentRow());
  if (selected.empty()) return;
  Json rows = Json::array();
  const Json& old = elements();
  for (size_t i = 0; i < old.size(); ++i) {
    if (!selected.count(static_cast<int>(i))) rows.push_back(old[i]);
  }
  // An empty array is removed: absent and empty mean the same for both sections.
  doc_->apply({Edit{array_, rows.empty() ? std::optional<Json>() : std::optional<Json>(rows)}},
              tr("Remove from %1").arg(QString::fromStdString(array_.back())));
}

bool ArrayTable::show_error(const JsonPointer& pointer, const QString& message) {
  const std::string a = array_.to_string(), p = pointer.to_string();
  if (p.compare(0, a.size(), a) != 0 || (p.size() > a.size() && p[a.size()] != '/')) return false;
  JsonPointer rest(p.substr(a.size()));
  if (rest.empty()) {
    mark_error(table_, message);
    return true;
  }
  std::vector<std::string> tokens;
  for (JsonPointer q = rest; !q.empty(); q = q.parent_pointer())
    tokens.insert(tokens.begin(), q.back());
  const int row = std::stoi(tokens[0]);
  const int column = tokens.size() > 1 ? column_of_key(tokens[1]) : combo_column_;
  if (row >= table_->rowCount()) {
    mark_error(table_, message);
    return true;
  }
  table_->setCurrentCell(row, column);
  if (column == combo_column_) {
    mark_error(combo(row), message);
  } else if (QTableWidgetItem* item = table_->item(row, column)) {
    const QSignalBlocker block(table_);
    item->setBackground(kErrorBackground);
    item->setToolTip(message);
    item->setData(Qt::UserRole, message);
  }
  return true;
}

QString ArrayTable::error_at(int row, int column) const {
  if (column == combo_column_) return combo(row)->property("granary_error").toString();
  const QTableWidgetItem* item = table_->item(row, column);
  return item ? item->data(Qt::UserRole).toString() : QString();
}

void ArrayTable::clear_errors() {
  const QSignalBlocker block(table_);
  mark_error(table_, "");
  for (int r = 0; r < table_->rowCount(); ++r) {
    if (QComboBox* box = combo(r)) mark_error(box, "");
    for (int c = 0; c < table_->columnCount(); ++c) {
      if (QTableWidgetItem* item = table_->item(r, c); item && item->data(Qt::UserRole).isValid()) {
        item->setData(Qt::BackgroundRole, QVariant());
        item->setToolTip(QString());
        item->setData(Qt::UserRole, QVariant());
      }
    }
  }
}

// ---- FailuresTable: at_s | kind | target | factor

FailuresTable::FailuresTable(ScenarioDocument* doc, QWidget* parent)
    : ArrayTable(doc, JsonPointer("/failures"),
                 {tr("At (s)"), tr("Kind"), tr("Target (osd, host, hosts or link)"),
                  tr("Factor (x slower)")},
                 1, kFailureKinds, parent) {}

QStringList FailuresTable::cells_of(const Json& e) const {
  auto get = [&](const char* key) { return e.contains(key) ? text_of(e[key]) : QString(); };
  const std::string kind = e.value("kind", "");
  const std::string target = failure_target_key(kind);
  QString target_text;
  if (kind == "random_drive_failures") {
    // Its own keys, shown but edited in the Raw JSON tab.
    QStringList parts;
    for (const auto& [k, v] : e.items()) {
      if (k != "kind") parts << QString::fromStdString(k) + " " + text_of(v);
    }
    target_text = parts.join(", ");
  } else if (target == "link" && e.contains("link") && e["link"].is_array()) {
    QStringList names;
    for (const Json& n : e["link"]) names << text_of(n);
    target_text = names.join(" - ");
    if (e.contains("cables")) target_text += QString(" (%1 cables)").arg(text_of(e["cables"]));
  } else if (target == "hosts" && e.contains("hosts") && e["hosts"].is_array()) {
    QStringList hosts;
    for (const Json& h : e["hosts"]) hosts << text_of(h);
    target_text = "hosts " + hosts.join(", ");
  } else if (!target.empty() && e.contains(target)) {
    target_text = QString::fromStdString(target) + " " + text_of(e[target]);
  }
  return {get("at_s"), QString::fromStdString(kind), target_text, get("factor")};
}

bool FailuresTable::editable(const Json& e, int column) const {
  return !(column == 2 && e.value("kind", "") == "random_drive_failures");
}

Json FailuresTable::edited(const Json& element, int column, const QString& text) const {
  Json e = element;
  const std::string kind = e.value("kind", "");
  const std::string target = failure_target_key(kind);
  auto set_or_erase = [&](const char* key, std::optional<Json> v) {
    if (v) {
      e[key] = *v;
    } else {
      e.erase(key);
    }
  };
  switch (column) {
    case 0:
      set_or_erase("at_s", number_from_text(text));
      break;
    case 1: {
      const std::string to = text.toStdString();
      const std::string to_target = failure_target_key(to);
      e["kind"] = to;
      if (to_target != target && !target.empty() && e.contains(target)) {
        const Json old = e[target];
        e.erase(target);
        if (to_target == "hosts" && old.is_number()) e["hosts"] = Json::array({old});
        if ((to_target == "host" || to_target == "osd") && old.is_number()) e[to_target] = old;
        if (to_target == "host" && old.is_array() && old.size() == 1) e["host"] = old[0];
      }
      if (!takes_factor(to)) e.erase("factor");
      if (to == "random_drive_failures") e.erase("at_s");
      break;
    }
    case 2: {
      if (target.empty()) break;
      if (target == "link") {
        QStringList names =
            text.section('(', 0, 0).split(QRegularExpression("[,\\s-]+"), Qt::SkipEmptyParts);
        Json link = Json::array();
        for (const QString& n : names) link.push_back(n.toStdString());
        set_or_erase("link", link.empty() ? std::optional<Json>() : std::optional<Json>(link));
      } else {
        const std::vector<Json> numbers = numbers_in(text);
        if (target == "hosts") {
          set_or_erase("hosts", numbers.empty() ? std::optional<Json>() : Json(numbers));
        } else {
          set_or_erase(target.c_str(), numbers.empty()       ? std::optional<Json>()
                                       : numbers.size() == 1 ? std::optional<Json>(numbers[0])
                                                             : std::optional<Json>(numbers));
        }
      }
      break;
    }
    case 3:
      set_or_erase("factor", number_from_text(text));
      break;
  }
  return e;
}

int FailuresTable::column_of_key(const std::string& key) const {
  if (key == "at_s") return 0;
  if (key == "kind") return 1;
  if (key == "factor") return 3;
  return 2;  // the target and random_drive_failures' keys
}

Json FailuresTable::new_element() const {
  double at_s = 1;
  for (const Json& e : elements()) {
    if (e.contains("at_s") && e["at_s"].is_number()) at_s = std::max(at_s, e["at_s"].get<double>());
  }
  return Json{{"at_s", at_s}, {"kind", "osd_crash"}, {"osd", 0}};
}

// ---- ExpectationsTable: metric | condition | value | tolerance | name

ExpectationsTable::ExpectationsTable(ScenarioDocument* doc, QWidget* parent)
    : ArrayTable(
          doc, JsonPointer("/expect"),
          {tr("Metric (report path)"), tr("Condition"), tr("Value"), tr("Tolerance"), tr("Name")},
          1, kConditions, parent) {}

QStringList ExpectationsTable::cells_of(const Json& e) const {
  auto get = [&](const char* key) { return e.contains(key) ? text_of(e[key]) : QString(); };
  QString condition, value;
  for (const QString& c : kConditions) {
    if (e.contains(c.toStdString())) {
      condition = c;
      value = text_of(e[c.toStdString()]);
      break;
    }
  }
  return {get("metric"), condition, value, get("tolerance"), get("name")};
}

Json ExpectationsTable::edited(const Json& element, int column, const QString& text) const {
  Json e = element;
  QString condition;
  for (const QString& c : kConditions) {
    if (e.contains(c.toStdString())) condition = c;
  }
  auto set_or_erase = [&](const std::string& key, std::optional<Json> v) {
    if (v) {
      e[key] = *v;
    } else {
      e.erase(key);
    }
  };
  switch (column) {
    case 0:
      set_or_erase("metric", text.isEmpty() ? std::optional<Json>() : Json(text.toStdString()));
      break;
    case 1:
      if (!condition.isEmpty()) {
        Json v = e[condition.toStdString()];
        e.erase(condition.toStdString());
        e[text.toStdString()] = v;
      } else {
        e[text.toStdString()] = 0;
      }
      if (text != "equals") e.erase("tolerance");
      break;
    case 2: {
      std::optional<Json> v;
      const QString t = text.trimmed();
      if (condition == "contains") {
        v = Json(text.toStdString());
      } else if (condition == "between" || condition == "is") {
        v = Json::parse(t.toStdString(), nullptr, false);
        if (v->is_discarded()) v = Json(t.toStdString());
      } else {
        v = number_from_text(t);
      }
      if (!condition.isEmpty()) set_or_erase(condition.toStdString(), v ? v : Json(""));
      break;
    }
    case 3:
      set_or_erase("tolerance", number_from_text(text));
      break;
    case 4:
      set_or_erase("name", text.isEmpty() ? std::optional<Json>() : Json(text.toStdString()));
      break;
  }
  return e;
}

int ExpectationsTable::column_of_key(const std::string& key) const {
  if (key == "metric") return 0;
  if (key == "tolerance") return 3;
  if (key == "name") return 4;
  for (const QString& c : kConditions) {
    if (key == c.toStdString()) return 2;
  }
  return 1;
}

Json ExpectationsTable::new_element() const {
  return Json{{"metric", "summary.accelerator_utilization.mean"}, {"at_least", 0.9}};
}

}  // namespace granary::gui

// Form fields bound to scenario keys (form_fields.h).
#include "gui/form_fields.h"

#include <QSignalBlocker>
#include <QStyle>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace granary::gui {

namespace {

bool is_prefix(const JsonPointer& prefix, const JsonPointer& p) {
  const std::string a = prefix.to_string(), b = p.to_string();
  return b.size() >= a.size() && b.compare(0, a.size(), a) == 0 &&
         (b.size() == a.size() || b[a.size()] == '/');
}

}  // namespace

void mark_error(QWidget* w, const QString& message) {
  const char* name = w->metaObject()->className();
  w->setStyleSheet(message.isEmpty() ? QString()
                                     : QString("%1 { border: 2px solid #d32f2f; border-radius: "
                                               "3px; background: #fdecea; }")
                                           .arg(name));
  w->setToolTip(message.isEmpty() ? w->property("granary_tooltip").toString() : message);
  w->setProperty("granary_error", message);
}

std::optional<Json> number_from_text(const QString& text) {
  const QString t = text.trimmed();
  if (t.isEmpty()) return std::nullopt;
  bool ok = false;
  const qlonglong i = t.toLongLong(&ok);
  if (ok) return Json(static_cast<int64_t>(i));
  const qulonglong u = t.toULongLong(&ok);  // seeds up to 2^64 - 1
  if (ok) return Json(static_cast<uint64_t>(u));
  const double d = t.toDouble(&ok);
  if (ok && std::isfinite(d)) return Json(d);
  return Json(t.toStdString());  // not a number: the validator says what it expected
}

QString text_of(const Json& value) {
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

FieldSet::FieldSet(ScenarioDocument* doc, QObject* parent) : QObject(parent), doc_(doc) {}

void FieldSet::add_rows(QFormLayout* form, const std::vector<FieldSpec>& specs) {
  for (const FieldSpec& spec : specs) {
    Field f;
    f.spec = spec;
    const bool combo = spec.kind == FieldKind::kChoice || spec.kind == FieldKind::kBool ||
                       spec.kind == FieldKind::kProfile;
    if (combo) {
      auto* c = new QComboBox;
      c->setSizeAdjustPolicy(QComboBox::AdjustToContents);
      f.editor = c;
    } else {
      auto* e = new QLineEdit;
      if (!spec.default_text.isEmpty()) e->setPlaceholderText("default: " + spec.default_text);
      e->setMaximumWidth(spec.kind == FieldKind::kText ? 16777215 : 220);
      f.editor = e;
    }
    f.editor->setObjectName(QString::fromStdString(spec.key));
    f.editor->setProperty("granary_tooltip", spec.tooltip);
    f.editor->setToolTip(spec.tooltip);
    f.editor->setMinimumHeight(f.editor->sizeHint().height());
    f.error = new QLabel;
    f.error->setStyleSheet("color: #c62828;");
    f.error->setVisible(false);
    auto* cell = new QWidget;
    auto* box = new QVBoxLayout(cell);
    box->setContentsMargins(0, 0, 0, 0);
    box->setSpacing(2);
    box->addWidget(f.editor);
    box->addWidget(f.error);
    form->addRow(spec.label, cell);
    fields_.push_back(f);
  }
  // Connect once the vector holds its final elements (by key, not by address).
  for (const FieldSpec& spec : specs) {
    const Field* f = field(spec.key);
    const std::string key = spec.key;
    if (auto* e = qobject_cast<QLineEdit*>(f->editor)) {
      connect(e, &QLineEdit::editingFinished, this, [this, key] { on_edited(*field(key)); });
    } else if (auto* c = qobject_cast<QComboBox*>(f->editor)) {
      connect(c, &QComboBox::currentIndexChanged, this, [this, key] { on_edited(*field(key)); });
    }
  }
}

void FieldSet::set_edits_for(const std::string& key, EditsFor edits_for) {
  edits_for_.emplace_back(key, std::move(edits_for));
}

const Field* FieldSet::field(const std::string& key) const {
  for (const Field& f : fields_) {
    if (f.spec.key == key) return &f;
  }
  return nullptr;
}

JsonPointer FieldSet::pointer_of(const Field& f) const {
  return base_ / JsonPointer(f.spec.key);
}

std::optional<Json> FieldSet::value_of(const Field& f) const {
  if (auto* e = qobject_cast<QLineEdit*>(f.editor)) {
    if (f.spec.kind == FieldKind::kNumber) return number_from_text(e->text());
    if (e->text().isEmpty()) return std::nullopt;
    return Json(e->text().toStdString());
  }
  auto* c = qobject_cast<QComboBox*>(f.editor);
  const QVariant data = c->currentData();
  if (!data.isValid()) return std::nullopt;
  if (f.spec.kind == FieldKind::kBool) return Json(data.toString() == "true");
  return Json(data.toString().toStdString());
}

void FieldSet::on_edited(const Field& f) {
  std::optional<Json> value = value_of(f);
  JsonPointer p = pointer_of(f);
  const Json& doc = doc_->json();
  // A profile overridden in an object: the object's "profile" key.
  if (f.spec.kind == FieldKind::kProfile && doc.contains(p) && doc.at(p).is_object() && value) {
    p /= "profile";
  }
  const std::optional<Json> old =
      doc.contains(p) ? std::optional<Json>(doc.at(p)) : std::optional<Json>();
  if (old == value) return;
  for (const auto& [key, edits_for] : edits_for_) {
    if (key == f.spec.key) {
      doc_->apply(edits_for(value), tr("Set %1").arg(f.spec.label));
      return;
    }
  }
  doc_->apply({Edit{p, value}}, tr("Set %1").arg(f.spec.label));
}

void FieldSet::show(const Field& f, const Json* value) {
  const QSignalBlocker block(f.editor);
  if (auto* e = qobject_cast<QLineEdit*>(f.editor)) {
    const QString text = value ? text_of(*value) : QString();
    if (e->text() != text) {
      e->setText(text);
      e->setCursorPosition(0);  // a long description shows its start
    }
    return;
  }
  auto* c = qobject_cast<QComboBox*>(f.editor);
  c->clear();
  if (!value || !f.spec.default_text.isEmpty()) {
    c->addItem(f.spec.default_text.isEmpty() ? tr("(not set)")
                                             : tr("(default: %1)").arg(f.spec.default_text));
  }
  const QStringList choices =
      f.spec.kind == FieldKind::kBool ? QStringList{"true", "false"} : f.spec.choices;
  for (const QString& choice : choices) c->addItem(choice, choice);
  if (!value) {
    c->setCurrentIndex(0);
    return;
  }
  const Json& v =
      f.spec.kind == FieldKind::kProfile && value->is_object() && value->contains("profile")
          ? value->at("profile")
          : *value;
  const QString text = text_of(v);
  int i = c->findData(text);
  if (i < 0) {  // a value the list does not hold: shown as it is, for the validator to judge
    c->addItem(text, text);
    i = c->count() - 1;
  }
  c->setCurrentIndex(i);
}

void FieldSet::refresh() {
  const Json& doc = doc_->json();
  for (const Field& f : fields_) {
    const JsonPointer p = pointer_of(f);
    show(f, doc.contains(p) ? &doc.at(p) : nullptr);
  }
}

void FieldSet::set_choices(const std::string& key, const QStringList& choices) {
  for (Field& f : fields_) {
    if (f.spec.key != key) continue;
    f.spec.choices = choices;
    const Json& doc = doc_->json();
    const JsonPointer p = pointer_of(f);
    show(f, doc.contains(p) ? &doc.at(p) : nullptr);
  }
}

const Field* FieldSet::show_error(const JsonPointer& pointer, const QString& message,
                                  const QString& detail) {
  const Field* best = nullptr;
  size_t best_depth = 0;
  for (const Field& f : fields_) {
    const JsonPointer p = pointer_of(f);
    if (p == pointer) {
      best = &f;
      break;
    }
    // The nearest enclosing key ("nic" for "nic/gbps" when only "nic" has a field), else the
    // first key inside the one named ("clients" -> "clients/count").
    if (is_prefix(p, pointer)) {
      const size_t depth = p.to_string().size() + 1000;
      if (depth > best_depth) best = &f, best_depth = depth;
    } else if (is_prefix(pointer, p) && best_depth == 0) {
      best = &f, best_depth = 1;
    }
  }
  if (best) {
    mark_error(best->editor, message);
    best->error->setText(detail);
    best->error->setVisible(true);
  }
  return best;
}

void FieldSet::clear_errors() {
  for (const Field& f : fields_) {
    if (!f.editor->property("granary_error").toString().isEmpty()) mark_error(f.editor, "");
    f.error->clear();
    f.error->setVisible(false);
  }
}

}  // namespace granary::gui

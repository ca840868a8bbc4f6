// Form fields bound to keys of the scenario JSON: a FieldSet creates the widgets of a form
// (line edits for numbers and text, combo boxes for choices and booleans), shows the values of
// a JSON document in them, turns what the user enters into edits of the document (through its
// undo stack), and shows a validation error at the field whose key it names (a red frame, a
// tooltip and a red line under the field).
//
// An absent key shows as an empty field (numbers, text) or a "(default: ...)" entry (choices)
// and entering that removes the key again, so that the scenario format's defaults apply. What
// is entered is not checked here: the validator's message says what is wrong, at the field.
//
// Thread-safety: GUI thread only.
#pragma once

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <string>
#include <vector>

#include "gui/scenario_document.h"

namespace granary::gui {

enum class FieldKind {
  kNumber,   // a JSON number ("12", "1e3", "0.5"); text that is no number is kept as a string
  kText,     // a JSON string
  kChoice,   // one string of a list (a combo box)
  kBool,     // true or false (a combo box)
  kProfile,  // a profile name, written as a string or as the "profile" key of an object
};

struct FieldSpec {
  std::string key;  // relative JSON pointer, e.g. "/clients/count"
  QString label;
  FieldKind kind = FieldKind::kNumber;
  QString default_text;  // what applies when the key is absent (placeholder); "" for required
  QStringList choices;   // kChoice, kProfile
  QString tooltip;       // the format's description of the key
};

// A widget of a FieldSet with its key (absolute pointer once bound).
struct Field {
  FieldSpec spec;
  QWidget* editor = nullptr;  // QLineEdit or QComboBox
  QLabel* error = nullptr;    // the red line under it
};

class FieldSet : public QObject {
  Q_OBJECT
 public:
  FieldSet(ScenarioDocument* doc, QObject* parent = nullptr);

  // Adds a row to `form` for each spec, in order; returns the editors.
  void add_rows(QFormLayout* form, const std::vector<FieldSpec>& specs);
  // The keys are relative to this pointer ("" for the document's root, "/workloads/2").
  void set_base(const JsonPointer& base) { base_ = base; }
  const JsonPointer& base() const { return base_; }
  // Replaces the edits a field's change makes (for a change that must move other keys too,
  // such as the storage design). Receives the new value (empty: absent).
  using EditsFor = std::function<std::vector<Edit>(const std::optional<Json>& value)>;
  void set_edits_for(const std::string& key, EditsFor edits_for);
  // Shows the document's values (no edits result).
  void refresh();
  // Replaces the list of a choice or profile field (the catalog's names changed) and shows it.
  void set_choices(const std::string& key, const QStringList& choices);
  // Shows `message` at the field for `pointer` (its own, or the nearest enclosing or enclosed
  // key): the whole message as its tooltip, `detail` (what follows the path) in red under it;
  // returns the field, or null when no field of this set concerns the pointer.
  const Field* show_error(const JsonPointer& pointer, const QString& message,
                          const QString& detail);
  void clear_errors();

  const std::vector<Field>& fields() const { return fields_; }
  const Field* field(const std::string& key) const;
  JsonPointer pointer_of(const Field& f) const;

 private:
  void on_edited(const Field& f);
  std::optional<Json> value_of(const Field& f) const;  // what the editor holds (empty: absent)
  void show(const Field& f, const Json* value);
  ScenarioDocument* doc_;
  JsonPointer base_;
  std::vector<Field> fields_;
  std::vector<std::pair<std::string, EditsFor>> edits_for_;
};

// Marks `w` as the one an error concerns (red frame and tooltip), or clears it (empty message).
void mark_error(QWidget* w, const QString& message);
// JSON from a number field's text: "" -> empty (absent), an integer, a float, else the string.
std::optional<Json> number_from_text(const QString& text);
// A JSON value as a field shows it: strings unquoted, numbers as written.
QString text_of(const Json& value);

}  // namespace granary::gui

// The scenario being edited in granary-gui: its JSON (in the file's key order), the file it
// came from, every edit on a QUndoStack, and its validation — parse_scenario (the format,
// docs/scenario-format.md) and build_cluster_plan (what `granary validate` and `granary run`
// also refuse), never a simulation. A validation error is the parser's one line plus the JSON
// path it names, so that the editor can show it at the field concerned.
//
// Thread-safety: a QObject of the GUI thread; not thread-safe.
#pragma once

#include <QObject>
#include <QString>
#include <QUndoStack>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "models/catalog.h"
#include "models/scenario.h"
#include "models/topology.h"

namespace granary::gui {

// Key order as in the file, so that a saved scenario reads as it was written.
using Json = nlohmann::ordered_json;
using JsonPointer = Json::json_pointer;

// One change: the value at `pointer` becomes `value`, or the key (array element) goes away
// when `value` is empty. Missing parent objects are created.
struct Edit {
  JsonPointer pointer;
  std::optional<Json> value;
};

// The outcome of validate().
struct Validation {
  bool ok = false;
  std::string message;    // the one-line error ("s.json: cluster.clients.count: expected ...")
  std::string json_path;  // the path it names ("cluster.clients.count"); empty when none
  std::optional<JsonPointer> pointer;  // json_path as a pointer ("/cluster/clients/count")
  // When ok: one line describing the scenario (models::scenario_summary), and how it would
  // run (the cost estimate and the plan's reason).
  std::string summary;
  std::string estimate;
  // When ok: the cluster's topology (every node of the scenario, with the plan's MDS).
  std::optional<models::Topology> topology;
};

// A JSON syntax error in `text` as the editor shows it: the line and column of the last byte
// nlohmann read, and its message without the "[json.exception.parse_error.101] " prefix.
struct JsonSyntaxError {
  size_t line = 1, column = 1;
  std::string what;
};
JsonSyntaxError json_syntax_error(std::string_view text, const nlohmann::json::parse_error& e);

// The JSON path an error message names, or "" when it names none: "s.json: workloads[1].files:
// expected ..." -> "workloads[1].files" (`source` is the text's name in the message).
std::string json_path_of_message(std::string_view message, std::string_view source);
// "cluster.clients.count" -> /cluster/clients/count, "workloads[1]" -> /workloads/1,
// `cluster["odd key"]` -> /cluster/odd key; nullopt for text that is not such a path.
std::optional<JsonPointer> pointer_of_json_path(std::string_view path);

// A small valid scenario: what File > New starts from.
Json new_scenario_json();

class ScenarioDocument : public QObject {
  Q_OBJECT
 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  // Reads a scenario file (comments allowed). Errors name the file and what went wrong, with
  // line and column for JSON syntax; the document is unchanged then.
  Status load(const QString& path);
  // Writes the JSON (2-space indent) to `path`, which becomes the document's path.
  Status save(const QString& path);
  // A new, unsaved document holding `json`; the undo history is cleared.
  void reset(Json json);

  const Json& json() const { return json_; }
  QString path() const { return path_; }
  // The name messages give the text: the file's path, or "untitled.json" (in the current
  // directory, which anchors a relative crush_map) before the first save.
  std::string source_name() const;
  bool is_modified() const { return !undo_.isClean(); }
  QUndoStack* undo_stack() { return &undo_; }

  // Edits through the undo stack (each call one undoable step, named `description`). An edit
  // that changes nothing is not recorded.
  void set_value(const JsonPointer& pointer, Json value);
  void remove_value(const JsonPointer& pointer);
  void apply(std::vector<Edit> edits, const QString& description);
  // The whole document replaced (the raw JSON editor).
  void replace_all(Json json, const QString& description);

  // The catalog profile names resolve against (the built-in one by default; granary-gui adds
  // the catalog database's profiles, db/catalog_db.h). Takes effect at the next validate();
  // catalog_changed() tells the editor's profile lists.
  void set_catalog(models::Catalog catalog) {
    catalog_ = std::move(catalog);
    emit catalog_changed();
  }
  const models::Catalog& catalog() const { return catalog_; }

  // Validates the current JSON, stores and returns the outcome and emits validated().
  const Validation& validate();
  const Validation& validation() const { return validation_; }

 signals:
  void changed();  // the JSON changed (an edit, undo, redo, load, reset)
  void validated(const granary::gui::Validation& validation);
  void path_changed(const QString& path);
  void modified_changed(bool modified);
  void catalog_changed();

 private:
  friend class EditCommand;
  void set_json(Json json);  // from the undo commands
  Json json_;
  QString path_;
  QUndoStack undo_;
  Validation validation_;
  models::Catalog catalog_;
};

}  // namespace granary::gui

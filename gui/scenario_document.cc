// The edited scenario: JSON, undo stack, load/save and validation (scenario_document.h).
#include "gui/scenario_document.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QUndoCommand>
#include <cctype>

#include "models/json_diagnostics.h"
#include "models/scenario_json.h"
#include "models/topology.h"
#include "sim/cluster_plan.h"
#include "sim/cost_estimate.h"

namespace granary::gui {

// One undoable step: the document's JSON before and after (a scenario is a few KiB).
class EditCommand : public QUndoCommand {
 public:
  EditCommand(ScenarioDocument* doc, Json before, Json after, const QString& text)
      : QUndoCommand(text), doc_(doc), before_(std::move(before)), after_(std::move(after)) {}
  void redo() override { doc_->set_json(after_); }
  void undo() override { doc_->set_json(before_); }

 private:
  ScenarioDocument* doc_;
  Json before_, after_;
};

namespace {

bool path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Applies one edit to `j`. Removing a key that is not there changes nothing.
void apply_edit(Json& j, const Edit& e) {
  if (e.value) {
    j[e.pointer] = *e.value;
    return;
  }
  if (e.pointer.empty() || !j.contains(e.pointer)) return;
  Json& parent = j[e.pointer.parent_pointer()];
  const std::string& last = e.pointer.back();
  if (parent.is_object()) {
    parent.erase(last);
  } else if (parent.is_array()) {
    parent.erase(parent.begin() + std::stol(last));
  }
}

// "file:3:10: invalid JSON: ..." from nlohmann's parse error (its byte position).
std::string syntax_error(const std::string& file, const std::string& text,
                         const Json::parse_error& e) {
  const JsonSyntaxError x = json_syntax_error(text, e);
  return file + ":" + std::to_string(x.line) + ":" + std::to_string(x.column) +
         ": invalid JSON: " + x.what;
}
}  // namespace

std::optional<JsonPointer> pointer_of_json_path(std::string_view path) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t end = path.find(']', i);
      if (end == std::string_view::npos) return std::nullopt;
      std::string_view inside = path.substr(i + 1, end - i - 1);
      if (inside.size() >= 2 && inside.front() == '"' && inside.back() == '"') {
        inside = inside.substr(1, inside.size() - 2);  // a quoted key
      } else if (inside.empty() || !std::all_of(inside.begin(), inside.end(),
                                                [](char c) { return std::isdigit(c); })) {
        return std::nullopt;
      }
      tokens.emplace_back(inside);
      i = end + 1;
    } else {
      if (path[i] == '.') {
        if (tokens.empty()) return std::nullopt;
        ++i;
      }
      size_t end = i;
      while (end < path.size() && path_char(path[end])) ++end;
      if (end == i) return std::nullopt;
      tokens.emplace_back(path.substr(i, end - i));
      i = end;
    }
  }
  if (tokens.empty()) return std::nullopt;
  JsonPointer p;
  for (const std::string& t : tokens) p /= t;
  return p;
}

JsonSyntaxError json_syntax_error(std::string_view text, const nlohmann::json::parse_error& e) {
  const models::json_diag::TextPosition p =
      models::json_diag::text_position(text, e.byte > 0 ? e.byte - 1 : 0);
  std::string what = e.what();
  if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
  return {p.line, p.column, what};
}

std::string json_path_of_message(std::string_view message, std::string_view source) {
  std::string_view rest = message;
  const std::string prefix = std::string(source) + ": ";
  if (!source.empty() && rest.substr(0, prefix.size()) == prefix) rest.remove_prefix(prefix.size());
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return "";
  const std::string_view path = rest.substr(0, colon);
  // Only the scenario's own top-level keys start a path ("granary: unsupported format" too).
  static const char* kTop[] = {"granary", "name",      "description", "seed",   "cluster",
                               "storage", "workloads", "simulation",  "expect", "failures"};
  const auto p = pointer_of_json_path(path);
  if (!p) return "";
  const std::string first = p->to_string().substr(1, p->to_string().find('/', 1) - 1);
  for (const char* k : kTop) {
    if (first == k) return std::string(path);
  }
  return "";
}

Json new_scenario_json() {
  return Json::parse(R"({
  "granary": 1,
  "name": "new-scenario",
  "description": "",
  "seed": 1,
  "cluster": {
    "clients": {"count": 8, "accelerator": "a100", "accelerators_per_node": 8,
                "nic": {"profile": "connectx6-200g", "count": 1}},
    "storage": {"count": 4, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                "nic": {"profile": "connectx7-400g", "count": 1}, "cpu_cores": 32},
    "fabric": {"topology": "leaf-spine", "link_gbps": 400, "hosts_per_leaf": 8}
  },
  "storage": {"design": "rados", "protocol": "rdma", "rados": {"replicas": 3}},
  "workloads": [{"name": "unet3d", "mlperf": "unet3d", "files": 1024, "epochs": 1}],
  "simulation": {"fidelity": "auto"}
})");
}

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent), json_(new_scenario_json()) {
  connect(&undo_, &QUndoStack::cleanChanged, this,
          [this](bool clean) { emit modified_changed(!clean); });
}

std::string ScenarioDocument::source_name() const {
  return path_.isEmpty() ? std::string("untitled.json") : path_.toStdString();
}

Status ScenarioDocument::load(const QString& path) {
  const std::string name = path.toStdString();
  QFile f(path);
  if (!QFileInfo(path).isFile()) return Status::not_found(name + ": no such scenario file");
  if (!f.open(QIODevice::ReadOnly)) {
    return Status::io_error(name + ": cannot read it (" + f.errorString().toStdString() + ")");
  }
  const QByteArray bytes = f.readAll();
  const std::string text(bytes.constData(), static_cast<size_t>(bytes.size()));
  Json j;
  try {
    j = Json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const Json::parse_error& e) {
    return Status::invalid_argument(syntax_error(name, text, e));
  }
  if (!j.is_object()) return Status::invalid_argument(name + ": expected a JSON object");
  undo_.clear();
  path_ = QFileInfo(path).absoluteFilePath();
  set_json(std::move(j));
  undo_.setClean();
  emit path_changed(path_);
  emit modified_changed(false);
  return Status();
}

Status ScenarioDocument::save(const QString& path) {
  QSaveFile f(path);
  const std::string text = json_.dump(2) + "\n";
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) ||
      !f.commit()) {
    return Status::io_error(path.toStdString() + ": cannot write it (" +
                            f.errorString().toStdString() + ")");
  }
  const QString absolute = QFileInfo(path).absoluteFilePath();
  const bool moved = absolute != path_;
  path_ = absolute;
  undo_.setClean();
  if (moved) {
    emit path_changed(path_);
    validate();  // a relative crush_map now resolves against the new directory
  }
  return Status();
}

void ScenarioDocument::reset(Json json) {
  undo_.clear();
  path_.clear();
  set_json(std::move(json));
  undo_.setClean();
  emit path_changed(path_);
  emit modified_changed(false);
}

void ScenarioDocument::set_value(const JsonPointer& pointer, Json value) {
  apply({Edit{pointer, std::move(value)}},
        tr("Set %1").arg(QString::fromStdString(pointer.to_string())));
}

void ScenarioDocument::remove_value(const JsonPointer& pointer) {
  apply({Edit{pointer, std::nullopt}},
        tr("Remove %1").arg(QString::fromStdString(pointer.to_string())));
}

void ScenarioDocument::apply(std::vector<Edit> edits, const QString& description) {
  Json after = json_;
  for (const Edit& e : edits) apply_edit(after, e);
  replace_all(std::move(after), description);
}

void ScenarioDocument::replace_all(Json json, const QString& description) {
  if (json == json_) return;
  undo_.push(new EditCommand(this, json_, std::move(json), description));
}

void ScenarioDocument::set_json(Json json) {
  json_ = std::move(json);
  emit changed();
}

const Validation& ScenarioDocument::validate() {
  Validation v;
  const std::string source = source_name();
  auto fail = [&](const std::string& message) {
    v.message = message;
    v.json_path = json_path_of_message(message, source);
    if (!v.json_path.empty()) v.pointer = pointer_of_json_path(v.json_path);
  };
  Result<models::Scenario> s = models::parse_scenario(json_.dump(2), source, catalog_);
  if (!s.ok()) {
    fail(s.status().message());
  } else if (Result<sim::ClusterPlan> plan = sim::build_cluster_plan(*s, s->seed); !plan.ok()) {
    fail(plan.status().message());
  } else {
    const sim::CostEstimate cost = sim::estimate_cost(*s);
    v.ok = true;
    v.summary = models::scenario_summary(*s);
    v.estimate = sim::cost_summary(cost) + "; " + cost.plan.reason;
    // The cluster as described (the plan's full_topology holds only the client nodes the run
    // involves: a checkpoint's ranks).
    Result<models::Topology> topology = models::build_topology(s->cluster, plan->mds_count);
    if (topology.ok()) v.topology = std::move(topology).value();
  }
  validation_ = std::move(v);
  emit validated(validation_);
  return validation_;
}

}  // namespace granary::gui

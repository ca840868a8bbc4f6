// Sweep files and values (sweep_data.h).
#include "gui/sweep_data.h"

#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cstdint>

#include "gui/report_data.h"

namespace granary::gui {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxSweepPoints = 32;  // as granary plan sweep

// Reads typed members of one JSON object; the first problem is kept with its path.
class Reader {
 public:
  Reader(const json& object, std::string path) : o_(object), path_(std::move(path)) {}
  double number(const char* key) {
    const json* v = find(key);
    if (v && v->is_number()) return v->get<double>();
    fail(key, "a number", v);
    return 0;
  }
  int integer(const char* key) {
    const json* v = find(key);
    if (v && v->is_number_integer()) return v->get<int>();
    fail(key, "a whole number", v);
    return 0;
  }
  std::optional<int> optional_integer(const char* key) {
    const json* v = find(key);
    if (v && v->is_null()) return std::nullopt;
    if (v && v->is_number_integer()) return v->get<int>();
    fail(key, "a whole number or null", v);
    return std::nullopt;
  }
  bool boolean(const char* key) {
    const json* v = find(key);
    if (v && v->is_boolean()) return v->get<bool>();
    fail(key, "true or false", v);
    return false;
  }
  QString string(const char* key, bool null_ok = false) {
    const json* v = find(key);
    if (v && v->is_string()) return QString::fromStdString(v->get<std::string>());
    if (null_ok && v && v->is_null()) return {};
    fail(key, null_ok ? "a string or null" : "a string", v);
    return {};
  }
  const Status& status() const { return status_; }

 private:
  const json* find(const char* key) const {
    if (!o_.is_object()) return nullptr;
    auto it = o_.find(key);
    return it == o_.end() ? nullptr : &*it;
  }
  void fail(const char* key, const char* expected, const json* found) {
    if (!status_.ok()) return;
    const std::string where = path_.empty() ? std::string(key) : path_ + "." + key;
    status_ = Status::invalid_argument(where + ": expected " + expected + ", found " +
                                       (found ? found->dump() : std::string("nothing")));
  }
  const json& o_;
  std::string path_;
  Status status_;
};

}  // namespace

QString sweep_flag(SweepParameter p) {
  return p == SweepParameter::kClientNodes ? "--clients" : "--accelerators-per-node";
}

QString sweep_key(SweepParameter p) {
  return p == SweepParameter::kClientNodes ? "cluster.clients.count"
                                           : "cluster.clients.accelerators_per_node";
}

QString sweep_axis_title(SweepParameter p) {
  return p == SweepParameter::kClientNodes ? "client nodes" : "accelerators per node";
}

Result<Sweep> sweep_of(const json& j) {
  Sweep s;
  Reader top(j, "");
  const QString parameter = top.string("parameter");
  s.au_threshold = top.number("au_threshold");
  if (!top.status().ok()) return top.status();
  if (parameter == sweep_key(SweepParameter::kClientNodes)) {
    s.parameter = SweepParameter::kClientNodes;
  } else if (parameter == sweep_key(SweepParameter::kAcceleratorsPerNode)) {
    s.parameter = SweepParameter::kAcceleratorsPerNode;
  } else {
    return Status::invalid_argument(
        "parameter: expected cluster.clients.count or "
        "cluster.clients.accelerators_per_node, found " +
        parameter.toStdString());
  }
  const json scenario = j.value("scenario", json::object());
  Reader sc(scenario, "scenario");
  s.scenario_name = sc.string("name");
  if (!sc.status().ok()) return sc.status();
  if (scenario.contains("seed")) s.seed = QString::fromStdString(scenario["seed"].dump());
  if (!j.contains("points") || !j["points"].is_array() || j["points"].empty()) {
    return Status::invalid_argument("points: expected an array of at least one point");
  }
  for (size_t i = 0; i < j["points"].size(); ++i) {
    const json& pj = j["points"][i];
    Reader r(pj, "points[" + std::to_string(i) + "]");
    SweepPoint p;
    p.value = r.integer("value");
    p.client_nodes = r.integer("client_nodes");
    p.accelerators = r.integer("accelerators");
    p.read_gibps = r.number("read_gibps");
    p.read_of = r.string("read_gibps_of");
    p.demand_gibps = r.number("demand_gibps");
    p.read_bound_gibps = r.number("read_bound_gibps");
    p.binding = r.string("binding");
    p.accelerator_utilization = r.number("accelerator_utilization");
    p.meets_threshold = r.boolean("meets_threshold");
    p.saturated_count = r.integer("saturated_count");
    p.busiest_kind = r.string("busiest_kind");
    p.busiest_kind_mean = r.number("busiest_kind_mean");
    p.fidelity = r.string("fidelity");
    if (!r.status().ok()) return r.status();
    QStringList first;
    if (pj.contains("saturated_first") && pj["saturated_first"].is_array()) {
      for (const json& f : pj["saturated_first"]) {
        if (f.is_object() && f.contains("name") && f["name"].is_string()) {
          first << QString::fromStdString(f["name"].get<std::string>());
        }
      }
    }
    p.saturated_first = first.join(", ");
    if (!s.points.empty() && p.value <= s.points.back().value) {
      return Status::invalid_argument(
          "points[" + std::to_string(i) + "].value: expected values ascending, found " +
          std::to_string(p.value) + " after " + std::to_string(s.points.back().value));
    }
    s.points.push_back(std::move(p));
  }
  const json saturation = j.value("saturation", json::object());
  Reader sat(saturation, "saturation");
  s.au_below_threshold_at = sat.optional_integer("au_below_threshold_at");
  s.throughput_plateau_at = sat.optional_integer("throughput_plateau_at");
  s.saturation_at = sat.optional_integer("at");
  s.limited_by = sat.string("limited_by", /*null_ok=*/true);
  if (!sat.status().ok()) return sat.status();
  return s;
}

Result<Sweep> load_sweep_file(const QString& path, json* sweep) {
  json parsed;
  if (Status st = load_granary_file(path,
                                    {"granary_sweep", 1, "sweep", "granary plan sweep --out",
                                     "a run's report opens with File > Open Report"},
                                    &parsed);
      !st.ok()) {
    return st;
  }
  auto s = sweep_of(parsed);
  if (!s.ok()) return Status::invalid_argument(path.toStdString() + ": " + s.status().message());
  if (sweep) *sweep = std::move(parsed);
  return s;
}

Result<std::vector<int>> parse_sweep_values(const QString& text) {
  const QStringList parts = text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts);
  if (parts.isEmpty()) return Status::invalid_argument("expected values such as 8, 16, 32");
  std::vector<int> values;
  for (const QString& part : parts) {
    bool ok = false;
    const int v = part.toInt(&ok);
    if (!ok) {
      return Status::invalid_argument("expected whole numbers, found '" + part.toStdString() + "'");
    }
    if (v < 1)
      return Status::invalid_argument("expected values of at least 1, found " + std::to_string(v));
    if (!values.empty() && v <= values.back()) {
      return Status::invalid_argument("expected ascending values, found " +
                                      std::to_string(values.back()) + " before " +
                                      std::to_string(v));
    }
    values.push_back(v);
  }
  if (values.size() > kMaxSweepPoints) {
    return Status::invalid_argument("at most " + std::to_string(kMaxSweepPoints) +
                                    " values, found " + std::to_string(values.size()));
  }
  return values;
}

std::vector<int> default_sweep_values(int current) {
  current = std::max(current, 1);
  std::vector<int> values;
  for (int64_t v = 1; v < current; v *= 2) values.push_back(static_cast<int>(v));
  values.push_back(current);
  if (values.size() > 5) values.erase(values.begin(), values.end() - 5);
  return values;
}

QString sweep_values_text(const std::vector<int>& values) {
  QStringList parts;
  for (int v : values) parts << QString::number(v);
  return parts.join(", ");
}

}  // namespace granary::gui

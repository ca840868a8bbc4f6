// Report data for the results view (report_data.h).
#include "gui/report_data.h"

#include <QFile>
#include <cmath>
#include <limits>

namespace granary::gui {

using models::LinkRole;
using nlohmann::json;

namespace {

bool contains_text(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

// The link roles a line of the data path's minimum cut names (models/topology.cc noun_of).
void add_roles_of_cut(const std::string& cut, std::vector<LinkRole>* roles) {
  auto add = [roles](LinkRole r) {
    if (std::find(roles->begin(), roles->end(), r) == roles->end()) roles->push_back(r);
  };
  if (contains_text(cut, "storage NIC") || contains_text(cut, "internal limit") ||
      contains_text(cut, "local-drive PCIe")) {
    add(LinkRole::kStorageNic);
  } else if (contains_text(cut, "drive")) {
    add(LinkRole::kDrive);
  }
  if (contains_text(cut, "client NIC") || contains_text(cut, "NFS mount"))
    add(LinkRole::kClientNic);
  if (contains_text(cut, "host-memory") || contains_text(cut, "GPUDirect")) {
    add(LinkRole::kClientMemory);
  }
  if (contains_text(cut, "uplink") || contains_text(cut, "fabric link")) add(LinkRole::kFabric);
  if (contains_text(cut, "MDS NIC")) add(LinkRole::kMdsNic);
}

// The roles of a read ceiling's resource (bounds.ceilings[].resource).
std::vector<LinkRole> roles_of_binding(const std::string& binding, const json& bounds) {
  std::vector<LinkRole> roles;
  if (binding == "data path") {
    const json cut = bounds.value("cut", json());
    if (cut.is_string()) add_roles_of_cut(cut.get<std::string>(), &roles);
    if (cut.is_array()) {
      for (const json& line : cut) {
        if (line.is_string()) add_roles_of_cut(line.get<std::string>(), &roles);
      }
    }
  } else if (binding == "drives as placed" || binding == "hard disks" || binding == "drive IOPS" ||
             binding == "drive IOPS as placed") {
    roles.push_back(LinkRole::kDrive);
  } else if (binding == "storage servers as placed") {
    roles.push_back(LinkRole::kStorageNic);
  }
  // metadata servers, storage CPU, client CPU: not links.
  return roles;
}

bool is_link_kind(const std::string& kind) {
  return kind == "client_nic" || kind == "client_memory" || kind == "storage_nic" ||
         kind == "fabric" || kind == "mds_nic" || kind == "drive";
}

}  // namespace

std::optional<double> number_at(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

TimeSeries series_of(const json& series, const char* key, const QString& name) {
  TimeSeries s;
  s.name = name;
  if (!series.is_object() || !series.contains(key) || !series.contains("t_s")) return s;
  const json& t = series["t_s"];
  const json& v = series[key];
  if (!t.is_array() || !v.is_array()) return s;
  const size_t n = std::min(t.size(), v.size());
  for (size_t i = 0; i < n; ++i) {
    s.t_s.push_back(t[i].is_number() ? t[i].get<double>() : 0.0);
    s.values.push_back(v[i].is_number() ? v[i].get<double>()
                                        : std::numeric_limits<double>::quiet_NaN());
  }
  return s;
}

Status load_granary_file(const QString& path, const GranaryFileKind& kind, json* out) {
  const std::string file = path.toStdString();
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    return Status::io_error(file + ": cannot read: " + f.errorString().toStdString());
  }
  const QByteArray bytes = f.readAll();
  json parsed = json::parse(bytes.constData(), bytes.constData() + bytes.size(), nullptr, false);
  const std::string what = kind.what;
  if (parsed.is_discarded()) {
    return Status::invalid_argument(file + ": not JSON (a " + what + " is the JSON file that `" +
                                    kind.writer + "` writes)");
  }
  if (!parsed.is_object() || !parsed.contains(kind.key)) {
    return Status::invalid_argument(file + ": not a Granary " + what + " (no " + kind.key +
                                    " key; " + kind.elsewhere + ")");
  }
  if (parsed[kind.key] != kind.version) {
    return Status::invalid_argument(file + ": " + what + " format " + parsed[kind.key].dump() +
                                    ", expected " + std::to_string(kind.version));
  }
  *out = std::move(parsed);
  return Status();
}

Status load_report_file(const QString& path, json* report) {
  return load_granary_file(path,
                           {"granary_report", 2, "report", "granary run --out",
                            "a scenario file opens with File > Open"},
                           report);
}

QString run_label(const json& report) {
  const json scenario = report.value("scenario", json::object());
  QString name = QString::fromStdString(scenario.value("name", std::string("unnamed")));
  if (scenario.contains("seed") && scenario["seed"].is_number()) {
    name += QString(" (seed %1)").arg(QString::fromStdString(scenario["seed"].dump()));
  }
  return name;
}

std::string workload_of(const json& report) {
  const json summary = report.value("summary", json::object());
  const json w = summary.value("workload", json());
  return w.is_string() ? w.get<std::string>() : "training";
}

Throughput throughput_of(const json& report) {
  Throughput out;
  const json series = report.value("series", json::object());
  const json bounds = report.value("bounds", json::object());
  const json summary = report.value("summary", json::object());
  const std::string workload = workload_of(report);
  if (workload == "block" || workload == "boot_storm") {
    out.y_title = "I/O rate (IOPS)";
    out.series.push_back(series_of(series, "iops", "IOPS"));
    out.bound = number_at(bounds, "iops");
    if (out.bound) {
      out.bound_label = QString("IOPS bound %1 (%2)")
                            .arg(*out.bound, 0, 'f', 0)
                            .arg(QString::fromStdString(bounds.value("iops_bottleneck", "")));
    }
    return out;
  }
  out.y_title = "throughput (GiB/s)";
  if (workload == "checkpoint") {
    out.series.push_back(series_of(series, "drive_write_gibps", "drive write"));
    out.series.push_back(series_of(series, "drive_read_gibps", "drive read"));
    // bounds.write_gibps counts checkpoint bytes; the drives write them times the amplification.
    const auto bound = number_at(bounds, "write_gibps");
    const double amplification = number_at(summary, "write_amplification").value_or(1.0);
    if (bound) {
      out.bound = *bound * amplification;
      out.bound_label = QString("write bound %1 GiB/s x amplification %2 = %3 GiB/s at the drives")
                            .arg(*bound, 0, 'f', 1)
                            .arg(amplification, 0, 'g', 3)
                            .arg(*out.bound, 0, 'f', 1);
    }
    return out;
  }
  out.series.push_back(series_of(series, "read_gibps", "read"));
  if (series.contains("drive_write_gibps")) {
    out.series.push_back(series_of(series, "drive_write_gibps", "drive write (checkpoint)"));
  }
  out.bound = number_at(bounds, "read_bound_gibps");
  if (out.bound) {
    out.bound_label = QString("read bound %1 GiB/s (%2)")
                          .arg(*out.bound, 0, 'f', 1)
                          .arg(QString::fromStdString(bounds.value("binding", "")));
  }
  return out;
}

std::optional<TimeSeries> mixed_block_iops_of(const json& report) {
  if (!report.contains("block") || !report["block"].is_object()) return std::nullopt;
  TimeSeries s = series_of(report["block"].value("series", json()), "iops",
                           QString::fromStdString(report["block"].value("name", "block")));
  if (s.t_s.empty()) return std::nullopt;
  return s;
}

std::vector<FailureEvent> failure_events_of(const json& report) {
  std::vector<FailureEvent> out;
  if (!report.contains("recovery") || !report["recovery"].is_object()) return out;
  const json events = report["recovery"].value("events", json::array());
  for (const json& e : events) {
    if (!e.is_object()) continue;
    FailureEvent f;
    f.kind = QString::fromStdString(e.value("kind", std::string("event")));
    f.at_s = number_at(e, "at_s").value_or(0.0);
    f.marked_down_at_s = number_at(e, "marked_down_at_s");
    f.marked_out_at_s = number_at(e, "marked_out_at_s");
    f.marked_up_at_s = number_at(e, "marked_up_at_s");
    out.push_back(f);
  }
  return out;
}

BottleneckLinks bottleneck_links_of(const json& report) {
  BottleneckLinks out;
  const json utilization = report.value("utilization", json::object());
  const json saturated = utilization.value("saturated", json::object());
  for (const json& r : saturated.value("first", json::array())) {
    if (!r.is_object() || !is_link_kind(r.value("kind", ""))) continue;
    out.names.push_back(r.value("name", ""));
  }
  const json bounds = report.value("bounds", json::object());
  const json binding = bounds.value("binding", json());
  if (binding.is_string()) out.roles = roles_of_binding(binding.get<std::string>(), bounds);
  return out;
}

}  // namespace granary::gui

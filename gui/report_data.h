// What the results view reads from a run report (docs/report-format.md, format 2), as plain
// data: the throughput series of the report's workload and its analytic bound, the failure
// timeline, the run's label, and the links to highlight on the topology. Also loads a report
// file with a clear error for a file that is not one. No widgets here.
//
// Thread-safety: pure functions on their arguments; safe from any thread.
#pragma once

#include <QString>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/status.h"
#include "models/topology.h"

namespace granary::gui {

// One series of a report: its name, time axis (s, end of each interval) and values.
struct TimeSeries {
  QString name;
  std::vector<double> t_s;
  std::vector<double> values;
};

// The workload's throughput over time: read GiB/s (training), drive write/read GiB/s
// (checkpoint), IOPS (block, boot storm), with the analytic bound when the report has one.
struct Throughput {
  QString y_title;  // "throughput (GiB/s)" or "I/O rate (IOPS)"
  std::vector<TimeSeries> series;
  std::optional<double> bound;  // in the y unit
  QString bound_label;          // "read bound 123 GiB/s (data path)"
};

// One event of `recovery.events[]`: when it happened and when the monitor marked its OSDs.
struct FailureEvent {
  QString kind;
  double at_s = 0;
  std::optional<double> marked_down_at_s, marked_out_at_s, marked_up_at_s;
};

// Links to highlight: resource names of `utilization.saturated.first` that are links (the
// topology's link names, e.g. "storage0.drive4.link", "leaf2.uplink"; CPUs and metadata
// services are not links and are left out) and the link roles of the binding bound.
struct BottleneckLinks {
  std::vector<std::string> names;
  std::vector<models::LinkRole> roles;
};

// A kind of JSON file Granary writes: its format key and version, what it is called, the
// command that writes it and where a file of another kind opens instead (for the errors).
struct GranaryFileKind {
  const char* key;  // "granary_report"
  int version;
  const char* what;       // "report"
  const char* writer;     // "granary run --out"
  const char* elsewhere;  // "a scenario file opens with File > Open"
};
// Reads and parses a file of `kind`; errors name the file and say what is wrong (unreadable,
// not JSON, not that kind of file, another format version).
Status load_granary_file(const QString& path, const GranaryFileKind& kind, nlohmann::json* out);
// A report file (`granary run --out`, format 2).
Status load_report_file(const QString& path, nlohmann::json* report);

// "osd-failure-read-storm (seed 42)".
QString run_label(const nlohmann::json& report);
// "training", "checkpoint", "block", "boot_storm" (summary.workload; training when absent).
std::string workload_of(const nlohmann::json& report);

Throughput throughput_of(const nlohmann::json& report);
// The block workload's IOPS beside a training or checkpoint run (`block.series`); nullopt
// without one.
std::optional<TimeSeries> mixed_block_iops_of(const nlohmann::json& report);
std::vector<FailureEvent> failure_events_of(const nlohmann::json& report);
BottleneckLinks bottleneck_links_of(const nlohmann::json& report);

// `series.<key>` of the series object `series` as a TimeSeries named `name` (empty values
// when absent); null entries become NaN.
TimeSeries series_of(const nlohmann::json& series, const char* key, const QString& name);
// A number at `key` of `object`, or nullopt (absent, null, not a number).
std::optional<double> number_at(const nlohmann::json& object, const char* key);

}  // namespace granary::gui

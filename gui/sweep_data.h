// What the sweep view reads from a sweep file (`granary plan sweep --out`, docs/report-format.md
// "Sweeps", format 1), as plain data; the sweep values' text as the view takes it; the values a
// sweep starts from for a scenario. No widgets here.
//
// Thread-safety: pure functions on their arguments; safe from any thread.
#pragma once

#include <QString>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/status.h"

namespace granary::gui {

// What a sweep varies: `cluster.clients.count` or `cluster.clients.accelerators_per_node`.
enum class SweepParameter { kClientNodes, kAcceleratorsPerNode };

// The granary plan sweep flag ("--clients", "--accelerators-per-node"), the scenario key and
// the axis title ("client nodes", "accelerators per node").
QString sweep_flag(SweepParameter p);
QString sweep_key(SweepParameter p);
QString sweep_axis_title(SweepParameter p);

// One point of `points[]`.
struct SweepPoint {
  int value = 0;
  int client_nodes = 0;
  int accelerators = 0;
  double read_gibps = 0;  // the epoch's rate, or the steady rate (read_of says which)
  QString read_of;
  double demand_gibps = 0;
  double read_bound_gibps = 0;
  QString binding;
  double accelerator_utilization = 0;
  bool meets_threshold = false;
  int saturated_count = 0;
  QString saturated_first;  // names of saturated_first[], joined with ", "
  QString busiest_kind;
  double busiest_kind_mean = 0;
  QString fidelity;
};

struct Sweep {
  QString scenario_name;
  QString seed;  // as the file writes it
  SweepParameter parameter = SweepParameter::kClientNodes;
  double au_threshold = 0;
  std::vector<SweepPoint> points;
  std::optional<int> au_below_threshold_at, throughput_plateau_at, saturation_at;
  QString limited_by;  // empty when nothing saturates
};

// The figures of a sweep JSON; an error names the key that is missing or of the wrong type.
Result<Sweep> sweep_of(const nlohmann::json& sweep);
// Reads, parses and checks a sweep file; errors name the file and say what is wrong
// (unreadable, not JSON, not a sweep, another format version, a malformed point).
Result<Sweep> load_sweep_file(const QString& path, nlohmann::json* sweep = nullptr);

// "8, 16, 32" or "8 16 32" -> the values; an error says what is wrong as granary plan sweep
// would (not a whole number, below 1, not ascending, more than 32).
Result<std::vector<int>> parse_sweep_values(const QString& text);
// The values a sweep of a scenario with `current` client nodes (or accelerators per node)
// starts from: powers of two up to it, at most five points, and `current` itself.
std::vector<int> default_sweep_values(int current);
QString sweep_values_text(const std::vector<int>& values);

}  // namespace granary::gui

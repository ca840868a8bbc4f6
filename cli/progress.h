// `granary run --progress MODE`: how a run reports its progress on stderr. `bar` is the
// terminal progress bar of run_commands.cc; `json` writes one JSON object per line,
// {"progress": fraction 0..1, "simulated_s": x}, for programs that run granary as a child
// (granary-gui, docs/gui.md): at most 10 lines per second of wall time, and a last line with
// progress 1 once the run has finished. `granary plan sweep --progress json` writes the same
// lines, each point's run a span of the whole, with the point's number and value.
//
// Not thread-safe: one JsonProgress per run, fed from the simulation's progress callback.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace granary::cli {

enum class ProgressMode { kNone, kBar, kJson };

// "none", "bar", "json" -> the mode; nullopt for anything else.
std::optional<ProgressMode> parse_progress_mode(std::string_view text);

// The share of the run done as the bar and the JSON lines show it: the simulation's own
// fraction, or the simulated time against the run's estimated span (a run that stops at steady
// state ends long before its epoch) when that is further, at most 0.99 until the run ends.
double progress_fraction(double simulated_s, double run_fraction, double expected_simulated_s);

class JsonProgress {
 public:
  struct Options {
    std::FILE* out = stderr;
    std::chrono::milliseconds min_interval{100};  // at most 10 lines a second
    double expected_simulated_s = 0;              // the cost estimate's simulated span
    // The share of a larger job this run is (a sweep's point i of n: [i/n, (i+1)/n]): the
    // fraction written is span_begin + fraction x (span_end - span_begin).
    double span_begin = 0, span_end = 1;
    // Written into every line after the progress keys, e.g. `"point": 2, "points": 5`.
    std::string extra_fields = {};
  };
  explicit JsonProgress(Options options);
  // A line, unless one was written less than min_interval ago (the first is always written).
  void update(double simulated_s, double run_fraction);
  // The last line: progress 1 at the last simulated time seen.
  void finish();
  // The last line, at `simulated_s` (a run that went on in another process: a sweep's child).
  void finish_at(double simulated_s);

 private:
  void write(double fraction, double simulated_s);
  using Clock = std::chrono::steady_clock;
  Options options_;
  std::optional<Clock::time_point> last_;
  double last_simulated_s_ = 0;
  double last_fraction_ = 0;
};

}  // namespace granary::cli

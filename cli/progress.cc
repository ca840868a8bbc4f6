// Progress reporting of granary run (progress.h).
#include "cli/progress.h"

#include <algorithm>

namespace granary::cli {

std::optional<ProgressMode> parse_progress_mode(std::string_view text) {
  if (text == "none") return ProgressMode::kNone;
  if (text == "bar") return ProgressMode::kBar;
  if (text == "json") return ProgressMode::kJson;
  return std::nullopt;
}

double progress_fraction(double simulated_s, double run_fraction, double expected_simulated_s) {
  double fraction = std::clamp(run_fraction, 0.0, 1.0);
  if (expected_simulated_s > 0) {
    fraction = std::max(fraction, std::min(0.99, simulated_s / expected_simulated_s));
  }
  return fraction;
}

JsonProgress::JsonProgress(Options options) : options_(options) {}

void JsonProgress::update(double simulated_s, double run_fraction) {
  last_simulated_s_ = std::max(last_simulated_s_, simulated_s);
  // Never backwards: the estimate may fall when the simulation's own fraction takes over.
  last_fraction_ = std::max(
      last_fraction_,
      std::min(0.99, progress_fraction(simulated_s, run_fraction, options_.expected_simulated_s)));
  const auto now = Clock::now();
  if (last_ && now - *last_ < options_.min_interval) return;
  last_ = now;
  write(last_fraction_, last_simulated_s_);
}

void JsonProgress::finish() {
  write(1.0, last_simulated_s_);
}

void JsonProgress::finish_at(double simulated_s) {
  last_simulated_s_ = std::max(last_simulated_s_, simulated_s);
  finish();
}

void JsonProgress::write(double fraction, double simulated_s) {
  const double f = options_.span_begin + fraction * (options_.span_end - options_.span_begin);
  std::fprintf(options_.out, "{\"progress\": %.4f, \"simulated_s\": %.6g%s%s}\n", f, simulated_s,
               options_.extra_fields.empty() ? "" : ", ", options_.extra_fields.c_str());
  std::fflush(options_.out);
}

}  // namespace granary::cli

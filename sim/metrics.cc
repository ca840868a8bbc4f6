#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace granary::sim {

namespace {
// The percentiles of a latency distribution in the report: enough points for a CDF chart, with
// the tail resolved.
constexpr double kCdfPercents[] = {0,  1,  5,  10, 20, 25, 30,   40,   50,    60, 70,
                                   75, 80, 90, 95, 98, 99, 99.5, 99.9, 99.99, 100};
}  // namespace

nlohmann::json time_axis_json(double interval_s, size_t n, double end_s) {
  nlohmann::json t = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    double e = static_cast<double>(i + 1) * interval_s;
    if (end_s > 0) e = std::min(e, end_s);
    t.push_back(round_to(e, 6));
  }
  return t;
}

void ThroughputSeries::add(double t_s, double bytes) {
  const size_t bin = t_s <= 0 ? 0 : static_cast<size_t>(t_s / interval_s_);
  if (bin >= bins_.size()) bins_.resize(bin + 1, 0.0);
  bins_[bin] += bytes;
  total_ += bytes;
}

std::vector<double> ThroughputSeries::rates(double end_s) const {
  const size_t n = end_s <= 0 ? 0 : static_cast<size_t>(std::ceil(end_s / interval_s_));
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < n && i < bins_.size(); ++i) {
    // The last interval may be partial.
    const double width = std::min(interval_s_, end_s - static_cast<double>(i) * interval_s_);
    out[i] = width > 0 ? bins_[i] / width : 0.0;
  }
  return out;
}

void LatencyRecorder::sort() const {
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
}

double LatencyRecorder::percentile(double p) const {
  if (samples_.empty()) return 0;
  sort();
  // Nearest rank: the smallest sample with at least p% of samples at or below it.
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples_.size()));
  const size_t idx = rank < 1 ? 0 : std::min(samples_.size(), static_cast<size_t>(rank)) - 1;
  return samples_[idx];
}

double LatencyRecorder::mean() const {
  if (samples_.empty()) return 0;
  double s = 0;
  for (double v : samples_) s += v;
  return s / static_cast<double>(samples_.size());
}

nlohmann::json LatencyRecorder::json_ms(const std::string& what) const {
  nlohmann::json percent = nlohmann::json::array(), ms = nlohmann::json::array();
  for (double p : kCdfPercents) {
    percent.push_back(p);
    ms.push_back(round_to(percentile(p) * 1e3, 6));
  }
  return {{"what", what},
          {"count", count()},
          {"mean", round_to(mean() * 1e3, 6)},
          {"p50", round_to(percentile(50) * 1e3, 6)},
          {"p90", round_to(percentile(90) * 1e3, 6)},
          {"p99", round_to(percentile(99) * 1e3, 6)},
          {"p999", round_to(percentile(99.9) * 1e3, 6)},
          {"max", round_to(max() * 1e3, 6)},
          {"cdf", {{"percent", percent}, {"ms", ms}}}};
}

double LatencyRecorder::max() const {
  if (samples_.empty()) return 0;
  sort();
  return samples_.back();
}

}  // namespace granary::sim

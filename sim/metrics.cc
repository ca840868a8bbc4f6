#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace granary::sim {

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

double LatencyRecorder::max() const {
  if (samples_.empty()) return 0;
  sort();
  return samples_.back();
}

}  // namespace granary::sim

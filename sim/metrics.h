// What a run measures: bytes delivered over time, read latencies, per-accelerator utilisation,
// per-resource utilisation. Collected during the simulation by the services' callbacks and the
// runner; turned into the report (report.h) at the end.
//
// Deterministic: the same sequence of records gives the same figures bit for bit. Not
// thread-safe (SimGrid runs one actor at a time).
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace granary::sim {

// `x` rounded to `digits` decimals: how reports print their figures.
inline double round_to(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

// The time axis of a series of `n` intervals of `interval_s` from time 0: each interval's end
// (s), the last one clipped to `end_s` when that is earlier (a partial last interval).
nlohmann::json time_axis_json(double interval_s, size_t n, double end_s);

// Bytes delivered per fixed-width interval of simulated time.
class ThroughputSeries {
 public:
  explicit ThroughputSeries(double interval_s = 0.5) : interval_s_(interval_s) {}
  void add(double t_s, double bytes);
  double interval_s() const { return interval_s_; }
  // Bytes per second in each interval, up to the interval holding `end_s`.
  std::vector<double> rates(double end_s) const;
  double total_bytes() const { return total_; }

 private:
  double interval_s_;
  std::vector<double> bins_;
  double total_ = 0;
};

// Exact latency percentiles (every sample kept; sorted once at the end).
class LatencyRecorder {
 public:
  void add(double seconds) {
    samples_.push_back(seconds);
    sorted_ = false;
  }
  size_t count() const { return samples_.size(); }
  // Nearest-rank percentile, p in [0, 100]; 0 when empty.
  double percentile(double p) const;
  double mean() const;
  double max() const;
  // Every sample, in seconds (in no promised order): what a real run's shares send so that
  // their quantiles can be computed over all of them (realmode/launcher.h).
  const std::vector<double>& samples() const { return samples_; }
  // The report's form (docs/report-format.md, "Latencies"), in milliseconds: `what` was timed,
  // count, mean, p50, p90, p99, p999, max and the distribution as percentiles ("cdf": percent
  // and ms at each of kCdfPercents).
  nlohmann::json json_ms(const std::string& what) const;

 private:
  void sort() const;
  mutable std::vector<double> samples_;
  mutable bool sorted_ = false;
};

// One accelerator's run, in MLPerf Storage's terms.
struct AcceleratorRecord {
  int client = 0;      // client node number
  int index = 0;       // accelerator within the node
  double start_s = 0;  // benchmark start (after the first step's I/O)
  double end_s = 0;
  double compute_s = 0;  // total compute time of the measured steps
  int64_t steps = 0;
  double utilization() const { return end_s > start_s ? compute_s / (end_s - start_s) : 0.0; }
};

}  // namespace granary::sim

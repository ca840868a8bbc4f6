#include "sim/sampler.h"

#include <algorithm>

namespace granary::sim {

LinkSampler::LinkSampler(const models::Topology& topology, const Platform& platform)
    : topology_(topology),
      platform_(platform),
      forward_(topology.links.size(), 0.0),
      reverse_(topology.links.size(), 0.0) {}

LinkSampler::DriveBytes LinkSampler::sample(double interval_s) {
  DriveBytes d;
  for (size_t i = 0; i < forward_.size(); ++i) {
    const double f = platform_.forward[i]->get_usage() * interval_s;
    const double b = platform_.reverse[i]->get_usage() * interval_s;
    forward_[i] += f;
    reverse_[i] += b;
    if (topology_.links[i].role == models::LinkRole::kDrive) {
      d.read += f;
      d.write += b;
    }
  }
  return d;
}

double partial_au(const services::ConsumerMetrics& m, double compute_s_per_step, double now_s) {
  if (m.steps <= 0) return 0;
  const double first_step =
      (m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front()) + compute_s_per_step;
  const double span = (m.end_s > 0 ? m.end_s : now_s) - m.start_s - first_step;
  const double compute = static_cast<double>(m.steps - 1) * compute_s_per_step;
  return span > 0 ? std::min(1.0, compute / span) : 0.0;
}

std::optional<StepRates> step_rates(const std::vector<const std::vector<double>*>& step_end_s,
                                    double warm_s) {
  StepRates r;
  for (const std::vector<double>* e : step_end_s) {
    const auto& ends = *e;
    const auto first = std::lower_bound(ends.begin(), ends.end(), warm_s);
    const size_t m = static_cast<size_t>(ends.end() - first);
    if (m < 3) return std::nullopt;
    const size_t mid = (m - 1) / 2;
    const double t0 = *first, tm = *(first + mid), t1 = ends.back();
    if (!(tm > t0 && t1 > tm)) return std::nullopt;
    r.first_half += static_cast<double>(mid) / (tm - t0);
    r.second_half += static_cast<double>(m - 1 - mid) / (t1 - tm);
    r.whole += static_cast<double>(m - 1) / (t1 - t0);
  }
  return r;
}

}  // namespace granary::sim

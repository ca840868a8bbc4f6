#include "sim/sampler.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace granary::sim {

std::string role_key(models::LinkRole role) {
  std::string k = models::link_role_name(role);
  for (char& c : k) {
    c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return k;
}

void UtilizationSeries::add_tick(double dt_s, const std::vector<double>& busy) {
  if (dt_s <= 0) return;
  if (end_s_.empty() || ticks_in_last_ == ticks_per_bin_) {
    if (end_s_.size() == kMaxBins) merge_pairs();
    if (end_s_.empty() || ticks_in_last_ == ticks_per_bin_) {
      end_s_.push_back(total_s_);
      width_s_.push_back(0);
      busy_s_.resize(busy_s_.size() + resources_, 0.0);
      ticks_in_last_ = 0;
    }
  }
  if (total_busy_s_.empty()) total_busy_s_.assign(resources_, 0.0);
  const size_t last = end_s_.size() - 1;
  for (size_t r = 0; r < resources_; ++r) {
    const double b = std::clamp(busy[r], 0.0, 1.0) * dt_s;
    busy_s_[last * resources_ + r] += b;
    total_busy_s_[r] += b;
  }
  total_s_ += dt_s;
  end_s_[last] = total_s_;
  width_s_[last] += dt_s;
  ++ticks_in_last_;
}

// Halves the bins: bin i becomes bins 2i and 2i + 1 together (a last odd bin stays alone and
// takes the next ticks); the width in ticks doubles.
void UtilizationSeries::merge_pairs() {
  const size_t n = end_s_.size();
  size_t out = 0;
  for (size_t i = 0; i < n; i += 2, ++out) {
    const bool pair = i + 1 < n;
    end_s_[out] = end_s_[pair ? i + 1 : i];
    width_s_[out] = width_s_[i] + (pair ? width_s_[i + 1] : 0.0);
    for (size_t r = 0; r < resources_; ++r) {
      busy_s_[out * resources_ + r] =
          busy_s_[i * resources_ + r] + (pair ? busy_s_[(i + 1) * resources_ + r] : 0.0);
    }
  }
  const bool odd = n % 2 == 1;
  end_s_.resize(out);
  width_s_.resize(out);
  busy_s_.resize(out * resources_);
  // An odd last bin holds one old bin's ticks: it goes on filling to the new width.
  ticks_in_last_ = odd ? ticks_per_bin_ : 2 * ticks_per_bin_;
  ticks_per_bin_ *= 2;
}

double UtilizationSeries::busy(size_t r, size_t bin) const {
  return width_s_[bin] > 0 ? busy_s_[bin * resources_ + r] / width_s_[bin] : 0.0;
}

double UtilizationSeries::mean(size_t r) const {
  return total_s_ > 0 && r < total_busy_s_.size() ? total_busy_s_[r] / total_s_ : 0.0;
}

LinkSampler::LinkSampler(const models::Topology& topology, const Platform& platform,
                         const SimEnv& env,
                         const std::vector<std::unique_ptr<services::MetadataService>>& mds)
    : topology_(topology),
      platform_(platform),
      env_(env),
      mds_(mds),
      link_drive_(topology.links.size(), -1) {
  std::vector<int> drive_of_node(topology.nodes.size(), -1);
  for (size_t d = 0; d < topology.drives.size(); ++d) {
    drive_of_node[topology.drives[d]] = static_cast<int>(d);
  }
  for (size_t i = 0; i < topology.links.size(); ++i) {
    const models::TopologyLink& l = topology.links[i];
    resources_.push_back({l.name, role_key(l.role)});
    if (l.role == models::LinkRole::kDrive) link_drive_[i] = drive_of_node[l.a];
  }
  // CPUs: the storage servers' (the OSDs' work) and the client nodes' where their storage
  // clients and loaders run (the sinks).
  for (int n : topology.storage) cpu_nodes_.push_back(n);
  for (int n : topology.client_sinks) cpu_nodes_.push_back(n);
  for (int n : cpu_nodes_) {
    const models::TopologyNode& node = topology.nodes[n];
    const bool storage = node.kind == models::NodeKind::kStorage;
    resources_.push_back({(storage ? node.name : topology.nodes[node.owner].name) + ".cpu",
                          storage ? "storage_cpu" : "client_cpu"});
  }
  for (size_t m = 0; m < mds.size(); ++m) {
    resources_.push_back({topology.nodes[topology.mds[m]].name + ".service", "mds"});
  }
  drive_work_s_.assign(topology.drives.size(), 0.0);
  mds_busy_s_.assign(mds.size(), 0.0);
  busy_.assign(resources_.size(), 0.0);
  utilization_ = UtilizationSeries(resources_.size());
}

LinkSampler::DriveBytes LinkSampler::sample(double interval_s) {
  DriveBytes d;
  const double now = env_.now_s();
  const size_t links = topology_.links.size();
  for (size_t i = 0; i < links; ++i) {
    const double fu = platform_.forward[i]->get_usage(), ru = platform_.reverse[i]->get_usage();
    const double fb = platform_.forward[i]->get_bandwidth();
    const double rb = platform_.reverse[i]->get_bandwidth();
    double busy = std::max(fb > 0 ? fu / fb : 0.0, rb > 0 ? ru / rb : 0.0);
    if (const int drive = link_drive_[i]; drive >= 0) {
      d.read += fu * interval_s;
      d.write += ru * interval_s;
      // The drive's command units (its IOPS) may be what limits it, not its bandwidth.
      if (const DriveQueue* q = env_.drive_queue(static_cast<DeviceId>(drive));
          q != nullptr && q->busy_units() > 0) {
        const double work = q->work_done_s(now);
        busy = std::max(busy, (work - drive_work_s_[drive]) / (q->busy_units() * interval_s));
        drive_work_s_[drive] = work;
      }
    }
    busy_[i] = busy;
  }
  size_t r = links;
  for (int n : cpu_nodes_) {
    const simgrid::s4u::Host* h = platform_.hosts[n];
    const double capacity = h->get_speed() * h->get_core_count();
    busy_[r++] = capacity > 0 ? h->get_load() / capacity : 0.0;
  }
  for (size_t m = 0; m < mds_.size(); ++m) {
    const double busy_s = mds_[m]->busy_s();
    busy_[r++] = (busy_s - mds_busy_s_[m]) / (mds_[m]->parallel_ops() * interval_s);
    mds_busy_s_[m] = busy_s;
  }
  utilization_.add_tick(interval_s, busy_);
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

std::vector<double> windowed_au(const std::vector<const std::vector<double>*>& step_end_s,
                                double compute_s_per_step, double interval_s, double end_s) {
  const size_t n =
      end_s > 0 && interval_s > 0 ? static_cast<size_t>(std::ceil(end_s / interval_s)) : 0;
  std::vector<double> busy(n, 0.0);
  for (const std::vector<double>* ends : step_end_s) {
    for (double e : *ends) {
      // The step's compute [e - c, e], spread over the intervals it overlaps.
      double from = std::max(0.0, e - compute_s_per_step);
      const double to = std::min(e, end_s);
      while (from < to) {
        const size_t i = std::min(n - 1, static_cast<size_t>(from / interval_s));
        const double bin_end = std::min(to, static_cast<double>(i + 1) * interval_s);
        busy[i] += std::max(0.0, bin_end - from);
        if (bin_end <= from) break;  // rounding at a bin edge: nothing left to spread
        from = bin_end;
      }
    }
  }
  const double accelerators = static_cast<double>(step_end_s.size());
  for (size_t i = 0; i < n; ++i) {
    const double width = std::min(interval_s, end_s - static_cast<double>(i) * interval_s);
    busy[i] = width > 0 && accelerators > 0 ? std::min(1.0, busy[i] / (width * accelerators)) : 0;
  }
  return busy;
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

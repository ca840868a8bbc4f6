#include "models/durability.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "engine/random.h"

namespace granary::models {

namespace {

// Chunks per PG Granary accepts (Ceph's erasure-code plugins stop well below).
constexpr int kMaxChunks = 64;
// Transient states of the cluster chain: 0 .. kMaxClusterStates - 1 drives failed at once.
// A failure beyond the last state counts as data loss (conservative); docs/models.md.
constexpr int kMaxClusterStates = 256;
// The cluster chain stops where the steady-state probability of more failed drives falls
// below this fraction of the most likely count (e^-92 ~ 1e-40).
constexpr double kTailLog = -92;
constexpr int64_t kMaxCoverageSubsets = 10'000'000;
constexpr double kMaxMonteCarloFailures = 1e9;
// 97.5% quantile of the standard normal: two-sided 95% intervals.
constexpr double kZ95 = 1.959963984540054;

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status validate(const DurabilityInput& in) {
  auto bad = [](const std::string& field, const std::string& expected, const std::string& got) {
    return Status::invalid_argument(field + ": expected " + expected + ", got " + got);
  };
  if (in.data_chunks < 1) {
    return bad("data_chunks", "an integer >= 1 (k, or 1 for replication)",
               std::to_string(in.data_chunks));
  }
  if (in.coding_chunks < 0) {
    return bad("coding_chunks", "an integer >= 0 (m, or replicas - 1)",
               std::to_string(in.coding_chunks));
  }
  if (in.data_chunks + in.coding_chunks > kMaxChunks) {
    return bad("data_chunks + coding_chunks", "at most " + std::to_string(kMaxChunks),
               std::to_string(in.data_chunks + in.coding_chunks));
  }
  const int n = in.data_chunks + in.coding_chunks;
  if (in.drives < n) {
    return bad("drives",
               "at least " + std::to_string(n) + " (one drive per chunk of a placement group)",
               std::to_string(in.drives));
  }
  if (in.placement_groups < 1) return bad("placement_groups", "an integer >= 1", "0");
  if (!(std::isfinite(in.drive_afr) && in.drive_afr > 0 && in.drive_afr < 1)) {
    return bad("drive_afr", "an annual failure rate in (0, 1)", format_number(in.drive_afr));
  }
  if (!(std::isfinite(in.recovery_hours) && in.recovery_hours > 0)) {
    return bad("recovery_hours", "a finite number > 0", format_number(in.recovery_hours));
  }
  if (!(std::isfinite(in.detect_hours) && in.detect_hours >= 0)) {
    return bad("detect_hours", "a finite number >= 0", format_number(in.detect_hours));
  }
  if (!(std::isfinite(in.pool_bytes) && in.pool_bytes >= 0)) {
    return bad("pool_bytes", "a finite number >= 0", format_number(in.pool_bytes));
  }
  if (!(std::isfinite(in.copyset_coverage) && in.copyset_coverage >= 0 &&
        in.copyset_coverage <= 1)) {
    return bad("copyset_coverage", "0 (estimate) or a probability in (0, 1]",
               format_number(in.copyset_coverage));
  }
  return Status::ok_status();
}

double failure_rate_per_hour(double afr) {
  return -std::log1p(-afr) / kHoursPerYear;
}

// Mean time to absorption, from state 0, of a continuous-time Markov chain whose transient
// states are 0 .. S-1: rates(i, j) (i != j) is the rate from i to j, exit(i) the rate from i to
// the absorbing state; the diagonal of `rates` is ignored. Solves Q_T t = -1 by eliminating the
// states S-1, ..., 1 in turn (Gaussian elimination of the rows of -Q_T) with the
// Grassmann-Taksar-Heyman rule: a pivot is recomputed as the sum of the remaining outgoing
// rates instead of being updated by subtraction, so every operation adds or multiplies
// non-negative numbers and the result keeps full relative precision however stiff the chain
// (lambda / mu ~ 1e-6 and MTTDLs of 10^20 hours; LU with partial pivoting loses every digit
// there, see docs/models.md).
double mean_time_to_absorption(Eigen::MatrixXd rates, Eigen::VectorXd exit) {
  const Eigen::Index s = rates.rows();
  GRANARY_CHECK(s >= 1 && rates.cols() == s && exit.size() == s);
  Eigen::VectorXd time = Eigen::VectorXd::Ones(s);  // expected time per visit, folded in
  for (Eigen::Index k = s - 1; k >= 1; --k) {
    double out = exit(k);
    for (Eigen::Index j = 0; j < k; ++j) out += rates(k, j);
    if (out <= 0) continue;  // unreachable from below or a trap: nothing to fold
    for (Eigen::Index i = 0; i < k; ++i) {
      const double to_k = rates(i, k);
      if (to_k == 0) continue;
      const double share = to_k / out;
      for (Eigen::Index j = 0; j < k; ++j) {
        if (j != i) rates(i, j) += share * rates(k, j);
      }
      exit(i) += share * exit(k);
      time(i) += share * time(k);
    }
  }
  if (exit(0) <= 0) return std::numeric_limits<double>::infinity();
  return time(0) / exit(0);
}

double repair_rate(RepairMode mode, int failed, double mu) {
  return mode == RepairMode::kParallel ? failed * mu : mu;
}

// One PG: state i = chunks lost (0 .. t), absorbing t + 1.
double group_mttdl_hours(int n, int t, double lambda, double mu, RepairMode mode) {
  Eigen::MatrixXd rates = Eigen::MatrixXd::Zero(t + 1, t + 1);
  Eigen::VectorXd exit = Eigen::VectorXd::Zero(t + 1);
  for (int i = 0; i <= t; ++i) {
    const double up = (n - i) * lambda;
    if (i < t) {
      rates(i, i + 1) = up;
    } else {
      exit(i) = up;
    }
    if (i > 0) rates(i, i - 1) = repair_rate(mode, i, mu);
  }
  return mean_time_to_absorption(std::move(rates), std::move(exit));
}

// C(a, b) as a double (b small).
double choose(double a, int b) {
  double c = 1;
  for (int j = 0; j < b; ++j) c = c * (a - j) / (j + 1);
  return c;
}

}  // namespace

Result<DurabilityResult> durability(const DurabilityInput& in) {
  if (Status s = validate(in); !s.ok()) return s;
  const int n = in.data_chunks + in.coding_chunks;
  const int t = in.coding_chunks;
  const int drives = in.drives;
  const double groups = in.placement_groups;
  const double lambda = failure_rate_per_hour(in.drive_afr);
  const double repair_hours = in.detect_hours + in.recovery_hours;
  const double mu = 1 / repair_hours;

  DurabilityResult r;
  r.drive_failures_per_hour = lambda;
  r.repair_hours = repair_hours;
  r.group_mttdl_hours = group_mttdl_hours(n, t, lambda, mu, in.repair);

  // The share of (t+1)-sets of drives one PG covers, C(n, t+1) / C(drives, t+1), and the
  // coverage of `groups` PGs placed at random.
  double share = 1;
  for (int j = 0; j <= t; ++j) share *= static_cast<double>(n - j) / (drives - j);
  const double estimated = share >= 1 ? 1 : -std::expm1(groups * std::log1p(-share));
  const double coverage = in.copyset_coverage > 0 ? in.copyset_coverage : estimated;
  r.copyset_coverage = coverage;

  // Steady-state distribution of the number of failed drives without losses (a birth-death
  // chain: up (drives - i) lambda, down as the repair mode says), in logs, up to where the
  // rest is negligible: for the mean failed drives and degraded PGs, and to choose where the
  // cluster chain can stop.
  std::vector<double> log_pi{0};
  double log_max = 0;
  for (int i = 0;; ++i) {
    const bool negligible =
        i >= t + 1 && log_pi[i] < log_max + kTailLog && log_pi[i] < log_pi[i - 1];
    if (i == drives || negligible) break;
    log_pi.push_back(log_pi[i] + std::log((drives - i) * lambda) -
                     std::log(repair_rate(in.repair, i + 1, mu)));
    log_max = std::max(log_max, log_pi.back());
  }
  {
    double total = 0, failed = 0, degraded = 0;
    for (size_t i = 0; i < log_pi.size(); ++i) {
      const double p = std::exp(log_pi[i] - log_max);
      // A PG is intact when its n drives avoid the i failed ones.
      double intact = 1;
      for (int j = 0; j < n; ++j) {
        intact *=
            std::max(0.0, static_cast<double>(drives) - static_cast<double>(i) - j) / (drives - j);
      }
      total += p;
      failed += p * static_cast<double>(i);
      degraded += p * (1 - intact);
    }
    r.mean_failed_drives = failed / total;
    r.mean_degraded_pgs = groups * degraded / total;
  }
  // The highest state of the cluster chain.
  const int last = std::min(static_cast<int>(log_pi.size()) - 1, kMaxClusterStates - 1);

  // The cluster chain: state i = drives failed and not yet repaired (0 .. last). A failure in
  // state i >= t completes C(i, t) new sets of t + 1 failed drives, each a whole copyset with
  // probability `coverage`: data is lost with probability 1 - (1 - coverage)^C(i, t).
  const int states = last + 1;
  Eigen::MatrixXd rates = Eigen::MatrixXd::Zero(states, states);
  Eigen::VectorXd exit = Eigen::VectorXd::Zero(states);
  for (int i = 0; i < states; ++i) {
    const double up = (drives - i) * lambda;
    double loss = 0;
    if (i >= t) {
      loss = coverage >= 1 ? 1 : -std::expm1(choose(i, t) * std::log1p(-coverage));
    }
    if (i == last) loss = 1;  // beyond the modelled states: counted as a loss
    if (i < last) rates(i, i + 1) = up * (1 - loss);
    exit(i) = up * loss;
    if (i > 0) rates(i, i - 1) = repair_rate(in.repair, i, mu);
  }
  r.cluster_mttdl_hours = mean_time_to_absorption(std::move(rates), std::move(exit));

  r.loss_events_per_year = kHoursPerYear / r.cluster_mttdl_hours;
  r.annual_loss_probability = -std::expm1(-r.loss_events_per_year);
  r.nines = r.annual_loss_probability >= 1 ? 0 : -std::log10(r.annual_loss_probability);
  // Every PG holds C(n, t+1) of the C(drives, t+1) sets, so a random set lies in
  // groups * share PGs on average; given that it lies in one, in groups * share / coverage.
  r.pgs_lost_per_event = std::max(1.0, groups * share / coverage);
  r.bytes_lost_per_event = r.pgs_lost_per_event * in.pool_bytes / groups;
  r.expected_bytes_lost_per_year = r.loss_events_per_year * r.bytes_lost_per_event;
  return r;
}

Result<double> copyset_coverage(const std::vector<std::vector<int32_t>>& pg_sets, int drives,
                                int tolerated_failures) {
  if (drives < 1) {
    return Status::invalid_argument("drives: expected an integer >= 1, got " +
                                    std::to_string(drives));
  }
  const int set_size = tolerated_failures + 1;
  if (tolerated_failures < 0 || set_size > drives) {
    return Status::invalid_argument("tolerated_failures: expected 0.." +
                                    std::to_string(drives - 1) + ", got " +
                                    std::to_string(tolerated_failures));
  }
  // Sets are packed as numbers in base `drives`; they must fit in 128 bits.
  if (set_size * std::log2(static_cast<double>(drives)) > 127) {
    return Status::invalid_argument("copyset coverage: sets of " + std::to_string(set_size) +
                                    " of " + std::to_string(drives) +
                                    " drives are too many to enumerate");
  }
  std::vector<unsigned __int128> keys;
  std::vector<int32_t> pg;
  std::vector<int> pick(set_size);
  for (size_t g = 0; g < pg_sets.size(); ++g) {
    pg = pg_sets[g];
    for (int32_t d : pg) {
      if (d < 0 || d >= drives) {
        return Status::invalid_argument("pg_sets[" + std::to_string(g) +
                                        "]: expected drive ids in [0, " + std::to_string(drives) +
                                        "), found " + std::to_string(d));
      }
    }
    std::sort(pg.begin(), pg.end());
    pg.erase(std::unique(pg.begin(), pg.end()), pg.end());
    const int size = static_cast<int>(pg.size());
    if (size < set_size) {
      return Status::invalid_argument("pg_sets[" + std::to_string(g) + "]: expected at least " +
                                      std::to_string(set_size) + " distinct drives, found " +
                                      std::to_string(size));
    }
    if (static_cast<double>(keys.size()) + choose(size, set_size) > kMaxCoverageSubsets) {
      return Status::invalid_argument("copyset coverage: more than " +
                                      std::to_string(kMaxCoverageSubsets) +
                                      " sets of drives to enumerate");
    }
    // Every set_size-subset of the PG's sorted drives, in lexicographic order.
    for (int j = 0; j < set_size; ++j) pick[j] = j;
    while (true) {
      unsigned __int128 key = 0;
      for (int j = 0; j < set_size; ++j) key = key * drives + pg[pick[j]];
      keys.push_back(key);
      int j = set_size - 1;
      while (j >= 0 && pick[j] == size - set_size + j) --j;
      if (j < 0) break;
      ++pick[j];
      for (int l = j + 1; l < set_size; ++l) pick[l] = pick[l - 1] + 1;
    }
  }
  std::sort(keys.begin(), keys.end());
  const double distinct = static_cast<double>(std::unique(keys.begin(), keys.end()) - keys.begin());
  return distinct / choose(drives, set_size);
}

Result<MonteCarloResult> durability_monte_carlo(const DurabilityInput& in,
                                                const std::vector<std::vector<int32_t>>& pg_sets,
                                                const MonteCarloOptions& options) {
  if (Status s = validate(in); !s.ok()) return s;
  if (!(std::isfinite(options.years) && options.years > 0)) {
    return Status::invalid_argument("years: expected a finite number > 0, got " +
                                    format_number(options.years));
  }
  if (options.trials < 1) {
    return Status::invalid_argument("trials: expected an integer >= 1, got " +
                                    std::to_string(options.trials));
  }
  const int n = in.data_chunks + in.coding_chunks;
  const int t = in.coding_chunks;
  const int drives = in.drives;
  if (pg_sets.size() != in.placement_groups) {
    return Status::invalid_argument("pg_sets: expected " + std::to_string(in.placement_groups) +
                                    " placement groups (placement_groups), found " +
                                    std::to_string(pg_sets.size()));
  }
  // The PGs of each drive, as offsets into one array.
  std::vector<int64_t> first(drives + 1, 0);
  for (size_t g = 0; g < pg_sets.size(); ++g) {
    const std::vector<int32_t>& set = pg_sets[g];
    if (static_cast<int>(set.size()) != n) {
      return Status::invalid_argument("pg_sets[" + std::to_string(g) + "]: expected " +
                                      std::to_string(n) + " drives (k + m), found " +
                                      std::to_string(set.size()));
    }
    for (size_t j = 0; j < set.size(); ++j) {
      const int32_t d = set[j];
      if (d < 0 || d >= drives) {
        return Status::invalid_argument("pg_sets[" + std::to_string(g) +
                                        "]: expected drive ids in [0, " + std::to_string(drives) +
                                        "), found " + std::to_string(d));
      }
      if (std::find(set.begin(), set.begin() + j, d) != set.begin() + j) {
        return Status::invalid_argument("pg_sets[" + std::to_string(g) + "]: drive " +
                                        std::to_string(d) + " appears twice");
      }
      ++first[d + 1];
    }
  }
  for (int d = 0; d < drives; ++d) first[d + 1] += first[d];
  std::vector<uint32_t> pgs_of(first[drives]);
  {
    std::vector<int64_t> fill(first.begin(), first.end() - 1);
    for (size_t g = 0; g < pg_sets.size(); ++g) {
      for (int32_t d : pg_sets[g]) pgs_of[fill[d]++] = static_cast<uint32_t>(g);
    }
  }

  const double lambda = failure_rate_per_hour(in.drive_afr);
  const double repair_hours = in.detect_hours + in.recovery_hours;
  const double horizon_hours = options.years * kHoursPerYear;
  const double expected_failures =
      static_cast<double>(options.trials) * horizon_hours * drives * lambda;
  if (expected_failures > kMaxMonteCarloFailures) {
    return Status::invalid_argument("monte carlo: about " + format_number(expected_failures) +
                                    " drive failures to simulate; at most " +
                                    format_number(kMaxMonteCarloFailures) +
                                    " (fewer years or trials)");
  }

  Random rng(options.seed);
  auto exponential = [&rng](double mean) { return -std::log1p(-rng.uniform01()) * mean; };
  auto draw_repair = [&]() {
    return options.repair_time == RepairTime::kExponential ? exponential(repair_hours)
                                                           : repair_hours;
  };
  constexpr double kNever = std::numeric_limits<double>::infinity();

  MonteCarloResult r;
  r.trials = options.trials;
  r.simulated_years = options.years * static_cast<double>(options.trials);
  std::vector<int32_t> healthy(drives);  // the healthy drives are healthy[0 .. healthy_count)
  int healthy_count = 0;
  std::vector<int> failed_in_pg(pg_sets.size());
  using Repair = std::pair<double, int32_t>;  // (end time, drive)
  std::priority_queue<Repair, std::vector<Repair>, std::greater<>> parallel;
  std::deque<int32_t> serial;  // the head is under repair until serial_end
  double serial_end = kNever;
  auto reset = [&] {
    for (int32_t d = 0; d < drives; ++d) healthy[d] = d;
    healthy_count = drives;
    std::fill(failed_in_pg.begin(), failed_in_pg.end(), 0);
    parallel = {};
    serial.clear();
    serial_end = kNever;
  };
  for (int64_t trial = 0; trial < options.trials; ++trial) {
    reset();
    bool lost = false;
    double now = 0;
    while (true) {
      const double next_failure =
          healthy_count > 0 ? now + exponential(1 / (healthy_count * lambda)) : kNever;
      const double next_repair = in.repair == RepairMode::kParallel
                                     ? (parallel.empty() ? kNever : parallel.top().first)
                                     : serial_end;
      if (std::min(next_failure, next_repair) >= horizon_hours) break;
      if (next_repair <= next_failure) {
        // A repair completes. (The failure clock is memoryless: it is drawn again.)
        now = next_repair;
        int32_t d;
        if (in.repair == RepairMode::kParallel) {
          d = parallel.top().second;
          parallel.pop();
        } else {
          d = serial.front();
          serial.pop_front();
          serial_end = serial.empty() ? kNever : now + draw_repair();
        }
        healthy[healthy_count++] = d;
        for (int64_t p = first[d]; p < first[d + 1]; ++p) --failed_in_pg[pgs_of[p]];
        continue;
      }
      now = next_failure;
      const auto pick = static_cast<int32_t>(rng.uniform(static_cast<uint64_t>(healthy_count)));
      const int32_t d = healthy[pick];
      healthy[pick] = healthy[--healthy_count];
      ++r.drive_failures;
      bool loss = false;
      for (int64_t p = first[d]; p < first[d + 1]; ++p) {
        if (++failed_in_pg[pgs_of[p]] == t + 1) loss = true;
      }
      if (loss) {
        ++r.loss_events;
        lost = true;
        reset();
        continue;
      }
      if (in.repair == RepairMode::kParallel) {
        parallel.emplace(now + draw_repair(), d);
      } else {
        serial.push_back(d);
        if (serial.size() == 1) serial_end = now + draw_repair();
      }
    }
    if (lost) ++r.trials_with_loss;
  }

  // Poisson count over the simulated time; Byar's approximation of the exact interval.
  const double c = static_cast<double>(r.loss_events);
  const double years = r.simulated_years;
  r.loss_events_per_year = c / years;
  r.loss_events_per_year_low =
      c == 0 ? 0 : c * std::pow(1 - 1 / (9 * c) - kZ95 / (3 * std::sqrt(c)), 3) / years;
  r.loss_events_per_year_high =
      (c + 1) * std::pow(1 - 1 / (9 * (c + 1)) + kZ95 / (3 * std::sqrt(c + 1)), 3) / years;
  r.annual_loss_probability = -std::expm1(-r.loss_events_per_year);
  return r;
}

}  // namespace granary::models

// Durability of a Ceph-style pool: mean time to data loss (MTTDL), the annual probability of
// losing data and the expected bytes lost per year, for r-way replication and k+m erasure
// coding, from the drive count, the drives' annual failure rate (AFR), the number of placement
// groups (PGs) and the time to re-protect data after a failure (which the simulator measures).
//
// Two estimates, documented with their equations and sources in docs/models.md ("Durability"):
//   - durability(): continuous-time Markov chains with exponential failures and repairs, one
//     for a single PG and one over the number of concurrently failed drives of the cluster,
//     where a failure that leaves more than t = m (or r - 1) failed drives in a common PG loses
//     data; the chance that a set of failed drives shares a PG is the copyset coverage of
//     Cidon et al. (USENIX ATC 2013). Chains are solved by state elimination on Eigen matrices.
//   - durability_monte_carlo(): an event-driven simulation of drive failures and repairs over
//     the PGs' actual drive sets (from CRUSH), which checks the chain.
// MTTDL figures rest on strong assumptions (independent, exponential failures; no correlated
// host or batch failures; no latent sector errors): use them to compare designs, not as a
// promise (Greenan, Plank and Wylie, "Mean time to meaningless", HotStorage 2010).
//
// Plain functions of their inputs; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/status.h"

namespace granary::models {

// Hours in a (Julian) year: 365.25 days.
constexpr double kHoursPerYear = 8766;

enum class RepairMode {
  kParallel,  // every failed drive is repaired at once: repair rate i * mu with i failed
  kSerial,    // one repair at a time: repair rate mu whatever the number failed
};

struct DurabilityInput {
  int drives = 0;         // drives (OSDs) the pool spreads over
  int data_chunks = 1;    // k, or 1 for replication
  int coding_chunks = 2;  // m, or r - 1 for replication: the failures a PG survives
  uint32_t placement_groups = 0;
  double drive_afr = 0;       // annual failure rate of one drive, in (0, 1)
  double recovery_hours = 0;  // time to re-protect the data of a failed drive, once started
  double detect_hours = 0;    // time before recovery starts (Ceph's down-out interval)
  RepairMode repair = RepairMode::kParallel;
  double pool_bytes = 0;  // user data stored in the pool (before replication or coding)
  // The probability that t + 1 failed drives, chosen at random, hold t + 1 chunks of one PG.
  // 0: estimated for random placement, 1 - (1 - C(n, t+1) / C(drives, t+1))^placement_groups;
  // else a measured value, e.g. copyset_coverage() of a CRUSH placement.
  double copyset_coverage = 0;
};

struct DurabilityResult {
  double drive_failures_per_hour = 0;  // lambda = -ln(1 - AFR) / 8766
  double repair_hours = 0;             // detect + recovery = 1 / mu
  double copyset_coverage = 0;         // as used (estimated or given)
  double group_mttdl_hours = 0;        // one PG on its own
  double cluster_mttdl_hours = 0;      // the pool: time until any PG loses data
  double loss_events_per_year = 0;     // 8766 / cluster MTTDL
  double annual_loss_probability = 0;  // 1 - exp(-loss_events_per_year)
  double nines = 0;                    // -log10(annual_loss_probability)
  double pgs_lost_per_event = 0;       // expected PGs lost in one loss event (>= 1)
  double bytes_lost_per_event = 0;     // each lost PG loses its share pool_bytes / PGs
  double expected_bytes_lost_per_year = 0;
  double mean_failed_drives = 0;  // steady state, drives failed and not yet repaired
  double mean_degraded_pgs = 0;   // steady state, PGs with at least one chunk to repair
};

// Errors (invalid_argument, naming the DurabilityInput field): fewer drives than chunks per
// PG, an AFR outside (0, 1), non-positive recovery time, negative detect time, ...
Result<DurabilityResult> durability(const DurabilityInput& input);

// The fraction of the C(drives, t + 1) sets of t + 1 drives that hold t + 1 chunks of at
// least one of `pg_sets` (the drives of each PG, as CRUSH maps them). Errors: a drive id
// outside [0, drives), a PG with fewer than t + 1 distinct drives, more than 10^7 sets to
// enumerate.
Result<double> copyset_coverage(const std::vector<std::vector<int32_t>>& pg_sets, int drives,
                                int tolerated_failures);

enum class RepairTime {
  kExponential,    // exponential with mean detect + recovery hours, as the Markov chain assumes
  kDeterministic,  // exactly detect + recovery hours
};

struct MonteCarloOptions {
  double years = 1;       // simulated time per trial
  int64_t trials = 1000;  // independent trials, each starting with every drive healthy
  uint64_t seed = 1;
  RepairTime repair_time = RepairTime::kExponential;
};

struct MonteCarloResult {
  int64_t trials = 0;
  double simulated_years = 0;  // years * trials
  int64_t drive_failures = 0;
  int64_t loss_events = 0;       // a PG reaching t + 1 failed drives
  int64_t trials_with_loss = 0;  // trials with at least one loss event
  // Loss events per simulated year, with a 95% confidence interval (Poisson count, Byar's
  // approximation).
  double loss_events_per_year = 0;
  double loss_events_per_year_low = 0;
  double loss_events_per_year_high = 0;
  double annual_loss_probability = 0;  // 1 - exp(-loss_events_per_year)
};

// Simulates drive failures (exponential, rate lambda per healthy drive) and repairs (after
// detect + recovery hours; in parallel or one at a time as input.repair says) over the PGs of
// `pg_sets`, which must hold input.placement_groups sets of k + m distinct drives in
// [0, input.drives). A PG whose failed drives exceed t loses data: the event is counted and
// the trial goes on from a healthy cluster (the data restored), so that loss events form a
// renewal process whose rate estimates 1 / MTTDL. input.copyset_coverage is not used.
// Deterministic for a seed. Errors: inputs as durability(), PG sets that do not match,
// options out of range or a run expected to simulate more than 10^9 drive failures.
Result<MonteCarloResult> durability_monte_carlo(const DurabilityInput& input,
                                                const std::vector<std::vector<int32_t>>& pg_sets,
                                                const MonteCarloOptions& options);

}  // namespace granary::models

#include "models/durability.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "engine/crush/edit.h"
#include "engine/placement/crush_pool.h"

namespace granary::models {
namespace {

DurabilityInput input(int drives, int k, int m, uint32_t pgs, double afr, double recovery_hours) {
  DurabilityInput in;
  in.drives = drives;
  in.data_chunks = k;
  in.coding_chunks = m;
  in.placement_groups = pgs;
  in.drive_afr = afr;
  in.recovery_hours = recovery_hours;
  return in;
}

double lambda_of(double afr) {
  return -std::log1p(-afr) / kHoursPerYear;
}

// Expected time to absorption from state 0 of a birth-death chain absorbed above state t:
// sum over j <= t, i <= j of (1 / b_i) prod_{l = i+1..j} (d_l / b_l), with b_i = (n - i) lambda
// and d_l the repair rate. Every term is positive, so it is accurate in long double.
long double birth_death_mttdl(int n, int t, long double lambda, long double mu, bool parallel) {
  long double total = 0;
  for (int j = 0; j <= t; ++j) {
    for (int i = 0; i <= j; ++i) {
      long double term = 1 / ((n - i) * lambda);
      for (int l = i + 1; l <= j; ++l) term *= (parallel ? l * mu : mu) / ((n - l) * lambda);
      total += term;
    }
  }
  return total;
}

// The same chain solved as the brief for this model suggested: Q_T t = -1 with Eigen's LU.
double lu_mttdl(int n, int t, double lambda, double mu) {
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(t + 1, t + 1);
  for (int i = 0; i <= t; ++i) {
    const double up = (n - i) * lambda, down = i * mu;
    q(i, i) = -(up + down);
    if (i < t) q(i, i + 1) = up;
    if (i > 0) q(i, i - 1) = down;
  }
  const Eigen::VectorXd time = q.partialPivLu().solve(-Eigen::VectorXd::Ones(t + 1));
  return time(0);
}

// ---- the chain of one placement group ------------------------------------------------------

TEST(DurabilityMarkov, MirrorMatchesClosedForm) {
  // Two copies: MTTDL = (3 lambda + mu) / (2 lambda^2), for either repair mode.
  for (RepairMode mode : {RepairMode::kParallel, RepairMode::kSerial}) {
    for (double afr : {0.5, 0.02, 0.001}) {
      DurabilityInput in = input(2, 1, 1, 1, afr, 12);
      in.detect_hours = 0.5;
      in.repair = mode;
      auto r = durability(in);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      const double l = lambda_of(afr), mu = 1 / 12.5;
      EXPECT_NEAR(r->group_mttdl_hours / ((3 * l + mu) / (2 * l * l)), 1, 1e-13) << afr;
      EXPECT_DOUBLE_EQ(r->drive_failures_per_hour, l);
      EXPECT_DOUBLE_EQ(r->repair_hours, 12.5);
    }
  }
}

TEST(DurabilityMarkov, ThreeReplicasMatchClosedForm) {
  // Parallel repair: (11 l^2 + 7 l mu + 2 mu^2) / (6 l^3); serial: (11 l^2 + 4 l mu + mu^2) / (6
  // l^3).
  const double afr = 0.01, l = lambda_of(afr), mu = 1 / 4.0;
  DurabilityInput in = input(3, 1, 2, 1, afr, 4);
  auto parallel = durability(in);
  in.repair = RepairMode::kSerial;
  auto serial = durability(in);
  ASSERT_TRUE(parallel.ok() && serial.ok());
  const double l3 = 6 * l * l * l;
  EXPECT_NEAR(parallel->group_mttdl_hours / ((11 * l * l + 7 * l * mu + 2 * mu * mu) / l3), 1,
              1e-13);
  EXPECT_NEAR(serial->group_mttdl_hours / ((11 * l * l + 4 * l * mu + mu * mu) / l3), 1, 1e-13);
}

TEST(DurabilityMarkov, StateEliminationKeepsPrecisionWhereLuLosesIt) {
  // EC 8+3 and 10+4 at realistic rates: MTTDLs of 10^19 to 10^26 hours, a generator whose
  // entries span 10^-6 to 1. The state elimination agrees with the positive-term sum to
  // rounding; Eigen's PartialPivLU on the same matrix is off by 0.4% for 8+3 and loses every
  // digit for 10+4 (docs/models.md, "Solving the chains").
  struct Case {
    int k, m;
    double lu_error_at_least;
  };
  for (const Case& c : {Case{8, 3, 1e-3}, Case{10, 4, 0.5}}) {
    const double afr = 0.01, l = lambda_of(afr), mu = 1 / 4.0;
    auto r = durability(input(c.k + c.m, c.k, c.m, 1, afr, 4));
    ASSERT_TRUE(r.ok());
    const long double exact = birth_death_mttdl(c.k + c.m, c.m, l, mu, true);
    EXPECT_NEAR(static_cast<double>(r->group_mttdl_hours / exact), 1, 1e-13) << c.k << "+" << c.m;
    const double lu = lu_mttdl(c.k + c.m, c.m, l, mu);
    EXPECT_GT(std::abs(static_cast<double>(lu / exact) - 1), c.lu_error_at_least)
        << c.k << "+" << c.m << ": LU became accurate, update docs/models.md";
  }
  // Where the chain is not stiff (AFR 0.5, 200 h) both agree.
  const double l = lambda_of(0.5), mu = 1 / 200.0;
  auto r = durability(input(11, 8, 3, 1, 0.5, 200));
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->group_mttdl_hours / lu_mttdl(11, 3, l, mu), 1, 1e-9);
}

// ---- the cluster chain ---------------------------------------------------------------------

TEST(DurabilityCluster, OneGroupOnItsDrivesIsTheGroupChain) {
  for (auto [k, m] : {std::pair{1, 2}, std::pair{4, 2}, std::pair{8, 3}}) {
    for (RepairMode mode : {RepairMode::kParallel, RepairMode::kSerial}) {
      DurabilityInput in = input(k + m, k, m, 1, 0.05, 24);
      in.repair = mode;
      auto r = durability(in);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->copyset_coverage, 1);
      EXPECT_NEAR(r->cluster_mttdl_hours / r->group_mttdl_hours, 1, 1e-12) << k << "+" << m;
      EXPECT_EQ(r->pgs_lost_per_event, 1);
    }
  }
}

TEST(DurabilityCluster, DisjointGroupsLoseDataAsIndependentGroups) {
  // 40 PGs of 3 copies on 120 drives, each drive in one PG: the pool fails about 40 times as
  // often as one PG (exactly so as failures become rare against repairs). The coverage of
  // disjoint PGs is 40 / C(120, 3).
  DurabilityInput in = input(120, 1, 2, 40, 0.01, 24);
  in.copyset_coverage = 40 / (120.0 * 119 * 118 / 6);
  auto r = durability(in);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->cluster_mttdl_hours / (r->group_mttdl_hours / 40), 1, 2e-3);
  // The random-placement estimate of the same number of PGs is nearly the same coverage.
  auto estimated = durability(input(120, 1, 2, 40, 0.01, 24));
  ASSERT_TRUE(estimated.ok());
  EXPECT_NEAR(estimated->copyset_coverage / in.copyset_coverage, 1, 1e-4);
}

TEST(DurabilityCluster, MonotoneInFailureRateRecoveryTimeAndPlacementGroups) {
  const DurabilityInput base = input(384, 8, 3, 4096, 0.01, 4);
  auto probability = [](const DurabilityInput& in) {
    auto r = durability(in);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? r->annual_loss_probability : -1;
  };
  double previous = 0;
  for (double afr : {0.002, 0.005, 0.01, 0.02, 0.05, 0.1}) {
    DurabilityInput in = base;
    in.drive_afr = afr;
    const double p = probability(in);
    EXPECT_GT(p, previous) << afr;
    previous = p;
  }
  previous = 0;
  for (double hours : {1.0, 4.0, 24.0, 72.0, 240.0}) {
    DurabilityInput in = base;
    in.recovery_hours = hours;
    const double p = probability(in);
    EXPECT_GT(p, previous) << hours;
    previous = p;
  }
  // Waiting before recovery starts is recovery time too.
  DurabilityInput late = base;
  late.detect_hours = 2;
  EXPECT_GT(probability(late), probability(base));
  // More PGs, more copysets: more ways for t + 1 failures to meet in one PG (Cidon et al.).
  previous = 0;
  for (uint32_t pgs : {64u, 512u, 4096u, 32768u}) {
    DurabilityInput in = base;
    in.placement_groups = pgs;
    const double p = probability(in);
    EXPECT_GT(p, previous) << pgs;
    previous = p;
  }
  // Serial repair is slower than parallel repair.
  DurabilityInput serial = base;
  serial.repair = RepairMode::kSerial;
  EXPECT_GT(probability(serial), probability(base));
}

TEST(DurabilityCluster, ErasureCoding83OutlastsReplication) {
  // 384 drives, AFR 1%, 4 h to recover: EC 8+3 (1.375x raw) survives 3 failures per PG and
  // loses data less often than 3 copies (3x raw), and far less than 2 copies (2x raw).
  auto ec = durability(input(384, 8, 3, 4096, 0.01, 4));
  auto three = durability(input(384, 1, 2, 4096, 0.01, 4));
  auto two = durability(input(384, 1, 1, 4096, 0.01, 4));
  ASSERT_TRUE(ec.ok() && three.ok() && two.ok());
  EXPECT_GT(ec->nines, three->nines + 1);
  EXPECT_GT(three->nines, two->nines + 1);
  EXPECT_GT(ec->cluster_mttdl_hours, three->cluster_mttdl_hours);
  // A single 8+3 group is far more durable than the pool of 4,096 of them.
  EXPECT_GT(ec->group_mttdl_hours, 100 * ec->cluster_mttdl_hours);
}

TEST(DurabilityCluster, BytesLostAndDegradedGroups) {
  DurabilityInput in = input(384, 1, 2, 4096, 0.05, 48);
  in.pool_bytes = 100 * std::pow(2.0, 40);
  auto r = durability(in);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->annual_loss_probability, -std::expm1(-r->loss_events_per_year), 1e-15);
  EXPECT_NEAR(r->nines, -std::log10(r->annual_loss_probability), 1e-12);
  EXPECT_NEAR(r->loss_events_per_year, kHoursPerYear / r->cluster_mttdl_hours, 1e-18);
  // 4,096 triples out of C(384, 3) = 9.4 million: a loss almost always takes one PG.
  EXPECT_GE(r->pgs_lost_per_event, 1);
  EXPECT_LT(r->pgs_lost_per_event, 1.001);
  EXPECT_NEAR(r->bytes_lost_per_event, r->pgs_lost_per_event * in.pool_bytes / 4096, 1);
  EXPECT_NEAR(r->expected_bytes_lost_per_year, r->loss_events_per_year * r->bytes_lost_per_event,
              1e-9 * r->expected_bytes_lost_per_year);
  // Failed drives at a time: about drives * lambda * repair time (each failed drive takes 3 *
  // 4096 / 384 = 32 PG chunks with it).
  const double busy = 384 * r->drive_failures_per_hour * 48;
  EXPECT_NEAR(r->mean_failed_drives / busy, 1, 0.01);
  EXPECT_NEAR(r->mean_degraded_pgs / (r->mean_failed_drives * 3 * 4096 / 384), 1, 0.02);
  // No pool size, no bytes.
  in.pool_bytes = 0;
  EXPECT_EQ(durability(in)->expected_bytes_lost_per_year, 0);
}

TEST(DurabilityInput, RejectsBadInputsNamingTheField) {
  const DurabilityInput good = input(24, 4, 2, 256, 0.01, 4);
  ASSERT_TRUE(durability(good).ok());
  struct Case {
    DurabilityInput in;
    const char* message;
  };
  std::vector<Case> cases;
  auto with = [&](auto change, const char* message) {
    DurabilityInput in = good;
    change(in);
    cases.push_back({in, message});
  };
  with([](DurabilityInput& in) { in.drives = 5; },
       "drives: expected at least 6 (one drive per chunk of a placement group), got 5");
  with([](DurabilityInput& in) { in.data_chunks = 0; },
       "data_chunks: expected an integer >= 1 (k, or 1 for replication), got 0");
  with([](DurabilityInput& in) { in.coding_chunks = -1; },
       "coding_chunks: expected an integer >= 0 (m, or replicas - 1), got -1");
  with([](DurabilityInput& in) { in.data_chunks = 63; },
       "data_chunks + coding_chunks: expected at most 64, got 65");
  with([](DurabilityInput& in) { in.placement_groups = 0; },
       "placement_groups: expected an integer >= 1, got 0");
  with([](DurabilityInput& in) { in.drive_afr = 1; },
       "drive_afr: expected an annual failure rate in (0, 1), got 1");
  with([](DurabilityInput& in) { in.drive_afr = 0; },
       "drive_afr: expected an annual failure rate in (0, 1), got 0");
  with([](DurabilityInput& in) { in.recovery_hours = 0; },
       "recovery_hours: expected a finite number > 0, got 0");
  with([](DurabilityInput& in) { in.detect_hours = -1; },
       "detect_hours: expected a finite number >= 0, got -1");
  with([](DurabilityInput& in) { in.pool_bytes = NAN; },
       "pool_bytes: expected a finite number >= 0, got nan");
  with([](DurabilityInput& in) { in.copyset_coverage = 1.5; },
       "copyset_coverage: expected 0 (estimate) or a probability in (0, 1], got 1.5");
  for (const Case& c : cases) {
    auto r = durability(c.in);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(r.status().message(), c.message);
  }
}

// ---- copyset coverage and the Monte Carlo check --------------------------------------------

TEST(DurabilityCoverage, CountsDistinctSetsOfFailedDrives) {
  // 5 drives, 3 copies: {0,1,2} and {2,1,0} are one copyset, {1,2,3} another: 2 of C(5,3) = 10.
  auto c = copyset_coverage({{0, 1, 2}, {2, 1, 0}, {1, 2, 3}}, 5, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(*c, 0.2);
  // Two failures out of 4+2 chunks (t = 1): each PG of 6 drives holds C(6,2) = 15 pairs; two
  // PGs on 7 drives sharing 5 drives hold 15 + 15 - 10 = 20 of C(7,2) = 21.
  auto pairs = copyset_coverage({{0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5, 6}}, 7, 1);
  ASSERT_TRUE(pairs.ok());
  EXPECT_DOUBLE_EQ(*pairs, 20.0 / 21);
  EXPECT_EQ(copyset_coverage({{0, 1, 7}}, 5, 2).status().message(),
            "pg_sets[0]: expected drive ids in [0, 5), found 7");
  EXPECT_EQ(copyset_coverage({{0, 1, 1}}, 5, 2).status().message(),
            "pg_sets[0]: expected at least 3 distinct drives, found 2");
}

// The OSDs of every PG of a pool on a generated map of `hosts` x `per_host` drives (host
// failure domain), as CRUSH places them.
std::vector<std::vector<int32_t>> crush_pg_sets(int hosts, int per_host, uint32_t pgs, int size,
                                                bool erasure) {
  crush::GeneratedMapSpec spec;
  spec.hosts = hosts;
  spec.devices_per_host = per_host;
  auto map = crush::generate_host_map(spec);
  EXPECT_TRUE(map.ok());
  placement::PoolSpec pool_spec;
  pool_spec.pg_num = pgs;
  pool_spec.size = size;
  pool_spec.crush_rule = erasure ? 1 : 0;
  pool_spec.erasure = erasure;
  auto pool = placement::CrushPool::create(*map, pool_spec,
                                           placement::OsdStates::all_up_in(hosts * per_host));
  EXPECT_TRUE(pool.ok()) << pool.status().to_string();
  std::vector<std::vector<int32_t>> sets(pgs);
  for (uint32_t pg = 0; pg < pgs; ++pg) pool->devices_of(pg, sets[pg]);
  return sets;
}

TEST(DurabilityMonteCarlo, AgreesWithMarkovOnCrushPlacement) {
  // 20 drives (5 hosts x 4), AFR 50%, 200 h to re-protect: losses are frequent enough to
  // count. The Markov chain gets the coverage measured on the CRUSH placement. Its loss rate
  // must fall within the Monte Carlo's 95% interval widened by 5%, the documented accuracy of
  // the chain at such extreme rates (it measured 1-3% high; docs/models.md has the figures).
  struct Case {
    int k, m;
    bool erasure;
    RepairMode repair;
  };
  for (const Case& c :
       {Case{1, 2, false, RepairMode::kParallel}, Case{2, 2, true, RepairMode::kParallel},
        Case{1, 2, false, RepairMode::kSerial}}) {
    const int n = c.k + c.m;
    const auto sets = crush_pg_sets(5, 4, 64, n, c.erasure);
    DurabilityInput in = input(20, c.k, c.m, 64, 0.5, 200);
    in.repair = c.repair;
    auto coverage = copyset_coverage(sets, 20, c.m);
    ASSERT_TRUE(coverage.ok());
    in.copyset_coverage = *coverage;
    auto markov = durability(in);
    ASSERT_TRUE(markov.ok());
    MonteCarloOptions options;
    options.years = 100;
    options.trials = 1000;
    options.seed = 7;
    auto mc = durability_monte_carlo(in, sets, options);
    ASSERT_TRUE(mc.ok()) << mc.status().to_string();
    EXPECT_GT(mc->loss_events, 2000);  // an interval of +-4.4% at most
    const std::string figures = std::to_string(c.k) + "+" + std::to_string(c.m) + ": Monte Carlo " +
                                std::to_string(mc->loss_events_per_year) + " [" +
                                std::to_string(mc->loss_events_per_year_low) + ", " +
                                std::to_string(mc->loss_events_per_year_high) + "], Markov " +
                                std::to_string(markov->loss_events_per_year);
    EXPECT_GE(markov->loss_events_per_year, 0.95 * mc->loss_events_per_year_low) << figures;
    EXPECT_LE(markov->loss_events_per_year, 1.05 * mc->loss_events_per_year_high) << figures;
  }
}

TEST(DurabilityMonteCarlo, DeterministicForASeedAndRepairModes) {
  const auto sets = crush_pg_sets(5, 4, 32, 3, false);
  DurabilityInput in = input(20, 1, 2, 32, 0.5, 200);
  MonteCarloOptions options;
  options.years = 10;
  options.trials = 100;
  options.seed = 3;
  auto a = durability_monte_carlo(in, sets, options);
  auto b = durability_monte_carlo(in, sets, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->loss_events, b->loss_events);
  EXPECT_EQ(a->drive_failures, b->drive_failures);
  EXPECT_EQ(a->simulated_years, 1000);
  EXPECT_LE(a->trials_with_loss, a->loss_events);
  // About 20 drives x 0.69 failures a year (fewer while some are down).
  EXPECT_NEAR(a->drive_failures / 1000.0 / (20 * -std::log(0.5)), 1, 0.05);
  options.seed = 4;
  EXPECT_NE(durability_monte_carlo(in, sets, options)->drive_failures, a->drive_failures);
  // One repair at a time loses data about three times as often as parallel repairs here.
  options.years = 100;
  in.repair = RepairMode::kSerial;
  auto serial = durability_monte_carlo(in, sets, options);
  in.repair = RepairMode::kParallel;
  auto parallel = durability_monte_carlo(in, sets, options);
  ASSERT_TRUE(serial.ok() && parallel.ok());
  EXPECT_GT(serial->loss_events, 2 * parallel->loss_events);
  // Fixed repair times run and repair everything they should: the same failures, about.
  options.repair_time = RepairTime::kDeterministic;
  auto fixed = durability_monte_carlo(in, sets, options);
  ASSERT_TRUE(fixed.ok());
  EXPECT_GT(fixed->loss_events, 0);
  EXPECT_NEAR(static_cast<double>(fixed->drive_failures) / parallel->drive_failures, 1, 0.05);
}

TEST(DurabilityMonteCarlo, RejectsPgSetsThatDoNotMatch) {
  DurabilityInput in = input(6, 1, 2, 2, 0.1, 10);
  MonteCarloOptions options;
  auto message = [&](const std::vector<std::vector<int32_t>>& sets) {
    auto r = durability_monte_carlo(in, sets, options);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message({{0, 1, 2}, {3, 4, 5}}), "ok");
  EXPECT_EQ(message({{0, 1, 2}}),
            "pg_sets: expected 2 placement groups (placement_groups), found 1");
  EXPECT_EQ(message({{0, 1, 2}, {3, 4}}), "pg_sets[1]: expected 3 drives (k + m), found 2");
  EXPECT_EQ(message({{0, 1, 2}, {3, 4, placement::kNoDevice}}),
            "pg_sets[1]: expected drive ids in [0, 6), found 2147483647");
  EXPECT_EQ(message({{0, 1, 2}, {3, 4, 3}}), "pg_sets[1]: drive 3 appears twice");
  options.trials = 0;
  EXPECT_EQ(message({{0, 1, 2}, {3, 4, 5}}), "trials: expected an integer >= 1, got 0");
  options.trials = 1;
  options.years = 1e12;
  EXPECT_EQ(message({{0, 1, 2}, {3, 4, 5}}).rfind("monte carlo: about ", 0), 0u);
}

}  // namespace
}  // namespace granary::models

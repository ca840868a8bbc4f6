// The sampler's pure parts (sim/sampler.h): utilisation bins that merge as a run grows, and the
// windowed accelerator utilisation, against closed forms.
#include "sim/sampler.h"

#include <gtest/gtest.h>

#include <vector>

namespace granary::sim {
namespace {

TEST(UtilizationSeries, ShortRunKeepsOneBinPerTick) {
  UtilizationSeries u(2);
  for (int i = 0; i < 10; ++i) u.add_tick(0.5, {1.0, i < 5 ? 1.0 : 0.0});
  ASSERT_EQ(u.bins(), 10u);
  EXPECT_DOUBLE_EQ(u.bin_end_s(0), 0.5);
  EXPECT_DOUBLE_EQ(u.bin_end_s(9), 5.0);
  EXPECT_DOUBLE_EQ(u.busy(1, 4), 1.0);
  EXPECT_DOUBLE_EQ(u.busy(1, 5), 0.0);
  EXPECT_DOUBLE_EQ(u.mean(0), 1.0);
  EXPECT_DOUBLE_EQ(u.mean(1), 0.5);
}

// A long run: at most kMaxBins bins of whole ticks, every tick counted once, the figures the
// means of their ticks.
TEST(UtilizationSeries, LongRunMergesNeighboursAndKeepsEveryTick) {
  UtilizationSeries u(1);
  const int ticks = 10000;
  for (int i = 0; i < ticks; ++i) u.add_tick(0.01, {i < ticks / 4 ? 1.0 : 0.2});
  EXPECT_LE(u.bins(), UtilizationSeries::kMaxBins);
  EXPECT_GE(u.bins(), UtilizationSeries::kMaxBins / 2);
  double width = 0, busy = 0;
  for (size_t b = 0; b < u.bins(); ++b) {
    width += u.bin_width_s(b);
    busy += u.busy(0, b) * u.bin_width_s(b);
    if (b > 0) {
      EXPECT_GT(u.bin_end_s(b), u.bin_end_s(b - 1));
    }
  }
  EXPECT_NEAR(width, ticks * 0.01, 1e-9);
  EXPECT_NEAR(u.bin_end_s(u.bins() - 1), ticks * 0.01, 1e-9);
  EXPECT_NEAR(busy, 2500 * 0.01 + 7500 * 0.01 * 0.2, 1e-9);
  EXPECT_NEAR(u.mean(0), 0.25 + 0.75 * 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(u.busy(0, 0), 1.0);
  EXPECT_NEAR(u.busy(0, u.bins() - 1), 0.2, 1e-12);
}

TEST(UtilizationSeries, BusyFractionsAreClampedToOne) {
  UtilizationSeries u(1);
  u.add_tick(1, {1.7});
  u.add_tick(1, {-0.5});
  EXPECT_DOUBLE_EQ(u.busy(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(u.busy(0, 1), 0.0);
}

// One accelerator computing 0.5 s per step, steps ending each second: busy half of every
// 1 s window; two accelerators, one of them idle after 2 s: a dip to a quarter.
TEST(WindowedAu, ComputeTimeInEachWindow) {
  const std::vector<double> a = {1, 2, 3, 4}, b = {1, 2};
  EXPECT_EQ(windowed_au({&a}, 0.5, 1.0, 4.0), (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(windowed_au({&a, &b}, 0.5, 1.0, 4.0), (std::vector<double>{0.5, 0.5, 0.25, 0.25}));
  // A step's compute across a window edge counts in both; a last partial window by its width.
  const std::vector<double> c = {1.25, 2.5};
  const std::vector<double> w = windowed_au({&c}, 1.0, 1.0, 2.5);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w[0], 0.75);  // [0.25, 1.25] -> 0.75 s in [0, 1)
  EXPECT_DOUBLE_EQ(w[1], 0.75);  // [1, 1.25] and [1.5, 2] -> 0.75 s in [1, 2)
  EXPECT_DOUBLE_EQ(w[2], 1.0);   // [2, 2.5]: 0.5 s of a 0.5 s window
}

}  // namespace
}  // namespace granary::sim

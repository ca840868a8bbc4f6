#include "engine/crush/mapper.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "engine/crush/edit.h"
#include "engine/crush/text_format.h"

namespace granary::crush {
namespace {

// A root with one host per listed weight (one OSD each), plus rules:
// 0 = choose firstn 0 type osd, 1 = chooseleaf indep 0 type host.
std::string flat_map(const std::vector<double>& weights, const std::string& alg = "straw2") {
  std::ostringstream t;
  t << "tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\ntunable "
       "choose_total_tries 50\n"
       "tunable chooseleaf_descend_once 1\ntunable chooseleaf_vary_r 1\ntunable chooseleaf_stable "
       "1\n"
       "tunable straw_calc_version 1\ntunable allowed_bucket_algs 54\n";
  for (size_t i = 0; i < weights.size(); ++i) t << "device " << i << " osd." << i << "\n";
  t << "type 0 osd\ntype 1 host\ntype 2 root\n";
  for (size_t i = 0; i < weights.size(); ++i) {
    t << "host h" << i << " {\n\tid " << -2 - static_cast<int>(i)
      << "\n\talg straw2\n\thash 0\n\titem osd." << i << " weight " << weights[i] << "\n}\n";
  }
  t << "root default {\n\tid -1\n\talg " << alg << "\n\thash 0\n";
  for (size_t i = 0; i < weights.size(); ++i) t << "\titem h" << i << "\n";
  t << "}\nrule osds {\n\tid 0\n\ttype replicated\n\tstep take default\n\tstep choose firstn 0 "
       "type osd\n\tstep emit\n}\n";
  t << "rule ec {\n\tid 1\n\ttype erasure\n\tstep set_chooseleaf_tries 5\n\tstep set_choose_tries "
       "100\n"
       "\tstep take default\n\tstep chooseleaf indep 0 type host\n\tstep emit\n}\n";
  return t.str();
}

CrushMap must_parse(const std::string& text) {
  auto m = parse_text_map(text, "test");
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return std::move(*m);
}

TEST(Straw2, ChoosesInProportionToWeight) {
  const std::vector<double> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const CrushMap map = must_parse(flat_map(w));
  Mapper mapper(map);
  const auto weights = default_device_weights(map);
  std::vector<int> count(w.size(), 0);
  std::vector<int32_t> out(1);
  const int n = 200000;
  for (int x = 0; x < n; ++x) {
    ASSERT_EQ(mapper.do_rule(0, x, out, weights), 1);
    ++count[out[0]];
  }
  for (size_t i = 0; i < w.size(); ++i) {
    const double p = w[i] / 55.0;
    const double expected = n * p;
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(count[i], expected, 5 * sigma) << "osd." << i;
  }
}

TEST(Straw2, ChangingOneWeightMovesDataOnlyToOrFromThatItem) {
  const std::vector<double> w(12, 1.0);
  CrushMap before = must_parse(flat_map(w));
  CrushMap after = before;
  ASSERT_TRUE(after.set_item_weight_up_tree(-2 - 5, 0x20000).ok());  // host h5 doubles
  Mapper a(before), b(after);
  const auto weights = default_device_weights(before);
  std::vector<int32_t> ra(1), rb(1);
  int moved = 0;
  for (int x = 0; x < 50000; ++x) {
    a.do_rule(0, x, ra, weights);
    b.do_rule(0, x, rb, weights);
    if (ra[0] != rb[0]) {
      ++moved;
      EXPECT_EQ(rb[0], 5) << "x=" << x << " moved to an item whose weight did not change";
    }
  }
  // h5's share goes from 1/12 to 2/13: about 7% of inputs move, all of them to h5.
  EXPECT_NEAR(moved / 50000.0, 2.0 / 13 - 1.0 / 12, 0.01);
}

TEST(Indep, OutDeviceRarelyDisturbsOtherPositions) {
  // Erasure rules keep positions: when osd.4 goes out, its positions are refilled and the
  // others stay, except for the rare retry cascade (a refilled position taking a device
  // that a later position would have drawn in the same retry round).
  const CrushMap map = must_parse(flat_map(std::vector<double>(10, 1.0)));
  Mapper mapper(map);
  auto weights = default_device_weights(map);
  auto out_weights = weights;
  out_weights[4] = 0;
  std::vector<int32_t> a(6), b(6);
  int others = 0, disturbed = 0;
  for (int x = 0; x < 20000; ++x) {
    ASSERT_EQ(mapper.do_rule(1, x, a, weights), 6);
    ASSERT_EQ(mapper.do_rule(1, x, b, out_weights), 6);
    for (int i = 0; i < 6; ++i) {
      EXPECT_NE(b[i], 4);
      if (a[i] == 4) continue;
      ++others;
      disturbed += (a[i] != b[i]);
    }
  }
  std::printf("indep: %d of %d untouched positions changed (%.2f%%)\n", disturbed, others,
              100.0 * disturbed / others);
  EXPECT_LT(disturbed, others / 50);  // under 2%
}

TEST(Indep, UnfillablePositionsAreHoles) {
  const CrushMap map = must_parse(flat_map(std::vector<double>(4, 1.0)));
  Mapper mapper(map);
  const auto weights = default_device_weights(map);
  std::vector<int32_t> out(6);
  ASSERT_EQ(mapper.do_rule(1, 7, out, weights), 6);
  int holes = 0;
  for (int32_t v : out) holes += (v == kItemNone);
  EXPECT_EQ(holes, 2);  // 4 hosts for 6 positions
}

TEST(Mapper, PartialReweightRejectsThatFractionOfInputs) {
  const CrushMap map = must_parse(flat_map(std::vector<double>(8, 1.0)));
  Mapper mapper(map);
  auto weights = default_device_weights(map);
  weights[3] = 0x4000;  // 0.25
  std::vector<int32_t> out(1);
  int on3 = 0;
  const int n = 80000;
  for (int x = 0; x < n; ++x) {
    mapper.do_rule(0, x, out, weights);
    on3 += (out[0] == 3);
  }
  // Proposed 1/8 of the time, accepted a quarter of those; rejects re-draw elsewhere.
  EXPECT_NEAR(on3 / static_cast<double>(n), 0.25 / (7 + 0.25), 0.006);
}

TEST(Mapper, WeightSetOverridesBucketWeights) {
  std::string text = flat_map(std::vector<double>(4, 1.0));
  text +=
      "choose_args 3 {\n  {\n    bucket_id -1\n    weight_set [\n      [ 1.0 0.0 1.0 1.0 ]\n    "
      "]\n  }\n}\n";
  const CrushMap map = must_parse(text);
  ASSERT_NE(map.choose_args_for(3), nullptr);
  Mapper mapper(map);
  const auto weights = default_device_weights(map);
  std::vector<int32_t> out(1);
  for (int x = 0; x < 2000; ++x) {
    mapper.do_rule(0, x, out, weights, map.choose_args_for(3));
    EXPECT_NE(out[0], 1);  // weight 0 in the weight set
  }
}

TEST(Mapper, UnknownRuleGivesNothing) {
  const CrushMap map = must_parse(flat_map({1, 1}));
  Mapper mapper(map);
  std::vector<int32_t> out(3);
  EXPECT_EQ(mapper.do_rule(17, 1, out, default_device_weights(map)), 0);
}

TEST(Tunables, ProfilesHaveCephValues) {
  const Tunables legacy = *Tunables::profile("legacy");
  EXPECT_EQ(legacy, Tunables());
  EXPECT_EQ(legacy.profile_name(), "legacy");
  const Tunables jewel = *Tunables::profile("optimal");
  EXPECT_EQ(jewel.choose_total_tries, 50u);
  EXPECT_EQ(jewel.chooseleaf_stable, 1u);
  EXPECT_EQ(jewel.straw_calc_version, 1u);
  EXPECT_EQ(jewel.allowed_bucket_algs, 54u);
  EXPECT_EQ(Tunables::profile("firefly")->chooseleaf_vary_r, 1u);
  EXPECT_EQ(Tunables::profile("firefly")->chooseleaf_stable, 0u);
  EXPECT_EQ(Tunables::profile("bobtail")->chooseleaf_descend_once, 1u);
  EXPECT_FALSE(Tunables::profile("reef").has_value());
}

TEST(Edit, AddBucketLikeCopiesShapeAndGrowsAncestors) {
  const CrushMap map = must_parse(flat_map({1, 2, 3}));
  CrushMap grown = map;
  auto id = add_bucket_like(grown, "h2", "h9");
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  const Bucket* b = grown.bucket(*id);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->items, std::vector<int32_t>{3});
  EXPECT_EQ(b->item_weights, std::vector<uint32_t>{3 * kWeightOne});
  EXPECT_EQ(grown.bucket(-1)->weight, 9 * kWeightOne);
  EXPECT_EQ(grown.max_devices(), 4);
  // The grown map still prints and parses to the same text.
  const std::string text = write_text_map(grown);
  EXPECT_EQ(write_text_map(must_parse(text)), text);
  EXPECT_FALSE(add_bucket_like(grown, "default", "x").ok());  // holds buckets
  EXPECT_FALSE(add_bucket_like(grown, "nope", "x").ok());
}

}  // namespace
}  // namespace granary::crush

#include "engine/services/dataset.h"

#include <gtest/gtest.h>

#include <cmath>

namespace granary::services {
namespace {

Dataset make(const DatasetSpec& spec, uint64_t seed) {
  Random rng(seed);
  Result<Dataset> d = Dataset::create(spec, rng);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return std::move(d).value();
}

TEST(Dataset, NamesAndSizesAreFixedPerFile) {
  const DatasetSpec spec{.name = "unet3d",
                         .files = 168,
                         .samples_per_file = 1,
                         .sample_bytes_mean = 146600628,
                         .sample_bytes_stddev = 68341808};
  const Dataset a = make(spec, 42);
  const Dataset b = make(spec, 42);
  ASSERT_EQ(a.files().size(), 168u);
  EXPECT_EQ(a.files()[0].path, "unet3d/file_00000000");
  EXPECT_EQ(a.files()[167].path, "unet3d/file_00000167");
  for (size_t i = 0; i < a.files().size(); ++i) {
    EXPECT_EQ(a.files()[i].size_bytes, b.files()[i].size_bytes);
  }
  // A larger dataset from the same seed agrees on the files they share.
  DatasetSpec more = spec;
  more.files = 300;
  const Dataset c = make(more, 42);
  for (size_t i = 0; i < a.files().size(); ++i) {
    EXPECT_EQ(a.files()[i].size_bytes, c.files()[i].size_bytes);
  }
  EXPECT_NE(make(spec, 43).files()[0].size_bytes, a.files()[0].size_bytes);
  EXPECT_EQ(a.sizes_by_path().at("unet3d/file_00000007"), a.files()[7].size_bytes);
}

TEST(Dataset, SampleSizesFollowTheMeanAndStddev) {
  Random rng(1);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = normal_sample(rng, 1000, 100);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 1000, 1.0);
  EXPECT_NEAR(sd, 100, 1.0);
  // Clamped to one byte; exact without a deviation.
  Random r2(2);
  for (int i = 0; i < 1000; ++i) EXPECT_GE(sample_size_bytes(r2, 1, 1000), 1u);
  EXPECT_EQ(sample_size_bytes(r2, 4096.4, 0), 4096u);
  // Many samples per file: the file is their sum.
  const Dataset d = make({.name = "resnet",
                          .files = 4,
                          .samples_per_file = 1251,
                          .sample_bytes_mean = 114660.07,
                          .sample_bytes_stddev = 0},
                         1);
  EXPECT_EQ(d.files()[0].size_bytes, 1251u * 114660u);
  EXPECT_EQ(d.total_bytes(), 4u * 1251u * 114660u);
}

TEST(Dataset, RejectsBadSpecs) {
  Random rng(1);
  EXPECT_FALSE(Dataset::create({.name = "", .files = 1, .sample_bytes_mean = 1}, rng).ok());
  EXPECT_FALSE(Dataset::create({.name = "a/b", .files = 1, .sample_bytes_mean = 1}, rng).ok());
  EXPECT_FALSE(Dataset::create({.name = "a", .files = 0, .sample_bytes_mean = 1}, rng).ok());
  EXPECT_FALSE(
      Dataset::create({.name = "a", .files = 1, .samples_per_file = 0, .sample_bytes_mean = 1}, rng)
          .ok());
  EXPECT_FALSE(Dataset::create({.name = "a", .files = 1, .sample_bytes_mean = 0}, rng).ok());
  EXPECT_FALSE(
      Dataset::create({.name = "a", .files = 1, .sample_bytes_mean = 1, .sample_bytes_stddev = -1},
                      rng)
          .ok());
}

}  // namespace
}  // namespace granary::services

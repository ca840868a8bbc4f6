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

// DLIO's generators (dlio_benchmark bc693c62, utils/config.py and
// data_generator/data_generator.py get_dimension): a sample is dim1 x dim2 bytes, the two
// dimensions drawn per file around int(sqrt(record_length)) with sd record_length_stdev / 2 /
// sqrt(record_length); every sample of a file is the same size.
TEST(Dataset, DlioDimensionsAsDlioGeneratesThem) {
  // resnet50: no stdev, 338 x 338 bytes per sample, not the configured 114,660.07.
  EXPECT_EQ(int(std::sqrt(114660.07)), 338);
  const Dataset r = make({.name = "resnet50",
                          .files = 3,
                          .samples_per_file = 1251,
                          .sample_bytes_mean = 114660.07,
                          .sample_bytes_stddev = 0,
                          .sample_sizes = SampleSizes::kDlioDimensions},
                         1);
  for (const DatasetFile& f : r.files()) EXPECT_EQ(f.size_bytes, 1251u * 338u * 338u);
  // unet3d: the product of two normals of mean 12,107 and sd 68,341,808 / 2 / 12,107.87 =
  // 2,822.2: mean 12,107^2 (less a little for the truncation), sd
  // sqrt((d^2 + s^2)^2 - d^4) = 33.4% of the mean (a normal per sample would give 46.6%).
  const double d = 12107, s = 68341808 / 2.0 / std::sqrt(146600628.0);
  const double sd_expected = std::sqrt(std::pow(d * d + s * s, 2) - std::pow(d, 4));
  const Dataset u = make({.name = "unet3d",
                          .files = 100000,
                          .samples_per_file = 1,
                          .sample_bytes_mean = 146600628,
                          .sample_bytes_stddev = 68341808,
                          .sample_sizes = SampleSizes::kDlioDimensions},
                         7);
  double sum = 0, sum2 = 0;
  for (const DatasetFile& f : u.files()) {
    const double x = double(f.size_bytes);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / 100000, sd = std::sqrt(sum2 / 100000 - mean * mean);
  EXPECT_NEAR(mean, d * d, 0.01 * d * d);  // standard error 0.1%
  EXPECT_NEAR(sd / mean, sd_expected / (d * d), 0.01);
  EXPECT_NEAR(sd_expected / (d * d), 0.334, 0.001);
  // Same seed, same sizes; the file's samples share one draw.
  Random rng(3);
  const uint64_t one = dlio_sample_size_bytes(rng, 2828486, 71311);
  Random rng2(3);
  EXPECT_EQ(dlio_sample_size_bytes(rng2, 2828486, 71311), one);
  EXPECT_GT(one, 0u);
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

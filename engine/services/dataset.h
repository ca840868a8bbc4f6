// Dataset: the files of a DLIO / MLPerf Storage training dataset, with sizes fixed per file.
//
// A dataset has `files` files named "<name>/file_<index as 8 decimal digits>" (more digits
// past 10^8 files), each holding `samples_per_file` samples. Sample sizes, by SampleSizes:
//  - kNormal: every sample drawn from a normal distribution with the mean and standard
//    deviation (Box-Muller on the engine's Random, rounded to whole bytes, >= 1 byte).
//  - kDlioDimensions: as DLIO generates MLPerf Storage's datasets (argonne-lcf/dlio_benchmark
//    at bc693c62: utils/config.py derive_configurations, data_generator/data_generator.py
//    get_dimension, npz_generator.py, tf_generator.py). A sample is a dim1 x dim2 array of
//    bytes; dimension = int(sqrt(mean)), dimension_stdev = stddev / 2 / sqrt(mean); each file
//    draws dim1 and dim2 = max(int(normal(dimension, dimension_stdev)), 1) (int truncating
//    toward zero), and all its samples are dim1 x dim2 bytes. So a sample's mean is about
//    dimension^2 (resnet50: 338^2 = 114,244 bytes for record_length 114,660.07) and its
//    standard deviation about sqrt(2) x stddev / 2 (unet3d: 33% of the mean, not 47%).
//    The files' format framing (npz header, TFRecord record and Example, ~100 bytes) is left
//    out.
// A file's size is the sum of its samples.
//
// Determinism: create() draws one value from the caller's Random, the dataset seed; file i's
// samples are drawn from its own generator Random(seed + (i + 1) * 0x9e3779b97f4a7c15), so a
// file's size depends only on the seed and its index: every reader and every store agree on
// it, and re-reads see the same file.
//
// Thread-safety: a Dataset is an immutable value once created; share it freely.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/random.h"
#include "engine/status.h"

namespace granary::services {

enum class SampleSizes {
  kNormal,          // each sample ~ normal(mean, stddev)
  kDlioDimensions,  // DLIO's generators: per file, dim1 x dim2 bytes per sample
};

struct DatasetSpec {
  std::string name = "dataset";    // path prefix, non-empty, no '/'
  int64_t files = 0;               // >= 1
  int samples_per_file = 1;        // >= 1
  double sample_bytes_mean = 0;    // > 0
  double sample_bytes_stddev = 0;  // >= 0
  SampleSizes sample_sizes = SampleSizes::kNormal;
};

struct DatasetFile {
  std::string path;
  uint64_t size_bytes = 0;
};

class Dataset {
 public:
  // Checks the spec and sizes every file (O(files * samples_per_file) draws).
  static Result<Dataset> create(const DatasetSpec& spec, Random& rng);

  const DatasetSpec& spec() const { return spec_; }
  uint64_t seed() const { return seed_; }
  const std::vector<DatasetFile>& files() const { return files_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // Path -> size, what a metadata server knows.
  std::map<std::string, uint64_t, std::less<>> sizes_by_path() const;

 private:
  Dataset(DatasetSpec spec, uint64_t seed) : spec_(std::move(spec)), seed_(seed) {}

  DatasetSpec spec_;
  uint64_t seed_;
  std::vector<DatasetFile> files_;
  uint64_t total_bytes_ = 0;
};

// The path of file `index` of a dataset called `name`.
std::string dataset_file_path(const std::string& name, int64_t index);

// A standard normal draw scaled to (mean, stddev): Box-Muller with u1 = 1 - uniform01() in
// (0, 1] and u2 = uniform01(), z = sqrt(-2 ln u1) cos(2 pi u2); two draws per value (the sine
// partner is discarded so every value is self-contained).
double normal_sample(Random& rng, double mean, double stddev);

// One sample size: normal_sample rounded to the nearest byte, at least 1 byte. With stddev 0
// the mean (rounded, >= 1) without drawing.
uint64_t sample_size_bytes(Random& rng, double mean, double stddev);

// One file's sample size under kDlioDimensions: dim1 x dim2 as above, from two draws of rng
// (none when stddev is 0).
uint64_t dlio_sample_size_bytes(Random& rng, double mean, double stddev);

}  // namespace granary::services

#include "engine/services/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace granary::services {

std::string dataset_file_path(const std::string& name, int64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08lld", static_cast<long long>(index));
  return name + "/file_" + buf;
}

double normal_sample(Random& rng, double mean, double stddev) {
  const double u1 = 1.0 - rng.uniform01();  // (0, 1]: log is finite
  const double u2 = rng.uniform01();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return mean + stddev * z;
}

uint64_t sample_size_bytes(Random& rng, double mean, double stddev) {
  const double x = stddev > 0 ? normal_sample(rng, mean, stddev) : mean;
  if (!(x >= 1.5)) return 1;  // also catches NaN
  return static_cast<uint64_t>(std::llround(x));
}

uint64_t dlio_sample_size_bytes(Random& rng, double mean, double stddev) {
  // utils/config.py: dimension = int(math.sqrt(record_length)),
  // dimension_stdev = record_length_stdev / 2.0 / math.sqrt(record_length).
  const double root = std::sqrt(mean);
  const double dimension = std::trunc(root);
  const double dimension_stdev = stddev / 2.0 / root;
  // get_dimension: max(int(d), 1) for d in np.random.normal(dimension, dimension_stdev, 2).
  auto draw = [&]() -> uint64_t {
    if (!(dimension_stdev > 0)) return static_cast<uint64_t>(std::max(1.0, dimension));
    const double d = std::trunc(normal_sample(rng, dimension, dimension_stdev));
    return d >= 1 ? static_cast<uint64_t>(d) : 1;
  };
  const uint64_t dim1 = draw();
  const uint64_t dim2 = draw();
  return dim1 * dim2;
}

Result<Dataset> Dataset::create(const DatasetSpec& spec, Random& rng) {
  if (spec.name.empty() || spec.name.find('/') != std::string::npos) {
    return Status::invalid_argument("dataset name: expected a non-empty name without '/', got '" +
                                    spec.name + "'");
  }
  if (spec.files < 1) {
    return Status::invalid_argument("dataset " + spec.name + ": files must be >= 1, got " +
                                    std::to_string(spec.files));
  }
  if (spec.samples_per_file < 1) {
    return Status::invalid_argument("dataset " + spec.name +
                                    ": samples_per_file must be >= 1, got " +
                                    std::to_string(spec.samples_per_file));
  }
  if (!(spec.sample_bytes_mean > 0) || !(spec.sample_bytes_stddev >= 0) ||
      !std::isfinite(spec.sample_bytes_mean) || !std::isfinite(spec.sample_bytes_stddev)) {
    return Status::invalid_argument("dataset " + spec.name +
                                    ": sample size mean must be > 0 and stddev >= 0, got " +
                                    std::to_string(spec.sample_bytes_mean) + " and " +
                                    std::to_string(spec.sample_bytes_stddev));
  }
  Dataset d(spec, rng.next_u64());
  d.files_.reserve(static_cast<size_t>(spec.files));
  for (int64_t i = 0; i < spec.files; ++i) {
    Random file_rng(d.seed_ + static_cast<uint64_t>(i + 1) * 0x9e3779b97f4a7c15ull);
    uint64_t size = 0;
    if (spec.sample_sizes == SampleSizes::kDlioDimensions) {
      size = dlio_sample_size_bytes(file_rng, spec.sample_bytes_mean, spec.sample_bytes_stddev) *
             static_cast<uint64_t>(spec.samples_per_file);
    } else {
      for (int s = 0; s < spec.samples_per_file; ++s) {
        size += sample_size_bytes(file_rng, spec.sample_bytes_mean, spec.sample_bytes_stddev);
      }
    }
    d.files_.push_back(DatasetFile{dataset_file_path(spec.name, i), size});
    d.total_bytes_ += size;
  }
  return d;
}

std::map<std::string, uint64_t, std::less<>> Dataset::sizes_by_path() const {
  std::map<std::string, uint64_t, std::less<>> m;
  for (const DatasetFile& f : files_) m.emplace(f.path, f.size_bytes);
  return m;
}

}  // namespace granary::services

#include "engine/services/gpu_consumer.h"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <utility>

#include "engine/services/env_mutex.h"

namespace granary::services {

// The state one epoch's loader tasks share. Owned jointly by the compute loop and the readers
// (a reader may outlive the compute loop's frame if the world terminates it mid-epoch).
struct GpuConsumer::Epoch {
  Epoch(Env& env, int prefetch_batches)
      : mu(env),
        filled(env.make_semaphore(0)),
        free_slots(env.make_semaphore(prefetch_batches)),
        done(env.make_semaphore(0)) {}

  EnvMutex mu;
  std::vector<size_t> files;              // dataset indices to read, in order
  size_t cursor = 0;                      // guarded by mu
  int64_t pending_samples = 0;            // samples read but not yet in a batch; guarded by mu
  Status error;                           // the first failed read; guarded by mu
  std::unique_ptr<Semaphore> filled;      // batches in the prefetch queue (or an error)
  std::unique_ptr<Semaphore> free_slots;  // free places in the prefetch queue
  std::unique_ptr<Semaphore> done;        // one release per reader that stopped
};

GpuConsumer::GpuConsumer(Env& env, HostId host, StorageClient& client, const Dataset& dataset,
                         GpuConsumerOptions options)
    : env_(env), host_(host), client_(client), dataset_(dataset), options_(std::move(options)) {}

int64_t GpuConsumer::files_per_rank() const {
  return options_.accelerators >= 1 ? dataset_.spec().files / options_.accelerators : 0;
}

int64_t GpuConsumer::steps_per_epoch() const {
  if (options_.batch_size < 1) return 0;
  return files_per_rank() * dataset_.spec().samples_per_file / options_.batch_size;
}

std::vector<size_t> GpuConsumer::epoch_files(int epoch) const {
  std::vector<size_t> order(dataset_.files().size());
  std::iota(order.begin(), order.end(), size_t{0});
  Random rng(options_.shuffle_seed + static_cast<uint64_t>(epoch + 1) * 0x9e3779b97f4a7c15ull);
  for (size_t i = order.size(); i-- > 1;) std::swap(order[i], order[rng.uniform(i + 1)]);
  const auto per_rank = static_cast<size_t>(files_per_rank());
  const auto begin = static_cast<size_t>(options_.rank) * per_rank;
  return std::vector<size_t>(order.begin() + static_cast<ptrdiff_t>(begin),
                             order.begin() + static_cast<ptrdiff_t>(begin + per_rank));
}

Status GpuConsumer::check_options() const {
  const GpuConsumerOptions& o = options_;
  auto bad = [&](const std::string& what) {
    return Status::invalid_argument("gpu consumer " + o.name + ": " + what);
  };
  if (o.accelerators < 1) return bad("accelerators must be >= 1");
  if (o.rank < 0 || o.rank >= o.accelerators) {
    return bad("rank must be in [0, " + std::to_string(o.accelerators) + "), got " +
               std::to_string(o.rank));
  }
  if (o.read_threads < 1) return bad("read_threads must be >= 1");
  if (o.batch_size < 1) return bad("batch_size must be >= 1");
  if (o.prefetch_batches < 1) return bad("prefetch_batches must be >= 1");
  if (o.epochs < 1) return bad("epochs must be >= 1");
  if (!(o.compute_s_per_step >= 0) || !(o.decode_cpu_s_per_sample >= 0)) {
    return bad("compute_s_per_step and decode_cpu_s_per_sample must be >= 0");
  }
  if (steps_per_epoch() < 1) {
    return bad("a shard of " + std::to_string(files_per_rank()) + " files x " +
               std::to_string(dataset_.spec().samples_per_file) +
               " samples is smaller than one batch of " + std::to_string(o.batch_size));
  }
  return Status::ok_status();
}

void GpuConsumer::start(TaskOptions task_options) {
  env_.spawn(
      host_, options_.name, [this] { status_ = run(); }, task_options);
}

void GpuConsumer::reader(const std::shared_ptr<Epoch>& epoch) {
  Epoch& ep = *epoch;
  const int64_t samples_per_file = dataset_.spec().samples_per_file;
  for (;;) {
    size_t index = 0;
    {
      std::lock_guard<EnvMutex> lock(ep.mu);
      if (!ep.error.ok() || ep.cursor == ep.files.size()) break;
      index = ep.files[ep.cursor++];
    }
    const DatasetFile& file = dataset_.files()[index];
    const double started_s = env_.now_s();
    Buffer data;
    Result<FileRead> read =
        client_.read_file(file.path, file.size_bytes, options_.verify ? &data : nullptr);
    if (read.ok() && options_.verify) {
      if (Status checked = options_.verify(file, data.span()); !checked.ok()) read = checked;
    }
    // The loader closes each file once read (a metadata operation on a parallel file system;
    // nothing elsewhere).
    if (read.ok()) {
      if (Status closed = client_.close_file(file.path); !closed.ok()) read = closed;
    }
    if (!read.ok()) {
      {
        std::lock_guard<EnvMutex> lock(ep.mu);
        if (ep.error.ok()) ep.error = read.status();
      }
      ep.filled->release();  // wakes the compute loop, which sees the error
      break;
    }
    env_.compute_s(options_.decode_cpu_s_per_sample * static_cast<double>(samples_per_file));
    int64_t batches = 0;
    {
      std::lock_guard<EnvMutex> lock(ep.mu);
      ++metrics_.files_read;
      metrics_.bytes_read += read->bytes;
      metrics_.file_read_latency_s.push_back(env_.now_s() - started_s);
      ep.pending_samples += samples_per_file;
      batches = ep.pending_samples / options_.batch_size;
      ep.pending_samples %= options_.batch_size;
    }
    bool stop = false;
    for (int64_t b = 0; b < batches && !stop; ++b) {
      ep.free_slots->acquire();
      {
        std::lock_guard<EnvMutex> lock(ep.mu);
        stop = !ep.error.ok();
      }
      if (!stop) ep.filled->release();
    }
    if (stop) break;
  }
  ep.done->release();
}

Status GpuConsumer::run_epoch(int epoch) {
  auto ep = std::make_shared<Epoch>(env_, options_.prefetch_batches);
  const int64_t steps = steps_per_epoch();
  const int64_t samples_per_file = dataset_.spec().samples_per_file;
  // Only the files whose samples make the epoch's batches (the last one possibly in part).
  const int64_t needed = (steps * options_.batch_size + samples_per_file - 1) / samples_per_file;
  ep->files = epoch_files(epoch);
  ep->files.resize(static_cast<size_t>(needed));

  const double epoch_start_s = env_.now_s();
  const int64_t steps_before = metrics_.steps;
  for (int k = 0; k < options_.read_threads; ++k) {
    env_.spawn(host_, options_.name + ".reader" + std::to_string(k), [this, ep] { reader(ep); });
  }
  Status error;
  double first_wait_s = 0;
  double computed_s = 0;
  for (int64_t step = 0; step < steps; ++step) {
    const double wait_from_s = env_.now_s();
    ep->filled->acquire();
    const double wait_s = env_.now_s() - wait_from_s;
    {
      std::lock_guard<EnvMutex> lock(ep->mu);
      error = ep->error;
    }
    if (!error.ok()) break;
    ep->free_slots->release();
    metrics_.step_io_wait_s.push_back(wait_s);
    if (step == 0) first_wait_s = wait_s;
    env_.sleep_s(options_.compute_s_per_step);
    computed_s += options_.compute_s_per_step;
    metrics_.step_end_s.push_back(env_.now_s());
    ++metrics_.steps;
  }
  const double epoch_end_s = env_.now_s();
  if (!error.ok()) {
    for (int k = 0; k < options_.read_threads; ++k) ep->free_slots->release();
  }
  for (int k = 0; k < options_.read_threads; ++k) ep->done->acquire();
  {
    std::lock_guard<EnvMutex> lock(ep->mu);
    if (error.ok()) error = ep->error;
  }
  // DLIO leaves the first step out of both sides: its compute from the compute time, its
  // whole processing (wait + compute) from the time.
  const double first_step_s =
      metrics_.steps > steps_before ? first_wait_s + options_.compute_s_per_step : 0.0;
  const double counted_s =
      metrics_.steps > steps_before ? computed_s - options_.compute_s_per_step : 0.0;
  metrics_.compute_time_s += counted_s;
  metrics_.excluded_s += first_step_s;
  const double span_s = epoch_end_s - epoch_start_s - first_step_s;
  metrics_.epoch_au.push_back(counted_s > 0 && span_s > 0 ? counted_s / span_s : 0.0);
  return error;
}

Status GpuConsumer::run() {
  if (Status s = check_options(); !s.ok()) return s;
  metrics_ = ConsumerMetrics{};
  metrics_.start_s = env_.now_s();
  Status result;
  for (int epoch = 0; epoch < options_.epochs && result.ok(); ++epoch) result = run_epoch(epoch);
  metrics_.end_s = env_.now_s();
  metrics_.total_run_time_s = metrics_.end_s - metrics_.start_s;
  if (!metrics_.epoch_au.empty()) {
    metrics_.au = std::accumulate(metrics_.epoch_au.begin(), metrics_.epoch_au.end(), 0.0) /
                  static_cast<double>(metrics_.epoch_au.size());
  }
  return result;
}

}  // namespace granary::services

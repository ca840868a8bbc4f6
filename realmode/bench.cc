#include "realmode/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/layout/rbd.h"
#include "engine/random.h"
#include "engine/services/block_volume.h"
#include "engine/services/client.h"
#include "engine/services/gpu_consumer.h"
#include "engine/services/phase_barrier.h"
#include "models/scenario_json.h"
#include "sim/block_workload.h"
#include "sim/carry_data.h"
#include "sim/metrics.h"
#include "sim/report_writer.h"

namespace granary::realmode {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What the reads and writes of a run counted (shared by its tasks).
struct Counts {
  std::atomic<uint64_t> files_written{0}, bytes_written{0};
  std::atomic<uint64_t> reads_verified{0}, bytes_verified{0}, mismatches{0};
  std::mutex mu;
  Status first_error;  // guarded by mu
  void fail(const Status& s) {
    std::lock_guard lock(mu);
    if (first_error.ok()) first_error = s;
  }
  Status verify(uint64_t seed, const services::DatasetFile& f, std::span<const std::byte> data) {
    ++reads_verified;
    Status s = sim::check_content(seed, f.path, f.size_bytes, data);
    if (!s.ok()) {
      ++mismatches;
      return s;
    }
    bytes_verified += f.size_bytes;
    return s;
  }
  nlohmann::json to_json() const {
    return {{"files_written", files_written.load()},
            {"bytes_written", bytes_written.load()},
            {"reads_verified", reads_verified.load()},
            {"bytes_verified", bytes_verified.load()},
            {"mismatches", mismatches.load()}};
  }
};

// The client side of one process: its storage clients' backend, over the cluster's pool with
// the scenario's object size and windows, or its pfs with the scenario's RPC size and window.
services::StorageBackend backend_of(ClusterProcess& process, const BenchPlan& plan) {
  if (process.config().pfs) {
    services::PfsBackend b = process.pfs_backend();
    b.max_request_bytes = plan.plan.storage.request_bytes;
    b.window_requests = plan.plan.storage.inflight_requests;
    return b;
  }
  services::RadosBackend b = process.rados_backend();
  auto layout = layout::RbdLayout::create(plan.plan.storage.layout);
  GRANARY_CHECK(layout.ok());  // plan_bench checked it
  b.layout = *layout;
  b.window_requests = plan.plan.storage.inflight_objects;
  return b;
}

// The backend of block I/O beside a training read: the pool with the volumes' layout.
services::StorageBackend volume_backend_of(ClusterProcess& process, const BenchPlan& plan) {
  services::RadosBackend b = process.rados_backend();
  auto layout = layout::RbdLayout::create(plan.plan.block_volumes->layout);
  GRANARY_CHECK(layout.ok());  // plan_bench checked it
  b.layout = *layout;
  b.window_requests = plan.plan.storage.inflight_objects;
  return b;
}

nlohmann::json report_head(const BenchPlan& plan, const BenchOptions& options,
                           const std::string& command) {
  const models::Scenario& s = plan.plan.scenario;
  return {{"granary_report", 2},
          {"mode", "real"},
          {"command", command},
          {"scenario", {{"name", s.name}, {"source", s.source_path}, {"seed", plan.plan.seed}}},
          {"share", {{"index", options.share_index}, {"count", options.share_count}}}};
}

bool in_share(uint64_t i, const BenchOptions& o) {
  return static_cast<int>(i % static_cast<uint64_t>(o.share_count)) == o.share_index;
}

// `writers` tasks over the share's files, each doing `io` on a file; the first error stops
// them.
Status for_each_file(
    ClusterProcess& process, const BenchPlan& plan, const BenchOptions& options, Counts& counts,
    const std::function<Status(services::StorageClient&, const services::DatasetFile&)>& io,
    const services::Dataset* dataset = nullptr, const services::StorageBackend* backend = nullptr) {
  RealEnv& env = process.env();
  const HostId host = process.host();
  services::StorageClient client(env, host, backend ? *backend : backend_of(process, plan),
                                 services::StorageClientOptions{.name = options.name + ".files"});
  const auto& files = (dataset ? *dataset : *plan.dataset).files();
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  for (int t = 0; t < options.writers; ++t) {
    env.spawn(host, options.name + ".files" + std::to_string(t), [&] {
      for (size_t i = next++; i < files.size() && !stop.load(); i = next++) {
        if (!in_share(i, options)) continue;
        if (Status s = io(client, files[i]); !s.ok()) {
          counts.fail(s);
          stop = true;
        }
      }
    });
  }
  if (Status s = env.run(); !s.ok()) return s;
  std::lock_guard lock(counts.mu);
  return counts.first_error;
}

// A block driver's latency samples, per operation (BenchOptions::latency_samples).
nlohmann::json samples_of(const sim::BlockWorkloadDriver& d) {
  return {{"read", d.read_latency().samples()}, {"write", d.write_latency().samples()}};
}

// A checkpoint beside the training read (asynchronous checkpointing), run as the simulator runs
// it (sim/workloads/training_read.cc): one rank per accelerator from node 0 up to the
// checkpoint's ranks, those of the share's client nodes here, each writing its share of every
// checkpoint ("checkpoint<i>/rank<r>", known content) from start_s on, one after the other,
// while the loaders read. Daemon tasks: the run ends with the training read, and a write still
// under way is abandoned (not acknowledged, so neither counted nor read back).
class AsyncCheckpointRanks {
 public:
  AsyncCheckpointRanks(const BenchPlan& plan, const BenchOptions& options,
                       std::map<int, services::StorageClient*> clients, Counts& counts)
      : plan_(plan), options_(options), clients_(std::move(clients)), counts_(counts) {
    const sim::AsyncCheckpointPlan& a = *plan.plan.async_checkpoint;
    const int accel = plan.plan.run.cluster.clients.accelerators_per_node;
    for (int rank = 0; rank < a.ranks; ++rank) {
      if (clients_.count(rank / accel) > 0) ranks_.push_back(rank);
    }
    measured_.ranks = static_cast<int>(ranks_.size());
    measured_.rank_bytes = a.rank_bytes;
    measured_.write_s.assign(static_cast<size_t>(a.spec.checkpoint.checkpoints),
                             std::vector<double>(ranks_.size(), -1));
  }

  static std::string path(int checkpoint, int rank) {
    return "checkpoint" + std::to_string(checkpoint) + "/rank" + std::to_string(rank);
  }

  void start(RealEnv& env, HostId host) {
    const models::CheckpointWorkload& c = plan_.plan.async_checkpoint->spec.checkpoint;
    const int accel = plan_.plan.run.cluster.clients.accelerators_per_node;
    for (size_t i = 0; i < ranks_.size(); ++i) {
      const int rank = ranks_[i];
      services::StorageClient* client = clients_.at(rank / accel);
      env.spawn(
          host, options_.name + ".ckpt.rank" + std::to_string(rank),
          [this, &env, client, c, rank, i] {
            env.sleep_s(c.start_s);
            for (int k = 0; k < c.checkpoints; ++k) {
              const double t0 = env.now_s();
              const std::string f = path(k, rank);
              const uint64_t bytes = measured_.rank_bytes;
              auto w = client->write_file(f, sim::content_payload(plan_.content_seed, f, bytes),
                                          {.fsync = c.fsync});
              if (!w.ok()) {
                counts_.fail(w.status());
                return;
              }
              ++counts_.files_written;
              counts_.bytes_written += bytes;
              std::lock_guard lock(mu_);
              measured_.write_s[static_cast<size_t>(k)][i] = env.now_s() - t0;
            }
          },
          TaskOptions{.daemon = true});
    }
  }

  // Reads back, from tasks, every file a rank finished and compares it with its content.
  Status verify(RealEnv& env, HostId host) {
    const int accel = plan_.plan.run.cluster.clients.accelerators_per_node;
    for (size_t i = 0; i < ranks_.size(); ++i) {
      env.spawn(host, options_.name + ".ckpt.verify" + std::to_string(ranks_[i]), [this, i, accel] {
        services::StorageClient& client = *clients_.at(ranks_[i] / accel);
        for (size_t k = 0; k < measured_.write_s.size(); ++k) {
          if (measured_.write_s[k][i] < 0) break;
          const services::DatasetFile f{path(static_cast<int>(k), ranks_[i]), measured_.rank_bytes};
          Buffer data;
          auto r = client.read_file(f.path, f.size_bytes, &data);
          Status s = r.ok() ? counts_.verify(plan_.content_seed, f, data.span()) : r.status();
          if (!s.ok()) counts_.fail(s);
        }
      });
    }
    return env.run();
  }

  // The report's "checkpoint" section (the simulator's keys), with what `granary real` needs
  // to merge the shares': each checkpoint's slowest rank here (-1: unfinished) and the bytes
  // of a whole checkpoint.
  nlohmann::json to_json() const {
    const models::WorkloadSpec& spec = plan_.plan.async_checkpoint->spec;
    nlohmann::json j = sim::async_checkpoint_json(spec, measured_, 1);
    j.erase("slice_factor");
    j.erase("simulated_ranks");
    j["ranks_run"] = measured_.ranks;
    nlohmann::json slowest = nlohmann::json::array();
    for (const auto& ck : measured_.write_s) {
      const bool done = std::none_of(ck.begin(), ck.end(), [](double x) { return x < 0; });
      slowest.push_back(done && !ck.empty() ? *std::max_element(ck.begin(), ck.end()) : -1.0);
    }
    j["slowest_rank_write_s"] = slowest;
    j["checkpoint_bytes"] = static_cast<uint64_t>(std::llround(spec.checkpoint.total_gb() * 1e9));
    return j;
  }

 private:
  const BenchPlan& plan_;
  const BenchOptions& options_;
  std::map<int, services::StorageClient*> clients_;  // client node -> its client
  Counts& counts_;
  std::vector<int> ranks_;  // this share's
  std::mutex mu_;
  sim::AsyncCheckpoint measured_;  // write_s[checkpoint][index in ranks_]
};

// Block I/O beside the training read, as the simulator runs it (sim/world.cc, start_beside):
// each block node of the share opens its volume (its image, filled before) and the
// simulator's BlockWorkloadDriver issues its I/O in daemon tasks, stopped when the training
// read ends; every write carries the image's content and every read is compared with it.
class BesideBlock {
 public:
  // Null when the share holds no block node.
  static Result<std::unique_ptr<BesideBlock>> open(ClusterProcess& process, const BenchPlan& plan,
                                                   const BenchOptions& options) {
    auto b = std::unique_ptr<BesideBlock>(new BesideBlock(plan, options));
    RealEnv& env = process.env();
    const sim::BlockPlan& bp = *plan.plan.block_volumes;
    Result<layout::RbdLayout> layout = layout::RbdLayout::create(bp.layout);
    if (!layout.ok()) return layout.status();
    for (int c = 0; c < bp.nodes; ++c) {
      if (!in_share(static_cast<uint64_t>(c), options)) continue;
      b->clients_.push_back(std::make_unique<services::StorageClient>(
          env, process.host(), volume_backend_of(process, plan),
          services::StorageClientOptions{.name = options.name + ".block" + std::to_string(c)}));
      services::BlockVolumeSpec vs;
      vs.image = plan.volume_images->files()[static_cast<size_t>(c)].path;
      vs.size_bytes = bp.spec.block.volume_bytes;
      Result<std::unique_ptr<services::BlockVolume>> vol =
          services::BlockVolume::open(env, *b->clients_.back(), *layout, vs);
      if (!vol.ok()) return vol.status();
      b->volumes_.push_back(std::move(vol).value());
    }
    if (b->volumes_.empty()) return std::unique_ptr<BesideBlock>();
    std::vector<services::BlockVolume*> vols;
    for (auto& v : b->volumes_) vols.push_back(v.get());
    b->driver_ = std::make_unique<sim::BlockWorkloadDriver>(
        env, bp.spec.block, bp.boot, vols, std::vector<HostId>(vols.size(), process.host()),
        plan.shuffle_seed);
    b->driver_->carry_data(plan.content_seed);
    return b;
  }

  void start(double origin_s) { driver_->start(TaskOptions{.daemon = true}, origin_s); }

  // After the training read: the figures up to `end_s` (its end), as the report's "block"
  // section (the simulator's keys: the driver's summary, `workload`, `name`, `latency_ms`);
  // the reads it verified and the bytes its writes carried go into `counts`.
  Result<nlohmann::json> finish(RealEnv& env, HostId host, const std::string& name, double end_s,
                                Counts& counts) {
    if (Status s = driver_->first_error(); !s.ok()) return s;
    env.spawn(host, name + ".block.collect", [&] { driver_->collect(end_s); });  // Env locks
    if (Status s = env.run(); !s.ok()) return s;
    const sim::BlockPlan& bp = *plan_.plan.block_volumes;
    nlohmann::json j = driver_->summary();
    j["workload"] = bp.boot ? "boot_storm" : "block";
    j["name"] = bp.spec.name;
    j["latency_ms"] = driver_->latency_ms();
    if (options_.latency_samples) j["latency_samples_s"] = samples_of(*driver_);
    counts.reads_verified += driver_->reads_verified();
    counts.bytes_verified += driver_->bytes_verified();
    counts.bytes_written += driver_->writes_carried() * bp.spec.block.block_bytes;
    return j;
  }

 private:
  BesideBlock(const BenchPlan& plan, const BenchOptions& options)
      : plan_(plan), options_(options) {}
  const BenchPlan& plan_;
  const BenchOptions& options_;
  std::vector<std::unique_ptr<services::StorageClient>> clients_;
  std::vector<std::unique_ptr<services::BlockVolume>> volumes_;
  std::unique_ptr<sim::BlockWorkloadDriver> driver_;
};

Result<nlohmann::json> run_training(ClusterProcess& process, const BenchPlan& plan,
                                    const BenchOptions& options, nlohmann::json report) {
  RealEnv& env = process.env();
  const HostId host = process.host();
  const sim::ClusterPlan& p = plan.plan;
  Counts counts;
  std::vector<std::unique_ptr<services::StorageClient>> clients;
  std::map<int, services::StorageClient*> client_of_node;
  std::vector<std::unique_ptr<services::GpuConsumer>> gpus;
  for (size_t c = 0; c < p.loaders.size(); ++c) {
    if (!in_share(c, options)) continue;
    services::StorageClientOptions co = p.clients[c].options;
    co.name = options.name + ".c" + std::to_string(c);
    clients.push_back(
        std::make_unique<services::StorageClient>(env, host, backend_of(process, plan), co));
    client_of_node[static_cast<int>(c)] = clients.back().get();
    int k = 0;
    for (services::GpuConsumerOptions go : p.loaders[c]) {
      go.name = co.name + ".gpu" + std::to_string(k++);
      go.shuffle_seed = plan.shuffle_seed;
      go.verify = [&counts, seed = plan.content_seed](const services::DatasetFile& f,
                                                      std::span<const std::byte> data) {
        return counts.verify(seed, f, data);
      };
      gpus.push_back(
          std::make_unique<services::GpuConsumer>(env, host, *clients.back(), *plan.dataset, go));
    }
  }
  if (gpus.empty()) {
    return Status::invalid_argument("share " + std::to_string(options.share_index) + " of " +
                                    std::to_string(options.share_count) +
                                    " holds no client node of the scenario's " +
                                    std::to_string(p.loaders.size()));
  }
  std::optional<AsyncCheckpointRanks> checkpoint;
  if (p.async_checkpoint) {
    checkpoint.emplace(plan, options, client_of_node, counts);
    checkpoint->start(env, host);
  }
  std::unique_ptr<BesideBlock> block;
  if (p.block_volumes && !p.block) {
    Result<std::unique_ptr<BesideBlock>> opened = BesideBlock::open(process, plan, options);
    if (!opened.ok()) return opened.status();
    block = std::move(opened).value();
    if (block) block->start(env.now_s());
  }
  for (auto& g : gpus) g->start();
  if (Status s = env.run(); !s.ok()) return s;
  const double read_end_s = env.now_s();
  if (checkpoint) {
    if (Status s = checkpoint->verify(env, host); !s.ok()) return s;
    std::lock_guard lock(counts.mu);
    if (!counts.first_error.ok()) return counts.first_error;
  }
  double au_sum = 0, au_min = 1, au_max = 0, start = 1e300, end = 0;
  uint64_t bytes = 0, files = 0;
  sim::LatencyRecorder latencies;
  nlohmann::json per_gpu = nlohmann::json::array();
  for (auto& g : gpus) {
    if (!g->status().ok()) return g->status();
    const services::ConsumerMetrics& m = g->metrics();
    au_sum += m.au;
    au_min = std::min(au_min, m.au);
    au_max = std::max(au_max, m.au);
    start = std::min(start, m.start_s);
    end = std::max(end, m.end_s);
    bytes += m.bytes_read;
    files += m.files_read;
    for (double l : m.file_read_latency_s) latencies.add(l);
    per_gpu.push_back(m.au);
  }
  const double elapsed = std::max(end - start, 1e-9);
  const int epochs = p.training.epochs;
  report["summary"] = {
      {"workload", "training_read"},
      {"accelerators", gpus.size()},
      {"steps_per_epoch", gpus.front()->steps_per_epoch()},
      {"epochs", epochs},
      {"run_seconds", elapsed},
      {"epoch_seconds", elapsed / std::max(1, epochs)},
      {"bytes_read", bytes},
      {"files_read", files},
      {"read_gibps_mean", static_cast<double>(bytes) / elapsed / kGiB},
      {"accelerator_utilization",
       {{"mean", au_sum / static_cast<double>(gpus.size())}, {"min", au_min}, {"max", au_max}}}};
  report["accelerators"] = {{"utilization", per_gpu}};
  report["latency_ms"] = {{"read",
                           {{"p50", latencies.percentile(50) * 1e3},
                            {"p99", latencies.percentile(99) * 1e3},
                            {"max", latencies.max() * 1e3}}}};
  if (options.latency_samples) report["latency_samples_s"] = {{"read", latencies.samples()}};
  if (checkpoint) report["checkpoint"] = checkpoint->to_json();
  if (block) {
    Result<nlohmann::json> b = block->finish(env, host, options.name, read_end_s, counts);
    if (!b.ok()) return b.status();
    report["block"] = std::move(b).value();
  }
  report["carry_data"] = counts.to_json();
  return report;
}

// A block or boot_storm workload: each client node of the share opens its image (filled
// before) as an RBD volume and the simulator's BlockWorkloadDriver issues its I/O, every
// write carrying the image's content and every read compared with it.
Result<nlohmann::json> run_block(ClusterProcess& process, const BenchPlan& plan,
                                 const BenchOptions& options, nlohmann::json report) {
  RealEnv& env = process.env();
  const HostId host = process.host();
  const sim::ClusterPlan& p = plan.plan;
  const sim::BlockPlan& bp = *p.block_volumes;
  const models::BlockWorkload& b = bp.spec.block;
  Result<layout::RbdLayout> layout = layout::RbdLayout::create(p.storage.layout);
  if (!layout.ok()) return layout.status();
  std::vector<std::unique_ptr<services::StorageClient>> clients;
  std::vector<std::unique_ptr<services::BlockVolume>> volumes;
  std::vector<services::BlockVolume*> vols;
  for (const sim::ClientPlan& c : p.clients) {
    if (!in_share(static_cast<uint64_t>(c.node), options)) continue;
    services::StorageClientOptions co = c.options;
    co.name = options.name + ".c" + std::to_string(c.node);
    clients.push_back(
        std::make_unique<services::StorageClient>(env, host, backend_of(process, plan), co));
    services::BlockVolumeSpec vs;
    vs.image = plan.dataset->files()[static_cast<size_t>(c.node)].path;
    vs.size_bytes = b.volume_bytes;
    Result<std::unique_ptr<services::BlockVolume>> vol =
        services::BlockVolume::open(env, *clients.back(), *layout, vs);
    if (!vol.ok()) return vol.status();
    volumes.push_back(std::move(vol).value());
    vols.push_back(volumes.back().get());
  }
  if (vols.empty()) {
    return Status::invalid_argument("share " + std::to_string(options.share_index) + " of " +
                                    std::to_string(options.share_count) +
                                    " holds no client node of the scenario's " +
                                    std::to_string(p.clients.size()));
  }
  sim::BlockWorkloadDriver driver(env, b, bp.boot, vols, std::vector<HostId>(vols.size(), host),
                                  plan.shuffle_seed);
  driver.carry_data(plan.content_seed);
  driver.start({}, env.now_s());
  if (Status s = env.run(); !s.ok()) return s;
  if (Status s = driver.first_error(); !s.ok()) return s;
  // The volumes' counters are read under their Env locks: from a task.
  env.spawn(host, options.name + ".collect", [&] { driver.collect(env.now_s()); });
  if (Status s = env.run(); !s.ok()) return s;
  report["summary"] = driver.summary();
  report["summary"]["workload"] = bp.boot ? "boot_storm" : "block";
  report["latency_ms"] = driver.latency_ms();
  if (options.latency_samples) report["latency_samples_s"] = samples_of(driver);
  report["carry_data"] = {{"files_written", 0},
                          {"bytes_written", driver.writes_carried() * b.block_bytes},
                          {"reads_verified", driver.reads_verified()},
                          {"bytes_verified", driver.bytes_verified()},
                          {"mismatches", 0}};
  return report;
}

Result<nlohmann::json> run_checkpoint(ClusterProcess& process, const BenchPlan& plan,
                                      const BenchOptions& options, nlohmann::json report) {
  if (options.share_count != 1) {
    return Status::invalid_argument(
        "a checkpoint run takes one granary-bench process (its ranks meet between phases), "
        "found a share of " +
        std::to_string(options.share_count));
  }
  RealEnv& env = process.env();
  const HostId host = process.host();
  const sim::ClusterPlan& p = plan.plan;
  const models::CheckpointWorkload& ck = p.run.workloads[0].checkpoint;
  const int ranks = p.checkpoint_ranks.ranks;
  const int per_node = p.run.cluster.clients.accelerators_per_node;
  const int phases = ck.checkpoints * (ck.read_back ? 2 : 1);
  Counts counts;
  std::vector<std::unique_ptr<services::StorageClient>> clients;
  for (int n = 0; n < p.checkpoint_ranks.nodes; ++n) {
    services::StorageClientOptions co = p.clients[static_cast<size_t>(n)].options;
    co.name = options.name + ".c" + std::to_string(n);
    clients.push_back(
        std::make_unique<services::StorageClient>(env, host, backend_of(process, plan), co));
  }
  std::vector<std::unique_ptr<services::PhaseBarrier>> barriers;
  for (int i = 0; i < phases; ++i) {
    barriers.push_back(std::make_unique<services::PhaseBarrier>(env, ranks));
  }
  std::unique_ptr<BesideBlock> block;  // block I/O beside the checkpoint
  if (p.block_volumes && !p.block) {
    Result<std::unique_ptr<BesideBlock>> opened = BesideBlock::open(process, plan, options);
    if (!opened.ok()) return opened.status();
    block = std::move(opened).value();
    if (block) block->start(env.now_s());
  }
  std::vector<double> phase_start(static_cast<size_t>(phases), 1e300);
  std::vector<double> phase_end(static_cast<size_t>(phases), 0);
  std::mutex times_mu;
  const auto& files = plan.dataset->files();
  for (int rank = 0; rank < ranks; ++rank) {
    env.spawn(host, options.name + ".rank" + std::to_string(rank), [&, rank] {
      services::StorageClient& client = *clients[static_cast<size_t>(rank / per_node)];
      for (int phase = 0; phase < phases; ++phase) {
        barriers[static_cast<size_t>(phase)]->arrive_and_wait();
        const bool writing = phase < ck.checkpoints;
        const int c = writing ? phase : phase - ck.checkpoints;
        const services::DatasetFile& f = files[static_cast<size_t>(c) * ranks + rank];
        const double t0 = env.now_s();
        Status s;
        if (writing) {
          auto w = client.write_file(f.path,
                                     sim::content_payload(plan.content_seed, f.path, f.size_bytes),
                                     {.fsync = ck.fsync});
          s = w.status();
          if (s.ok()) {
            ++counts.files_written;
            counts.bytes_written += f.size_bytes;
          }
        } else {
          Buffer data;
          auto r = client.read_file(f.path, f.size_bytes, &data);
          s = r.ok() ? counts.verify(plan.content_seed, f, data.span()) : r.status();
          if (Status closed = client.close_file(f.path); s.ok()) s = closed;  // pfs: the handle
        }
        if (!s.ok()) counts.fail(s);
        std::lock_guard lock(times_mu);
        phase_start[static_cast<size_t>(phase)] =
            std::min(phase_start[static_cast<size_t>(phase)], t0);
        phase_end[static_cast<size_t>(phase)] =
            std::max(phase_end[static_cast<size_t>(phase)], env.now_s());
      }
    });
  }
  if (Status s = env.run(); !s.ok()) return s;
  {
    std::lock_guard lock(counts.mu);
    if (!counts.first_error.ok()) return counts.first_error;
  }
  double write_s = 0, read_s = 0;
  for (int i = 0; i < phases; ++i) {
    const double d = phase_end[static_cast<size_t>(i)] - phase_start[static_cast<size_t>(i)];
    (i < ck.checkpoints ? write_s : read_s) += d;
  }
  write_s /= ck.checkpoints;
  if (ck.read_back) read_s /= ck.checkpoints;
  if (block) {
    Result<nlohmann::json> b = block->finish(env, host, options.name, env.now_s(), counts);
    if (!b.ok()) return b.status();
    report["block"] = std::move(b).value();
  }
  const uint64_t checkpoint_bytes = plan.dataset->total_bytes() / ck.checkpoints;
  report["summary"] = {
      {"workload", "checkpoint"},
      {"ranks", ranks},
      {"checkpoints", ck.checkpoints},
      {"fsync", ck.fsync},
      {"checkpoint_bytes", checkpoint_bytes},
      {"write_seconds", write_s},
      {"write_gibps", static_cast<double>(checkpoint_bytes) / std::max(write_s, 1e-9) / kGiB}};
  if (ck.read_back) {
    report["summary"]["read_seconds"] = read_s;
    report["summary"]["read_gibps"] =
        static_cast<double>(checkpoint_bytes) / std::max(read_s, 1e-9) / kGiB;
  }
  report["carry_data"] = counts.to_json();
  return report;
}

// The scenario's design against the cluster file's: a rados pool with the same redundancy and
// pg_num, or a pfs with the same striping and one MDS.
Status check_design(const models::Scenario& s, const ClusterConfig& config) {
  auto refuse = [&](const std::string& key, const std::string& why) {
    return Status::invalid_argument(s.source_path + ": " + key + ": " + why);
  };
  if (config.pfs) {
    if (s.storage.design != models::StorageDesign::kPfs) {
      return refuse("storage.design",
                    "the cluster file is a pfs (granary-mds and OSTs): the scenario must be "
                    "design 'pfs'");
    }
    const models::PfsSpec& f = s.storage.pfs;
    auto describe = [](int count, uint64_t size) {
      return "stripe_count " + std::to_string(count) + ", stripe_size " + std::to_string(size);
    };
    if (f.stripe_count != config.pfs->stripe_count ||
        f.stripe_size_bytes != config.pfs->stripe_size_bytes) {
      return refuse("storage.pfs",
                    describe(f.stripe_count, f.stripe_size_bytes) +
                        ": must be the cluster file's (" +
                        describe(config.pfs->stripe_count, config.pfs->stripe_size_bytes) +
                        "): granary-mds lays files out by it");
    }
    if (f.mds_count != 1) {
      return refuse("storage.pfs.mds_count",
                    "a real pfs runs one granary-mds, found " + std::to_string(f.mds_count));
    }
    return Status::ok_status();
  }
  if (s.storage.design != models::StorageDesign::kRados) {
    return refuse("storage.design",
                  "the cluster file is a RADOS pool (granary-osd daemons): the scenario must be "
                  "design 'rados'");
  }
  const models::RadosSpec& r = s.storage.rados;
  auto describe = [](int replicas, int k, int m, uint32_t pg_num) {
    return (k > 0 ? "erasure k " + std::to_string(k) + " m " + std::to_string(m)
                  : "replicas " + std::to_string(replicas)) +
           ", pg_num " + std::to_string(pg_num);
  };
  if (r.replicas != config.replicas || r.ec_k != config.ec.k || r.ec_m != config.ec.m ||
      r.pg_num != config.pg_num) {
    return refuse("storage.rados",
                  describe(r.replicas, r.ec_k, r.ec_m, r.pg_num) +
                      ": must be the cluster file's pool (" +
                      describe(config.replicas, config.ec.k, config.ec.m, config.pg_num) +
                      "): the daemons place by that pool");
  }
  return Status::ok_status();
}

}  // namespace

Result<BenchPlan> plan_bench(const std::string& scenario_path, const ClusterConfig& config) {
  Result<models::Scenario> loaded = models::load_scenario(scenario_path);
  if (!loaded.ok()) return loaded.status();
  models::Scenario s = std::move(loaded).value();
  const std::string& f = scenario_path;
  auto refuse = [&](const std::string& key, const std::string& why) {
    return Status::invalid_argument(f + ": " + key + ": " + why);
  };
  if (Status c = check_design(s, config); !c.ok()) return c;
  if (models::has_failures(s)) {
    return refuse("failures",
                  "granary-bench runs the workload only; a failure timeline is injected by "
                  "`granary real run` or by hand (kill -9 a daemon)");
  }
  using K = models::WorkloadKind;
  const K kind = s.workloads[0].kind;
  if ((kind == K::kBlock || kind == K::kBootStorm) && config.pfs) {
    return refuse("workloads[0]", "block I/O runs on RBD images: a rados pool, not a pfs");
  }
  if ((kind == K::kBlock || kind == K::kBootStorm) && s.workloads[0].block.clone) {
    return refuse("workloads[0].volume.clone",
                  "clones are not run by granary-bench (a copy-up would merge the parent's "
                  "bytes with the write's)");
  }
  // A real run: every client node, request by request; every byte carried.
  s.simulation.fidelity = models::Fidelity::kRequest;
  s.simulation.carry_data.reset();
  Result<sim::ClusterPlan> plan = sim::build_cluster_plan(s, s.seed);
  if (!plan.ok()) return plan.status();
  if (plan->block_volumes && !plan->block && plan->block_volumes->spec.block.clone) {
    return refuse("workloads[1].volume.clone",
                  "clones are not run by granary-bench (a copy-up would merge the parent's "
                  "bytes with the write's)");
  }
  if (plan->block_volumes && !plan->block) {
    if (Result<layout::RbdLayout> l = layout::RbdLayout::create(plan->block_volumes->layout);
        !l.ok()) {
      return refuse("workloads[1].volume", l.status().message());
    }
  }
  if (Result<layout::RbdLayout> l = layout::RbdLayout::create(plan->storage.layout);
      !config.pfs && !l.ok()) {
    return refuse("storage.rados.object_size_mib", l.status().message());
  }
  BenchPlan b;
  b.plan = std::move(plan).value();
  Random rng(b.plan.seed);
  Result<services::Dataset> dataset = services::Dataset::create(b.plan.dataset, rng);
  if (!dataset.ok()) return dataset.status();
  b.dataset = std::make_shared<const services::Dataset>(std::move(dataset).value());
  b.shuffle_seed = rng.next_u64();
  b.content_seed = b.plan.seed;
  if (b.plan.block_volumes && !b.plan.block) {
    Result<services::Dataset> images = services::Dataset::create(b.plan.block_volumes->images, rng);
    if (!images.ok()) return images.status();
    b.volume_images = std::make_shared<const services::Dataset>(std::move(images).value());
  }
  return b;
}

Result<nlohmann::json> bench_fill(ClusterProcess& process, const BenchPlan& plan,
                                  const BenchOptions& options) {
  const bool checkpoint = plan.plan.kind == models::WorkloadKind::kCheckpoint;
  if (checkpoint && !plan.volume_images) {
    return Status::invalid_argument(plan.plan.scenario.source_path +
                                    ": workloads[0]: a checkpoint writes its own files: nothing "
                                    "to fill");
  }
  Counts counts;
  const double t0 = process.env().now_s();
  // Each file written with its known content.
  auto write = [&](services::StorageClient& client, const services::DatasetFile& f) {
    auto w =
        client.write_file(f.path, sim::content_payload(plan.content_seed, f.path, f.size_bytes));
    if (!w.ok()) return w.status();
    ++counts.files_written;
    counts.bytes_written += f.size_bytes;
    return Status::ok_status();
  };
  // A checkpoint's files are its own; block I/O beside the main workload has images to fill.
  Status s =
      checkpoint ? Status::ok_status() : for_each_file(process, plan, options, counts, write);
  if (s.ok() && plan.volume_images) {
    const services::StorageBackend volumes = volume_backend_of(process, plan);
    s = for_each_file(process, plan, options, counts, write, plan.volume_images.get(), &volumes);
  }
  if (!s.ok()) return s;
  nlohmann::json report = report_head(plan, options, "fill");
  report["summary"] = {{"seconds", process.env().now_s() - t0}};
  report["carry_data"] = counts.to_json();
  return report;
}

// The CPU time this process has used, user and system, seconds.
static double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

Result<nlohmann::json> bench_run(ClusterProcess& process, const BenchPlan& plan,
                                 const BenchOptions& options) {
  nlohmann::json report = report_head(plan, options, "run");
  const double cpu0 = process_cpu_s();
  Result<nlohmann::json> r = plan.plan.kind == models::WorkloadKind::kTrainingRead
                                 ? run_training(process, plan, options, std::move(report))
                             : plan.plan.block
                                 ? run_block(process, plan, options, std::move(report))
                                 : run_checkpoint(process, plan, options, std::move(report));
  if (r.ok()) (*r)["client_cpu_s"] = process_cpu_s() - cpu0;
  return r;
}

Result<nlohmann::json> bench_verify(ClusterProcess& process, const BenchPlan& plan,
                                    const BenchOptions& options) {
  Counts counts;
  Status s = for_each_file(process, plan, options, counts,
                           [&](services::StorageClient& client, const services::DatasetFile& f) {
                             Buffer data;
                             auto r = client.read_file(f.path, f.size_bytes, &data);
                             if (!r.ok()) {
                               return Status::io_error(f.path + ": " + r.status().to_string());
                             }
                             if (Status closed = client.close_file(f.path); !closed.ok()) {
                               return closed;  // pfs: the handle the read opened
                             }
                             return counts.verify(plan.content_seed, f, data.span());
                           });
  if (!s.ok()) return s;
  nlohmann::json report = report_head(plan, options, "verify");
  report["carry_data"] = counts.to_json();
  return report;
}

}  // namespace granary::realmode

// The training-read driver (workloads.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/services/file_mapping.h"
#include "sim/report_writer.h"
#include "sim/sampler.h"
#include "sim/workloads/workloads.h"

namespace granary::sim {

namespace sg4 = simgrid::s4u;
using models::Scenario;

namespace {

// Simulated seconds without a completed read after which a run without failures is stalled.
constexpr double kStallS = 60;

// The bytes and drive reads one epoch puts on each simulated drive: the read plans of up to
// 20,000 files of the dataset (the first ones: files are placed independently of their order),
// exactly as the clients will send them.
models::PlacementLoad placement_load(const services::Dataset& dataset,
                                     const services::StorageBackend& backend, const Scenario& s,
                                     int repeat) {
  models::PlacementLoad load;
  load.drives_per_server = s.cluster.storage.drives_per_node;
  load.repeat = repeat;
  const size_t drives =
      static_cast<size_t>(s.cluster.storage.count) * s.cluster.storage.drives_per_node;
  load.drive_bytes.assign(drives, 0.0);
  load.drive_ops.assign(drives, 0.0);
  auto id_of = [](const std::string& endpoint) -> long {
    const size_t dot = endpoint.find('.');
    return dot == std::string::npos ? -1 : std::strtol(endpoint.c_str() + dot + 1, nullptr, 10);
  };
  auto put = [&](long d, double bytes) {
    if (d < 0 || static_cast<size_t>(d) >= drives) return;
    load.drive_bytes[static_cast<size_t>(d)] += bytes;
    load.drive_ops[static_cast<size_t>(d)] += 1;
  };
  const size_t n = std::min<size_t>(dataset.files().size(), 20000);
  for (size_t i = 0; i < n; ++i) {
    const services::DatasetFile& f = dataset.files()[i];
    if (const auto* r = std::get_if<services::RadosBackend>(&backend)) {
      const bool ec = r->ec.k > 0;
      auto reads = services::rados_reads(r->layout, *r->placement, f.path, 0, f.size_bytes, ec);
      if (!reads.ok()) continue;
      for (const auto& read : *reads) {
        if (!ec) {
          put(id_of(read.endpoint), static_cast<double>(read.length_bytes));
          continue;
        }
        // The primary gathers the k data chunks: one read of 1/k on each data position.
        for (int j = 0; j < r->ec.k && j < static_cast<int>(read.group.size()); ++j) {
          put(id_of(read.group[j]), static_cast<double>(read.length_bytes) / r->ec.k);
        }
      }
    } else if (const auto* p = std::get_if<services::PfsBackend>(&backend)) {
      auto it = p->layouts->find(f.path);
      if (it == p->layouts->end()) continue;
      auto reads = services::pfs_reads(it->second, f.path, 0, f.size_bytes, p->max_request_bytes);
      if (!reads.ok()) continue;
      for (const auto& read : *reads)
        put(id_of(read.endpoint), static_cast<double>(read.length_bytes));
    } else if (const auto* nf = std::get_if<services::NfsBackend>(&backend)) {
      // The file lives on its head, striped over the head's drives. (Design local: every node
      // has it, and the node that reads it is any one, so each node's drives carry an even
      // share.)
      const int per = s.cluster.storage.drives_per_node;
      if (s.cluster.storage.in_client_nodes) {
        for (size_t d = 0; d < drives; ++d) {
          load.drive_bytes[d] += static_cast<double>(f.size_bytes) / static_cast<double>(drives);
          load.drive_ops[d] +=
              std::ceil(static_cast<double>(f.size_bytes) / static_cast<double>(nf->rsize_bytes)) /
              static_cast<double>(drives);
        }
        continue;
      }
      const int head = services::nfs_head_of(f.path, nf->heads);
      const double requests =
          std::ceil(static_cast<double>(f.size_bytes) / static_cast<double>(nf->rsize_bytes));
      for (int d = 0; d < per; ++d) {
        const size_t drive = static_cast<size_t>(head) * per + d;
        if (drive >= drives) continue;
        load.drive_bytes[drive] += static_cast<double>(f.size_bytes) / per;
        load.drive_ops[drive] += requests / per;
      }
    }
  }
  return load;
}

// A training read: the loaders on every simulated client node, a checkpoint beside them, and
// the monitor that samples the run, watches for a stall and stops it at a steady state (the
// tasks' lambdas capture the run: it outlives the simulation).
class TrainingRun {
 public:
  TrainingRun(const ClusterPlan& plan, RunContext& ctx)
      : plan_(plan),
        ctx_(ctx),
        w_(plan.training),
        total_gpus_(plan.plan.clients * plan.sim.cluster.clients.accelerators_per_node),
        links_(plan.topology, ctx.platform, ctx.env, ctx.world.mds) {}

  Result<nlohmann::json> run();

 private:
  Status start_loaders();
  void start_async_checkpoint();
  void spawn_monitor();
  // One tick of the monitor at `now`; true when the run is over (or stopped).
  bool tick(double now);
  // The steady step rate of all loaders when they have reached a steady state (else 0).
  double steady_rate(double now, double bytes) const;
  Status measure();
  void extrapolate(int64_t total_steps);

  const ClusterPlan& plan_;
  RunContext& ctx_;
  const models::TrainingWorkload& w_;
  const int total_gpus_;
  int64_t total_steps_ = 0;
  LinkSampler links_;
  ThroughputSeries series_{1};
  std::vector<size_t> sink_links_;
  AsyncCheckpoint async_;
  TrainingMeasurements m_;
  // The monitor's state: the sinks' links' usage at the last tick, and what the stall check
  // watches.
  double last_flowing_ = 0;
  double last_progress_ = 0, last_progress_s_ = 0;
  Status stalled_;
};

// The client nodes' storage clients and their accelerators' loaders, started. The client's
// data lands in its sink (GPU memory with GPUDirect Storage, host memory otherwise): the loader
// and client run there so replies cross the memory or PCIe link.
Status TrainingRun::start_loaders() {
  SimEnv& env = ctx_.env;
  World& world = ctx_.world;
  const uint64_t shuffle_seed = env.random().next_u64();
  world.clients.resize(plan_.plan.clients);
  for (int c = 0; c < plan_.plan.clients; ++c) {
    ClientNode& node = world.clients[c];
    node.host = plan_.topology.client_sinks[c];
    node.client = std::make_unique<services::StorageClient>(
        env, node.host, backend_of_client(world.backend_on(node.host), plan_.sim, c),
        plan_.clients[c].options);
    for (services::GpuConsumerOptions go : plan_.loaders[c]) {
      go.shuffle_seed = shuffle_seed;
      if (CarriedData* carried = world.carried.get()) {
        go.verify = [carried](const services::DatasetFile& f, std::span<const std::byte> data) {
          return carried->verify(f.path, f.size_bytes, data);
        };
      }
      node.gpus.push_back(std::make_unique<services::GpuConsumer>(env, node.host, *node.client,
                                                                  *world.dataset, go));
    }
  }
  m_.steps_per_epoch = world.clients.front().gpus.front()->steps_per_epoch();
  if (m_.steps_per_epoch < 1) {
    const Scenario& in = plan_.run;
    return Status::invalid_argument(
        in.source_path + ": workloads[0]: " + std::to_string(in.workloads[0].training.files) +
        " files give each of the " +
        std::to_string(in.cluster.clients.count * in.cluster.clients.accelerators_per_node) +
        " accelerators less than one batch");
  }
  total_steps_ = m_.steps_per_epoch * w_.epochs;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) gpu->start();
  }
  return Status();
}

// A checkpoint beside the training read: its ranks (1/k of them in a slice, one per
// accelerator from node 0) write their shares from start_s on, each checkpoint after the
// last, while the loaders keep reading (asynchronous checkpointing). Daemons: the run ends
// with the training read.
void TrainingRun::start_async_checkpoint() {
  if (!plan_.async_checkpoint) return;
  const models::CheckpointWorkload& c = plan_.async_checkpoint->spec.checkpoint;
  const int accel = plan_.sim.cluster.clients.accelerators_per_node;
  async_.ranks = plan_.async_checkpoint->ranks;
  async_.rank_bytes = plan_.async_checkpoint->rank_bytes;
  async_.write_s.assign(c.checkpoints, std::vector<double>(async_.ranks, -1));
  for (int rank = 0; rank < async_.ranks; ++rank) {
    const int node = rank / accel;
    ctx_.env.spawn(
        ctx_.world.clients[node].host, "ckpt.rank" + std::to_string(rank),
        [this, rank, node, c] {
          SimEnv& env = ctx_.env;
          env.sleep_s(c.start_s);
          for (int i = 0; i < c.checkpoints; ++i) {
            const double t0 = env.now_s();
            auto wr = ctx_.world.clients[node].client->write_file(
                "checkpoint" + std::to_string(i) + "/rank" + std::to_string(rank),
                async_.rank_bytes, {.fsync = c.fsync});
            if (!wr.ok()) {
              if (async_.error.ok()) async_.error = wr.status();
              return;
            }
            async_.write_s[i][rank] = env.now_s() - t0;
            async_.end_s = std::max(async_.end_s, env.now_s());
          }
        },
        TaskOptions{.daemon = true});
  }
}

double TrainingRun::steady_rate(double now, double bytes) const {
  // The window must be long enough not to measure the loaders' prefetch queues draining
  // instead of the storage feeding them: at least 1 s since the warm-up (short steps:
  // cosmoflow was once declared steady after 0.04 s), and 3 steps done by every loader.
  const double min_window_s = 1.0;
  const double warm_s = m_.warm_at_s;
  if (warm_s < 0 || now - warm_s < min_window_s) return 0;
  std::vector<const std::vector<double>*> ends;
  for (auto& node : ctx_.world.clients) {
    for (auto& gpu : node.gpus) ends.push_back(&gpu->metrics().step_end_s);
  }
  const std::optional<StepRates> r = step_rates(ends, warm_s);
  if (!r) return 0;
  // And conservation: in a steady state the accelerators cannot take more bytes than
  // storage delivers. Many readers on few drives finish their files in waves; between
  // waves the accelerators eat what a wave brought at a steady-looking step rate
  // above the storage's (a Micron single-drive run: 14.7 GiB/s "epoch" from a
  // 13.0 GiB/s drive until this check).
  const double consumed = r->whole * w_.batch_size * m_.mean_sample_bytes;
  const double delivered = (bytes - m_.bytes_at_warm) / (now - warm_s);
  const double tolerance = plan_.sim.simulation.steady_state_tolerance * 5;
  if (r->first_half > 0 && std::abs(r->second_half - r->first_half) / r->first_half <= tolerance &&
      consumed <= delivered * (1 + tolerance)) {
    return r->whole;
  }
  return 0;
}

bool TrainingRun::tick(double now) {
  World& world = ctx_.world;
  const double interval_s = m_.interval_s;
  const LinkSampler::DriveBytes drives = links_.sample(interval_s);
  m_.drive_write_bytes_per_s.push_back(drives.write / interval_s);
  double bytes = 0, au_sum = 0, steps_done = 0;
  // Bytes delivered, counted reply by reply (a file's bytes would arrive in one lump
  // when it completes).
  for (auto& node : world.clients) bytes += static_cast<double>(node.client->bytes_received());
  int64_t min_steps = total_steps_;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) {
      const auto& m = gpu->metrics();
      au_sum += partial_au(m, w_.compute_s_per_step, now);
      min_steps = std::min(min_steps, m.steps);
      steps_done += static_cast<double>(m.steps);
    }
  }
  // The read rate as the bytes flow: the sinks' links' usage, averaged between this tick and
  // the last (the trapezoid rule: never above what the links carry; a reply counted whole
  // when its last byte lands would put a 4 MiB burst into one interval, up to 1.85x the
  // bound at small intervals: issue 10).
  double flowing = 0;
  for (size_t i : sink_links_) flowing += ctx_.platform.forward[i]->get_usage();
  series_.add(now - interval_s / 2, (flowing + last_flowing_) / 2 * interval_s);
  last_flowing_ = flowing;
  m_.au_series.push_back(au_sum / total_gpus_);
  if (ctx_.options.on_progress) {
    ctx_.options.on_progress(now,
                             static_cast<double>(min_steps) / static_cast<double>(total_steps_));
  }
  bool all_done = true;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) all_done = all_done && gpu->metrics().end_s > 0;
  }
  bool stop = !all_done && now >= plan_.sim.simulation.max_simulated_s;
  // Without failures nothing may stop every read and every step for a minute: such a
  // stall is a Granary defect (a deadlock among the services), and its report would show
  // numbers that are silently wrong. The run fails instead.
  if (bytes + steps_done > last_progress_ || all_done) {
    last_progress_ = bytes + steps_done;
    last_progress_s_ = now;
  } else if (!models::has_failures(plan_.sim) && now - last_progress_s_ >= kStallS) {
    stalled_ = Status::io_error(
        plan_.scenario.source_path + ": the run stalled: no read or step completed for " +
        std::to_string(static_cast<int>(kStallS)) + " s of simulated time (from " +
        std::to_string(last_progress_s_) +
        " s) with the loaders not done; this is a Granary defect, please report it with "
        "the scenario and seed " +
        std::to_string(plan_.seed));
    stop = true;
  }
  // Steady: once every loader is past its first two steps (the start-up), each loader's
  // step rate over its steps since then, first half against second half,
  // summed over the loaders, within 5x the tolerance.
  if (m_.warm_at_s < 0) {
    bool warm = true;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus) {
        warm = warm && static_cast<int>(gpu->metrics().step_end_s.size()) >= 2;
      }
    }
    if (warm) {
      m_.warm_at_s = now;
      m_.bytes_at_warm = bytes;
    }
  }
  // A checkpoint beside the training read must finish before a steady state counts.
  bool checkpoint_done = true;
  for (const auto& ck : async_.write_s) {
    for (double x : ck) checkpoint_done = checkpoint_done && x >= 0;
  }
  if (!all_done && plan_.plan.allow_early_stop && checkpoint_done) {
    if (const double r = steady_rate(now, bytes); r > 0) {
      stop = true;
      m_.steady_steps_per_s = r;
    }
  }
  if (!all_done && !stop) return false;
  // Read the clients' figures here: their locks are Env semaphores, usable only
  // from a task.
  for (auto& node : world.clients) m_.client_stats.push_back(node.client->stats());
  if (world.block_driver) world.block_driver->collect(now);
  if (stop) {
    m_.stopped_at_s = now;
    sg4::Actor::kill_all();
  }
  return true;
}

// The monitor: throughput series, progress, stall, steady state.
void TrainingRun::spawn_monitor() {
  m_.interval_s = std::max(0.02, std::min(0.5, w_.compute_s_per_step / 2));
  series_ = ThroughputSeries(m_.interval_s);
  // The links into the clients' sinks (host memory, or the GPUs with GPUDirect): every byte a
  // loader reads crosses one of them.
  for (size_t i = 0; i < plan_.topology.links.size(); ++i) {
    if (plan_.topology.links[i].role == models::LinkRole::kClientMemory) sink_links_.push_back(i);
  }
  const services::Dataset& dataset = *ctx_.world.dataset;
  m_.mean_sample_bytes = static_cast<double>(dataset.total_bytes()) /
                         (static_cast<double>(dataset.files().size()) * w_.samples_per_file);
  ctx_.env.spawn(plan_.topology.clients.front(), "monitor", [this] {
    for (;;) {
      ctx_.env.sleep_s(m_.interval_s);
      if (tick(ctx_.env.now_s())) break;
    }
    // Carried data: once the epochs have ended (not after a stop), a deep scrub of every PG.
    if (m_.stopped_at_s < 0) scrub_carried(ctx_.env, ctx_.world, plan_.topology.clients.front());
  });
}

// Extrapolates a steady state to the end of the epochs: the steps left at the steady step rate
// of all loaders; MLPerf's AU over that span.
void TrainingRun::extrapolate(int64_t total_steps) {
  double done_steps = 0, first_wait = 0;
  for (auto& node : ctx_.world.clients) {
    for (auto& gpu : node.gpus) {
      const auto& m = gpu->metrics();
      done_steps += static_cast<double>(m.steps);
      first_wait += m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front();
    }
  }
  first_wait /= total_gpus_;
  const double remaining = static_cast<double>(total_steps) * total_gpus_ - done_steps;
  const double total_s = m_.end_s + std::max(0.0, remaining) / m_.steady_steps_per_s;
  m_.epoch_s = total_s / w_.epochs;
  m_.extrapolated = true;
}

// What the loaders and clients measured, after the run.
Status TrainingRun::measure() {
  World& world = ctx_.world;
  m_.end_s = m_.stopped_at_s;
  if (m_.end_s < 0) {  // the epoch ended: the last loader's end
    m_.end_s = 0;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus) m_.end_s = std::max(m_.end_s, gpu->metrics().end_s);
    }
  }
  const double end_s = m_.end_s;
  Status first_error;
  for (const auto& cs : m_.client_stats) {
    for (double l : cs.file_latency_s) m_.file_latency.add(l);
    m_.simulated_requests += cs.requests;
  }
  for (auto& node : world.clients) m_.bytes += static_cast<double>(node.client->bytes_received());
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) {
      const auto& m = gpu->metrics();
      // A loader that failed fails the run, whenever it stopped (one refused at its start left
      // the monitor waiting for the time limit: issue 10). Loaders killed at a steady-state stop
      // keep an OK status.
      if (first_error.ok() && !gpu->status().ok()) first_error = gpu->status();
      m_.samples += m.steps * w_.batch_size;
      double au = m_.stopped_at_s >= 0 ? partial_au(m, w_.compute_s_per_step, end_s) : m.au;
      if (m_.stopped_at_s >= 0 && m_.steady_steps_per_s > 0 && m_.warm_at_s >= 0) {
        // This loader's own steady step period since the prefetch fill, carried to the end
        // of its steps: its extrapolated MLPerf AU.
        const auto& ends = m.step_end_s;
        const auto first = std::lower_bound(ends.begin(), ends.end(), m_.warm_at_s);
        const size_t n = static_cast<size_t>(ends.end() - first);
        if (n >= 2 && ends.back() > *first) {
          const double period = (ends.back() - *first) / static_cast<double>(n - 1);
          const double finish = ends.back() + period * static_cast<double>(total_steps_ - m.steps);
          // DLIO's AU: the first step's compute and its whole processing left out.
          const double first_step =
              (m.step_io_wait_s.empty() ? 0.0 : m.step_io_wait_s.front()) + w_.compute_s_per_step;
          const double compute = static_cast<double>(total_steps_ - 1) * w_.compute_s_per_step;
          au = std::min(1.0, compute / std::max(compute, finish - m.start_s - first_step));
        }
      }
      m_.aus.push_back(au);
      m_.epoch_s = std::max(m_.epoch_s, m.end_s / w_.epochs);
    }
  }
  if (m_.stopped_at_s >= 0 && m_.steady_steps_per_s > 0) extrapolate(total_steps_);
  if (!first_error.ok()) {
    return Status::invalid_argument(plan_.scenario.source_path +
                                    ": the run failed: " + first_error.message());
  }
  m_.read_bytes_per_s = series_.rates(end_s);
  // The series share one time axis: the read rate's intervals, the last one partial. The
  // monitor's cumulative AU has a figure per tick; one interval past its last tick gets the AU
  // at the end.
  const size_t n = m_.read_bytes_per_s.size();
  if (m_.au_series.size() < n) {
    double au_sum = 0;
    for (auto& node : world.clients) {
      for (auto& gpu : node.gpus)
        au_sum += partial_au(gpu->metrics(), w_.compute_s_per_step, end_s);
    }
    m_.au_series.resize(n, au_sum / total_gpus_);
  }
  m_.au_series.resize(n);
  m_.drive_write_bytes_per_s.resize(n, 0.0);
  std::vector<const std::vector<double>*> step_ends;
  for (auto& node : world.clients) {
    for (auto& gpu : node.gpus) step_ends.push_back(&gpu->metrics().step_end_s);
  }
  m_.au_windowed = windowed_au(step_ends, w_.compute_s_per_step, m_.interval_s, end_s);
  m_.resources = links_.resources();
  m_.utilization = links_.utilization();
  return Status();
}

Result<nlohmann::json> TrainingRun::run() {
  // How the (simulated) dataset lies on the drives, for the bounds as placed.
  m_.load =
      placement_load(*ctx_.world.dataset, ctx_.world.backend, plan_.sim, plan_.plan.storage_factor);
  if (Status st = start_loaders(); !st.ok()) return st;
  start_async_checkpoint();
  spawn_monitor();
  ctx_.engine.run();
  if (!async_.error.ok()) return async_.error;
  if (!stalled_.ok()) return stalled_;
  if (Status st = measure(); !st.ok()) return st;
  return training_report(plan_, ctx_.world, m_, async_);
}

}  // namespace

Result<nlohmann::json> run_training_read(const ClusterPlan& plan, RunContext& ctx) {
  TrainingRun run(plan, ctx);
  return run.run();
}

}  // namespace granary::sim

// The checkpoint driver (workloads.h).
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/services/phase_barrier.h"
#include "sim/report_writer.h"
#include "sim/sampler.h"
#include "sim/workloads/workloads.h"

namespace granary::sim {

namespace sg4 = simgrid::s4u;

namespace {

// A checkpoint run: its ranks' clients and barriers, what they measure, and the tasks (whose
// lambdas capture the run: it outlives the simulation).
class CheckpointRun {
 public:
  CheckpointRun(const ClusterPlan& plan, RunContext& ctx)
      : plan_(plan),
        ctx_(ctx),
        ck_(plan.run.workloads[0].checkpoint),
        sim_ranks_(plan.checkpoint_ranks.ranks),
        links_(plan.topology, ctx.platform, ctx.env, ctx.world.mds) {}

  Result<nlohmann::json> run();

 private:
  void spawn_ranks();
  void spawn_monitor();

  const ClusterPlan& plan_;
  RunContext& ctx_;
  const models::CheckpointWorkload& ck_;
  const int sim_ranks_;
  std::vector<std::unique_ptr<services::StorageClient>> clients_;  // [node]
  std::vector<std::unique_ptr<services::PhaseBarrier>> barriers_;
  std::vector<double> phase_end_;  // [phase]
  Status first_error_;
  int ranks_done_ = 0;
  LinkSampler links_;
  CheckpointMeasurements m_;
};

// Every simulated rank: for each checkpoint it writes its file (with fsync when the scenario
// asks), then reads each back (read_back), meeting the others between phases.
void CheckpointRun::spawn_ranks() {
  const int per_node = plan_.sim.cluster.clients.accelerators_per_node;
  for (int rank = 0; rank < sim_ranks_; ++rank) {
    const int node = rank / per_node;
    ctx_.env.spawn(
        plan_.topology.client_sinks[node], "rank" + std::to_string(rank), [this, rank, node] {
          SimEnv& env = ctx_.env;
          const int n_ck = ck_.checkpoints;
          const auto& files = ctx_.world.dataset->files();
          services::StorageClient& client = *clients_[node];
          auto fail = [&](const Status& st) {
            if (first_error_.ok()) first_error_ = st;
          };
          for (int phase = 0; phase < 2 * n_ck; ++phase) {
            barriers_[phase]->arrive_and_wait();
            const bool writing = phase < n_ck;
            if (!writing && !ck_.read_back) continue;
            const int c = writing ? phase : phase - n_ck;
            const auto& f = files[static_cast<size_t>(c) * sim_ranks_ + rank];
            const double t0 = env.now_s();
            CarriedData* carried = ctx_.world.carried.get();
            if (writing) {
              // Carried data: the file's content, made before the clock reads t0
              // (it costs no simulated time either way).
              auto w = carried ? client.write_file(
                                     f.path, content_payload(carried->seed(), f.path, f.size_bytes),
                                     {.fsync = ck_.fsync})
                               : client.write_file(f.path, f.size_bytes, {.fsync = ck_.fsync});
              if (!w.ok()) fail(w.status());
              if (w.ok() && carried) carried->wrote_file(f.size_bytes);
              m_.write_s[c][rank] = env.now_s() - t0;
            } else {
              Buffer data;
              auto rd = client.read_file(f.path, f.size_bytes, carried ? &data : nullptr);
              if (!rd.ok()) fail(rd.status());
              m_.read_s[c][rank] = env.now_s() - t0;
              if (rd.ok() && carried) {
                if (Status v = carried->verify(f.path, f.size_bytes, data.span()); !v.ok()) {
                  fail(v);
                }
              }
            }
            phase_end_[phase] = std::max(phase_end_[phase], env.now_s());
          }
          ++ranks_done_;
        });
  }
}

// The monitor: drive and link load, progress; at the end the services' counters.
void CheckpointRun::spawn_monitor() {
  ctx_.env.spawn(plan_.topology.clients.front(), "monitor", [this] {
    SimEnv& env = ctx_.env;
    const double full_factor = static_cast<double>(ck_.ranks()) / sim_ranks_;
    const double gib = std::ldexp(1.0, 30);
    const double expected_bytes =
        static_cast<double>(ctx_.world.dataset->total_bytes()) * (ck_.read_back ? 2 : 1);
    const double interval_s = m_.interval_s;
    for (;;) {
      env.sleep_s(interval_s);
      const LinkSampler::DriveBytes d = links_.sample(interval_s);
      m_.drive_write_gibps.push_back(d.write * full_factor / interval_s / gib);
      m_.drive_read_gibps.push_back(d.read * full_factor / interval_s / gib);
      if (ctx_.options.on_progress) {
        double moved = 0;
        for (auto& c : clients_) {
          const auto st = c->stats();
          moved += static_cast<double>(st.bytes_written + st.bytes_read);
        }
        ctx_.options.on_progress(env.now_s(), std::min(1.0, moved / std::max(1.0, expected_bytes)));
      }
      if (ranks_done_ == sim_ranks_ || env.now_s() >= plan_.sim.simulation.max_simulated_s) {
        // Read the services' counters here: their locks are Env semaphores, usable only
        // from a task.
        for (const auto& o : ctx_.world.object_services) {
          const services::OsdStats st = o->stats();
          m_.drive_bytes_written += st.bytes_written;
          m_.writes_discarded += st.writes_discarded;
        }
        for (auto& c : clients_) m_.client_stats.push_back(c->stats());
        if (ctx_.world.block_driver) ctx_.world.block_driver->collect(env.now_s());
        if (ranks_done_ < sim_ranks_) {
          sg4::Actor::kill_all();
          return;
        }
        // Carried data: a deep scrub of every PG once every rank is done (and the failures have
        // settled).
        scrub_carried(env, ctx_.world, plan_.topology.clients.front());
        return;
      }
    }
  });
}

Result<nlohmann::json> CheckpointRun::run() {
  SimEnv& env = ctx_.env;
  for (const ClientPlan& c : plan_.clients) {
    clients_.push_back(std::make_unique<services::StorageClient>(
        env, plan_.topology.client_sinks[c.node],
        ctx_.world.backend_on(plan_.topology.client_sinks[c.node]), c.options));
  }
  // Per checkpoint and rank: write and read durations.
  const int n_ck = ck_.checkpoints;
  m_.write_s.assign(n_ck, std::vector<double>(sim_ranks_, 0));
  m_.read_s.assign(n_ck, std::vector<double>(sim_ranks_, 0));
  phase_end_.assign(2 * n_ck, 0);
  for (int i = 0; i < 2 * n_ck + 1; ++i) {
    barriers_.push_back(std::make_unique<services::PhaseBarrier>(env, sim_ranks_));
  }
  spawn_ranks();
  // The monitor ticks about 100 times over the time the analytic write bound allows the
  // checkpoints (and their reads back), between 1 ms and 0.25 s: a checkpoint of a few
  // milliseconds still has a utilisation and a series.
  {
    const WriteBound wb = write_bound(plan_.scenario, plan_.checkpoint_ranks.cluster_nodes,
                                      plan_.scenario.storage.protocol.efficiency);
    const double bytes = ck_.total_gb() * 1e9 * ck_.checkpoints * (ck_.read_back ? 2 : 1);
    const double bound_s = wb.bytes_per_s > 0 ? bytes / wb.bytes_per_s : 0;
    m_.interval_s = std::clamp(round_to(bound_s / 100, 3), 0.001, 0.25);
  }
  spawn_monitor();
  ctx_.engine.run();
  if (!first_error_.ok()) return first_error_;
  if (ranks_done_ < sim_ranks_) {
    return Status::invalid_argument(
        plan_.scenario.source_path +
        ": simulation.max_simulated_s: the checkpoint did not finish in " +
        std::to_string(plan_.sim.simulation.max_simulated_s) + " simulated seconds");
  }
  for (double e : phase_end_) m_.end_s = std::max(m_.end_s, e);
  m_.resources = links_.resources();
  m_.utilization = links_.utilization();
  return checkpoint_report(plan_, ctx_.world, m_);
}

}  // namespace

Result<nlohmann::json> run_checkpoint(const ClusterPlan& plan, RunContext& ctx) {
  CheckpointRun run(plan, ctx);
  return run.run();
}

}  // namespace granary::sim

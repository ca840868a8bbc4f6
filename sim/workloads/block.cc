// The block and boot-storm driver (workloads.h).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "sim/report_writer.h"
#include "sim/sampler.h"
#include "sim/workloads/workloads.h"

namespace granary::sim {

namespace sg4 = simgrid::s4u;

namespace {

// A block run: every node's client and volume, the driver's tasks, and the monitor (whose
// lambda captures the run: it outlives the simulation).
class BlockRun {
 public:
  BlockRun(const ClusterPlan& plan, RunContext& ctx)
      : plan_(plan),
        ctx_(ctx),
        block_(plan.block_volumes->spec.block),
        boot_(plan.block_volumes->boot),
        links_(plan.topology, ctx.platform, ctx.env, ctx.world.mds) {}

  Result<nlohmann::json> run();

 private:
  Status open_volumes();
  void spawn_monitor();

  const ClusterPlan& plan_;
  RunContext& ctx_;
  const models::BlockWorkload& block_;
  const bool boot_;
  std::vector<std::unique_ptr<services::StorageClient>> clients_;
  std::vector<std::unique_ptr<services::BlockVolume>> volumes_;
  std::vector<services::BlockVolume*> volume_ptrs_;
  std::vector<HostId> hosts_;
  std::unique_ptr<BlockWorkloadDriver> driver_;
  LinkSampler links_;
  BlockMeasurements m_;
};

// Each node's client and volume: its own image, or a clone of the one parent image.
Status BlockRun::open_volumes() {
  SimEnv& env = ctx_.env;
  const auto& rados = std::get<services::RadosBackend>(ctx_.world.backend);
  const std::string parent = block_.clone ? ctx_.world.dataset->files().front().path : "";
  for (const ClientPlan& c : plan_.clients) {
    // librbd runs in the node's host memory (a VM's or the node's system disk).
    const HostId host = plan_.topology.client_sinks[c.node];
    clients_.push_back(std::make_unique<services::StorageClient>(
        env, host, ctx_.world.backend_on(host), c.options));
    services::BlockVolumeSpec vs;
    vs.size_bytes = block_.volume_bytes;
    if (block_.clone) {
      vs.image = "clones/node" + std::to_string(c.node);
      vs.parent = parent;
    } else {
      vs.image = ctx_.world.dataset->files()[c.node].path;
    }
    auto vol = services::BlockVolume::open(env, *clients_.back(), rados.layout, vs);
    if (!vol.ok()) return vol.status();
    volumes_.push_back(std::move(*vol));
    volume_ptrs_.push_back(volumes_.back().get());
    hosts_.push_back(host);
  }
  return Status();
}

// The monitor: link load, progress; at the end the drives' queueing.
void BlockRun::spawn_monitor() {
  ctx_.env.spawn(plan_.topology.clients.front(), "monitor", [this] {
    SimEnv& env = ctx_.env;
    const double expected = boot_ ? static_cast<double>(plan_.plan.clients) *
                                        (block_.boot_read_bytes + block_.boot_write_bytes) /
                                        block_.block_bytes
                                  : block_.ramp_s + block_.duration_s;
    for (;;) {
      env.sleep_s(m_.interval_s);
      links_.sample(m_.interval_s);
      if (ctx_.options.on_progress) {
        const double done = boot_ ? static_cast<double>(driver_->completed()) : env.now_s();
        ctx_.options.on_progress(env.now_s(), std::min(1.0, done / std::max(1e-9, expected)));
      }
      if (driver_->done() || env.now_s() >= plan_.sim.simulation.max_simulated_s) {
        driver_->collect(env.now_s());
        for (int d = 0; d < env.device_count(); ++d) {
          if (const DriveQueue* q = env.drive_queue(d)) {
            m_.drive_ops += static_cast<double>(q->operations());
            m_.drive_queued_s += q->queued_s();
          }
        }
        if (!driver_->done()) sg4::Actor::kill_all();
        return;
      }
    }
  });
}

Result<nlohmann::json> BlockRun::run() {
  SimEnv& env = ctx_.env;
  if (Status st = open_volumes(); !st.ok()) return st;
  driver_ = std::make_unique<BlockWorkloadDriver>(env, block_, boot_, volume_ptrs_, hosts_,
                                                  env.random().next_u64());
  driver_->start();
  m_.interval_s = boot_ ? 0.05 : std::max(0.01, (block_.ramp_s + block_.duration_s) / 50);
  spawn_monitor();
  ctx_.engine.run();
  if (!driver_->first_error().ok()) return driver_->first_error();
  if (!driver_->done()) {
    return Status::invalid_argument(
        plan_.scenario.source_path +
        ": simulation.max_simulated_s: the block workload did not finish in " +
        std::to_string(plan_.sim.simulation.max_simulated_s) + " simulated seconds");
  }
  m_.end_s = driver_->end_s();
  m_.resources = links_.resources();
  m_.utilization = links_.utilization();
  return block_report(plan_, ctx_.drive_timing, *driver_, m_);
}

}  // namespace

Result<nlohmann::json> run_block(const ClusterPlan& plan, RunContext& ctx) {
  BlockRun run(plan, ctx);
  return run.run();
}

}  // namespace granary::sim

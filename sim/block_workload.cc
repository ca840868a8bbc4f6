#include "sim/block_workload.h"

#include <algorithm>
#include <cmath>

#include "sim/carry_data.h"

namespace granary::sim {

BlockWorkloadDriver::BlockWorkloadDriver(Env& env, const models::BlockWorkload& spec,
                                         bool boot_storm,
                                         std::vector<services::BlockVolume*> volumes,
                                         std::vector<HostId> hosts, uint64_t seed)
    : env_(env),
      spec_(spec),
      boot_(boot_storm),
      volumes_(std::move(volumes)),
      hosts_(std::move(hosts)),
      seed_(seed) {
  GRANARY_CHECK(volumes_.size() == hosts_.size());
  if (boot_) {
    // The boot set of the image: the same blocks for every node (one OS image).
    Random rng(seed_);
    const uint64_t blocks = spec_.volume_bytes / spec_.block_bytes;
    const uint64_t n_reads = spec_.boot_read_bytes / spec_.block_bytes;
    const uint64_t n_writes = spec_.boot_write_bytes / spec_.block_bytes;
    const uint64_t n = n_reads + n_writes;
    // The writes append to one region (a journal, logs) at a block-aligned place drawn once.
    const uint64_t write_blocks = std::max<uint64_t>(1, n_writes);
    const uint64_t write_base = blocks > write_blocks ? rng.uniform(blocks - write_blocks + 1) : 0;
    uint64_t written = 0;
    for (uint64_t i = 0; i < n; ++i) {
      // Writes spread evenly: I/O i is a write when it crosses the next multiple of n / n_writes.
      const bool write = (i + 1) * n_writes / n > i * n_writes / n;
      const uint64_t block = write ? write_base + (written++ % write_blocks) : rng.uniform(blocks);
      boot_ios_.push_back({block * spec_.block_bytes, write});
    }
    boot_next_.assign(volumes_.size(), 0);
    boot_done_s_.assign(volumes_.size(), 0);
    boot_inflight_.assign(volumes_.size(), 0);
  }
}

void BlockWorkloadDriver::start(TaskOptions options, double origin_s) {
  origin_s_ = origin_s;
  for (size_t node = 0; node < volumes_.size(); ++node) {
    for (int t = 0; t < spec_.queue_depth; ++t) {
      ++tasks_;
      const int n = static_cast<int>(node);
      env_.spawn(
          hosts_[node], "blockio." + std::to_string(node) + "." + std::to_string(t),
          [this, n, t] {
            if (boot_) {
              run_boot(n);
            } else {
              run_random(n, t);
            }
            ++tasks_done_;
          },
          options);
    }
  }
}

void BlockWorkloadDriver::fail(const Status& s) {
  std::lock_guard lock(mu_);
  if (first_error_.ok()) first_error_ = s;
}

bool BlockWorkloadDriver::failed() const {
  std::lock_guard lock(mu_);
  return !first_error_.ok();
}

Status BlockWorkloadDriver::io(services::BlockVolume& vol, bool write, uint64_t offset) {
  const uint64_t n = spec_.block_bytes;
  if (!carry_) {
    Result<services::BlockIo> done = write ? vol.write(offset, n) : vol.read(offset, n);
    return done.status();
  }
  const std::string& image = vol.spec().image;
  if (write) {
    MutableBuffer bytes = env_.allocate(n);
    fill_content(carry_seed_, image, offset, bytes.span());
    Result<services::BlockIo> done = vol.write(offset, Payload::of(std::move(bytes).freeze()));
    if (done.ok()) ++writes_carried_;
    return done.status();
  }
  Buffer data;
  Result<services::BlockIo> done = vol.read(offset, n, &data);
  if (!done.ok()) return done.status();
  std::vector<std::byte> want(n);
  fill_content(carry_seed_, image, offset, want);
  if (data.size() != n || !std::equal(want.begin(), want.end(), data.span().begin())) {
    return Status::corruption(image + ": the " + std::to_string(n) + " bytes at " +
                              std::to_string(offset) + " read back differ from what was written");
  }
  ++reads_verified_;
  bytes_verified_ += n;
  return Status();
}

void BlockWorkloadDriver::record(bool write, double start_s, double end_s, uint64_t bytes) {
  ++completed_;
  std::lock_guard lock(mu_);
  completions_s_.push_back(end_s);
  end_s_ = std::max(end_s_, end_s);
  if (!boot_ && (start_s < spec_.ramp_s || end_s > spec_.ramp_s + spec_.duration_s)) return;
  (write ? write_latency_ : read_latency_).add(end_s - start_s);
  if (write) {
    ++writes_;
    bytes_written_ += bytes;
  } else {
    ++reads_;
    bytes_read_ += bytes;
  }
}

void BlockWorkloadDriver::run_random(int node, int task) {
  Random rng(seed_ ^ (0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(node) * 1024 + task + 1)));
  const uint64_t blocks = spec_.volume_bytes / spec_.block_bytes;
  const double stop_s = spec_.ramp_s + spec_.duration_s;
  services::BlockVolume& vol = *volumes_[node];
  // rate_iops: this loop's share, one I/O every queue_depth / rate seconds, the loops offset
  // from each other by an even fraction of that interval.
  const double interval_s = spec_.rate_iops > 0 ? spec_.queue_depth / spec_.rate_iops : 0;
  double next_start_s = interval_s * task / spec_.queue_depth;
  while (!failed() && now_s() < stop_s) {
    if (interval_s > 0) {
      if (next_start_s >= stop_s) return;
      if (next_start_s > now_s()) env_.sleep_s(next_start_s - now_s());
      next_start_s += interval_s;
    }
    const uint64_t offset = rng.uniform(blocks) * spec_.block_bytes;
    const bool write = rng.uniform01() >= spec_.read_fraction;
    const double t0 = now_s();
    if (Status s = io(vol, write, offset); !s.ok()) {
      fail(s);
      return;
    }
    record(write, t0, now_s(), spec_.block_bytes);
  }
}

void BlockWorkloadDriver::run_boot(int node) {
  services::BlockVolume& vol = *volumes_[node];
  for (;;) {
    Io op;
    {
      std::lock_guard lock(mu_);
      if (!first_error_.ok() || boot_next_[node] >= boot_ios_.size()) return;
      op = boot_ios_[boot_next_[node]++];
      ++boot_inflight_[node];
    }
    const double t0 = now_s();
    const Status s = io(vol, op.write, op.offset);
    {
      std::lock_guard lock(mu_);
      --boot_inflight_[node];
    }
    if (!s.ok()) {
      fail(s);
      return;
    }
    record(op.write, t0, now_s(), spec_.block_bytes);
    std::lock_guard lock(mu_);
    boot_done_s_[node] = std::max(boot_done_s_[node], now_s());
  }
}

void BlockWorkloadDriver::collect(double now_s) {
  collected_s_ = now_s - origin_s_;
  volume_totals_ = {};
  for (const auto* v : volumes_) {
    const auto st = v->stats();
    volume_totals_.copyups += st.copyups;
    volume_totals_.copyup_bytes += st.copyup_bytes;
    volume_totals_.parent_reads += st.parent_reads;
  }
}

nlohmann::json BlockWorkloadDriver::latency_ms() const {
  nlohmann::json j = nlohmann::json::object();
  if (read_latency_.count() > 0)
    j["read"] = read_latency_.json_ms("one read I/O, call to completion");
  if (write_latency_.count() > 0) {
    j["write"] = write_latency_.json_ms("one write I/O, call to completion");
  }
  return j;
}

nlohmann::json BlockWorkloadDriver::summary() const {
  nlohmann::json s;
  // A random run's window, cut short when another workload ended first; a boot storm's, the
  // storm's (to its last completion, or to the end of the run if it was cut short).
  const double window =
      boot_ ? (done() ? end_s_ : collected_s_)
            : std::max(0.0, std::min(spec_.duration_s, collected_s_ - spec_.ramp_s));
  const double mib = 1048576.0;
  s["volumes"] = volumes_.size();
  s["volume_gib"] = round_to(static_cast<double>(spec_.volume_bytes) / (mib * 1024), 6);
  s["clone"] = spec_.clone;
  s["block_size_kib"] = round_to(static_cast<double>(spec_.block_bytes) / 1024, 6);
  s["queue_depth"] = spec_.queue_depth;
  s["measured_seconds"] = round_to(window, 6);
  s["reads"] = reads_;
  s["writes"] = writes_;
  s["iops"] = round_to(window > 0 ? (reads_ + writes_) / window : 0, 3);
  s["read_iops"] = round_to(window > 0 ? reads_ / window : 0, 3);
  s["write_iops"] = round_to(window > 0 ? writes_ / window : 0, 3);
  s["read_mibps"] = round_to(window > 0 ? bytes_read_ / window / mib : 0, 6);
  s["write_mibps"] = round_to(window > 0 ? bytes_written_ / window / mib : 0, 6);
  s["copyups"] = volume_totals_.copyups;
  s["copyup_mib"] = round_to(static_cast<double>(volume_totals_.copyup_bytes) / mib, 6);
  s["parent_reads"] = volume_totals_.parent_reads;
  if (boot_) {
    // Nodes whose every boot I/O completed (all of them unless another workload ended first).
    LatencyRecorder boots;
    for (size_t n = 0; n < boot_done_s_.size(); ++n) {
      if (boot_next_[n] == boot_ios_.size() && boot_inflight_[n] == 0) boots.add(boot_done_s_[n]);
    }
    s["nodes_booted"] = boots.count();
    s["boot_read_mib"] = round_to(static_cast<double>(spec_.boot_read_bytes) / mib, 6);
    s["boot_write_mib"] = round_to(static_cast<double>(spec_.boot_write_bytes) / mib, 6);
    s["boot_ios_per_node"] = boot_ios_.size();
    s["boot_complete"] = done();
    s["boot_seconds"] = {{"p50", round_to(boots.percentile(50), 6)},
                         {"p99", round_to(boots.percentile(99), 6)},
                         {"max", round_to(boots.max(), 6)},
                         {"mean", round_to(boots.mean(), 6)}};
  } else {
    s["read_fraction"] = spec_.read_fraction;
    s["ramp_seconds"] = spec_.ramp_s;
  }
  return s;
}

std::vector<double> BlockWorkloadDriver::iops_series(double interval_s, double end_s) const {
  const size_t n = end_s > 0 ? static_cast<size_t>(std::ceil(end_s / interval_s)) : 0;
  std::vector<double> bins(n, 0.0);
  for (double t : completions_s_) {
    if (t > end_s || n == 0) continue;
    bins[std::min(n - 1, static_cast<size_t>(t / interval_s))] += 1;
  }
  for (size_t i = 0; i < n; ++i) {
    const double width = std::min(interval_s, end_s - static_cast<double>(i) * interval_s);
    bins[i] = width > 0 ? bins[i] / width : 0.0;
  }
  return bins;
}

}  // namespace granary::sim

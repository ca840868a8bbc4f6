// What simulating a scenario will cost, known before the run: SimGrid actors, transfers in
// flight at once, simulated transfers and events, simulated seconds, wall-clock time and peak
// memory, from the scenario and the plan the runner will choose (plan_run). `granary validate`
// prints it; `granary run` refuses a scenario whose estimate is past the limits, naming the key
// that drives the cost and what to change (docs/models.md, "Cost of a run").
//
// The figures are a model, calibrated against measured runs of the shipped scenarios on a
// 2-core machine (docs/models.md has the table: estimate against measurement). They aim at a
// factor of 2, enough to tell a 10-second run from a 10-hour one.
//
// Pure functions apart from reading the host's limits (host_limits); safe from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "engine/status.h"
#include "models/scenario.h"
#include "sim/runner.h"

namespace granary::sim {

struct CostEstimate {
  RunPlan plan;
  int64_t actors = 0;       // SimGrid actors (simulated tasks) alive at once at most
  int64_t flows = 0;        // requests in flight at once at most (they share the solver)
  double transfers = 0;     // requests the run simulates (object/RPC reads, writes, block I/Os)
  double events = 0;        // simulation events: transfers' messages, drive I/Os, timer ticks
  double simulated_s = 0;   // simulated seconds the run covers
  double wall_s = 0;        // wall-clock seconds on one core of a 2-core CI-class machine
  double memory_bytes = 0;  // peak resident memory
  // The scenario key that drives the cost most ("workloads[0].files"), and what to change to
  // make the run cheaper.
  std::string driver;
  std::string advice;
  // The same for the memory.
  std::string memory_driver;
  std::string memory_advice;
};

// The most a run may use. Defaults: an hour of wall time, half of the machine's memory, and the
// actors the kernel's memory-map limit allows (each SimGrid actor maps a stack and a guard page).
struct CostLimits {
  double max_wall_s = 3600;
  double max_memory_bytes = 0;  // 0: half of the physical memory
  int64_t max_actors = 0;       // 0: from vm.max_map_count
};

// What this machine allows: physical memory and the actors vm.max_map_count leaves room for.
struct HostLimits {
  double physical_memory_bytes = 0;
  int64_t max_map_count = 0;
  int64_t max_actors = 0;
};
HostLimits host_limits();

// The estimate for `scenario` as `granary run` would simulate it.
CostEstimate estimate_cost(const models::Scenario& scenario);

// OK when the estimate is within `limits` (zeros resolved from host_limits()); otherwise an
// invalid_argument Status with one line: the file, the key that drives the cost, the estimate,
// the limit, and what to change, e.g. "s.json: workloads[0].files: the run would take about
// 5.1 h of wall time (limit 1 h): ...".
Status check_cost(const models::Scenario& scenario, const CostEstimate& estimate,
                  const CostLimits& limits);

// "about 12 s wall, 1.2 GiB, 3,072 actors, 41,000 requests over 8.2 simulated s".
std::string cost_summary(const CostEstimate& estimate);

// Human-readable durations and sizes used in the messages: "42 s", "3.5 min", "5.1 h";
// "512 MiB", "3.2 GiB".
std::string format_duration(double seconds);
std::string format_bytes(double bytes);

}  // namespace granary::sim

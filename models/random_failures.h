// Random drive failures from annual failure rates: expands a scenario's random_drive_failures
// entries (failures[], docs/scenario-format.md) into ordinary drive_failure and drive_replace
// events and merges them with the explicit timeline (docs/models.md, "Random drive failures").
//
// The draw needs the run's seed, which `granary run --seed` may override after the scenario is
// read, so the parser keeps the entries and the runner expands them before it builds the
// failure driver. Pure and deterministic: the same scenario and seed give the same events.
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <vector>

#include "models/scenario.h"

namespace granary::models {

constexpr double kSecondsPerYear = 8766.0 * 3600;  // 31,557,600 s: 365.25 days

// The failure rate per second of a drive of annual failure rate `afr` (0 < afr < 1) whose
// failure clock runs `time_scale` times faster than simulated time: -ln(1 - afr) per year (the
// durability model's rate, models/durability.h) x time_scale.
double random_failure_rate_per_s(double afr, double time_scale);

// The events one random_drive_failures entry draws for `osds` OSDs from `seed`, in time order:
// OSD o fails at from_s + an exponential time (rate random_failure_rate_per_s) drawn from its
// own stream (seeded from `seed`, the entry's index and o), when that is before to_s; then a
// drive_replace replace_after_s later when replace_after_s > 0. Ties keep OSD order.
std::vector<FailureEvent> draw_random_drive_failures(const RandomDriveFailures& spec, int osds,
                                                     uint64_t seed);

// The scenario's whole timeline for a run with `seed`: its explicit events and those its
// random_drive_failures entries draw (in entry order), in time order (an explicit event before
// a drawn one at the same instant). A drawn failure whose outage (failure to replacement, or to
// the end) would overlap an outage of the same drive already in the timeline (an explicit
// drive_failure, or an earlier entry's draw) is left out: a drive fails once at a time.
std::vector<FailureEvent> expand_failures(const Scenario& s, uint64_t seed);

}  // namespace granary::models

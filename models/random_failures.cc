#include "models/random_failures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "engine/random.h"

namespace granary::models {

double random_failure_rate_per_s(double afr, double time_scale) {
  return -std::log1p(-afr) / kSecondsPerYear * time_scale;
}

namespace {

// The stream of OSD `osd` of entry `entry`: SplitMix64-style mixing of the three, so that
// neighbouring seeds, entries and OSDs give unrelated streams.
uint64_t stream_seed(uint64_t seed, int32_t entry, int osd) {
  uint64_t x = seed ^ (0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(entry) + 1));
  x ^= 0xd1b54a32d192ed03ull * (static_cast<uint64_t>(osd) + 1);
  return Random(x).next_u64();
}

}  // namespace

std::vector<FailureEvent> draw_random_drive_failures(const RandomDriveFailures& spec, int osds,
                                                     uint64_t seed) {
  const double rate = random_failure_rate_per_s(spec.afr, spec.time_scale);
  std::vector<FailureEvent> fails, replaces;
  for (int osd = 0; osd < osds; ++osd) {
    Random rng(stream_seed(seed, spec.entry, osd));
    // Inverse CDF of the exponential: u in [0, 1), so 1 - u in (0, 1] and the log is finite.
    const double t = spec.from_s - std::log1p(-rng.uniform01()) / rate;
    if (!(t < spec.to_s)) continue;
    FailureEvent e;
    e.at_s = t;
    e.kind = FailureKind::kDriveFailure;
    e.target = osd;
    e.entry = spec.entry;
    e.random = true;
    e.seed = seed;
    fails.push_back(e);
  }
  std::stable_sort(fails.begin(), fails.end(),
                   [](const FailureEvent& a, const FailureEvent& b) { return a.at_s < b.at_s; });
  if (spec.replace_after_s <= 0) return fails;
  for (const FailureEvent& f : fails) {
    FailureEvent r = f;
    r.at_s = f.at_s + spec.replace_after_s;
    r.kind = FailureKind::kDriveReplace;
    replaces.push_back(r);
  }
  std::vector<FailureEvent> out;
  std::merge(fails.begin(), fails.end(), replaces.begin(), replaces.end(), std::back_inserter(out),
             [](const FailureEvent& a, const FailureEvent& b) { return a.at_s < b.at_s; });
  return out;
}

std::vector<FailureEvent> expand_failures(const Scenario& s, uint64_t seed) {
  if (s.random_drive_failures.empty()) return s.failures;
  constexpr double kForever = std::numeric_limits<double>::infinity();
  // Each drive's outages so far: [failed, replaced).
  std::map<int32_t, std::vector<std::pair<double, double>>> outages;
  std::map<int32_t, double> open;  // drive -> when it failed, not yet replaced
  for (const FailureEvent& e : s.failures) {
    if (e.kind == FailureKind::kDriveFailure && !open.count(e.target)) open[e.target] = e.at_s;
    if (e.kind == FailureKind::kDriveReplace && open.count(e.target)) {
      outages[e.target].push_back({open[e.target], e.at_s});
      open.erase(e.target);
    }
  }
  for (const auto& [osd, t] : open) outages[osd].push_back({t, kForever});

  const int osds = s.cluster.storage.count * s.cluster.storage.drives_per_node;
  std::vector<FailureEvent> drawn;
  for (const RandomDriveFailures& spec : s.random_drive_failures) {
    std::vector<FailureEvent> events = draw_random_drive_failures(spec, osds, seed);
    std::map<int32_t, bool> kept;  // drive -> its drawn failure stays
    for (const FailureEvent& e : events) {
      if (e.kind != FailureKind::kDriveFailure) continue;
      const double end = spec.replace_after_s > 0 ? e.at_s + spec.replace_after_s : kForever;
      bool overlaps = false;
      for (const auto& [a, b] : outages[e.target]) overlaps = overlaps || (e.at_s < b && a < end);
      kept[e.target] = !overlaps;
      if (!overlaps) outages[e.target].push_back({e.at_s, end});
    }
    for (const FailureEvent& e : events) {
      if (kept[e.target]) drawn.push_back(e);
    }
  }
  std::vector<FailureEvent> out = s.failures;
  out.insert(out.end(), drawn.begin(), drawn.end());
  // Stable: explicit events (in their order) before drawn ones at the same instant.
  std::stable_sort(out.begin(), out.end(),
                   [](const FailureEvent& a, const FailureEvent& b) { return a.at_s < b.at_s; });
  return out;
}

}  // namespace granary::models

#include "cli/resources.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace granary::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMaxWallS = 7 * 86400;

double resident_bytes() {
  std::ifstream f("/proc/self/statm");
  long long size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return double(resident) * double(sysconf(_SC_PAGESIZE));
}

}  // namespace

sim::CostLimits ResourceArgs::limits() const {
  sim::CostLimits l;
  l.max_wall_s = max_wall_s;
  l.max_memory_bytes =
      max_memory_gib > 0 ? max_memory_gib * kGiB : sim::host_limits().physical_memory_bytes / 2;
  return l;
}

void add_resource_options(CLI::App& cmd, ResourceArgs& args) {
  const double physical_gib = sim::host_limits().physical_memory_bytes / kGiB;
  const double max_gib = 0.9 * physical_gib;
  char range[96];
  std::snprintf(range, sizeof range,
                "a number of GiB > 0 and <= %.1f (90%% of this machine's memory)", max_gib);
  cmd.add_option("--max-wall-s", args.max_wall_s,
                 "refuse a run estimated to take longer, and stop one that does (default 3600)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            double d = 0;
            if (!CLI::detail::lexical_cast(v, d) || !(d > 0 && d <= kMaxWallS)) {
              return "expected a number of seconds > 0 and <= 604800 (a week), found '" + v + "'";
            }
            return "";
          },
          "SECONDS"));
  cmd.add_option("--max-memory-gib", args.max_memory_gib,
                 "refuse a run estimated to need more memory, and stop one that does (default: "
                 "half of this machine's memory)")
      ->check(CLI::Validator(
          [max_gib, range = std::string(range)](std::string& v) -> std::string {
            double d = 0;
            if (!CLI::detail::lexical_cast(v, d) || !(d > 0 && d <= max_gib)) {
              return "expected " + range + ", found '" + v + "'";
            }
            return "";
          },
          "GIB"));
}

void start_watchdog(const std::string& path, const sim::CostLimits& limits) {
  const auto start = std::chrono::steady_clock::now();
  std::thread([path, limits, start] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double rss = resident_bytes();
      std::string why;
      if (wall > limits.max_wall_s) {
        why = "stopped after " + sim::format_duration(wall) + " of wall time (limit " +
              sim::format_duration(limits.max_wall_s) + ", --max-wall-s)";
      } else if (limits.max_memory_bytes > 0 && rss > limits.max_memory_bytes) {
        why = "stopped at " + sim::format_bytes(rss) + " of memory (limit " +
              sim::format_bytes(limits.max_memory_bytes) + ", --max-memory-gib)";
      }
      if (!why.empty()) {
        const std::string line = "\ngranary: " + path + ": " + why +
                                 "; the run was longer than estimated: a smaller slice "
                                 "(simulation.representative_nodes) or a shorter window makes it "
                                 "cheaper\n";
        (void)!write(STDERR_FILENO, line.data(), line.size());
        _exit(2);
      }
    }
  }).detach();
}

}  // namespace granary::cli

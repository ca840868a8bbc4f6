// granary-bench: a scenario's workload run for real against a cluster of daemons
// (realmode/bench.h, realmode/README.md, "Running a scenario's workload").
//   granary-bench fill   --config cluster.json --scenario S.json --name bench0 [--share 0/2]
//   granary-bench run    --config cluster.json --scenario S.json --name bench0 [--report R.json]
//   granary-bench verify --config cluster.json --scenario S.json --name bench0
//   granary-bench probe-drive --file F [--mib 256] [--seconds 1] [--queue-depth 32]
//     (drive_probe.h: a drive file measured as the OSDs use it; `granary real calibrate`)
// --name is a name of the cluster file's "names" table: the process runs on its host. The
// report (JSON, "mode": "real") goes to --report or stdout. Exit status: 0 done, 1 the run
// failed (a read or write error, a byte that differs: the message names the file), 2 bad input.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>

#include "realmode/bench.h"
#include "realmode/cluster_process.h"
#include "realmode/drive_probe.h"

namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "granary-bench: %s\n", message.c_str());
  return code;
}

// The report to `path`, or stdout when empty; the exit status.
int write_report(const nlohmann::json& report, const std::string& path) {
  const std::string text = report.dump(2) + "\n";
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(path);
  out << text;
  if (!out) return fail(1, path + ": cannot write the report");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace granary::realmode;
  CLI::App app{"granary-bench: a scenario's workload through a real-mode Granary cluster"};
  std::string command, config_path, scenario_path, report_path, share = "0/1";
  BenchOptions options;
  DriveProbeOptions probe;
  uint64_t probe_mib = 256;
  app.add_option("command", command, "fill, run, verify or probe-drive")
      ->required()
      ->check(CLI::IsMember({"fill", "run", "verify", "probe-drive"}));
  app.add_option("--config", config_path, "the cluster configuration (realmode/README.md)");
  app.add_option("--scenario", scenario_path, "the scenario (docs/scenario-format.md)");
  app.add_option("--name", options.name, "a name of the cluster file's names table");
  app.add_option("--file", probe.path, "probe-drive: the drive file to make, measure and remove");
  app.add_option("--mib", probe_mib, "probe-drive: its size, MiB")->check(CLI::Range(16, 1 << 20));
  app.add_option("--seconds", probe.seconds, "probe-drive: seconds per mode")
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--queue-depth", probe.queue_depth, "probe-drive: the random modes' depth")
      ->check(CLI::Range(1, 256));
  app.add_option("--share", share, "INDEX/COUNT: this process's share of the client nodes");
  app.add_option("--report", report_path, "where the report goes (default: stdout)");
  app.add_flag("--latency-samples", options.latency_samples,
               "run: every latency sample in the report (latency_samples_s), for merging shares");
  app.add_option("--writers", options.writers, "fill and verify: files in flight")
      ->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);

  if (command == "probe-drive") {
    if (probe.path.empty()) return fail(2, "probe-drive: --file is required");
    probe.bytes = probe_mib << 20;
    auto measured = probe_drive(probe);
    if (!measured.ok()) return fail(1, measured.status().to_string());
    return write_report(*measured, report_path);
  }
  for (const auto& [value, flag] :
       {std::pair{&config_path, "--config"}, std::pair{&scenario_path, "--scenario"},
        std::pair{&options.name, "--name"}}) {
    if (value->empty()) return fail(2, command + ": " + flag + " is required");
  }
  if (std::sscanf(share.c_str(), "%d/%d", &options.share_index, &options.share_count) != 2 ||
      options.share_count < 1 || options.share_index < 0 ||
      options.share_index >= options.share_count) {
    return fail(2, "--share: expected INDEX/COUNT with 0 <= INDEX < COUNT, found '" + share + "'");
  }
  auto config = load_cluster_config(config_path);
  if (!config.ok()) return fail(2, config.status().message());
  auto name = config->names.find(options.name);
  if (name == config->names.end()) {
    return fail(2, "--name: '" + options.name + "' is not in " + config_path +
                       "'s names table (the process runs on that name's host)");
  }
  auto plan = plan_bench(scenario_path, *config);
  if (!plan.ok()) return fail(2, plan.status().message());
  std::fprintf(stderr, "granary-bench: %s %s, seed %llu, as %s on host %d\n", command.c_str(),
               scenario_path.c_str(), static_cast<unsigned long long>(plan->plan.seed),
               options.name.c_str(), name->second);
  auto process = ClusterProcess::open(*config, name->second, plan->plan.seed);
  if (!process.ok()) return fail(1, process.status().message());
  if (config->monitor) {
    if (granary::Status s = (*process)->follow_maps(options.name + ".map"); !s.ok()) {
      return fail(1, s.message());
    }
  }
  auto report = command == "fill"  ? bench_fill(**process, *plan, options)
                : command == "run" ? bench_run(**process, *plan, options)
                                   : bench_verify(**process, *plan, options);
  if (!report.ok()) return fail(1, report.status().to_string());
  return write_report(*report, report_path);
}

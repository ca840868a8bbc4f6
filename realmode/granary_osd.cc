// granary-osd: one OSD of a real-mode cluster (realmode/README.md). Reads the cluster
// configuration (cluster_config.h), serves OSD --osd on its drive until SIGTERM or SIGINT, and
// says each step on stderr. Needs no privilege beyond its drive and its port.
//   granary-osd --config cluster.json --osd 2 [--mkfs] [--fault-file osd.2.faults]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "realmode/cluster_process.h"
#include "realmode/daemon_signals.h"

int main(int argc, char** argv) {
  CLI::App app{"granary-osd: one OSD of a real-mode Granary cluster"};
  std::string config_path;
  int osd = -1;
  bool mkfs = false;
  int workers = 4;
  app.add_option("--config", config_path, "the cluster configuration (JSON, realmode/README.md)")
      ->required();
  app.add_option("--osd", osd, "which OSD of the configuration to serve")->required();
  app.add_flag("--mkfs", mkfs, "format the drive first (a new OSD; erases it)");
  app.add_option("--workers", workers, "request-serving tasks")->check(CLI::Range(1, 256));
  int kill_at = 0;
  app.add_option("--kill-at-journal-write", kill_at,
                 "tests: kill itself halfway through its Nth journal write after mounting")
      ->check(CLI::Range(1, 1 << 30));
  std::string fault_file;
  app.add_option("--fault-file", fault_file,
                 "injected drive faults: a JSON file {\"slow_factor\": F}, followed while it runs");
  CLI11_PARSE(app, argc, argv);
  granary::realmode::install_stop_signals();
  auto config = granary::realmode::load_cluster_config(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "granary-osd: %s\n", config.status().message().c_str());
    return 2;
  }
  granary::realmode::OsdDaemonOptions o;
  o.mkfs = mkfs;
  o.worker_tasks = workers;
  o.kill_at_journal_write = kill_at;
  o.fault_file = fault_file;
  o.stop = granary::realmode::stop_requested;
  const granary::Status s = granary::realmode::run_osd_daemon(*config, osd, o);
  if (!s.ok()) {
    std::fprintf(stderr, "granary-osd: osd.%d: %s\n", osd, s.message().c_str());
    return 1;
  }
  return 0;
}

// granary-mds: the metadata server of a real-mode pfs cluster (realmode/README.md). Reads the
// cluster configuration (cluster_config.h), which must have a "pfs" section, mounts the
// namespace on its drive (--mkfs formats it first) and serves "mds.0" on that host until
// SIGTERM or SIGINT: opens, creates (each new file gets its layout over the OSTs), stats and
// closes. Says each step on stderr. Needs no privilege beyond its drive and its port.
//   granary-mds --config cluster.json [--mkfs]
#include <CLI/CLI.hpp>
#include <cstdio>

#include "realmode/cluster_process.h"
#include "realmode/daemon_signals.h"

int main(int argc, char** argv) {
  CLI::App app{"granary-mds: the metadata server of a real-mode Granary pfs cluster"};
  std::string config_path;
  bool mkfs = false;
  int workers = 4;
  app.add_option("--config", config_path, "the cluster configuration (JSON, realmode/README.md)")
      ->required();
  app.add_flag("--mkfs", mkfs, "format the drive first (a new file system; erases it)");
  app.add_option("--workers", workers, "operations in service at once")->check(CLI::Range(1, 256));
  CLI11_PARSE(app, argc, argv);
  granary::realmode::install_stop_signals();
  auto config = granary::realmode::load_cluster_config(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "granary-mds: %s\n", config.status().message().c_str());
    return 2;
  }
  granary::realmode::MdsDaemonOptions o;
  o.mkfs = mkfs;
  o.worker_tasks = workers;
  o.stop = granary::realmode::stop_requested;
  const granary::Status s = granary::realmode::run_mds_daemon(*config, o);
  if (!s.ok()) {
    std::fprintf(stderr, "granary-mds: %s: %s\n", config_path.c_str(), s.message().c_str());
    return 1;
  }
  return 0;
}

// granary-mon: the monitor of a real-mode cluster (realmode/README.md). Reads the cluster
// configuration (cluster_config.h), which must have a "monitor" section, and serves on that
// host until SIGTERM or SIGINT: heartbeats from the OSDs, down and out marks, the cluster map's
// epochs to every process that subscribes. Says each epoch on stderr.
//   granary-mon --config cluster.json
#include <CLI/CLI.hpp>
#include <cstdio>

#include "realmode/cluster_process.h"
#include "realmode/daemon_signals.h"

int main(int argc, char** argv) {
  CLI::App app{"granary-mon: the monitor of a real-mode Granary cluster"};
  std::string config_path;
  app.add_option("--config", config_path, "the cluster configuration (JSON, realmode/README.md)")
      ->required();
  CLI11_PARSE(app, argc, argv);
  granary::realmode::install_stop_signals();
  auto config = granary::realmode::load_cluster_config(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "granary-mon: %s\n", config.status().message().c_str());
    return 2;
  }
  granary::realmode::MonDaemonOptions o;
  o.stop = granary::realmode::stop_requested;
  const granary::Status s = granary::realmode::run_mon_daemon(*config, o);
  if (!s.ok()) {
    std::fprintf(stderr, "granary-mon: %s: %s\n", config_path.c_str(), s.message().c_str());
    return 1;
  }
  return 0;
}

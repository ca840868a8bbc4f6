#include "realmode/daemon_signals.h"

#include <atomic>
#include <csignal>

namespace granary::realmode {

namespace {
std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop.store(true);
}
}  // namespace

void install_stop_signals() {
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
}

bool stop_requested() {
  return g_stop.load();
}

}  // namespace granary::realmode

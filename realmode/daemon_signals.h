// The daemons' stop signals (granary-osd, granary-mon): SIGTERM and SIGINT ask the daemon to
// stop cleanly (its main task polls stop_requested()); SIGPIPE is ignored (a peer that went
// away is the transport's to report, not a reason to die).
#pragma once

namespace granary::realmode {

void install_stop_signals();
// True once SIGTERM or SIGINT arrived. Async-signal-safe to set, safe to read from any thread.
bool stop_requested();

}  // namespace granary::realmode

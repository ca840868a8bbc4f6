// Machine: where `granary real` (realmode/launcher.h) runs a host's processes and keeps its
// files — this machine (loopback, or one of its network namespaces) or a lab host reached over
// ssh. The launcher drives every machine through this interface, so one failure timeline runs
// the same on a laptop, in namespaces and on a lab's servers.
//
// A lab host is reached with the system's OpenSSH client (`ssh`, batch mode: keys only, never a
// prompt), one multiplexed connection per host (ControlMaster, its socket in a private folder),
// host keys recorded on first use in the cluster's own known_hosts file and checked after that
// (StrictHostKeyChecking=accept-new). Every command line is quoted for the remote shell
// argument by argument, so no path or argument is ever re-split or expanded there. What ssh
// prints on failure (an unreachable host, a refused key) is in the error.
//
// Thread-safety: one call at a time per Machine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/status.h"

namespace granary::realmode {

class Machine {
 public:
  virtual ~Machine() = default;
  // Starts `argv` detached (a session of its own, surviving the launcher), stdout and stderr
  // appended to `log`, stdin from /dev/null; with `status_file`, its exit status is written
  // there when it ends. Its pid, on the machine.
  virtual Result<int64_t> start(const std::vector<std::string>& argv, const std::string& log,
                                const std::string& status_file = "") = 0;
  // Whether `pid` runs (a zombie counts as ended).
  virtual bool alive(int64_t pid) = 0;
  // Sends `sig` to `pid`: false when it failed (no such process).
  virtual bool signal(int64_t pid, int sig) = 0;
  // Whether `pid` is a process whose command line contains `what` (a pid the system reused
  // for another program is not).
  virtual bool runs(int64_t pid, const std::string& what) = 0;
  // A file's text ("" when it cannot be read).
  virtual std::string read(const std::string& path) = 0;
  // Writes a file whole, readable by its owner only (a cluster key must be), through a
  // temporary file renamed over it: a reader never sees half of it. Creates its folder.
  virtual Status write(const std::string& path, const std::string& text) = 0;
  // Removes a file or a folder with everything in it; one that is absent is fine.
  virtual Status remove(const std::string& path) = 0;
  // What the machine is, for messages ("this machine", "network namespace gr1234h0",
  // "lab host root@10.0.0.11").
  virtual std::string describe() const = 0;
};

// This machine; `netns` not empty: processes start in that network namespace (ip netns exec).
std::unique_ptr<Machine> local_machine(const std::string& netns);

struct SshTarget {
  std::string destination;  // [user@]host, as ssh takes it
  int port = 22;
  std::string identity;     // a private key file (empty: ssh's defaults)
  std::string known_hosts;  // the known_hosts file the host's key is recorded in and checked
  std::string control_dir;  // where the multiplexed connection's socket lives (short path)
};
std::unique_ptr<Machine> ssh_machine(const SshTarget& target);
// Ends the multiplexed connection of `target` (after the last command), if one is open.
void close_ssh_connection(const SshTarget& target);

// `arg` quoted for a POSIX shell (single quotes; a quote inside as '\'').
std::string shell_quote(const std::string& arg);

}  // namespace granary::realmode

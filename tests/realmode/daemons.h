// Daemon processes for the real-mode tests (granary-osd, granary-mon): a loopback cluster
// configuration to run them from, and a Daemon started by fork and exec with its output
// appended to its own log file, watched through that log, killed (SIGKILL) when the test ends
// whatever happened. Test-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "realmode/auth.h"
#include "realmode/cluster_config.h"
#include "tests/realmode/loopback.h"

namespace granary::realmode::test {

// A loopback cluster for the daemon tests, in a fresh folder under /tmp (returned; "" when it or
// the key could not be made) holding the cluster key: hosts named `hosts` on free loopback ports
// (4 cores each), one OSD on each of the first `osds` with a 64 MiB drive file in the folder,
// pg_num 32, short timeouts (op 2 s, sub-op 1 s, handshake 1 s). The caller sets the rest.
inline std::string loopback_cluster(const std::vector<std::string>& hosts, int osds,
                                    ClusterConfig* config) {
  char d[] = "/tmp/granary-cluster-XXXXXX";
  if (mkdtemp(d) == nullptr) return "";
  const std::string dir = d;
  auto key = ClusterKey::generate();
  if (!key.ok() || !key->save(dir + "/key").ok()) return "";
  const auto table = loopback_table(static_cast<int>(hosts.size()));
  config->key_file = dir + "/key";
  for (size_t i = 0; i < hosts.size(); ++i) config->hosts.push_back({hosts[i], table[i], 4, "", 0});
  for (int i = 0; i < osds; ++i) {
    config->osds.push_back({i, i, dir + "/osd." + std::to_string(i) + ".img", 64ull << 20, 32});
  }
  config->pg_num = 32;
  config->op_timeout_s = 2;
  config->sub_op_timeout_s = 1;
  config->handshake_timeout_s = 1;
  return dir;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many times `what` occurs in `text`.
inline size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Daemon {
 public:
  // `argv`: the binary and its arguments for every start.
  Daemon(std::vector<std::string> argv, std::string log)
      : argv_(std::move(argv)), log_(std::move(log)) {}
  ~Daemon() { kill_now(SIGKILL); }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Starts it with `extra` arguments after the others (e.g. --mkfs).
  void start(const std::vector<std::string>& extra = {}) {
    ++starts_;
    std::vector<std::string> args = argv_;
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(fd, 2);
      dup2(fd, 1);
      std::vector<char*> c;
      for (std::string& a : args) c.push_back(a.data());
      c.push_back(nullptr);
      execv(c[0], c.data());
      _exit(127);
    }
  }
  // Waits up to 10 s until its log says it serves (a "serving at" line per start).
  bool wait_serving() { return wait_count("serving at", static_cast<size_t>(starts_), 10); }
  // Waits up to `seconds` for a line of its log containing `what`.
  bool wait_logged(const std::string& what, double seconds = 10) {
    return wait_count(what, 1, seconds);
  }
  // Waits up to `seconds` until `what` occurs `n` times in its log.
  bool wait_count(const std::string& what, size_t n, double seconds) {
    for (double waited = 0; waited < seconds; waited += 0.05) {
      if (count_of(read_file(log_), what) >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // Waits up to `seconds` for the process to end by itself and reaps it: its exit status (or
  // -signal); kStillRunning when it did not end.
  static constexpr int kStillRunning = -1000;
  int wait_exit(double seconds) {
    for (double waited = 0; pid_ > 0 && waited < seconds; waited += 0.05) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return kStillRunning;
  }
  // Sends `sig` and reaps the process: its exit status (or -signal).
  int kill_now(int sig) {
    if (pid_ <= 0) return 0;
    ::kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  const std::string& log() const { return log_; }

 private:
  std::vector<std::string> argv_;
  std::string log_;
  pid_t pid_ = -1;
  int starts_ = 0;
};

}  // namespace granary::realmode::test

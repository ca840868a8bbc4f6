#include "cli/child_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "sim/runner.h"

namespace granary::cli {

Result<nlohmann::json> run_in_child(const models::Scenario& s, const sim::RunOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return Status::io_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::io_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    auto r = sim::run_scenario(s, options);
    const std::string out = r.ok() ? r->dump() : "ERROR " + r.status().message();
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(r.ok() ? 0 : 3);
  }
  close(fds[1]);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (text.rfind("ERROR ", 0) == 0) return Status::invalid_argument(text.substr(6));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty()) {
    return Status::io_error("the simulation process failed");
  }
  return nlohmann::json::parse(text);
}

}  // namespace granary::cli

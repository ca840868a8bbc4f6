#include "sim/child_run.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <string>

#include "sim/runner.h"

namespace granary::sim {

namespace {

// A simulation running in a forked child, its report coming through `fd`.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string text;
};

// Forks a child that simulates `s` and writes its report (or "ERROR <message>") to a pipe.
Result<Child> start_child(const models::Scenario& s, const RunOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) return Status::io_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::io_error("fork failed");
  }
  if (pid == 0) {
    close(fds[0]);
    auto r = run_scenario(s, options);
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
  return Child{pid, fds[0], {}};
}

// Reads what is there of the child's report; true once the pipe is closed.
bool drain(Child& c) {
  char buf[65536];
  const ssize_t n = read(c.fd, buf, sizeof buf);
  if (n > 0) {
    c.text.append(buf, static_cast<size_t>(n));
    return false;
  }
  return n == 0 || errno != EINTR;
}

// Reaps the child; its report or error.
Result<nlohmann::json> finish_child(Child& c) {
  close(c.fd);
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (c.text.rfind("ERROR ", 0) == 0) return Status::invalid_argument(c.text.substr(6));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return Status::io_error("the simulation process died of signal " + std::to_string(sig) + " (" +
                            strsignal(sig) +
                            (sig == SIGABRT ? "; SimGrid's message is on stderr" : "") + ")");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || c.text.empty()) {
    return Status::io_error("the simulation process failed (exit status " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return nlohmann::json::parse(c.text);
}

}  // namespace

Result<nlohmann::json> run_in_child(const models::Scenario& s, const RunOptions& options) {
  auto child = start_child(s, options);
  if (!child.ok()) return child.status();
  while (!drain(*child)) {
  }
  return finish_child(*child);
}

std::vector<Result<nlohmann::json>> run_in_children(
    const std::vector<const models::Scenario*>& runs, int jobs) {
  std::vector<Result<nlohmann::json>> out(runs.size(), Status::io_error("not run"));
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0;
  while (next < runs.size() || !running.empty()) {
    while (next < runs.size() && running.size() < static_cast<size_t>(std::max(1, jobs))) {
      auto child = start_child(*runs[next], {});
      if (child.ok()) {
        running.emplace_back(next, std::move(child).value());
      } else {
        out[next] = child.status();
      }
      ++next;
    }
    if (running.empty()) continue;
    std::vector<pollfd> fds;
    for (const auto& [i, c] : running) fds.push_back({c.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    for (size_t k = running.size(); k-- > 0;) {
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      if (drain(running[k].second)) {
        out[running[k].first] = finish_child(running[k].second);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  return out;
}

}  // namespace granary::sim

#include "realmode/machine.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace granary::realmode {
namespace {

namespace fs = std::filesystem;

std::string read_local(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// argv wrapped so that the program's exit status lands in `status_file` when it ends.
std::vector<std::string> with_status(const std::vector<std::string>& argv,
                                     const std::string& status_file) {
  if (status_file.empty()) return argv;
  std::vector<std::string> out = {"sh", "-c", "\"$@\"; echo $? > " + shell_quote(status_file),
                                  "sh"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

class LocalMachine final : public Machine {
 public:
  explicit LocalMachine(std::string netns) : netns_(std::move(netns)) {}

  Result<int64_t> start(const std::vector<std::string>& argv, const std::string& log,
                        const std::string& status_file) override {
    std::vector<std::string> args;
    if (!netns_.empty()) args = {"ip", "netns", "exec", netns_};
    for (const std::string& a : with_status(argv, status_file)) args.push_back(a);
    std::error_code ec;
    fs::create_directories(fs::path(log).parent_path(), ec);
    const pid_t pid = fork();
    if (pid < 0) return Status::io_error("fork failed");
    if (pid == 0) {
      setsid();
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      const int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
      std::vector<char*> c;
      for (std::string& a : args) c.push_back(a.data());
      c.push_back(nullptr);
      execvp(c[0], c.data());
      _exit(127);
    }
    return int64_t{pid};
  }

  bool alive(int64_t pid) override {
    if (pid <= 0) return false;
    waitpid(static_cast<pid_t>(pid), nullptr, WNOHANG);  // reaps a child of ours that ended
    if (kill(static_cast<pid_t>(pid), 0) != 0) return false;
    // A zombie (a child of another process, not reaped yet) counts as ended.
    const std::string stat = read_local("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    return close == std::string::npos || stat.size() < close + 3 || stat[close + 2] != 'Z';
  }

  bool signal(int64_t pid, int sig) override {
    return pid > 0 && kill(static_cast<pid_t>(pid), sig) == 0;
  }

  bool runs(int64_t pid, const std::string& what) override {
    return pid > 0 &&
           read_local("/proc/" + std::to_string(pid) + "/cmdline").find(what) != std::string::npos;
  }

  std::string read(const std::string& path) override { return read_local(path); }

  Status write(const std::string& path, const std::string& text) override {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const std::string tmp = path + ".new";
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return Status::io_error(path + ": cannot be written");
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (!ok) return Status::io_error(path + ": short write");
    fs::rename(tmp, path, ec);
    if (ec) return Status::io_error(path + ": " + ec.message());
    return Status::ok_status();
  }

  Status remove(const std::string& path) override {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) return Status::io_error(path + ": " + ec.message());
    return Status::ok_status();
  }

  std::string describe() const override {
    return netns_.empty() ? "this machine" : "network namespace " + netns_;
  }

 private:
  std::string netns_;
};

struct Captured {
  int exit_code = -1;
  std::string out, err;
};

// Runs argv here with `input` on its stdin; its exit status, stdout and stderr.
Captured capture(const std::vector<std::string>& argv, const std::string& input) {
  Captured r;
  int in[2], out[2];
  if (pipe(in) != 0) return r;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return r;
  }
  char err_path[] = "/tmp/granary-ssh-err-XXXXXX";
  const int err_fd = mkstemp(err_path);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    close(in[1]);
    close(out[0]);
    std::vector<char*> c;
    std::vector<std::string> args = argv;
    for (std::string& a : args) c.push_back(a.data());
    c.push_back(nullptr);
    execvp(c[0], c.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (pid > 0) {
    signal(SIGPIPE, SIG_IGN);  // a command that does not read its input
    for (size_t at = 0; at < input.size();) {
      const ssize_t n = ::write(in[1], input.data() + at, input.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
  }
  close(in[1]);
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, n);
  close(out[0]);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  if (err_fd >= 0) {
    close(err_fd);
    r.err = read_local(err_path);
    unlink(err_path);
  }
  return r;
}

std::vector<std::string> ssh_argv(const SshTarget& t) {
  std::vector<std::string> a = {"ssh",
                                "-o",
                                "BatchMode=yes",
                                "-o",
                                "ControlMaster=auto",
                                "-o",
                                "ControlPath=" + t.control_dir + "/%C",
                                "-o",
                                "ControlPersist=120",
                                "-o",
                                "UserKnownHostsFile=" + t.known_hosts,
                                "-o",
                                "StrictHostKeyChecking=accept-new",
                                "-o",
                                "LogLevel=ERROR",
                                "-o",
                                "ConnectTimeout=10",
                                "-p",
                                std::to_string(t.port)};
  if (!t.identity.empty()) {
    a.push_back("-i");
    a.push_back(t.identity);
  }
  a.push_back(t.destination);
  return a;
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::string dir_of(const std::string& path) {
  const std::string d = fs::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

class SshMachine final : public Machine {
 public:
  explicit SshMachine(SshTarget target) : t_(std::move(target)) {
    std::error_code ec;
    fs::create_directories(t_.control_dir, ec);
    fs::permissions(t_.control_dir, fs::perms::owner_all, ec);
  }

  Result<int64_t> start(const std::vector<std::string>& argv, const std::string& log,
                        const std::string& status_file) override {
    const Captured r = remote("mkdir -p " + shell_quote(dir_of(log)) + " && { setsid " +
                              quoted(with_status(argv, status_file)) + " >> " + shell_quote(log) +
                              " 2>&1 < /dev/null & echo $!; }");
    if (r.exit_code != 0) return failed("starting " + argv.front(), r);
    try {
      return int64_t{std::stoll(r.out)};
    } catch (const std::exception&) {
      return Status::io_error(describe() + ": starting " + argv.front() + ": no pid in '" + r.out +
                              "'");
    }
  }

  bool alive(int64_t pid) override {
    const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
    return pid > 0 && remote("st=$(sed -n 's/.*) \\(.\\).*/\\1/p' " + stat +
                             " 2>/dev/null); [ -n \"$st\" ] && [ \"$st\" != Z ]")
                              .exit_code == 0;
  }

  bool signal(int64_t pid, int sig) override {
    return pid > 0 &&
           remote("kill -" + std::to_string(sig) + " " + std::to_string(pid)).exit_code == 0;
  }

  bool runs(int64_t pid, const std::string& what) override {
    return pid > 0 &&
           remote("grep -qa -- " + shell_quote(what) + " /proc/" + std::to_string(pid) + "/cmdline")
                   .exit_code == 0;
  }

  std::string read(const std::string& path) override {
    const Captured r = remote("cat " + shell_quote(path) + " 2>/dev/null");
    return r.exit_code == 0 ? r.out : std::string();
  }

  Status write(const std::string& path, const std::string& text) override {
    const std::string tmp = shell_quote(path + ".new");
    const Captured r = remote("mkdir -p " + shell_quote(dir_of(path)) + " && umask 077 && cat > " +
                                  tmp + " && mv " + tmp + " " + shell_quote(path),
                              text);
    return r.exit_code == 0 ? Status::ok_status() : failed("writing " + path, r);
  }

  Status remove(const std::string& path) override {
    const Captured r = remote("rm -rf -- " + shell_quote(path));
    return r.exit_code == 0 ? Status::ok_status() : failed("removing " + path, r);
  }

  std::string describe() const override { return "lab host " + t_.destination; }

 private:
  Captured remote(const std::string& command, const std::string& input = "") {
    std::vector<std::string> argv = ssh_argv(t_);
    argv.push_back("--");
    argv.push_back(command);
    return capture(argv, input);
  }
  Status failed(const std::string& what, const Captured& r) const {
    std::string why = r.err.empty() ? r.out : r.err;
    while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
    return Status::unavailable(describe() + ": " + what + " failed (ssh exit status " +
                               std::to_string(r.exit_code) + (why.empty() ? "" : ": " + why) + ")");
  }
  SshTarget t_;
};

}  // namespace

std::string shell_quote(const std::string& arg) {
  std::string out = "'";
  for (char ch : arg) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::unique_ptr<Machine> local_machine(const std::string& netns) {
  return std::make_unique<LocalMachine>(netns);
}

std::unique_ptr<Machine> ssh_machine(const SshTarget& target) {
  return std::make_unique<SshMachine>(target);
}

void close_ssh_connection(const SshTarget& target) {
  std::vector<std::string> argv = ssh_argv(target);
  argv.insert(argv.end() - 1, {"-O", "exit"});
  capture(argv, "");
}

}  // namespace granary::realmode

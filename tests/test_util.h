// Helpers shared by the test suites: reading files, running commands, locating test data.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace granary::testing {

inline std::string testdata(const std::string& rel) {
  return std::string(GRANARY_TESTDATA_DIR) + "/" + rel;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command, capturing stdout and stderr.
inline CommandResult run_command(const std::string& cmd) {
  char err_path[] = "/tmp/granary-test-stderr-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  CommandResult r;
  FILE* p = popen((cmd + " 2>" + err_path).c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path);
  std::remove(err_path);
  return r;
}

inline bool have_program(const std::string& name) {
  return run_command("command -v " + name + " >/dev/null").exit_code == 0;
}

inline std::string make_temp_dir() {
  char dir[] = "/tmp/granary-test-XXXXXX";
  return mkdtemp(dir) ? std::string(dir) : std::string("/tmp");
}

}  // namespace granary::testing

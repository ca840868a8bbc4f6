// Helpers shared by the test suites: reading files, running commands, locating test data.
#pragma once

#include <dirent.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace granary::testing {

// The names of the files in `dir` (not recursive) that start with `prefix` and end in ".json",
// sorted; each with `dir_label` in front. Empty when the folder does not exist.
inline std::vector<std::string> json_files(const std::string& dir,
                                           const std::string& dir_label = "",
                                           const std::string& prefix = "") {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.rfind(prefix, 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".json") {
        out.push_back(dir_label + n);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A gtest parameter name from a file name: ".json" and `drop_prefix` removed, every other
// non-alphanumeric character turned into '_'.
inline std::string param_name(std::string n, const std::string& drop_prefix = "") {
  if (n.size() > 5 && n.substr(n.size() - 5) == ".json") n.resize(n.size() - 5);
  if (!drop_prefix.empty() && n.rfind(drop_prefix, 0) == 0) n = n.substr(drop_prefix.size());
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

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

#ifdef GRANARY_SOURCE_DIR
// Checks a run report against docs/report.schema.json and the time axes of its series
// (scripts/check_report.py): exit code 0 when valid, else one line per problem on stdout.
inline CommandResult check_report(const std::string& report_path) {
  const std::string src = GRANARY_SOURCE_DIR;
  return run_command("python3 " + src + "/scripts/check_report.py --schema " + src +
                     "/docs/report.schema.json " + report_path);
}
#endif

inline bool have_program(const std::string& name) {
  return run_command("command -v " + name + " >/dev/null").exit_code == 0;
}

inline std::string make_temp_dir() {
  char dir[] = "/tmp/granary-test-XXXXXX";
  return mkdtemp(dir) ? std::string(dir) : std::string("/tmp");
}

}  // namespace granary::testing

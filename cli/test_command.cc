// granary test DIR|FILE...: runs scenarios as a test suite. Each scenario runs in its own
// process (`granary run FILE --out REPORT --quiet`, the same binary through /proc/self/exe;
// SimGrid allows one simulation per process), up to --jobs at once. A scenario passes when it
// runs and all its expectations hold. One line per scenario as it finishes, a summary line,
// optionally JUnit XML. Exit status: 0 all passed, 1 an expectation failed, 2 bad input (no
// scenarios, an unreadable path, a scenario that does not validate or could not run).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/junit.h"
#include "models/scenario_json.h"

extern char** environ;

namespace granary::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct TestArgs {
  std::vector<std::string> paths;
  int jobs = 0;  // 0: the number of cores
  std::string junit;
  std::string out_dir;
  std::optional<uint64_t> seed;
};

enum class Verdict { kPass, kFail, kError };

struct Case {
  std::string path;       // the scenario file, as found
  std::string rel;        // its path under the directory given (the file name for a file)
  std::string classname;  // its directory, dotted
  std::string name;       // the scenario's name (the file's stem when it does not validate)
  std::string invalid;    // why it does not validate; empty when it does
  std::string report;     // where its run writes the report
  std::string out_log, err_log;
  // Outcome.
  Verdict verdict = Verdict::kError;
  double seconds = 0;
  std::string summary;  // "2 of 5 expectations failed: ..." or the error
  std::string details;  // one failed expectation (or the error) per line
  std::string out, err;
  Clock::time_point start;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string dotted(const fs::path& dir) {
  std::string s = dir.lexically_normal().generic_string();
  std::replace(s.begin(), s.end(), '/', '.');
  const size_t first = s.find_first_not_of('.');
  if (first == std::string::npos) return "granary";
  s = s.substr(first);
  while (!s.empty() && s.back() == '.') s.pop_back();
  return s.empty() ? "granary" : s;
}

// A .json file under a directory is a scenario when it is a JSON object with a top-level
// "granary" key, or when it is not JSON at all (a scenario with a syntax error must not drop
// out of the suite unnoticed). Other JSON files (reports, data) are not scenarios.
bool looks_like_scenario(const fs::path& file) {
  const nlohmann::json j = nlohmann::json::parse(read_text(file.string()), nullptr,
                                                 /*allow_exceptions=*/false,
                                                 /*ignore_comments=*/true);
  if (j.is_discarded()) return true;
  return j.is_object() && j.contains("granary");
}

// The scenario files the arguments name: files as given, directories searched recursively
// (hidden entries skipped), each directory's files sorted by path.
Result<std::vector<Case>> collect(const std::vector<std::string>& args) {
  std::vector<Case> cases;
  std::set<std::string> seen;
  auto add = [&](const fs::path& file, const fs::path& rel) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(file, ec);
    const std::string key = ec ? file.lexically_normal().string() : canonical.string();
    if (!seen.insert(key).second) return;
    Case c;
    c.path = file.lexically_normal().string();
    c.rel = rel.lexically_normal().string();
    c.classname = dotted(file.parent_path());
    cases.push_back(std::move(c));
  };
  for (const std::string& arg : args) {
    std::error_code ec;
    const fs::file_status st = fs::status(arg, ec);
    if (ec || !fs::exists(st)) return Status::not_found(arg + ": no such file or directory");
    if (fs::is_regular_file(st)) {
      add(arg, fs::path(arg).filename());
      continue;
    }
    if (!fs::is_directory(st)) return Status::invalid_argument(arg + ": not a file or directory");
    std::vector<fs::path> files;
    fs::recursive_directory_iterator it(arg, ec), end;
    if (ec) return Status::io_error(arg + ": cannot read the directory (" + ec.message() + ")");
    for (; it != end; it.increment(ec)) {
      if (ec) return Status::io_error(arg + ": cannot read the directory (" + ec.message() + ")");
      const fs::path& p = it->path();
      std::error_code type_ec;
      if (p.filename().string().rfind('.', 0) == 0) {
        if (it->is_directory(type_ec)) it.disable_recursion_pending();
        continue;
      }
      if (p.extension() == ".json" && it->is_regular_file(type_ec)) files.push_back(p);
    }
    if (ec) return Status::io_error(arg + ": cannot read the directory (" + ec.message() + ")");
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      if (looks_like_scenario(f)) add(f, f.lexically_relative(arg));
    }
  }
  if (cases.empty()) {
    std::string where;
    for (const std::string& a : args) where += (where.empty() ? "" : ", ") + a;
    return Status::not_found(where + ": no scenarios (.json files with a \"granary\" key)");
  }
  return cases;
}

// Starts `granary run` for a case; its stdout and stderr go to files.
Result<pid_t> spawn_run(const Case& c, const TestArgs& a) {
  std::vector<std::string> argv_s = {"granary", "run", c.path, "--out", c.report, "--quiet"};
  if (a.seed) {
    argv_s.push_back("--seed");
    argv_s.push_back(std::to_string(*a.seed));
  }
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, c.out_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, c.err_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Status::io_error(std::string("cannot start granary run: ") + strerror(rc));
  return pid;
}

// The last "granary: ..." line of a run's stderr, without the prefix.
std::string last_error(const std::string& err) {
  std::string last;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("granary: ", 0) == 0 && line.find("wall time") == std::string::npos) {
      last = line.substr(9);
    }
  }
  return last;
}

// Reads a finished run: its exit status, its report's expectations.
void conclude(Case& c, int status) {
  c.out = read_text(c.out_log);
  c.err = read_text(c.err_log);
  if (!WIFEXITED(status)) {
    c.verdict = Verdict::kError;
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    c.summary = "granary run was killed by signal " + std::to_string(sig) + " (" +
                (sig ? strsignal(sig) : "?") + ")";
    c.details = c.summary;
    return;
  }
  const int code = WEXITSTATUS(status);
  if (code != 0 && code != 1) {
    c.verdict = Verdict::kError;
    c.summary = last_error(c.err);
    if (c.summary.empty()) c.summary = "granary run exited with status " + std::to_string(code);
    c.details = c.summary;
    return;
  }
  const nlohmann::json report = nlohmann::json::parse(read_text(c.report), nullptr, false);
  if (report.is_discarded()) {
    c.verdict = Verdict::kError;
    c.summary = "granary run exited with status " + std::to_string(code) +
                " and left no readable report at " + c.report;
    c.details = c.summary;
    return;
  }
  size_t total = 0;
  std::vector<std::string> failed;
  if (const auto it = report.find("expectations"); it != report.end() && it->is_array()) {
    total = it->size();
    for (const nlohmann::json& e : *it) {
      if (!e.value("passed", false)) {
        std::string m = e.value("message", std::string());
        const std::string name = e.value("name", std::string());
        const std::string metric = e.value("metric", std::string());
        if (!name.empty() && name.rfind(metric + " ", 0) != 0) m += " (" + name + ")";
        failed.push_back(m);
      }
    }
  }
  if (code == 0 && failed.empty()) {
    c.verdict = Verdict::kPass;
    return;
  }
  c.verdict = Verdict::kFail;
  if (failed.empty()) failed.push_back("granary run exited with status 1");
  c.summary = std::to_string(failed.size()) + " of " + std::to_string(total) +
              (total == 1 ? " expectation" : " expectations") + " failed: ";
  for (size_t i = 0; i < failed.size(); ++i) {
    c.summary += (i ? "; " : "") + failed[i];
    c.details += failed[i] + "\n";
  }
}

std::string result_line(const Case& c, size_t name_width) {
  std::string name = c.name;
  if (name.size() < name_width) name += std::string(name_width - name.size(), ' ');
  switch (c.verdict) {
    case Verdict::kPass:
      return "PASS  " + name + "  " + fmt(c.seconds, 1) + " s";
    case Verdict::kFail:
      return "FAIL  " + name + "  " + fmt(c.seconds, 1) + " s  (" + c.summary + ")";
    case Verdict::kError:
      break;
  }
  return "ERROR " + name + "  " + c.summary;
}

std::string make_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/granary-test-XXXXXX";
  return mkdtemp(templ.data()) ? templ : std::string();
}

void run_test(TestArgs& a, ExitCode& code) {
  const auto t0 = Clock::now();
  auto collected = collect(a.paths);
  if (!collected.ok()) return fail_input(code, collected.status());
  std::vector<Case>& cases = *collected;

  const std::string work = make_temp_dir();
  if (work.empty()) return fail_input(code, "cannot create a temporary directory");
  std::set<std::string> reports;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    c.out_log = work + "/" + std::to_string(i) + ".out";
    c.err_log = work + "/" + std::to_string(i) + ".err";
    if (a.out_dir.empty()) {
      c.report = work + "/" + std::to_string(i) + ".json";
    } else {
      const fs::path report = (fs::path(a.out_dir) / c.rel).lexically_normal();
      if (!reports.insert(report.string()).second) {
        fs::remove_all(work);
        return fail_input(code, "--out-dir: two scenarios would write " + report.string() +
                                    " (give them different file names)");
      }
      std::error_code ec;
      fs::create_directories(report.parent_path(), ec);
      if (ec) {
        fs::remove_all(work);
        return fail_input(code, "--out-dir: cannot create " + report.parent_path().string() + " (" +
                                    ec.message() + ")");
      }
      c.report = report.string();
    }
    Result<models::Scenario> s = models::load_scenario(c.path);
    if (s.ok()) {
      c.name = s->name;
    } else {
      c.name = fs::path(c.path).stem().string();
      c.invalid = s.status().message();
    }
  }
  size_t width = 0;
  for (const Case& c : cases) width = std::max(width, c.name.size());

  const int jobs =
      a.jobs > 0 ? a.jobs : std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  std::map<pid_t, size_t> running;
  size_t next = 0;
  auto finish = [&](Case& c) {
    c.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
    std::cout << result_line(c, width) << std::endl;
  };
  while (next < cases.size() || !running.empty()) {
    while (static_cast<int>(running.size()) < jobs && next < cases.size()) {
      Case& c = cases[next];
      c.start = Clock::now();
      if (!c.invalid.empty()) {
        c.verdict = Verdict::kError;
        c.summary = c.details = c.invalid;
        finish(c);
      } else if (auto pid = spawn_run(c, a); pid.ok()) {
        running[*pid] = next;
      } else {
        c.verdict = Verdict::kError;
        c.summary = c.details = pid.status().message();
        finish(c);
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // no children left to wait for (cannot happen while `running` has some)
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    Case& c = cases[it->second];
    running.erase(it);
    conclude(c, status);
    finish(c);
  }

  size_t passed = 0, failed = 0, errors = 0;
  for (const Case& c : cases) {
    (c.verdict == Verdict::kPass ? passed : c.verdict == Verdict::kFail ? failed : errors) += 1;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << passed << " passed, " << failed << " failed";
  if (errors > 0) std::cout << ", " << errors << (errors == 1 ? " error" : " errors");
  std::cout << " (" << cases.size() << (cases.size() == 1 ? " scenario" : " scenarios") << ", "
            << fmt(seconds, 1) << " s)" << std::endl;

  if (!a.junit.empty()) {
    JunitSuite suite;
    suite.name = "granary";
    suite.seconds = seconds;
    for (const Case& c : cases) {
      JunitCase j;
      j.classname = c.classname;
      j.name = c.name;
      j.file = c.path;
      j.seconds = c.seconds;
      j.result = c.verdict == Verdict::kPass   ? JunitCase::Result::kPassed
                 : c.verdict == Verdict::kFail ? JunitCase::Result::kFailed
                                               : JunitCase::Result::kError;
      j.message = c.summary;
      j.details = c.details;
      j.system_out = c.out;
      j.system_err = c.err;
      suite.cases.push_back(std::move(j));
    }
    std::ofstream f(a.junit, std::ios::binary);
    f << junit_xml(suite);
    if (!f) {
      fs::remove_all(work);
      return fail_input(code, "--junit: cannot write '" + a.junit + "'");
    }
  }
  fs::remove_all(work);
  code.value = errors > 0 ? 2 : failed > 0 ? 1 : 0;
}

}  // namespace

void register_test_command(CLI::App& app, ExitCode& code) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd = app.add_subcommand(
      "test", "Run scenarios as a test suite: each must run and meet its expectations");
  cmd->add_option("paths", args->paths,
                  "scenario files, or directories searched recursively for .json files with a "
                  "\"granary\" key")
      ->required()
      ->type_name("DIR|FILE...");
  cmd->add_option("--jobs,-j", args->jobs, "scenarios run at once (default: the number of cores)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--junit", args->junit, "write JUnit XML results to this file");
  cmd->add_option("--out-dir", args->out_dir,
                  "keep each report here, under the scenario's path relative to the directory "
                  "given (the file name for a file given)");
  cmd->add_option("--seed", args->seed, "seed for every scenario (default: each scenario's)");
  cmd->callback([args, &code] { run_test(*args, code); });
}

}  // namespace granary::cli

// The scenario fuzzer: mutated shipped scenarios through models::parse_scenario (each case in a
// forked child with a timer and a memory limit), and a sample of the accepted ones through a
// short, bounded `granary run`. Counts, reproduction and the soak: docs/fuzzing.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/scenario_json.h"
#include "tests/fuzz/mutator.h"
#include "tests/test_util.h"

namespace granary::fuzz {
namespace {

const std::string kSource = GRANARY_SOURCE_DIR;
const std::string kGranary = GRANARY_BINARY;

struct Base {
  std::string name;  // path relative to scenarios/
  nlohmann::ordered_json json;
};

std::vector<Base> shipped_scenarios() {
  std::vector<Base> bases;
  for (const std::string& path : files_under(kSource + "/scenarios", ".json")) {
    auto j = nlohmann::ordered_json::parse(testing::read_file(path), nullptr, false);
    if (j.is_discarded()) continue;
    make_crush_map_path_absolute(j, path);
    bases.push_back({path.substr(kSource.size() + 11), std::move(j)});
  }
  return bases;
}

RangeTable documented_ranges() {
  return parse_documented_ranges(testing::read_file(kSource + "/docs/scenario-format.md"));
}

// Parses `text` in a child; a refusal's message must be one good line naming `source`.
CaseResult validate_in_child(const std::string& text, const std::string& source) {
  ChildLimits limits;
  limits.wall_s = 20;
  limits.address_space_bytes = 1ull << 30;
  CaseResult r = run_in_child(
      [&] {
        auto s = models::parse_scenario(text, source);
        if (s.ok()) return CaseResult{Outcome::kAccepted, "", ""};
        const std::string m = s.status().message();
        return CaseResult{Outcome::kCleanError, m.empty() ? "<empty message>" : m, ""};
      },
      limits);
  if (r.outcome == Outcome::kCleanError) {
    const std::string bad = check_error_line(r.message, source);
    if (!bad.empty()) {
      r.outcome = Outcome::kBadMessage;
      r.detail = bad + ": " + r.message.substr(0, 300);
    }
  }
  return r;
}

void expect_no_failures(const Counts& c) {
  EXPECT_EQ(c.crashes, 0u);
  EXPECT_EQ(c.internal_errors, 0u);
  EXPECT_EQ(c.hangs, 0u);
  EXPECT_EQ(c.over_memory, 0u);
  EXPECT_EQ(c.bad_messages, 0u);
  EXPECT_EQ(c.wrong_results, 0u);
}

TEST(ScenarioFuzz, DocumentedRangesAreRead) {
  const RangeTable ranges = documented_ranges();
  EXPECT_GE(ranges.size(), 60u);
  ASSERT_TRUE(ranges.count("queue_depth"));
  bool found = false;
  for (const DocumentedRange& r : ranges.at("queue_depth")) {
    if (r.integer && r.has_lo && r.lo == 1 && r.has_hi && r.hi == 1024) found = true;
  }
  EXPECT_TRUE(found) << "block queue_depth 1..1024 not parsed from docs/scenario-format.md";
  ASSERT_TRUE(ranges.count("max_simulated_s"));
  EXPECT_TRUE(ranges.at("max_simulated_s")[0].lo_open);
  EXPECT_EQ(ranges.at("max_simulated_s")[0].hi, 1e9);
  ASSERT_TRUE(ranges.count("seed"));
  EXPECT_EQ(ranges.at("seed")[0].hi, 18446744073709551615.0);
}

TEST(ScenarioFuzz, MutationsAreDeterministic) {
  const std::vector<Base> bases = shipped_scenarios();
  ASSERT_GE(bases.size(), 20u);
  const RangeTable ranges = documented_ranges();
  for (uint64_t i = 0; i < 50; ++i) {
    Rng a = case_rng(7, i), b = case_rng(7, i), c = case_rng(8, i);
    const auto& base = bases[i % bases.size()].json;
    const MutatedInput ma = mutate_scenario(base, ranges, {}, a);
    const MutatedInput mb = mutate_scenario(base, ranges, {}, b);
    EXPECT_EQ(ma.text, mb.text);
    EXPECT_EQ(ma.description, mb.description);
    (void)mutate_scenario(base, ranges, {}, c);
  }
  EXPECT_NE(case_rng(1, 0).next(), case_rng(1, 1).next());
  EXPECT_NE(case_rng(1, 0).next(), case_rng(2, 0).next());
}

// Every case: a shipped scenario with 1..3 mutations, validated in a child process.
TEST(ScenarioFuzz, ValidateGivesOneCleanLineOrAccepts) {
  const FuzzSettings settings = settings_from_environment();
  const std::vector<Base> bases = shipped_scenarios();
  ASSERT_GE(bases.size(), 20u);
  const RangeTable ranges = documented_ranges();
  const uint64_t n = settings.cases(3000, 100000);
  Counts counts;
  FindingLog log(settings, "scenario");
  for (uint64_t i = 0; i < n; ++i) {
    if (settings.only_case >= 0 && i != static_cast<uint64_t>(settings.only_case)) continue;
    Rng rng = case_rng(settings.seed, i);
    const Base& base = bases[rng.below(bases.size())];
    const MutatedInput m = mutate_scenario(base.json, ranges, {}, rng);
    const std::string source = "fuzz-scenario-" + std::to_string(i) + ".json";
    const CaseResult r = validate_in_child(m.text, source);
    counts.add(r.outcome);
    if (r.outcome != Outcome::kAccepted && r.outcome != Outcome::kCleanError) {
      const std::string first =
          log.add(i, base.name, m, r, ".json", "ScenarioFuzz.ValidateGivesOneCleanLineOrAccepts");
      if (!first.empty()) ADD_FAILURE() << first;
    }
  }
  std::printf("%s\n%s", counts.line("scenario fuzz", settings.seed).c_str(), log.summary().c_str());
  std::fflush(stdout);
  expect_no_failures(counts);
}

// What a failed run said: its first stderr lines that are not the run's log or a backtrace
// frame (where the exception or error is), cut to 500 bytes.
std::string gist(const std::string& err) {
  std::string out;
  size_t pos = 0;
  while (pos < err.size() && out.size() < 500) {
    size_t eol = err.find('\n', pos);
    if (eol == std::string::npos) eol = err.size();
    const std::string line = err.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.find("  -> ") != std::string::npos || line.find("seed ") != std::string::npos)
      continue;
    out += (out.empty() ? "" : " | ") + line;
  }
  return out.substr(0, 500);
}

// Whether this granary has the run guards (`--max-wall-s`, `--max-memory-gib`); when it does
// the fuzzer asks for a bounded run, and a run over the kill timer is then a hang for sure.
bool granary_has_run_limits() {
  const auto r = testing::run_command(kGranary + " run --help");
  return r.out.find("--max-wall-s") != std::string::npos &&
         r.out.find("--max-memory-gib") != std::string::npos;
}

// A sample of accepted mutations of small scenarios, each run by `granary run` in a child with a
// wall-clock kill timer and a memory limit.
TEST(ScenarioFuzz, ShortRunsOfAcceptedMutationsEndCleanly) {
  const FuzzSettings settings = settings_from_environment();
  std::vector<Base> bases;
  for (const Base& b : shipped_scenarios()) {
    const auto small = shrink_scenario(b.json, kSource + "/scenarios/" + b.name);
    if (validate_in_child(small.dump(2), "small.json").outcome == Outcome::kAccepted) {
      bases.push_back({b.name, small});
    }
  }
  ASSERT_GE(bases.size(), 20u) << "the small versions of the shipped scenarios should validate";
  const RangeTable ranges = documented_ranges();
  const uint64_t target = settings.cases(30, 500);
  const bool limits_flags = granary_has_run_limits();
  const std::string dir = testing::make_temp_dir();
  ChildLimits run_limits;
  run_limits.wall_s = 60;
  run_limits.address_space_bytes = 32ull << 30;  // a backstop; the RSS limit is the real one
  run_limits.rss_bytes = 4ull << 30;
  Counts counts;
  FindingLog log(settings, "run");
  uint64_t attempts = 0;
  double slowest_s = 0;
  for (uint64_t i = 0; counts.cases < target && i < target * 200; ++i) {
    if (settings.only_case >= 0 && i != static_cast<uint64_t>(settings.only_case)) continue;
    ++attempts;
    Rng rng = case_rng(settings.seed ^ 0x72756e73ull, i);
    const Base& base = bases[rng.below(bases.size())];
    ScenarioMutationOptions opt;
    opt.max_mutations = 2;
    opt.allow_huge = false;
    opt.allow_raw_bytes = false;
    opt.values_only = rng.chance(3, 4);
    const MutatedInput m = mutate_scenario(base.json, ranges, opt, rng);
    const std::string path = dir + "/run-case-" + std::to_string(i) + ".json";
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      std::fwrite(m.text.data(), 1, m.text.size(), f);
      std::fclose(f);
    }
    if (validate_in_child(m.text, path).outcome != Outcome::kAccepted) {
      std::remove(path.c_str());
      continue;  // only accepted scenarios are run
    }
    std::vector<std::string> argv = {kGranary,  "run",   path,
                                     "--quiet", "--out", dir + "/report.json"};
    if (limits_flags) {
      for (const char* a : {"--max-wall-s", "20", "--max-memory-gib", "2"}) argv.push_back(a);
    }
    const ProgramResult p = run_program(argv, run_limits);
    slowest_s = std::max(slowest_s, p.wall_s);
    CaseResult r;
    if (p.timed_out) {
      r = {Outcome::kHang, "killed after " + std::to_string(p.wall_s) + " s", ""};
    } else if (p.over_memory) {
      r = {Outcome::kOverMemory, "RSS over 4 GiB, killed", ""};
    } else if (p.exited && (p.exit_code == 0 || p.exit_code == 1)) {
      r = {Outcome::kAccepted, "", ""};
    } else if (p.exited && p.exit_code == 2) {
      // the refusal is the last line of stderr (earlier lines are the run's log)
      std::string err = p.err;
      while (!err.empty() && err.back() == '\n') err.pop_back();
      const std::string last =
          err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
      const std::string bad = check_error_line(last, path, 420);
      r = bad.empty() ? CaseResult{Outcome::kCleanError, last, last}
                      : CaseResult{Outcome::kBadMessage, bad + ": " + last.substr(0, 300), ""};
    } else if (p.exited && p.exit_code == 3) {
      r = {Outcome::kInternalError, gist(p.err), ""};
    } else {
      r = {Outcome::kCrash,
           (p.exited ? "exit status " + std::to_string(p.exit_code)
                     : "signal " + std::to_string(p.signal)) +
               ": " + gist(p.err),
           ""};
    }
    counts.add(r.outcome);
    if (r.outcome != Outcome::kAccepted && r.outcome != Outcome::kCleanError) {
      const std::string first = log.add(i, base.name + " (small)", m, r, ".json",
                                        "ScenarioFuzz.ShortRunsOfAcceptedMutationsEndCleanly");
      if (!first.empty()) ADD_FAILURE() << first;
    }
    std::remove(path.c_str());
  }
  std::printf(
      "%s (%llu mutations tried, slowest run %.1f s, run limits %s)\n",
      counts.line("scenario run fuzz", settings.seed).c_str(),
      static_cast<unsigned long long>(attempts), slowest_s,
      limits_flags ? "--max-wall-s 20 --max-memory-gib 2" : "not supported by this granary");
  std::printf("%s", log.summary().c_str());
  std::fflush(stdout);
  if (settings.only_case < 0) {
    EXPECT_EQ(counts.cases, target) << "too few accepted mutations to run";
  }
  expect_no_failures(counts);
}

}  // namespace
}  // namespace granary::fuzz

// A seeded, structure-aware mutation fuzzer for scenario files and CRUSH text maps, and the
// isolation that lets a test count crashes, hangs and runaway memory instead of dying of them.
//
// Everything is deterministic: a case is a pure function of (seed, case number), drawn from
// SplitMix64 with our own uniform draws (no std::*_distribution, whose output differs between
// standard libraries), so a failing case reproduces on any machine from its two numbers.
// Nothing here is thread-safe; the fuzz tests run one case at a time. See docs/fuzzing.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace granary::fuzz {

// SplitMix64 (Steele, Lea, Flood 2014), with unbiased bounded draws by rejection.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  // True with probability num/den.
  bool chance(uint64_t num, uint64_t den) { return below(den) < num; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint64_t state_;
};

// The generator of case `case_index` of a run seeded with `seed`.
Rng case_rng(uint64_t seed, uint64_t case_index);

// A numeric key's range as docs/scenario-format.md documents it.
struct DocumentedRange {
  double lo = 0;
  double hi = 0;
  bool has_lo = false, has_hi = false;
  bool lo_open = false, hi_open = false;  // "> 0" rather than ">= 0"
  bool integer = false;
};
// Key name (the last path segment, e.g. "queue_depth") -> the ranges its tables give it (a
// name such as "count" appears in several tables). Parsed from the doc's markdown tables.
using RangeTable = std::map<std::string, std::vector<DocumentedRange>>;
RangeTable parse_documented_ranges(std::string_view markdown);

// What the scenario mutator may do. Run cases favour values (accepted inputs that then run);
// validate cases use everything.
struct ScenarioMutationOptions {
  int max_mutations = 3;        // 1..max_mutations structural mutations per case
  bool allow_huge = true;       // 1 MiB strings, 10^5-element arrays, deep nesting
  bool allow_raw_bytes = true;  // byte flips and truncation of the serialized text
  bool values_only = false;     // only numeric value mutations (edges, documented ranges)
};

// One mutated input and what was done to it (for the failure message).
struct MutatedInput {
  std::string text;
  std::string description;
};

// Mutates a scenario (JSON text out: invalid UTF-8, raw duplicate keys and byte flips are
// written as text since nlohmann's dump refuses or normalises them).
MutatedInput mutate_scenario(const nlohmann::ordered_json& base, const RangeTable& ranges,
                             const ScenarioMutationOptions& options, Rng& rng);

// Mutates a CRUSH text map, token-aware (numbers, names, lines, blocks) plus raw bytes.
MutatedInput mutate_crush_map(std::string_view base, Rng& rng);

// A small, quick-to-run version of a shipped scenario: at most 2 client nodes x 2
// accelerators, a few storage servers (unless it names a CRUSH map, whose path is made
// absolute against `scenario_path`), a tiny dataset or window, simulation.max_simulated_s 5, no
// expectations.
nlohmann::ordered_json shrink_scenario(nlohmann::ordered_json s, const std::string& scenario_path);
// Makes storage.rados.crush_map absolute against `scenario_path`'s folder (so the text can be
// parsed or written anywhere).
void make_crush_map_path_absolute(nlohmann::ordered_json& s, const std::string& scenario_path);

// How a case ended.
enum class Outcome {
  kAccepted,       // the input was valid (parsed, or the run exited 0 or 1)
  kCleanError,     // refused with one good line
  kBadMessage,     // refused, but the message is not one line / too long / misses the file
  kCrash,          // a signal, an escaped exception, or an unexpected exit status
  kInternalError,  // `granary` exit status 3
  kHang,           // killed by the wall-clock timer
  kOverMemory,     // ran out of its memory limit
  kWrongResult,    // accepted, but a check on the result failed (a map that does not round-trip)
};
const char* outcome_name(Outcome o);

struct CaseResult {
  Outcome outcome = Outcome::kAccepted;
  std::string detail;   // the error message, or what went wrong
  std::string message;  // for clean errors: the error line
};

struct ChildLimits {
  double wall_s = 10;
  uint64_t address_space_bytes = 2ull << 30;  // RLIMIT_AS of the child
  uint64_t rss_bytes = 0;                     // polled by the parent when > 0 (programs only)
};

// Runs `fn` in a forked child under `limits`. `fn` says how the case ended (accepted, clean
// error with its message, wrong result); the answer comes back through a pipe. An exception
// leaving `fn`, a signal, an allocation failure (over memory) or the timer are reported as such.
CaseResult run_in_child(const std::function<CaseResult()>& fn, const ChildLimits& limits);

// Runs a program (argv[0] is its path) with stdout discarded and stderr captured, under
// `limits` (RLIMIT_AS in the child, RSS polled by the parent, a wall-clock kill timer).
struct ProgramResult {
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool over_memory = false;
  double wall_s = 0;
  std::string err;
};
ProgramResult run_program(const std::vector<std::string>& argv, const ChildLimits& limits);

// Checks a refusal message: one line (no '\n'), at most `max_bytes`, naming `source`, valid
// UTF-8 without control characters. Returns "" when good, else what is wrong.
std::string check_error_line(std::string_view message, std::string_view source,
                             size_t max_bytes = 400);

// Per-test tallies and the one summary line every fuzz test prints.
struct Counts {
  uint64_t cases = 0, clean_errors = 0, accepted = 0, bad_messages = 0, crashes = 0,
           internal_errors = 0, hangs = 0, over_memory = 0, wrong_results = 0;
  void add(Outcome o);
  uint64_t failures() const {
    return bad_messages + crashes + internal_errors + hangs + over_memory + wrong_results;
  }
  std::string line(const std::string& what, uint64_t seed) const;
};

// Fuzz settings from the environment: GRANARY_FUZZ_SEED (default 1), GRANARY_FUZZ_CASE (run
// only that case), GRANARY_FUZZ_SOAK=1 (the soak counts), GRANARY_FUZZ_CASES (override the
// count), GRANARY_FUZZ_OUT (where failing inputs are written; default a fresh /tmp folder).
struct FuzzSettings {
  uint64_t seed = 1;
  int64_t only_case = -1;
  bool soak = false;
  int64_t cases_override = -1;
  std::string out_dir;
  uint64_t cases(uint64_t normal, uint64_t soak_count) const;
};
FuzzSettings settings_from_environment();

// Writes a failing input to settings.out_dir and returns its path.
std::string save_case(const FuzzSettings& settings, const std::string& name, std::string_view text);

// Groups failing cases into distinct findings: the signature is the outcome and its detail with
// the source name and every number blanked. The first input of each is saved (save_case).
class FindingLog {
 public:
  FindingLog(const FuzzSettings& settings, std::string prefix)
      : settings_(settings), prefix_(std::move(prefix)) {}
  // Records a failing case; returns the full report of it when it is the first of its kind,
  // else "".
  std::string add(uint64_t case_index, const std::string& base, const MutatedInput& input,
                  const CaseResult& result, const std::string& extension,
                  const std::string& test_filter);
  // One line per distinct finding: count, outcome, first case, saved input.
  std::string summary() const;

 private:
  struct Finding {
    uint64_t count = 0;
    uint64_t first_case = 0;
    std::string path, detail;
  };
  const FuzzSettings& settings_;
  std::string prefix_;
  std::map<std::string, Finding> findings_;
};

// Every file under `dir` (recursively) whose name ends in `suffix`, sorted.
std::vector<std::string> files_under(const std::string& dir, const std::string& suffix);

}  // namespace granary::fuzz

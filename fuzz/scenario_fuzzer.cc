// libFuzzer target for the scenario parser (models/scenario_json.h): the input bytes are a
// scenario file. Built with ASan and UBSan (`make fuzz`, docs/robustness.md); a crash, a leak,
// undefined behaviour, an exception out of the parser, a hang past -timeout or memory past
// -rss_limit_mb is a finding.
//
// Every input parses as <tmp>/scenarios/fuzz.json, where <tmp> is a fresh temporary directory
// holding a copy of the shipped CRUSH maps under <tmp>/crush/, so that a scenario naming
// "../crush/NAME.txt" (as the shipped validation scenarios do) reads a real map.
//
// Checked beyond "no crash":
// - an error is one non-empty line (models/scenario_json.h promises one line per error);
// - a scenario that parses is summarised, its failure timeline expanded and, for a cluster of
//   at most kMaxTopologyHosts hosts, its topology built and the max-flow bound computed: the
//   pure steps `granary run` takes before it starts SimGrid (sim/runner.cc).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "models/random_failures.h"
#include "models/scenario_json.h"
#include "models/topology.h"

namespace {

namespace fs = std::filesystem;
using granary::models::Scenario;

// The largest cluster (client nodes + storage servers + their drives) whose topology the fuzzer
// builds; larger ones only parse (their cost is the runner's guards' business, not a finding).
constexpr int64_t kMaxTopologyHosts = 4096;

std::string& source_path() {
  static std::string path;
  return path;
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "scenario_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

void exercise(const Scenario& s) {
  const std::string summary = granary::models::scenario_summary(s);
  if (summary.empty()) fail("empty summary", s.name);

  const auto& c = s.cluster;
  const int64_t hosts = int64_t{c.clients.count} + int64_t{c.storage.count} +
                        int64_t{c.storage.count} * int64_t{c.storage.drives_per_node};
  if (hosts > kMaxTopologyHosts) return;

  (void)granary::models::expand_failures(s, s.seed);
  const int mds_count =
      s.storage.design == granary::models::StorageDesign::kPfs ? s.storage.pfs.mds_count : 0;
  auto topology = granary::models::build_topology(c, mds_count);
  if (!topology.ok()) return;
  (void)granary::models::read_max_flow(*topology);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::string pattern = (fs::temp_directory_path() / "granary-scenario-fuzzer-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) fail("mkdtemp", pattern);
  const fs::path root(pattern);
  fs::create_directories(root / "scenarios");
  fs::create_directories(root / "crush");
  std::error_code ec;
  for (const auto& entry :
       fs::directory_iterator(fs::path(GRANARY_SOURCE_DIR) / "scenarios/crush", ec)) {
    fs::copy_file(entry.path(), root / "crush" / entry.path().filename(), ec);
  }
  source_path() = (root / "scenarios" / "fuzz.json").string();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = granary::models::parse_scenario(text, source_path());
  if (!scenario.ok()) {
    const std::string message = scenario.status().message();
    if (message.empty()) fail("empty error message", "");
    if (message.find('\n') != std::string::npos) fail("error message of several lines", message);
    return 0;
  }
  exercise(*scenario);
  return 0;
}

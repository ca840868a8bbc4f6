// The CRUSH text map fuzzer: mutated shipped and test maps through crush::parse_text_map; a
// map that parses is written back, re-parsed (the text must be stable) and mapped with each of
// its rules. Each case runs in a forked child with a timer and a memory limit (docs/fuzzing.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine/crush/mapper.h"
#include "engine/crush/text_format.h"
#include "tests/fuzz/mutator.h"
#include "tests/test_util.h"

namespace granary::fuzz {
namespace {

const std::string kSource = GRANARY_SOURCE_DIR;

struct Base {
  std::string name;
  std::string text;
};

std::vector<Base> text_maps() {
  std::vector<Base> bases;
  std::vector<std::string> paths = files_under(kSource + "/scenarios/crush", ".txt");
  for (const std::string& p : files_under(kSource + "/tests/data/crush", "map.txt"))
    paths.push_back(p);
  for (const std::string& p : paths)
    bases.push_back({p.substr(kSource.size() + 1), testing::read_file(p)});
  return bases;
}

// Parse, write, re-parse, write again (must be the same text), map x = 0..15 with every rule.
CaseResult check_map(const std::string& text, const std::string& source) {
  auto parsed = crush::parse_text_map(text, source);
  if (!parsed.ok()) {
    const std::string m = parsed.status().message();
    return {Outcome::kCleanError, m.empty() ? "<empty message>" : m, ""};
  }
  const crush::CrushMap& map = parsed.value();
  const std::string written = crush::write_text_map(map);
  auto again = crush::parse_text_map(written, "rewritten");
  if (!again.ok())
    return {Outcome::kWrongResult, "the written map does not parse: " + again.status().message(),
            ""};
  if (crush::write_text_map(again.value()) != written) {
    return {Outcome::kWrongResult, "the written map does not round-trip", ""};
  }
  crush::Mapper mapper(map);
  const std::vector<uint32_t> weights = crush::default_device_weights(map);
  for (int32_t id = 0; id < std::min(map.max_rules(), 8); ++id) {
    const crush::Rule* rule = map.rule(id);
    if (!rule) continue;
    std::vector<int32_t> out(static_cast<size_t>(std::clamp(rule->max_size, 1, 16)));
    for (int32_t x = 0; x < 16; ++x) {
      const int n = mapper.do_rule(id, x, out, weights);
      if (n < 0 || n > static_cast<int>(out.size())) {
        return {Outcome::kWrongResult,
                "rule " + std::to_string(id) + " returned " + std::to_string(n) + " items", ""};
      }
      for (int k = 0; k < n; ++k) {
        const int32_t item = out[static_cast<size_t>(k)];
        const bool valid = item == crush::kItemNone || (item >= 0 && item < map.max_devices()) ||
                           (item < 0 && map.bucket_exists(item));
        if (!valid) {
          return {Outcome::kWrongResult,
                  "rule " + std::to_string(id) + " x " + std::to_string(x) +
                      " mapped to unknown item " + std::to_string(item),
                  ""};
        }
      }
    }
  }
  return {Outcome::kAccepted, "", ""};
}

TEST(CrushFuzz, MutationsAreDeterministic) {
  const std::vector<Base> bases = text_maps();
  ASSERT_GE(bases.size(), 20u);
  for (uint64_t i = 0; i < 50; ++i) {
    Rng a = case_rng(3, i), b = case_rng(3, i);
    EXPECT_EQ(mutate_crush_map(bases[i % bases.size()].text, a).text,
              mutate_crush_map(bases[i % bases.size()].text, b).text);
  }
}

// The unmutated maps pass every check, so what the fuzzer finds comes from the mutation.
TEST(CrushFuzz, BaseMapsPassTheChecks) {
  for (const Base& b : text_maps()) {
    const CaseResult r = check_map(b.text, b.name);
    EXPECT_EQ(r.outcome, Outcome::kAccepted) << b.name << ": " << r.detail;
  }
}

TEST(CrushFuzz, ParseWriteReparseAndMapEndCleanly) {
  const FuzzSettings settings = settings_from_environment();
  const std::vector<Base> bases = text_maps();
  ASSERT_GE(bases.size(), 20u);
  const uint64_t n = settings.cases(3000, 100000);
  ChildLimits limits;
  limits.wall_s = 20;
  limits.address_space_bytes = 256ull << 20;
  Counts counts;
  FindingLog log(settings, "crush");
  for (uint64_t i = 0; i < n; ++i) {
    if (settings.only_case >= 0 && i != static_cast<uint64_t>(settings.only_case)) continue;
    Rng rng = case_rng(settings.seed ^ 0x63727573ull, i);
    const Base& base = bases[rng.below(bases.size())];
    const MutatedInput m = mutate_crush_map(base.text, rng);
    const std::string source = "fuzz-map-" + std::to_string(i) + ".txt";
    CaseResult r = run_in_child([&] { return check_map(m.text, source); }, limits);
    if (r.outcome == Outcome::kCleanError) {
      const std::string bad = check_error_line(r.message, source);
      if (!bad.empty()) r = {Outcome::kBadMessage, bad + ": " + r.message.substr(0, 300), ""};
    }
    counts.add(r.outcome);
    if (r.outcome != Outcome::kAccepted && r.outcome != Outcome::kCleanError) {
      const std::string first =
          log.add(i, base.name, m, r, ".txt", "CrushFuzz.ParseWriteReparseAndMapEndCleanly");
      if (!first.empty()) ADD_FAILURE() << first;
    }
  }
  std::printf("%s\n%s", counts.line("crush fuzz", settings.seed).c_str(), log.summary().c_str());
  std::fflush(stdout);
  EXPECT_EQ(counts.crashes, 0u);
  EXPECT_EQ(counts.internal_errors, 0u);
  EXPECT_EQ(counts.hangs, 0u);
  EXPECT_EQ(counts.over_memory, 0u);
  EXPECT_EQ(counts.bad_messages, 0u);
  EXPECT_EQ(counts.wrong_results, 0u);
}

}  // namespace
}  // namespace granary::fuzz

// The fuzz harness itself can fail: it sees a crash, a hang, runaway memory, an escaped
// exception and a bad error line for what they are.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "tests/fuzz/mutator.h"

namespace granary::fuzz {
namespace {

TEST(FuzzHarness, SeesEveryKindOfFailure) {
  ChildLimits limits;
  limits.wall_s = 1;
  limits.address_space_bytes = 1ull << 30;
  EXPECT_EQ(run_in_child(
                [] {
                  return CaseResult{Outcome::kAccepted, "", ""};
                },
                limits)
                .outcome,
            Outcome::kAccepted);
  const CaseResult clean = run_in_child(
      [] {
        return CaseResult{Outcome::kCleanError, "f.json: x: bad", ""};
      },
      limits);
  EXPECT_EQ(clean.outcome, Outcome::kCleanError);
  EXPECT_EQ(clean.message, "f.json: x: bad");
  EXPECT_EQ(run_in_child(
                [] {
                  std::abort();
                  return CaseResult{};
                },
                limits)
                .outcome,
            Outcome::kCrash);
  EXPECT_EQ(run_in_child([]() -> CaseResult { throw std::length_error("vector"); }, limits).outcome,
            Outcome::kCrash);
  EXPECT_EQ(run_in_child(
                [] {
                  volatile bool forever = true;
                  while (forever) {
                  }
                  return CaseResult{};
                },
                limits)
                .outcome,
            Outcome::kHang);
  EXPECT_EQ(run_in_child(
                [] {
                  std::vector<char> v(size_t{4} << 30);
                  return CaseResult{Outcome::kAccepted, std::string(1, v[1]), ""};
                },
                limits)
                .outcome,
            Outcome::kOverMemory);
}

TEST(FuzzHarness, ChecksErrorLines) {
  EXPECT_EQ(check_error_line("f.json: a.b: expected an integer, found 3.5", "f.json"), "");
  EXPECT_NE(check_error_line("f.json: a\nb", "f.json"), "");
  EXPECT_NE(check_error_line("f.json: " + std::string(500, 'x'), "f.json"), "");
  EXPECT_NE(check_error_line("a.b: expected an integer", "f.json"), "");
  EXPECT_NE(check_error_line("f.json: name \xff", "f.json"), "");
  EXPECT_NE(check_error_line(std::string("f.json: nul \0 here", 18), "f.json"), "");
  EXPECT_EQ(check_error_line("f.json: caf\xc3\xa9", "f.json"), "");
}

TEST(FuzzHarness, RunProgramSeesExitSignalAndTimer) {
  ChildLimits limits;
  limits.wall_s = 1;
  limits.address_space_bytes = 0;
  const ProgramResult ok = run_program({"/bin/sh", "-c", "echo oops >&2; exit 3"}, limits);
  EXPECT_TRUE(ok.exited);
  EXPECT_EQ(ok.exit_code, 3);
  EXPECT_EQ(ok.err, "oops\n");
  const ProgramResult sig = run_program({"/bin/sh", "-c", "kill -ABRT $$"}, limits);
  EXPECT_FALSE(sig.exited);
  EXPECT_EQ(sig.signal, 6);
  const ProgramResult slow = run_program({"/bin/sleep", "5"}, limits);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_LT(slow.wall_s, 3);
}

}  // namespace
}  // namespace granary::fuzz

// granary durability as a user runs it: text and JSON reports, one-line errors naming the flag
// with exit status 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

TEST(DurabilityCli, TextReport) {
  auto r = granary(
      "durability --drives 384 --ec 8+3 --pgs 4096 --afr 0.01 --recovery-hours 4 --pool-tib 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("Durability of EC 8+3 on 384 drives, 4096 PGs\n", 0), 0u) << r.out;
  for (const char* line :
       {"  drive AFR 1% (1.15e-06 failures per drive-hour); re-protected in 4.17 h (detect "
        "0.167 h + recovery 4 h, parallel repair)\n",
        "  MTTDL of one PG ", "  MTTDL of the pool ", "  annual probability of loss ", " nines)\n",
        "  data lost per loss event      25.0 GiB (1 x a PG of 25.0 GiB)\n",
        "  expected data lost per year ", " PGs degraded\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
}

TEST(DurabilityCli, JsonFiguresAndDefaults) {
  auto three = granary(
      "durability --drives 3 --replicas 3 --pgs 1 --afr 0.01 --recovery-hours 4 "
      "--detect-hours 0 --json");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  const auto j = nlohmann::json::parse(three.out);
  EXPECT_EQ(j["redundancy"], (nlohmann::json{{"type", "replicated"}, {"replicas", 3}}));
  // Three copies on three drives: (11 l^2 + 7 l mu + 2 mu^2) / (6 l^3).
  const double l = -std::log(0.99) / 8766, mu = 0.25;
  const double closed = (11 * l * l + 7 * l * mu + 2 * mu * mu) / (6 * l * l * l);
  EXPECT_NEAR(j["group_mttdl_hours"].get<double>() / closed, 1, 1e-12);
  EXPECT_NEAR(j["cluster_mttdl_hours"].get<double>() / closed, 1, 1e-12);
  EXPECT_EQ(j["repair"], "parallel");

  // Defaults: 100 PG chunks per drive rounded to a power of two, Ceph's 600 s down-out interval.
  auto rep = granary("durability --drives 384 --replicas 3 --afr 0.01 --recovery-hours 4 --json");
  auto ec = granary("durability --drives 384 --ec 8+3 --afr 0.01 --recovery-hours 4 --json");
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  ASSERT_EQ(ec.exit_code, 0) << ec.err;
  const auto rj = nlohmann::json::parse(rep.out), ej = nlohmann::json::parse(ec.out);
  EXPECT_EQ(rj["placement_groups"], 16384);  // 12,800
  EXPECT_EQ(ej["placement_groups"], 4096);   // 3,491
  EXPECT_NEAR(rj["detect_hours"].get<double>(), 1.0 / 6, 1e-12);
  EXPECT_EQ(rj["pool_bytes"], 0);
  EXPECT_GT(ej["nines"].get<double>(), rj["nines"].get<double>());
  // Serial repair is worse.
  auto serial = granary(
      "durability --drives 384 --replicas 3 --afr 0.01 --recovery-hours 4 --repair serial --json");
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  EXPECT_GT(nlohmann::json::parse(serial.out)["annual_loss_probability"].get<double>(),
            rj["annual_loss_probability"].get<double>());
}

TEST(DurabilityCli, BadFlagsExitTwoWithOneLineNamingTheFlag) {
  const std::string ok = " --afr 0.01 --recovery-hours 4";
  const std::pair<std::string, std::string> runs[] = {
      {"durability --drives 384 --replicas 3 --afr 1.5 --recovery-hours 4",
       "granary: --afr: expected an annual failure rate in (0, 1) (0.01 = 1%), got 1.5"},
      {"durability --drives 384 --ec 8-3" + ok,
       "granary: --ec: expected K+M with K >= 1, M >= 0 and K + M <= 64 (e.g. 8+3), got '8-3'"},
      {"durability --drives 8 --ec 8+3" + ok,
       "granary: --drives: expected at least 11 (one drive per chunk of a placement group with "
       "EC 8+3), got 8"},
      {"durability --drives 384" + ok,
       "granary: durability: expected exactly one of --replicas R or --ec K+M"},
      {"durability --drives 384 --replicas 3 --ec 4+2" + ok,
       "granary: durability: expected exactly one of --replicas R or --ec K+M"},
      {"durability --drives 384 --replicas 0" + ok,
       "granary: --replicas: expected an integer in 1..64, got 0"},
      {"durability --drives 384 --replicas 3 --pgs 0" + ok,
       "granary: --pgs: expected an integer in 1..4294967295, got 0"},
      {"durability --drives 384 --replicas 3 --afr 0.01 --recovery-hours 0",
       "granary: --recovery-hours: expected a number of hours > 0, got 0"},
      {"durability --drives 384 --replicas 3 --detect-hours -1" + ok,
       "granary: --detect-hours: expected a number of hours >= 0, got -1"},
      {"durability --drives 384 --replicas 3 --pool-tib -2" + ok,
       "granary: --pool-tib: expected a number of TiB >= 0, got -2"},
  };
  for (const auto& [args, message] : runs) {
    auto r = granary(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message + "\n") << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  // Errors CLI11 finds (unknown values, missing or malformed flags): one line naming the flag.
  const std::pair<std::string, std::string> parse_errors[] = {
      {"durability --drives 384 --replicas 3 --repair lazy" + ok, "--repair"},
      {"durability --drives many --replicas 3" + ok, "--drives"},
      {"durability --replicas 3" + ok, "--drives"},
  };
  for (const auto& [args, flag] : parse_errors) {
    auto r = granary(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

}  // namespace
}  // namespace granary

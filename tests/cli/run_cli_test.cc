// granary run and granary plan as a user runs them: reports, determinism, every shipped
// scenario, the slice fidelity against request-level simulation.
#include <dirent.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/test_util.h"

namespace granary {
namespace {

const std::string kGranary = GRANARY_BINARY;
const std::string kScenarios = std::string(GRANARY_SOURCE_DIR) + "/scenarios";

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

nlohmann::json run_report(const std::string& scenario, const std::string& extra = "") {
  const std::string out = testing::make_temp_dir() + "/report.json";
  auto r = granary("run " + scenario + " --quiet --out " + out + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Every report the tests see follows the documented format (docs/report.schema.json).
  const testing::CommandResult check = testing::check_report(out);
  EXPECT_EQ(check.exit_code, 0) << scenario << "\n" << check.out << check.err;
  return nlohmann::json::parse(testing::read_file(out), nullptr, false);
}

TEST(RunCli, SameSeedGivesAByteIdenticalReport) {
  const std::string scenario = kScenarios + "/mlperf-cosmoflow-a100-nfs.json";
  const std::string dir = testing::make_temp_dir();
  auto a = granary("run " + scenario + " --quiet --out " + dir + "/a.json");
  auto b = granary("run " + scenario + " --quiet --out " + dir + "/b.json");
  auto c = granary("run " + scenario + " --quiet --seed 2 --out " + dir + "/c.json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(testing::read_file(dir + "/a.json"), testing::read_file(dir + "/b.json"));
  EXPECT_NE(testing::read_file(dir + "/a.json"), testing::read_file(dir + "/c.json"));
  EXPECT_NE(a.err.find("seed 1"), std::string::npos) << a.err;  // the seed is logged
  EXPECT_NE(c.err.find("seed 2"), std::string::npos) << c.err;
  EXPECT_NE(a.out.find("accelerator util."), std::string::npos);  // the readable summary
}

// The report says what ran: the scenario file's SHA-256 (checked against coreutils' sha256sum)
// and the Granary version and git build that ran it.
TEST(RunCli, TheReportIdentifiesTheScenarioAndTheBuild) {
  const std::string scenario = kScenarios + "/ci/carry-data-checkpoint-3x.json";
  const nlohmann::json r = run_report(scenario);
  ASSERT_FALSE(r.is_discarded());
  auto sum = testing::run_command("sha256sum " + scenario);
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_EQ(r["scenario"]["sha256"].get<std::string>(), sum.out.substr(0, 64));
  EXPECT_EQ(r["scenario"]["seed"].get<int>(), 3);
  const std::string version = r["run"]["granary"]["version"];
  int major = -1, minor = -1, patch = -1;
  EXPECT_EQ(std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch), 3) << version;
  EXPECT_FALSE(r["run"]["granary"]["build"].get<std::string>().empty());
}

// GRANARY_SIMGRID_CFG adds SimGrid settings for experiments; the report records them, so two
// reports with different settings differ. A malformed item is refused with a message naming the
// variable (SimGrid itself would abort the process).
// The schema check fails on what the format does not document and on series whose length is
// not their time axis's: it can fail, so its passes mean something.
TEST(RunCli, TheReportCheckRefusesUndocumentedKeysAndMisalignedSeries) {
  const std::string dir = testing::make_temp_dir();
  const std::string good = dir + "/good.json";
  ASSERT_EQ(granary("run " + kScenarios + "/ci/carry-data-checkpoint-3x.json --quiet --out " + good)
                .exit_code,
            0);
  EXPECT_EQ(testing::check_report(good).exit_code, 0) << testing::check_report(good).out;
  const nlohmann::json r = nlohmann::json::parse(testing::read_file(good));
  auto check = [&](const nlohmann::json& bad, const std::string& expected) {
    const std::string path = dir + "/bad.json";
    std::ofstream(path) << bad.dump();
    const testing::CommandResult c = testing::check_report(path);
    EXPECT_EQ(c.exit_code, 1) << expected;
    EXPECT_NE(c.out.find(expected), std::string::npos) << c.out;
  };
  nlohmann::json extra = r;
  extra["summary"]["undocumented_gibps"] = 1.0;
  check(extra, "summary");
  nlohmann::json short_series = r;
  short_series["series"]["drive_write_gibps"].erase(0);
  check(short_series, "series.drive_write_gibps");
  nlohmann::json short_resource = r;
  short_resource["utilization"]["resources"][3]["series"].erase(0);
  check(short_resource, "utilization.resources[3].series");
  nlohmann::json unit = r;
  unit["latency_ms"]["write"]["p99_9"] = 1.0;
  check(unit, "latency_ms.write");
}

// The windowed AU adds up: over a whole run (no steady-state stop), the accelerators' busy
// time it shows, interval by interval, is every step's compute time (steps x compute_s), and
// the series share one time axis ending with the run.
TEST(RunCli, WindowedUtilizationAddsUpToTheComputeOfEveryStep) {
  nlohmann::json s =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/osd-failure-read-storm.json"));
  s.erase("failures");
  s.erase("expect");
  s["storage"]["rados"].erase("recovery");  // recovery settings apply only with failures
  s["workloads"][0]["compute_s_per_step"] = 0.25;
  s["workloads"][0]["batch_size"] = 4;
  s["workloads"][0]["epochs"] = 1;
  s["simulation"]["stop_at_steady_state"] = false;
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << s.dump();
  const nlohmann::json r = run_report(dir + "/s.json");
  ASSERT_FALSE(r.is_discarded());
  const auto& series = r["series"];
  const auto& t = series["t_s"];
  const auto& w = series["accelerator_utilization_windowed"];
  ASSERT_EQ(w.size(), t.size());
  ASSERT_GT(t.size(), 2u);
  EXPECT_NEAR(t.back().get<double>(), r["summary"]["simulated_seconds"].get<double>(), 1e-6);
  double busy_s = 0, prev = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    busy_s += w[i].get<double>() * (t[i].get<double>() - prev);
    prev = t[i].get<double>();
  }
  const double accelerators = r["accelerators"]["simulated"].get<double>();
  const double steps = r["summary"]["samples_read"].get<double>() / 4;  // batches
  EXPECT_NEAR(busy_s * accelerators, steps * 0.25, steps * 0.25 * 1e-4);
  // MLPerf's AU of each accelerator is in the report, node by node.
  EXPECT_EQ(r["accelerators"]["utilization"].size(), r["accelerators"]["simulated"].get<size_t>());
}

TEST(RunCli, SimGridSettingsFromTheEnvironmentAreInTheReport) {
  const std::string scenario = kScenarios + "/mlperf-cosmoflow-a100-nfs.json";
  const std::string dir = testing::make_temp_dir();
  auto plain = testing::run_command("env -u GRANARY_SIMGRID_CFG " + kGranary + " run " + scenario +
                                    " --quiet --out " + dir + "/plain.json");
  auto full =
      testing::run_command("GRANARY_SIMGRID_CFG=' network/optim:Full  cpu/optim:Full' " + kGranary +
                           " run " + scenario + " --quiet --out " + dir + "/full.json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const auto a = nlohmann::json::parse(testing::read_file(dir + "/plain.json"), nullptr, false);
  const auto b = nlohmann::json::parse(testing::read_file(dir + "/full.json"), nullptr, false);
  EXPECT_EQ(a["run"]["simgrid_config"], nlohmann::json::array());
  EXPECT_EQ(b["run"]["simgrid_config"], (nlohmann::json{"network/optim:Full", "cpu/optim:Full"}));
  auto bad = testing::run_command("GRANARY_SIMGRID_CFG='network/optim' " + kGranary + " run " +
                                  scenario + " --quiet --out " + dir + "/bad.json");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("GRANARY_SIMGRID_CFG: expected SimGrid settings 'name:value' separated "
                         "by spaces, found 'network/optim'"),
            std::string::npos)
      << bad.err;
}

TEST(RunCli, BadScenarioExitsTwoWithOneLine) {
  const std::string dir = testing::make_temp_dir();
  {
    std::ofstream(dir + "/bad.json") << R"({"granary": 1, "cluster": {"clients": {"count": -3}}})";
  }
  auto r = granary("run " + dir + "/bad.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
}

// Every shipped scenario runs, and its report has every figure the report format promises.
class ShippedScenario : public ::testing::TestWithParam<std::string> {};

// The figures of a block workload's report (docs/report-format.md, "Block runs").
void expect_block_report(const std::string& name, const nlohmann::json& r) {
  for (const char* path :
       {"/summary/iops", "/summary/read_iops", "/summary/write_iops", "/summary/measured_seconds",
        "/summary/drive_queue_wait_us_mean", "/bounds/iops", "/bounds/iops_bottleneck",
        "/latency_ms", "/utilization", "/series/iops", "/series/t_s", "/fidelity/mode"}) {
    EXPECT_TRUE(r.contains(nlohmann::json::json_pointer(path))) << name << ": " << path;
  }
  const auto& s = r["summary"];
  EXPECT_GT(s["iops"].get<double>(), 0) << name;
  // The simulated IOPS never beat the analytic ceiling.
  EXPECT_LE(s["iops"].get<double>(), r["bounds"]["iops"].get<double>() * 1.01) << name;
  for (const char* op : {"read", "write"}) {
    if (!r["latency_ms"].contains(op)) continue;
    const auto& l = r["latency_ms"][op];
    EXPECT_GT(l["p50"].get<double>(), 0) << name;
    EXPECT_LE(l["p50"].get<double>(), l["p99"].get<double>()) << name;
    EXPECT_LE(l["p99"].get<double>(), l["p999"].get<double>()) << name;
    EXPECT_LE(l["p999"].get<double>(), l["max"].get<double>()) << name;
  }
}

TEST_P(ShippedScenario, RunsAndReports) {
  const nlohmann::json r = run_report(kScenarios + "/" + GetParam());
  ASSERT_FALSE(r.is_discarded());
  const std::string workload = r["summary"].value("workload", "");
  if (workload == "block" || workload == "boot_storm") return expect_block_report(GetParam(), r);
  for (const char* path :
       {"/summary/epoch_seconds", "/summary/read_gibps_mean", "/summary/read_gibps_steady",
        "/summary/accelerators", "/summary/accelerator_utilization/mean",
        "/summary/accelerator_utilization/min", "/bounds/max_flow_gibps", "/bounds/bottleneck",
        "/latency_ms/read/p50", "/latency_ms/read/p99", "/latency_ms/read/p999", "/utilization",
        "/series/read_gibps", "/fidelity/mode"}) {
    EXPECT_TRUE(r.contains(nlohmann::json::json_pointer(path))) << GetParam() << ": " << path;
  }
  const auto& s = r["summary"];
  EXPECT_GT(s["epoch_seconds"].get<double>(), 0);
  EXPECT_GT(s["read_gibps_mean"].get<double>(), 0);
  const double au = s["accelerator_utilization"]["mean"].get<double>();
  EXPECT_GT(au, 0);
  EXPECT_LE(au, 1);
  EXPECT_LE(s["accelerator_utilization"]["min"].get<double>(), au + 1e-9);
  // Delivered reads never beat the analytic bound (1% for bytes counted per 4 MiB reply at
  // the edges of the measured window).
  EXPECT_LE(s["read_gibps_steady"].get<double>(),
            r["bounds"]["max_flow_gibps"].get<double>() * 1.01);
  EXPECT_GT(r["latency_ms"]["read"]["p99"].get<double>(), 0);
}

// The scenarios of scenarios/ and of scenarios/validation/ (the published MLPerf Storage
// systems and Ceph recovery measurements of docs/validation.md, each pinned by its own
// expectations), as paths relative to scenarios/.
std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out = testing::json_files(kScenarios);
  for (const std::string& v : testing::json_files(kScenarios + "/validation", "validation/")) {
    out.push_back(v);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ShippedScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return testing::param_name(info.param);
                         });

// The slice fidelity against request-level simulation of the same, storage-bound cluster
// (8 client nodes, 4 servers): throughput and AU within 5%, p99 latency within 15%.
TEST(Fidelity, SliceAgreesWithRequestLevel) {
  const std::string base = testing::testdata("sim/fidelity-agreement.json");
  nlohmann::json sliced = nlohmann::json::parse(testing::read_file(base));
  sliced["simulation"] = {{"fidelity", "slice"}, {"representative_nodes", 2}};
  const std::string dir = testing::make_temp_dir();
  { std::ofstream(dir + "/slice.json") << sliced.dump(2); }
  const nlohmann::json full = run_report(base);
  const nlohmann::json slice = run_report(dir + "/slice.json");
  ASSERT_FALSE(full.is_discarded());
  ASSERT_FALSE(slice.is_discarded());
  EXPECT_EQ(full["fidelity"]["mode"], "request");
  EXPECT_EQ(slice["fidelity"]["mode"], "slice");
  EXPECT_GT(slice["fidelity"]["slice_factor"].get<int>(), 1);
  auto rel = [](double a, double b) { return std::abs(a - b) / b; };
  const double au_f = full["summary"]["accelerator_utilization"]["mean"].get<double>();
  const double au_s = slice["summary"]["accelerator_utilization"]["mean"].get<double>();
  const double bw_f = full["summary"]["read_gibps_steady"].get<double>();
  const double bw_s = slice["summary"]["read_gibps_steady"].get<double>();
  const double p99_f = full["latency_ms"]["read"]["p99"].get<double>();
  const double p99_s = slice["latency_ms"]["read"]["p99"].get<double>();
  std::printf("request level: AU %.4f, steady %.3f GiB/s, p99 %.1f ms\n", au_f, bw_f, p99_f);
  std::printf("slice 1/%d:     AU %.4f, steady %.3f GiB/s, p99 %.1f ms\n",
              slice["fidelity"]["slice_factor"].get<int>(), au_s, bw_s, p99_s);
  std::printf("differences:   AU %+.2f%%, throughput %+.2f%%, p99 %+.2f%%\n",
              100 * (au_s / au_f - 1), 100 * (bw_s / bw_f - 1), 100 * (p99_s / p99_f - 1));
  EXPECT_LT(rel(au_s, au_f), 0.05);
  EXPECT_LT(rel(bw_s, bw_f), 0.05);
  EXPECT_LT(rel(p99_s, p99_f), 0.15);
}

TEST(PlanCli, FindsTheLargestAcceleratorCountMeetingTheThreshold) {
  // Two client nodes against one server with a 25 Gb/s NIC (2.66 GB/s at RDMA's 0.85):
  // every accelerator wants 16 MiB per 50 ms step, 0.34 GB/s; AU >= 0.9 holds up to about
  // 2.66 / 0.9 / 0.34 / 2 = 4.4 accelerators per node.
  const std::string dir = testing::make_temp_dir();
  {
    std::ofstream(dir + "/plan.json") << R"({
      "granary": 1, "name": "plan", "seed": 1,
      "cluster": {
        "clients": {"count": 2, "accelerator": "a100", "accelerators_per_node": 8, "nic": {"profile": "connectx6-200g"}},
        "storage": {"count": 1, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 8},
                    "nic": {"profile": "connectx4lx-25g", "count": 1}},
        "fabric": {"hosts_per_leaf": 4, "uplinks_per_leaf": 0}},
      "storage": {"design": "rados", "protocol": "rdma", "rados": {"pg_num": 128, "replicas": 1}},
      "workloads": [{"name": "p", "type": "training_read", "sample_size_mib": {"mean": 16, "stddev": 0},
                     "samples_per_file": 1, "files": 2400, "batch_size": 1, "read_threads": 2,
                     "compute_s_per_step": 0.05, "au_threshold": 0.9}]})";
  }
  auto r = granary("plan accelerators " + dir + "/plan.json --max-per-node 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("%s", r.out.c_str());
  EXPECT_NE(r.out.find("Result: 4 accelerators per node (8 in all)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 per node (8 accelerators): AU"), std::string::npos);
  EXPECT_NE(r.out.find("5 per node (10 accelerators): AU"), std::string::npos);
}

// A read storm swept over client nodes against 3 servers of one drive each: the drives bound
// the read at 18.4 GiB/s as placed (the analytic ceiling), so throughput follows the
// accelerators' demand (6 GiB/s per node) until about 3 nodes, then stops growing, AU falls below
// 0.9, and the sweep says the drives did it.
TEST(PlanCli, SweepOfClientNodesFindsWhereTheDrivesSaturate) {
  nlohmann::json s =
      nlohmann::json::parse(testing::read_file(kScenarios + "/ci/osd-failure-read-storm.json"));
  s.erase("failures");
  s.erase("expect");
  s["storage"]["rados"].erase("recovery");
  s["cluster"]["storage"]["count"] = 3;
  s["cluster"]["storage"]["drive"]["count"] = 1;
  s["workloads"][0]["files"] = 1600;
  s["workloads"][0]["epochs"] = 1;
  const std::string dir = testing::make_temp_dir();
  std::ofstream(dir + "/s.json") << s.dump();
  auto r = granary("plan sweep " + dir + "/s.json --clients 1,2,4,8 --out " + dir +
                   "/sweep.json --progress json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Progress: JSON lines over the whole sweep, each naming its point, ending at 1.
  double last = 0;
  int lines = 0;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) {
    const auto p = nlohmann::json::parse(line);
    ASSERT_TRUE(p.contains("progress")) << line;
    EXPECT_GE(p["progress"].get<double>(), last) << line;
    last = p["progress"].get<double>();
    EXPECT_EQ(p["points"], 4) << line;
    EXPECT_EQ(p["value"].get<int>(), 1 << (p["point"].get<int>() - 1)) << line;
    ++lines;
  }
  EXPECT_GE(lines, 4);
  EXPECT_EQ(last, 1.0);
  EXPECT_NE(r.out.find("limited there by saturated drive"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(testing::read_file(dir + "/sweep.json"));
  EXPECT_EQ(j["parameter"], "cluster.clients.count");
  const auto& p = j["points"];
  ASSERT_EQ(p.size(), 4u);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_EQ(p[i]["accelerators"].get<int>(), 4 * p[i]["value"].get<int>());
    EXPECT_LE(p[i]["read_gibps"].get<double>(), p[i]["read_bound_gibps"].get<double>() * 1.01);
    EXPECT_EQ(p[i]["binding"], "drives as placed");
  }
  // One node is fed (its demand, within 5%); eight get no more than four.
  EXPECT_NEAR(p[0]["read_gibps"].get<double>(), p[0]["demand_gibps"].get<double>(),
              p[0]["demand_gibps"].get<double>() * 0.05);
  EXPECT_LT(p[3]["read_gibps"].get<double>(), p[2]["read_gibps"].get<double>() * 1.1);
  const auto& sat = j["saturation"];
  EXPECT_EQ(sat["au_below_threshold_at"], 4);
  EXPECT_EQ(sat["throughput_plateau_at"], 8);
  EXPECT_EQ(sat["busiest_kind"], "drive");
  EXPECT_GE(sat["busiest_kind_mean"].get<double>(), 0.9);
}

TEST(PlanCli, SweepRefusesWhatItCannotSweep) {
  const std::string f = kScenarios + "/ci/osd-failure-read-storm.json";
  auto both = granary("plan sweep " + f + " --clients 1,2 --accelerators-per-node 1,2");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("one of --clients or --accelerators-per-node"), std::string::npos);
  auto down = granary("plan sweep " + f + " --clients 4,2");
  EXPECT_EQ(down.exit_code, 2);
  EXPECT_NE(down.err.find("--clients: expected ascending values, found 4 before 2"),
            std::string::npos)
      << down.err;
  auto block = granary("plan sweep " + kScenarios + "/ci/boot-storm.json --clients 1,2");
  EXPECT_EQ(block.exit_code, 2);
  EXPECT_NE(block.err.find("expected one training_read workload"), std::string::npos) << block.err;
}

TEST(RunCli, PlanAcceleratorsRefusesOtherWorkloadsByName) {
  auto r = granary("plan accelerators " + kScenarios + "/ci/boot-storm.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("workloads[0].type: expected a training_read workload (accelerator "
                       "planning measures AU), found boot_storm"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace granary

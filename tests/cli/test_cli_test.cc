// Scenarios as CI tests: `granary run` checks a scenario's expectations (exit 1 when one fails,
// the report written all the same), and `granary test` runs a directory of scenarios as a suite
// with one line per scenario, a summary, exit codes and JUnit XML. The scenarios are tiny
// (one client node, one server, 32 files): each run takes well under a second.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace granary {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGranary = GRANARY_BINARY;

testing::CommandResult granary(const std::string& args) {
  return testing::run_command(kGranary + " " + args);
}

// One client node (2 A100s) reading 32 files of 16 MiB from one NVMe server: storage keeps
// up, so AU is 1 and the epoch is short.
json tiny(const std::string& name, const json& expect) {
  json j = json::parse(R"({
    "granary": 1, "seed": 1,
    "cluster": {
      "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 2,
                  "nic": {"profile": "connectx6-200g"}},
      "storage": {"count": 1, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 4},
                  "nic": {"profile": "connectx6-200g"}},
      "fabric": {"hosts_per_leaf": 4, "uplinks_per_leaf": 0}},
    "storage": {"design": "rados", "protocol": "rdma", "rados": {"pg_num": 32, "replicas": 1}},
    "workloads": [{"name": "w", "type": "training_read", "sample_size_mib": {"mean": 16},
                   "samples_per_file": 1, "files": 32, "batch_size": 1, "read_threads": 2,
                   "compute_s_per_step": 0.05, "au_threshold": 0.5}]})");
  j["name"] = name;
  if (!expect.is_null()) j["expect"] = expect;
  return j;
}

const json kPassing = json::parse(R"([
  {"metric": "summary.accelerator_utilization.mean", "at_least": 0.5},
  {"metric": "summary.accelerators", "equals": 2},
  {"metric": "fidelity.mode", "equals": "request"}
])");
// The first holds, the second cannot (AU is at most 1), the third names a metric reports do
// not have (yet).
const json kFailing = json::parse(R"([
  {"metric": "summary.accelerators", "equals": 2},
  {"metric": "summary.accelerator_utilization.mean", "at_least": 1.5,
   "name": "AU <above> 1 & \"impossible\""},
  {"metric": "recovery.objects_lost", "equals": 0}
])");

void write(const std::string& path, const json& j) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << j.dump(2);
}

TEST(ExpectCli, RunExitsZeroWhenExpectationsHoldAndOneWhenOneFails) {
  const std::string dir = testing::make_temp_dir();
  write(dir + "/pass.json", tiny("pass", kPassing));
  write(dir + "/fail.json", tiny("fail", kFailing));

  auto a = granary("run " + dir + "/pass.json --quiet --out " + dir + "/a.json");
  EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.out.find("expectations:        3 of 3 passed"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("  PASS  fidelity.mode == \"request\": \"request\"\n"), std::string::npos)
      << a.out;
  const json ra = json::parse(testing::read_file(dir + "/a.json"));
  ASSERT_TRUE(ra.contains("expectations"));
  ASSERT_EQ(ra["expectations"].size(), 3u);
  EXPECT_EQ(ra["expectations"][1], json({{"name", "summary.accelerators == 2"},
                                         {"metric", "summary.accelerators"},
                                         {"condition", "== 2"},
                                         {"measured", 2},
                                         {"passed", true},
                                         {"message", "summary.accelerators = 2, expected == 2"}}));

  // Same scenario and seed: the same bytes, expectations included.
  auto b = granary("run " + dir + "/pass.json --quiet --out " + dir + "/b.json");
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(testing::read_file(dir + "/a.json"), testing::read_file(dir + "/b.json"));

  auto f = granary("run " + dir + "/fail.json --quiet --out " + dir + "/f.json");
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  EXPECT_NE(f.out.find("expectations:        1 of 3 passed"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("  PASS  summary.accelerators == 2: 2\n"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("  FAIL  summary.accelerator_utilization.mean >= 1.5: 1  (AU <above> 1 & "
                       "\"impossible\")\n"),
            std::string::npos)
      << f.out;
  EXPECT_NE(f.out.find("  FAIL  recovery.objects_lost == 0: not in the report (keys at the top "
                       "level: accelerators, bounds, "),
            std::string::npos)
      << f.out;
  // The report is written all the same, with what failed.
  const json rf = json::parse(testing::read_file(dir + "/f.json"));
  ASSERT_EQ(rf["expectations"].size(), 3u);
  EXPECT_EQ(rf["expectations"][0]["passed"], true);
  EXPECT_EQ(rf["expectations"][1]["passed"], false);
  EXPECT_EQ(rf["expectations"][2]["passed"], false);
  EXPECT_TRUE(rf["expectations"][2]["measured"].is_null());
  EXPECT_TRUE(rf.contains("summary"));

  // A bad expectation is bad input: exit 2, one line naming the file and the JSON path.
  json bad = tiny("bad", json::parse(R"([{"metric": "summary.epoch_seconds", "at_most": "1m"}])"));
  write(dir + "/bad.json", bad);
  auto e = granary("run " + dir + "/bad.json --quiet");
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.err,
            "granary: " + dir + "/bad.json: expect[0].at_most: expected a number, found \"1m\"\n");
}

// Runs python3 on a JUnit file and prints what the test checks, one fact per line.
std::string junit_facts(const std::string& path) {
  const std::string script = R"(
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(root.tag, root.get('tests'), root.get('failures'), root.get('errors'))
for s in root.iter('testsuite'):
    print('suite', s.get('name'), s.get('tests'), s.get('failures'), s.get('errors'))
for c in root.iter('testcase'):
    f = c.find('failure'); e = c.find('error'); o = c.find('system-out')
    print('case', c.get('classname'), c.get('name'), 'failure' if f is not None else 'error' if e is not None else 'ok',
          float(c.get('time')) > 0, o is not None and 'accelerator util.' in o.text)
    if f is not None:
        print('message', f.get('message'))
        print('details', f.text.replace('\n', '|'))
    if e is not None:
        print('error', e.get('message'))
)";
  const std::string py = testing::make_temp_dir() + "/facts.py";
  std::ofstream(py) << script;
  auto r = testing::run_command("python3 " + py + " " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(ExpectCli, TestRunsADirectoryAsASuite) {
  const std::string dir = testing::make_temp_dir();
  const std::string suite = dir + "/suite";
  write(suite + "/pass.json", tiny("pass", kPassing));
  write(suite + "/fail.json", tiny("fail", kFailing));
  write(suite + "/nested/no-expect.json", tiny("no-expect", json()));
  write(suite + "/notes.json", json{{"not", "a scenario"}});  // no "granary" key: not a test
  write(suite + "/.hidden/skip.json", tiny("hidden", kFailing));

  auto r = granary("test " + suite + " --jobs 2 --junit " + dir + "/junit.xml --out-dir " + dir +
                   "/reports");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  std::printf("%s", r.out.c_str());
  // One line per scenario (in the order they finish), then the summary.
  EXPECT_NE(r.out.find("PASS  pass       "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS  no-expect  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  fail       "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" s  (2 of 3 expectations failed: summary.accelerator_utilization.mean = "
                       "1, expected >= 1.5 (AU <above> 1 & \"impossible\"); "
                       "recovery.objects_lost: not in the report (keys at the top level: "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("hidden"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n2 passed, 1 failed (3 scenarios, "), std::string::npos) << r.out;
  // Reports kept under their paths relative to the directory.
  EXPECT_TRUE(fs::exists(dir + "/reports/pass.json"));
  EXPECT_TRUE(fs::exists(dir + "/reports/nested/no-expect.json"));
  const json failed = json::parse(testing::read_file(dir + "/reports/fail.json"));
  EXPECT_EQ(failed["expectations"][1]["passed"], false);

  if (!testing::have_program("python3")) GTEST_SKIP() << "python3 is needed to parse the XML";
  const std::string facts = junit_facts(dir + "/junit.xml");
  std::printf("%s", facts.c_str());
  const std::string cls = [&] {
    std::string s = fs::path(suite).lexically_normal().string();
    std::replace(s.begin(), s.end(), '/', '.');
    return s.substr(s.find_first_not_of('.'));
  }();
  EXPECT_NE(facts.find("testsuites 3 1 0\n"), std::string::npos) << facts;
  EXPECT_NE(facts.find("suite granary 3 1 0\n"), std::string::npos) << facts;
  // Sorted by path: fail, nested/no-expect, pass.
  const std::string cases = "case " + cls + " fail failure True True\n";
  EXPECT_NE(facts.find(cases), std::string::npos) << facts;
  EXPECT_NE(facts.find("case " + cls + ".nested no-expect ok True True\n"), std::string::npos)
      << facts;
  EXPECT_NE(facts.find("case " + cls + " pass ok True True\n"), std::string::npos) << facts;
  EXPECT_LT(facts.find(" fail "), facts.find(" no-expect ")) << facts;
  EXPECT_LT(facts.find(" no-expect "), facts.find(" pass ")) << facts;
  EXPECT_NE(facts.find("message 2 of 3 expectations failed: summary.accelerator_utilization.mean"),
            std::string::npos)
      << facts;
  // The escaped name comes back as written.
  EXPECT_NE(facts.find(", expected >= 1.5 (AU <above> 1 & \"impossible\")|recovery.objects_lost: "
                       "not in the report"),
            std::string::npos)
      << facts;
}

TEST(ExpectCli, TestExitCodes) {
  const std::string dir = testing::make_temp_dir();
  write(dir + "/ok/pass.json", tiny("pass", kPassing));
  // Files given by name run in the order given; all pass: exit 0.
  auto ok = granary("test " + dir + "/ok/pass.json --jobs 1 --seed 3");
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("PASS  pass  "), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("1 passed, 0 failed (1 scenario, "), std::string::npos) << ok.out;

  // A scenario that does not validate is an error (exit 2) and runs nothing; the others run.
  json invalid = tiny("invalid", kPassing);
  invalid["cluster"]["clients"]["count"] = -3;
  write(dir + "/mixed/invalid.json", invalid);
  write(dir + "/mixed/pass.json", tiny("pass", kPassing));
  auto mixed = granary("test " + dir + "/mixed --junit " + dir + "/mixed.xml");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.out << mixed.err;
  EXPECT_NE(
      mixed.out.find("ERROR invalid  " + dir +
                     "/mixed/invalid.json: cluster.clients.count: expected an integer in 1..65536, "
                     "found -3\n"),
      std::string::npos)
      << mixed.out;
  EXPECT_NE(mixed.out.find("PASS  pass     "), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("1 passed, 0 failed, 1 error (2 scenarios, "), std::string::npos)
      << mixed.out;
  if (testing::have_program("python3")) {
    const std::string facts = junit_facts(dir + "/mixed.xml");
    EXPECT_NE(facts.find("testsuites 2 0 1\n"), std::string::npos) << facts;
    EXPECT_NE(facts.find("error " + dir + "/mixed/invalid.json: cluster.clients.count"),
              std::string::npos)
        << facts;
  }

  // No scenarios, or a path that is not there: bad input, exit 2, one line.
  fs::create_directories(dir + "/empty");
  write(dir + "/empty/data.json", json::array({1, 2}));
  auto empty = granary("test " + dir + "/empty");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err,
            "granary: " + dir + "/empty: no scenarios (.json files with a \"granary\" key)\n");
  auto missing = granary("test " + dir + "/nowhere");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "granary: " + dir + "/nowhere: no such file or directory\n");
}

}  // namespace
}  // namespace granary

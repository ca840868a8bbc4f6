// Bit-identity with Ceph's crushtool: every case of the corpus in tests/data/crush (made by
// Ceph 16.2.15's crushtool, see tests/crush/make_corpus.py and crush/ceph/README.md) is
// mapped in-process and compared byte for byte; maps must also print back exactly. When
// crushtool is installed, randomly generated maps are compared live as well.
#include <dirent.h>
#include <gtest/gtest.h>

#include <sstream>

#include "engine/crush/tester.h"
#include "engine/crush/text_format.h"
#include "engine/random.h"
#include "tests/test_util.h"

namespace granary::crush {
namespace {

// Parses one crushtool --test argument line into options.
TestOptions parse_crushtool_args(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> a;
  for (std::string w; in >> w;) a.push_back(w);
  TestOptions o;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& f = a[i];
    auto next = [&] { return a.at(++i); };
    if (f == "--rule")
      o.rule = std::stoi(next());
    else if (f == "--num-rep")
      o.num_rep = std::stoi(next());
    else if (f == "--min-x")
      o.min_x = std::stoi(next());
    else if (f == "--max-x")
      o.max_x = std::stoi(next());
    else if (f == "--x")
      o.min_x = o.max_x = std::stoi(next());
    else if (f == "--pool-id")
      o.pool_id = static_cast<uint32_t>(std::stoul(next()));
    else if (f == "--weight") {
      const int osd = std::stoi(next());
      o.weights[osd] = std::stof(next());
    } else if (f == "--show-mappings")
      o.show_mappings = true;
    else if (f == "--show-statistics")
      o.show_statistics = true;
    else if (f == "--show-bad-mappings")
      o.show_bad_mappings = true;
    else if (f == "--show-utilization")
      o.show_utilization = o.show_statistics = true;
    else if (f == "--show-utilization-all")
      o.show_utilization_all = o.show_statistics = true;
    else
      ADD_FAILURE() << "unknown crushtool flag in corpus: " << f;
  }
  return o;
}

std::vector<std::string> list_dirs(const std::string& path) {
  std::vector<std::string> out;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != ".." && e->d_type == DT_DIR) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string map_all(const CrushMap& map, const std::vector<std::string>& arg_lines) {
  std::ostringstream out;
  for (const std::string& args : arg_lines) {
    if (args.empty()) continue;
    Status s = run_crush_test(map, parse_crushtool_args(args), out);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  return out.str();
}

// The cases from shared test data: one crushtool command per case in cmd.txt line 2.
TEST(CrushtoolCompat, CephReferenceCasesAreBitIdentical) {
  const std::string root = testing::testdata("crush/ceph");
  int cases = 0;
  for (const std::string c :
       {"rep3-host-uniform", "rep3-rack-mixed-weights", "ec42-indep-host-holes"}) {
    const std::string dir = root + "/" + c;
    auto map = load_text_map(dir + "/map.txt");
    ASSERT_TRUE(map.ok()) << map.status().to_string();
    std::string cmd = testing::read_lines(dir + "/cmd.txt").at(1);
    cmd = cmd.substr(cmd.find("--test") + 6);
    EXPECT_EQ(map_all(*map, {cmd}), testing::read_file(dir + "/expected.txt")) << c;
    EXPECT_EQ(write_text_map(*map), testing::read_file(dir + "/map.txt")) << c;
    ++cases;
  }
  EXPECT_EQ(cases, 3);
}

// The generated corpus: every bucket algorithm, tunables profile, rule shape, device
// classes, choose_args and a 10,000-OSD map.
TEST(CrushtoolCompat, GeneratedCorpusIsBitIdentical) {
  const std::string root = testing::testdata("crush/generated");
  const auto cases = list_dirs(root);
  ASSERT_GE(cases.size(), 20u);
  for (const std::string& c : cases) {
    SCOPED_TRACE(c);
    const std::string dir = root + "/" + c;
    auto map = load_text_map(dir + "/map.txt");
    ASSERT_TRUE(map.ok()) << map.status().to_string();
    const std::string got = map_all(*map, testing::read_lines(dir + "/args.txt"));
    const std::string want = testing::read_file(dir + "/expected.txt");
    if (got != want) {
      // Report the first differing line rather than two large blobs.
      std::istringstream g(got), w(want);
      std::string gl, wl;
      int line = 0;
      while (true) {
        const bool gok = static_cast<bool>(std::getline(g, gl));
        const bool wok = static_cast<bool>(std::getline(w, wl));
        ++line;
        if (!gok && !wok) break;
        if (gl != wl || gok != wok) {
          ADD_FAILURE() << "line " << line << ": granary '" << gl << "' crushtool '" << wl << "'";
          break;
        }
      }
    }
    EXPECT_EQ(write_text_map(*map), testing::read_file(dir + "/map.txt"));
  }
}

// ---- live comparison with crushtool on random maps

std::string random_map_text(Random& rng) {
  static const char* kAlgs[] = {"uniform", "list", "tree", "straw", "straw2"};
  std::ostringstream t;
  const bool legacy = rng.uniform(3) == 0;
  if (!legacy) {
    t << "tunable choose_local_tries 0\ntunable choose_local_fallback_tries 0\n"
         "tunable choose_total_tries 50\ntunable chooseleaf_descend_once 1\n";
    t << "tunable chooseleaf_vary_r " << rng.uniform(2) << "\n";
    t << "tunable chooseleaf_stable " << rng.uniform(2) << "\n";
    t << "tunable straw_calc_version " << rng.uniform(2) << "\ntunable allowed_bucket_algs 54\n";
  }
  const int racks = 1 + static_cast<int>(rng.uniform(4));
  const int hosts = 1 + static_cast<int>(rng.uniform(5));
  const int per_host = 1 + static_cast<int>(rng.uniform(6));
  const int n = racks * hosts * per_host;
  for (int i = 0; i < n; ++i) t << "device " << i << " osd." << i << "\n";
  t << "type 0 osd\ntype 1 host\ntype 2 rack\ntype 3 root\n";
  int osd = 0, id = -1;
  std::vector<std::string> rack_names;
  for (int r = 0; r < racks; ++r) {
    std::vector<std::string> host_names;
    for (int h = 0; h < hosts; ++h) {
      const char* alg = kAlgs[rng.uniform(5)];
      const bool uniform = std::string(alg) == "uniform";
      const double uw = 0.5 + static_cast<double>(rng.uniform(8)) * 0.25;
      std::string name = "h" + std::to_string(r) + "-" + std::to_string(h);
      t << "host " << name << " {\n\tid " << id-- << "\n\talg " << alg << "\n\thash 0\n";
      for (int k = 0; k < per_host; ++k, ++osd) {
        const double w = uniform ? uw : static_cast<double>(rng.uniform(40)) * 0.125;
        t << "\titem osd." << osd << " weight " << w << "\n";
      }
      t << "}\n";
      host_names.push_back(name);
    }
    const char* alg = kAlgs[1 + rng.uniform(4)];
    t << "rack r" << r << " {\n\tid " << id-- << "\n\talg " << alg << "\n\thash 0\n";
    for (const auto& h : host_names) t << "\titem " << h << "\n";
    t << "}\n";
    rack_names.push_back("r" + std::to_string(r));
  }
  t << "root default {\n\tid " << id-- << "\n\talg " << kAlgs[1 + rng.uniform(4)] << "\n\thash 0\n";
  for (const auto& r : rack_names) t << "\titem " << r << "\n";
  t << "}\n";
  t << "rule a {\n\tid 0\n\ttype replicated\n\tmin_size 1\n\tmax_size 10\n\tstep take default\n"
       "\tstep chooseleaf firstn 0 type host\n\tstep emit\n}\n";
  t << "rule b {\n\tid 1\n\ttype erasure\n\tmin_size 1\n\tmax_size 10\n\tstep set_chooseleaf_tries "
       "5\n"
       "\tstep take default\n\tstep chooseleaf indep 0 type host\n\tstep emit\n}\n";
  t << "rule c {\n\tid 2\n\ttype replicated\n\tmin_size 1\n\tmax_size 10\n\tstep take default\n"
       "\tstep choose firstn 0 type rack\n\tstep choose firstn 1 type osd\n\tstep emit\n}\n";
  return t.str();
}

TEST(CrushtoolCompat, RandomMapsMatchLiveCrushtool) {
  if (!testing::have_program("crushtool"))
    GTEST_SKIP() << "crushtool not installed (package ceph-base)";
  const std::string dir = testing::make_temp_dir();
  Random rng(20261202);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const std::string text = random_map_text(rng);
    const std::string src = dir + "/m.txt", bin = dir + "/m.bin";
    { std::ofstream(src) << text; }
    auto compiled = testing::run_command("crushtool -c " + src + " -o " + bin);
    if (compiled.exit_code != 0) continue;  // e.g. a bucket weight crushtool rejects
    auto map = parse_text_map(text, src);
    ASSERT_TRUE(map.ok()) << map.status().to_string() << "\n" << text;
    // Compare the canonical text too: crushtool -d of its compile vs our writer.
    auto decompiled = testing::run_command("crushtool -d " + bin);
    auto canonical = parse_text_map(decompiled.out, "decompiled");
    ASSERT_TRUE(canonical.ok());
    EXPECT_EQ(write_text_map(*canonical), decompiled.out);
    for (const char* rule : {"0", "1", "2"}) {
      const int reps = 1 + static_cast<int>(rng.uniform(5));
      std::string args = std::string("--rule ") + rule + " --num-rep " + std::to_string(reps) +
                         " --min-x 0 --max-x 255 --show-mappings";
      const int out_osd = static_cast<int>(rng.uniform(map->max_devices()));
      args += " --weight " + std::to_string(out_osd) + " 0";
      auto want = testing::run_command("crushtool -i " + bin + " --test " + args);
      ASSERT_EQ(want.exit_code, 0) << want.err;
      EXPECT_EQ(map_all(*map, {args}), want.out) << args << "\n" << text;
      ++compared;
    }
  }
  EXPECT_GT(compared, 60);
}

}  // namespace
}  // namespace granary::crush

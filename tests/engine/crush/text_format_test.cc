#include "engine/crush/text_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace granary::crush {
namespace {

TEST(TextFormat, WeightsAreParsedLikeCrushtool) {
  EXPECT_EQ(parse_fixed_16_16("1.819"), 119209u);
  EXPECT_EQ(parse_fixed_16_16("3.638"), 238419u);
  EXPECT_EQ(parse_fixed_16_16("1.000"), 65536u);
  EXPECT_EQ(parse_fixed_16_16("0.873"), 57212u);
  EXPECT_EQ(parse_fixed_16_16("0"), 0u);
  EXPECT_FALSE(parse_fixed_16_16("-1").has_value());
  EXPECT_FALSE(parse_fixed_16_16("abc").has_value());
  EXPECT_FALSE(parse_fixed_16_16("1.0x").has_value());
  EXPECT_EQ(format_fixed_16_16(119209), "1.819");
  EXPECT_EQ(format_fixed_16_16(476839), "7.276");
}

// map.json is crushtool --dump of the same map: ids, 16.16 weights, rule steps, tunables.
TEST(TextFormat, ParsedMapMatchesCrushtoolDump) {
  for (const char* c : {"rep3-host-uniform", "rep3-rack-mixed-weights", "ec42-indep-host-holes"}) {
    SCOPED_TRACE(c);
    const std::string dir = testing::testdata(std::string("crush/ceph/") + c);
    auto map = load_text_map(dir + "/map.txt");
    ASSERT_TRUE(map.ok()) << map.status().to_string();
    const auto dump = nlohmann::json::parse(testing::read_file(dir + "/map.json"));
    for (const auto& b : dump["buckets"]) {
      const Bucket* ours = map->bucket(b["id"].get<int32_t>());
      ASSERT_NE(ours, nullptr);
      EXPECT_EQ(ours->weight, b["weight"].get<uint32_t>());
      EXPECT_EQ(bucket_alg_name(ours->alg), b["alg"].get<std::string>());
      ASSERT_EQ(ours->size(), static_cast<int32_t>(b["items"].size()));
      for (size_t i = 0; i < b["items"].size(); ++i) {
        EXPECT_EQ(ours->items[i], b["items"][i]["id"].get<int32_t>());
        EXPECT_EQ(ours->item_weights[i], b["items"][i]["weight"].get<uint32_t>());
      }
    }
    const auto& t = dump["tunables"];
    EXPECT_EQ(map->tunables().choose_total_tries, t["choose_total_tries"].get<uint32_t>());
    EXPECT_EQ(map->tunables().chooseleaf_stable, t["chooseleaf_stable"].get<uint32_t>());
    EXPECT_EQ(map->tunables().profile_name(), "jewel");
  }
}

struct BadMap {
  const char* text;
  const char* message;  // a fragment the error must contain
};

TEST(TextFormat, ErrorsNameLineColumnExpectedAndFound) {
  const BadMap cases[] = {
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw3\n}\n",
       "m.txt:6:6: expected a bucket alg (uniform, list, tree, straw or straw2), found 'straw3'"},
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n\titem "
       "osd.9\n}\n",
       "m.txt:7:2: item 'osd.9' in bucket 'h' is not defined"},
      {"tunable choose_total_trys 50\n", "m.txt:1:9: unknown tunable 'choose_total_trys'"},
      {"device x osd.0\n", "m.txt:1:8: expected a device id 0..1048575, found 'x'"},
      {"type 0 osd\nrack r {\n\tid -1\n\talg straw2\n}\n",
       "m.txt:2:1: bucket type 'rack' is not defined"},
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n\titem osd.0 "
       "weight 1.5.2\n}\n",
       "m.txt:7:20: expected a weight 0..65535 for item 'osd.0', found '1.5.2'"},
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n\titem osd.0\n}\n"
       "rule r {\n\tid 0\n\ttype replicated\n\tstep take h\n\tstep chooseleaf firstn 0 type "
       "rack\n\tstep emit\n}\n",
       "m.txt:13:32: in rule 'r' type 'rack' is not defined"},
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n\titem osd.0\n}\n"
       "rule r {\n\tid 0\n\ttype replicated\n\tstep take nowhere\n\tstep emit\n}\n",
       "m.txt:12:12: in rule 'r' item 'nowhere' is not defined"},
      {"device 0 osd.0 class hdd\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n\titem "
       "osd.0\n}\n"
       "rule r {\n\tid 0\n\ttype replicated\n\tstep take h class ssd\n\tstep emit\n}\n",
       "m.txt:12:20: in rule 'r' device class 'ssd' is not defined"},
      {"host h {\n",
       "m.txt:2:1: expected 'id', 'alg', 'hash', 'item' or '}' in bucket 'h', found end of input"},
      {"type 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg straw2\n",
       "m.txt:6:1: expected 'id', 'alg', 'hash', 'item' or '}' in bucket 'h', found end of input"},
      {"device 0 osd.0\ndevice 0 osd.1\n", "m.txt:2:1: device id 0 is already defined as 'osd.0'"},
      {"device 0 osd.0\ntype 0 osd\ntype 1 host\nhost h {\n\tid -1\n\talg uniform\n\titem osd.0 "
       "weight 1\n\titem osd.1 weight 2\n}\n",
       "m.txt:8:2: item 'osd.1' in bucket 'h' is not defined"},
      {"bogus\n",
       "m.txt:1:1: expected 'tunable', 'device', 'type', a bucket, 'rule' or 'choose_args', found "
       "'bogus'"},
  };
  for (const BadMap& c : cases) {
    auto r = parse_text_map(c.text, "m.txt");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << "got: " << r.status().message() << "\nwant: " << c.message;
  }
}

TEST(TextFormat, LoadingAMissingFileSaysWhich) {
  auto r = load_text_map("/nonexistent/map.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIOError);
  EXPECT_NE(r.status().message().find("/nonexistent/map.txt"), std::string::npos);
}

TEST(TextFormat, BucketsMayBeListedBeforeTheyAreDefinedAndIdsAreAssigned) {
  const char* text =
      "device 0 osd.0\ndevice 1 osd.1\ntype 0 osd\ntype 1 host\ntype 2 root\n"
      "root top {\n\talg straw2\n\thash 0\n\titem b\n\titem a weight 2.0\n}\n"
      "host a {\n\tid -1\n\talg straw2\n\thash 0\n\titem osd.0\n}\n"
      "host b {\n\talg straw2\n\thash 0\n\titem osd.1 weight 0.5\n}\n";
  auto m = parse_text_map(text, "fwd.txt");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const auto top = m->item_id("top");
  ASSERT_TRUE(top.has_value());
  const Bucket* b = m->bucket(*top);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->items, (std::vector<int32_t>{*m->item_id("b"), -1}));
  EXPECT_EQ(b->item_weights, (std::vector<uint32_t>{0x8000, 0x20000}));  // b's own weight, then 2.0
}

TEST(TextFormat, DeviceClassesBuildShadowTrees) {
  const char* text =
      "device 0 osd.0 class hdd\ndevice 1 osd.1 class ssd\ndevice 2 osd.2 class hdd\n"
      "type 0 osd\ntype 1 host\ntype 2 root\n"
      "host h1 {\n\tid -2\n\talg straw2\n\thash 0\n\titem osd.0\n\titem osd.1\n}\n"
      "host h2 {\n\tid -3\n\talg straw2\n\thash 0\n\titem osd.2 weight 2.0\n}\n"
      "root default {\n\tid -1\n\tid -10 class hdd\n\talg straw2\n\thash 0\n\titem h1\n\titem "
      "h2\n}\n"
      "rule r {\n\tid 0\n\ttype replicated\n\tstep take default class hdd\n\tstep emit\n}\n";
  auto m = parse_text_map(text, "classes.txt");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const Bucket* hdd_root = m->bucket(-10);
  ASSERT_NE(hdd_root, nullptr);
  EXPECT_EQ(*m->item_name(-10), "default~hdd");
  EXPECT_EQ(hdd_root->weight, 0x30000u);  // osd.0 (1.0) + osd.2 (2.0)
  EXPECT_EQ(m->rule(0)->steps[0].arg1, -10);
  // The writer prints the class ids, not the shadow buckets.
  const std::string out = write_text_map(*m);
  EXPECT_NE(out.find("\tid -10 class hdd\t\t# do not change unnecessarily\n"), std::string::npos);
  EXPECT_EQ(out.find("default~hdd"), std::string::npos);
  EXPECT_NE(out.find("step take default class hdd"), std::string::npos);
}

}  // namespace
}  // namespace granary::crush

// simulation.carry_data end to end (sim/carry_data.h): content and its check, and a simulated
// cluster that carries bytes finding a corrupted device byte — by the deep scrub on a replica,
// or by the read itself on the primary (the run fails, naming it). Each TEST is one simulation:
// ctest runs each in its own process.
#include "sim/carry_data.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/services/file_mapping.h"
#include "models/scenario_json.h"
#include "sim/runner.h"
#include "sim/world.h"

namespace granary::sim {
namespace {

TEST(CarryData, ContentIsAFunctionOfSeedPathAndOffset) {
  const Payload whole = content_payload(5, "d/f1", 10000);
  std::vector<std::byte> part(333);
  fill_content(5, "d/f1", 4097, part);  // any offset gives the same bytes
  EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.bytes.begin() + 4097));
  EXPECT_FALSE(content_payload(5, "d/f2", 10000).bytes == whole.bytes);
  EXPECT_FALSE(content_payload(6, "d/f1", 10000).bytes == whole.bytes);
}

TEST(CarryData, VerifyCountsAndNamesTheFirstByteThatDiffers) {
  CarriedData carried(5);
  std::vector<std::byte> data = content_payload(5, "d/f1", 3 << 20).bytes.to_vector();
  EXPECT_TRUE(carried.verify("d/f1", data.size(), data).ok());
  data[(2 << 20) + 7] ^= std::byte{0x10};
  const Status bad = carried.verify("d/f1", data.size(), data);
  EXPECT_EQ(bad.code(), Status::Code::kCorruption);
  EXPECT_NE(bad.message().find("carried data: d/f1: byte 2097159 reads 0x"), std::string::npos)
      << bad.message();
  EXPECT_EQ(carried.counts().reads_verified, 2u);
  EXPECT_EQ(carried.counts().bytes_verified, uint64_t{3} << 20);
  EXPECT_EQ(carried.counts().mismatches, 1u);
  const Status short_read = carried.verify("d/f1", 10, std::vector<std::byte>(9));
  EXPECT_NE(short_read.message().find("returned 9 bytes, the file has 10"), std::string::npos);
}

// The shipped 4+2 scenario made a 3x replicated pool.
models::Scenario replicated_scenario() {
  std::ifstream f(std::string(GRANARY_SOURCE_DIR) + "/scenarios/ci/carry-data-ec-4-2.json");
  nlohmann::json j = nlohmann::json::parse(f);
  j["storage"]["rados"].erase("erasure");
  j["storage"]["rados"]["replicas"] = 3;
  j.erase("expect");
  auto s = models::parse_scenario(j.dump(), "carry.json");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : models::Scenario{};
}

// Flips a byte of the first object of the dataset's first file on the OSD at `position` of its
// group (0: the primary), inside its first extent on the device.
RunOptions corrupt_at(int position, std::string* object, int32_t* device) {
  RunOptions o;
  o.before_clock = [position, object, device](SimEnv& env, const World& world) {
    *object = services::rados_object_name(world.dataset->files().front().path, 0);
    std::vector<int32_t> devices;
    world.pool->devices_of(world.pool->group_of(*object), devices);
    ASSERT_GT(devices.size(), static_cast<size_t>(position));
    *device = devices[static_cast<size_t>(position)];
    auto extents = world.carried->stores()[static_cast<size_t>(*device)]->extents(*object);
    ASSERT_TRUE(extents.ok()) << extents.status().to_string();
    env.corrupt_device_byte(*device, extents->front().device_offset + 100, 0x5a);
  };
  return o;
}

TEST(CarryData, ACorruptedReplicaByteIsFoundAndRepairedByTheDeepScrub) {
  std::string object;
  int32_t device = -1;
  auto report = run_scenario(replicated_scenario(), corrupt_at(1, &object, &device));
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  const auto& c = (*report)["carry_data"];
  EXPECT_EQ(c["reads_verified"], 128);  // the primary's copy is whole: every read checks out
  EXPECT_EQ(c["mismatches"], 0);
  EXPECT_EQ(c["copies_written"], 128 * 3);
  EXPECT_EQ(c["scrub"]["copies_checked"], 128 * 3);
  EXPECT_EQ(c["scrub"]["errors_found"], 1) << object << " on osd." << device;
  EXPECT_EQ(c["scrub"]["errors_repaired"], 1);
  EXPECT_EQ((*report)["run"]["carry_data"]["carried"], true);
}

TEST(CarryData, ACorruptedPrimaryByteFailsTheRunNamingIt) {
  std::string object;
  int32_t device = -1;
  auto report = run_scenario(replicated_scenario(), corrupt_at(0, &object, &device));
  ASSERT_FALSE(report.ok());
  const std::string m = report.status().message();
  EXPECT_NE(m.find("carry.json: the run failed: "), std::string::npos) << m;
  EXPECT_NE(m.find("crc32c"), std::string::npos) << m;
  EXPECT_NE(m.find(object), std::string::npos) << m;
}

}  // namespace
}  // namespace granary::sim

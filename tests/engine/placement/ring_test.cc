#include "engine/placement/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine/crush/hash.h"

namespace granary::placement {
namespace {

// zones x hosts_per_zone x devices_per_host devices with ids 0, 1, ... in that order, host
// names "z<zone>h<host>", all in region 0; weight(id) gives each device's weight.
std::vector<RingDevice> grid(int zones, int hosts_per_zone, int devices_per_host,
                             const std::function<double(int32_t)>& weight = nullptr) {
  std::vector<RingDevice> devices;
  int32_t id = 0;
  for (int z = 0; z < zones; ++z) {
    for (int h = 0; h < hosts_per_zone; ++h) {
      for (int d = 0; d < devices_per_host; ++d, ++id) {
        RingDevice dev;
        dev.id = id;
        dev.weight = weight ? weight(id) : 1.0;
        dev.zone = z;
        dev.host = "z" + std::to_string(z) + "h" + std::to_string(h);
        devices.push_back(dev);
      }
    }
  }
  return devices;
}

RingBuilder make_builder(int part_power, int replicas, const std::vector<RingDevice>& devices) {
  Result<RingBuilder> builder =
      RingBuilder::create({.part_power = part_power, .replicas = replicas});
  EXPECT_TRUE(builder.ok()) << builder.status().to_string();
  for (const RingDevice& d : devices) {
    const Status s = builder->add_device(d);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }
  return std::move(builder).value();
}

RebalanceReport rebalance(RingBuilder& builder, uint64_t seed = 42) {
  Random random(seed);
  Result<RebalanceReport> report = builder.rebalance(random);
  EXPECT_TRUE(report.ok()) << report.status().to_string();
  return report.ok() ? *report : RebalanceReport{};
}

// Entries of the table that differ between two rebalances.
int64_t changed(const std::vector<std::vector<int32_t>>& a,
                const std::vector<std::vector<int32_t>>& b) {
  int64_t n = 0;
  for (size_t r = 0; r < a.size(); ++r) {
    for (size_t p = 0; p < a[r].size(); ++p) n += a[r][p] != b[r][p];
  }
  return n;
}

// Largest |assigned - ideal| over the devices, ideal = P * R * weight / total weight.
double max_off_ideal(const RingBuilder& builder) {
  double total_weight = 0;
  for (const auto& [id, d] : builder.devices()) total_weight += d.weight;
  const double slots = static_cast<double>(builder.num_partitions()) * builder.options().replicas;
  const std::map<int32_t, int64_t> counts = builder.assigned_counts();
  double worst = 0;
  for (const auto& [id, d] : builder.devices()) {
    const auto it = counts.find(id);
    const double have = it == counts.end() ? 0.0 : static_cast<double>(it->second);
    worst = std::max(worst, std::abs(have - slots * d.weight / total_weight));
  }
  return worst;
}

// The number of distinct values of key(device) over each partition's replicas: the fewest
// and the most over all partitions.
std::pair<int, int> distinct_per_partition(const RingBuilder& builder,
                                           const std::function<std::string(int32_t)>& key) {
  int fewest = 1 << 30, most = 0;
  const auto& table = builder.replica2part2dev();
  for (uint32_t p = 0; p < builder.num_partitions(); ++p) {
    std::set<std::string> seen;
    for (const auto& part2dev : table) seen.insert(key(part2dev[p]));
    fewest = std::min(fewest, static_cast<int>(seen.size()));
    most = std::max(most, static_cast<int>(seen.size()));
  }
  return {fewest, most};
}

std::function<std::string(int32_t)> by_device() {
  return [](int32_t id) { return std::to_string(id); };
}
std::function<std::string(int32_t)> by_host(const RingBuilder& b) {
  return [&b](int32_t id) { return b.devices().at(id).host; };
}
std::function<std::string(int32_t)> by_zone(const RingBuilder& b) {
  return [&b](int32_t id) {
    const RingDevice& d = b.devices().at(id);
    return std::to_string(d.region) + "/" + std::to_string(d.zone);
  };
}

TEST(Ring, EveryPartitionHasDistinctDevices) {
  RingBuilder b = make_builder(10, 3, grid(3, 2, 2));
  const RebalanceReport report = rebalance(b);
  EXPECT_EQ(report.placed, 3 * 1024);
  EXPECT_EQ(report.changed, 3 * 1024);
  for (const auto& part2dev : b.replica2part2dev()) {
    for (int32_t dev : part2dev) ASSERT_TRUE(b.devices().count(dev)) << dev;
  }
  EXPECT_EQ(distinct_per_partition(b, by_device()), std::make_pair(3, 3));
}

TEST(Ring, ReplicasInDistinctZonesWhenThereAreEnoughZones) {
  // 4 zones of unequal size and weight: zone 0 has 10% of the weight, zone 3 has 50%, which
  // is more than 1/3; dispersion wins, so zone 3 still gets one replica of each partition.
  std::vector<RingDevice> devices = grid(4, 2, 2);
  for (RingDevice& d : devices) d.weight = d.zone == 3 ? 3.0 : (d.zone == 0 ? 0.6 : 1.2);
  RingBuilder b = make_builder(10, 3, devices);
  rebalance(b);
  EXPECT_EQ(distinct_per_partition(b, by_zone(b)), std::make_pair(3, 3));
  int64_t zone3 = 0;
  for (const auto& [id, n] : b.assigned_counts()) zone3 += b.devices().at(id).zone == 3 ? n : 0;
  EXPECT_EQ(zone3, 1024);
}

TEST(Ring, SpreadsOverHostsWhenFewerZonesThanReplicas) {
  // 2 zones with 3 hosts each: every partition uses both zones and 3 distinct hosts.
  {
    RingBuilder b = make_builder(10, 3, grid(2, 3, 2));
    rebalance(b);
    EXPECT_EQ(distinct_per_partition(b, by_zone(b)), std::make_pair(2, 2));
    EXPECT_EQ(distinct_per_partition(b, by_host(b)), std::make_pair(3, 3));
  }
  // 1 zone, 2 hosts, 4 replicas: 2 replicas per host, on distinct devices.
  {
    RingBuilder b = make_builder(8, 4, grid(1, 2, 3));
    rebalance(b);
    EXPECT_EQ(distinct_per_partition(b, by_host(b)), std::make_pair(2, 2));
    EXPECT_EQ(distinct_per_partition(b, by_device()), std::make_pair(4, 4));
    for (uint32_t p = 0; p < b.num_partitions(); ++p) {
      int on_h0 = 0;
      for (const auto& part2dev : b.replica2part2dev())
        on_h0 += b.devices().at(part2dev[p]).host == "z0h0";
      ASSERT_EQ(on_h0, 2) << "partition " << p;
    }
  }
  // Zone 0 has a single host, zone 1 three: zone 0's host gets one replica, never two.
  {
    std::vector<RingDevice> devices = grid(1, 1, 4);
    for (RingDevice& d : grid(1, 3, 1)) {
      d.id += 4;
      d.zone = 1;
      d.host = "z1" + d.host.substr(2);
      devices.push_back(d);
    }
    RingBuilder b = make_builder(10, 3, devices);
    rebalance(b);
    EXPECT_EQ(distinct_per_partition(b, by_host(b)), std::make_pair(3, 3));
  }
}

TEST(Ring, BalanceWithEqualWeights) {
  RingBuilder b = make_builder(12, 3, grid(3, 4, 2));
  const RebalanceReport report = rebalance(b);
  const double off = max_off_ideal(b);
  std::printf(
      "ring balance, 24 equal devices, 3 zones, 2^12 x 3: max |count - ideal| = %.3f "
      "(ideal %.1f), max off target %lld\n",
      off, 4096.0 * 3 / 24, static_cast<long long>(report.max_off_target));
  EXPECT_LE(off, 1.0);
  EXPECT_EQ(report.max_off_target, 0);
}

TEST(Ring, BalanceWithUnequalWeights) {
  // 12 devices in 3 zones, each zone 4 hosts with weights 1, 2, 4, 1: zones weigh the same, so
  // every device gets its global weight-proportional share.
  RingBuilder b = make_builder(12, 3, grid(3, 4, 1, [](int32_t id) {
                                 static const double w[] = {1, 2, 4, 1};
                                 return w[id % 4];
                               }));
  const RebalanceReport report = rebalance(b);
  double off = max_off_ideal(b);
  std::printf(
      "ring balance, 12 devices weights 1/2/4/1 x 3 zones, 2^12 x 3: max |count - ideal| "
      "= %.3f, max off target %lld\n",
      off, static_cast<long long>(report.max_off_target));
  EXPECT_LE(off, 1.0);
  EXPECT_EQ(report.max_off_target, 0);

  // 6 zones of 2 devices, weights cycling 1, 2, 4 (no zone above 1/3 of the weight): shares
  // are global again.
  RingBuilder c = make_builder(12, 3, grid(6, 2, 1, [](int32_t id) {
                                 static const double w[] = {1, 2, 4};
                                 return w[id % 3];
                               }));
  const RebalanceReport report_c = rebalance(c);
  off = max_off_ideal(c);
  std::printf(
      "ring balance, 12 devices weights 1/2/4 over 6 zones, 2^12 x 3: max |count - ideal| "
      "= %.3f, max off target %lld\n",
      off, static_cast<long long>(report_c.max_off_target));
  EXPECT_LE(off, 1.0);
  EXPECT_EQ(report_c.max_off_target, 0);
  EXPECT_EQ(distinct_per_partition(c, by_zone(c)), std::make_pair(3, 3));
}

TEST(Ring, DispersionWinsOverWeightWithinAZone) {
  // 3 zones, 3 replicas, zone 2 twice as heavy: every zone holds exactly one replica of each
  // partition, and within a zone devices share by weight.
  std::vector<RingDevice> devices = grid(3, 2, 1);
  for (RingDevice& d : devices) d.weight = d.zone == 2 ? 2.0 : 1.0;
  devices[5].weight = 6.0;  // zone 2: weights 2 and 6
  RingBuilder b = make_builder(10, 3, devices);
  rebalance(b);
  const std::map<int32_t, int64_t> counts = b.assigned_counts();
  EXPECT_EQ(counts.at(0), 512);
  EXPECT_EQ(counts.at(1), 512);
  EXPECT_EQ(counts.at(4), 256);
  EXPECT_EQ(counts.at(5), 768);
}

TEST(Ring, RemovingADeviceMovesOnlyItsReplicas) {
  RingBuilder b = make_builder(12, 3, grid(3, 4, 2));
  rebalance(b, 1);
  const auto before = b.replica2part2dev();
  const int64_t on_removed = b.assigned_counts().at(5);
  ASSERT_TRUE(b.remove_device(5).ok());
  const RebalanceReport report = rebalance(b, 2);
  const int64_t moved = changed(before, b.replica2part2dev());
  std::printf(
      "ring movement, remove 1 of 24 devices: moved %lld of %d (device held %lld, "
      "1/N = %.1f)\n",
      static_cast<long long>(moved), 4096 * 3, static_cast<long long>(on_removed), 4096.0 * 3 / 24);
  EXPECT_EQ(report.changed, moved);
  EXPECT_GE(moved, on_removed);
  // Allowance: 1% of all partition-replicas for dispersion and balance fixes.
  EXPECT_LE(moved, on_removed + 4096 * 3 / 100);
  EXPECT_LE(report.max_off_target, 1);
  for (const auto& part2dev : b.replica2part2dev()) {
    for (int32_t dev : part2dev) ASSERT_NE(dev, 5);
  }
  EXPECT_EQ(distinct_per_partition(b, by_zone(b)), std::make_pair(3, 3));
}

TEST(Ring, AddingADeviceMovesItsFairShareToIt) {
  RingBuilder b = make_builder(12, 3, grid(4, 3, 2));  // 24 devices, 4 zones
  rebalance(b, 1);
  const auto before = b.replica2part2dev();
  RingDevice added;
  added.id = 24;
  added.zone = 1;
  added.host = "z1h9";
  ASSERT_TRUE(b.add_device(added).ok());
  const RebalanceReport report = rebalance(b, 2);
  const auto& after = b.replica2part2dev();
  const int64_t moved = changed(before, after);
  int64_t moved_elsewhere = 0;
  for (size_t r = 0; r < after.size(); ++r) {
    for (size_t p = 0; p < after[r].size(); ++p) {
      moved_elsewhere += after[r][p] != before[r][p] && after[r][p] != 24;
    }
  }
  const int64_t fair = 4096 * 3 / 25;
  std::printf(
      "ring movement, add a 25th device: moved %lld (fair share %lld), %lld of them not "
      "to the new device\n",
      static_cast<long long>(moved), static_cast<long long>(fair),
      static_cast<long long>(moved_elsewhere));
  EXPECT_EQ(b.assigned_counts().at(24), b.target_counts().at(24));
  EXPECT_NEAR(static_cast<double>(moved), static_cast<double>(fair), 2.0);
  EXPECT_LE(moved_elsewhere, 4096 * 3 / 100);
  EXPECT_LE(report.max_off_target, 1);
}

TEST(Ring, WeightChangeMovesProportionally) {
  RingBuilder b = make_builder(12, 3, grid(4, 3, 2));
  rebalance(b, 1);
  const auto before = b.replica2part2dev();
  const int64_t held = b.assigned_counts().at(7);
  ASSERT_TRUE(b.set_weight(7, 0.5).ok());
  const RebalanceReport report = rebalance(b, 2);
  const int64_t moved = changed(before, b.replica2part2dev());
  const int64_t now = b.assigned_counts().at(7);
  std::printf("ring movement, halve one of 24 weights: device %lld -> %lld, moved %lld\n",
              static_cast<long long>(held), static_cast<long long>(now),
              static_cast<long long>(moved));
  EXPECT_NEAR(static_cast<double>(now), 4096.0 * 3 * 0.5 / 23.5, 1.0);
  EXPECT_EQ(moved, held - now);
  EXPECT_LE(report.max_off_target, 1);
}

TEST(Ring, RebalanceWithoutChangeMovesNothing) {
  RingBuilder b = make_builder(10, 3, grid(3, 2, 2, [](int32_t id) { return 1.0 + id % 3; }));
  rebalance(b, 1);
  const auto before = b.replica2part2dev();
  const RebalanceReport report = rebalance(b, 99);
  EXPECT_EQ(report.changed, 0);
  EXPECT_EQ(report.placed + report.dispersion_moves + report.balance_moves, 0);
  EXPECT_EQ(b.replica2part2dev(), before);
}

// The dispersion key of the test, written independently of ring.cc: the partition's other
// replicas in the same region, zone and host as `dev`; INT32_MAX if `dev` holds one of them.
int crowding(const RingBuilder& b, uint32_t p, size_t skip, int32_t dev) {
  const RingDevice& d = b.devices().at(dev);
  int in_region = 0, in_zone = 0, in_host = 0;
  for (size_t r = 0; r < b.replica2part2dev().size(); ++r) {
    if (r == skip) continue;
    const int32_t other_id = b.replica2part2dev()[r][p];
    if (other_id == dev) return INT32_MAX;
    const RingDevice& o = b.devices().at(other_id);
    in_region += o.region == d.region;
    in_zone += o.region == d.region && o.zone == d.zone;
    in_host += o.region == d.region && o.zone == d.zone && o.host == d.host;
  }
  return in_region * 10000 + in_zone * 100 + in_host;
}

TEST(Ring, RandomTopologiesStaySpreadBalancedAndStable) {
  Random meta(2024);
  int rebalances = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<RingDevice> devices;
    int32_t next_id = 0;
    const int regions = 1 + static_cast<int>(meta.uniform(2));
    for (int region = 0; region < regions; ++region) {
      const int zones = 1 + static_cast<int>(meta.uniform(4));
      for (int zone = 0; zone < zones; ++zone) {
        const int hosts = 1 + static_cast<int>(meta.uniform(3));
        for (int host = 0; host < hosts; ++host) {
          const int n = 1 + static_cast<int>(meta.uniform(3));
          for (int i = 0; i < n; ++i) {
            static const double kWeights[] = {0.5, 1, 1, 2, 3};
            devices.push_back({.id = next_id++,
                               .weight = kWeights[meta.uniform(5)],
                               .region = region,
                               .zone = zone,
                               .host = "h" + std::to_string(host)});
          }
        }
      }
    }
    const int replicas = 1 + static_cast<int>(meta.uniform(std::min<uint64_t>(4, devices.size())));
    RingBuilder b = make_builder(7, replicas, devices);
    Random random(trial);
    for (int step = 0; step < 4; ++step) {
      Result<RebalanceReport> report = b.rebalance(random);
      ASSERT_TRUE(report.ok()) << report.status().to_string();
      ++rebalances;
      const auto& table = b.replica2part2dev();
      for (uint32_t p = 0; p < b.num_partitions(); ++p) {
        for (size_t r = 0; r < table.size(); ++r) {
          const int current = crowding(b, p, r, table[r][p]);
          ASSERT_NE(current, INT32_MAX) << "trial " << trial << " partition " << p;
          for (const auto& [id, d] : b.devices()) {
            if (d.weight > 0) {
              ASSERT_GE(crowding(b, p, r, id), current)
                  << "trial " << trial << " step " << step << " partition " << p << " replica " << r
                  << " could move to device " << id;
            }
          }
        }
      }
      EXPECT_EQ(report->max_off_target, 0) << "trial " << trial << " step " << step;
      const auto table_before = table;
      EXPECT_EQ(b.rebalance(random)->changed, 0) << "trial " << trial << " step " << step;
      // A change: remove a device, add one (maybe on a new host or zone) or change a weight.
      auto victim = b.devices().begin();
      std::advance(victim, meta.uniform(b.devices().size()));
      const int32_t victim_id = victim->first;
      RingDevice added = victim->second;
      switch (meta.uniform(3)) {
        case 0:
          if (static_cast<int>(b.devices().size()) > replicas) {
            ASSERT_TRUE(b.remove_device(victim_id).ok());
          }
          break;
        case 1:
          added.id = next_id++;
          if (meta.uniform(2)) added.host = "new" + std::to_string(added.id);
          if (meta.uniform(3) == 0) added.zone = 7;
          ASSERT_TRUE(b.add_device(added).ok());
          break;
        default:
          ASSERT_TRUE(b.set_weight(victim_id, 0.5 + static_cast<double>(meta.uniform(6))).ok());
      }
    }
  }
  EXPECT_EQ(rebalances, 160);
}

TEST(Ring, SameInputsAndSeedGiveTheSameTable) {
  RingBuilder a = make_builder(10, 3, grid(3, 2, 2));
  RingBuilder b = make_builder(10, 3, grid(3, 2, 2));
  RingBuilder c = make_builder(10, 3, grid(3, 2, 2));
  rebalance(a, 7);
  rebalance(b, 7);
  rebalance(c, 8);
  EXPECT_EQ(a.replica2part2dev(), b.replica2part2dev());
  EXPECT_NE(a.replica2part2dev(), c.replica2part2dev());  // ties are drawn from the seed
}

TEST(Ring, GroupOfIsTheTopBitsOfTheRjenkinsHash) {
  RingBuilder b = make_builder(10, 3, grid(3, 1, 1));
  rebalance(b);
  Result<Ring> ring = b.build();
  ASSERT_TRUE(ring.ok());
  for (const char* name : {"a", "obj-1", "checkpoint/step-100/shard-7"}) {
    EXPECT_EQ(ring->group_of(name), crush::str_hash_rjenkins(name) >> 22) << name;
  }
  // Golden values: changing them changes where every object lives.
  EXPECT_EQ(ring->group_of("a"), 167u);
  EXPECT_EQ(ring->group_of("obj-1"), 620u);
  // The partition depends on part_power only, never on the devices.
  RingBuilder other = make_builder(10, 2, grid(5, 1, 1));
  rebalance(other, 3);
  EXPECT_EQ(other.build()->group_of("obj-1"), ring->group_of("obj-1"));
}

TEST(Ring, ImplementsPlacement) {
  RingBuilder b = make_builder(8, 3, grid(3, 2, 1, [](int32_t id) { return id == 0 ? 2.0 : 1.0; }));
  rebalance(b);
  Result<Ring> built = b.build();
  ASSERT_TRUE(built.ok());
  Ring ring = std::move(built).value();
  Placement& placement = ring;
  EXPECT_EQ(placement.describe(), "ring 2^8 partitions x 3 replicas, 6 devices in 3 zones");
  EXPECT_EQ(placement.num_groups(), 256u);
  EXPECT_EQ(placement.replicas(), 3);
  EXPECT_EQ(placement.device_id_bound(), 6);
  const std::vector<double> shares = placement.target_shares();
  ASSERT_EQ(shares.size(), 6u);
  EXPECT_DOUBLE_EQ(shares[0], 2.0 / 7);
  EXPECT_DOUBLE_EQ(shares[5], 1.0 / 7);
  EXPECT_EQ(placement.failure_domain(0), placement.failure_domain(1));
  EXPECT_NE(placement.failure_domain(1), placement.failure_domain(2));
  EXPECT_EQ(placement.failure_domain(99), -1);
  std::vector<int32_t> devs;
  for (uint32_t p = 0; p < placement.num_groups(); ++p) {
    placement.devices_of(p, devs);
    ASSERT_EQ(devs.size(), 3u);
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(devs[r], b.replica2part2dev()[r][p]);
  }
  // A device drained after the table was built is skipped, keeping replica order.
  ASSERT_TRUE(b.set_weight(2, 0).ok());
  Ring drained = std::move(b.build()).value();
  int short_groups = 0;
  for (uint32_t p = 0; p < drained.num_groups(); ++p) {
    drained.devices_of(p, devs);
    short_groups += devs.size() == 2;
    for (int32_t d : devs) ASSERT_NE(d, 2);
  }
  EXPECT_EQ(short_groups, b.assigned_counts().at(2));
  EXPECT_EQ(drained.target_shares()[2], 0.0);
}

TEST(Ring, BadInputErrorsNameTheProblem) {
  auto message = [](const Status& s) { return s.ok() ? std::string("OK") : s.message(); };
  EXPECT_NE(message(RingBuilder::create({.part_power = 0, .replicas = 3}).status())
                .find("part_power must be 1..24, got 0"),
            std::string::npos);
  EXPECT_NE(
      message(RingBuilder::create({.part_power = 25, .replicas = 3}).status()).find("part_power"),
      std::string::npos);
  EXPECT_NE(message(RingBuilder::create({.part_power = 8, .replicas = 0}).status())
                .find("replicas must be 1..64, got 0"),
            std::string::npos);

  RingBuilder b = std::move(RingBuilder::create({.part_power = 4, .replicas = 3})).value();
  Random random(1);
  EXPECT_NE(message(b.rebalance(random).status()).find("no devices"), std::string::npos);
  EXPECT_NE(message(b.build().status()).find("rebalance first"), std::string::npos);
  ASSERT_TRUE(b.add_device({.id = 0, .weight = 1, .region = 0, .zone = 0, .host = "h0"}).ok());
  EXPECT_NE(message(b.add_device({.id = 0, .weight = 1, .region = 0, .zone = 1, .host = "h1"}))
                .find("duplicate device 0"),
            std::string::npos);
  EXPECT_NE(message(b.add_device({.id = 1, .weight = -1, .region = 0, .zone = 0, .host = "h1"}))
                .find("device 1: weight must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(message(b.add_device({.id = 1, .weight = NAN, .region = 0, .zone = 0, .host = "h1"}))
                .find("weight"),
            std::string::npos);
  EXPECT_NE(message(b.add_device({.id = -3, .weight = 1, .region = 0, .zone = 0, .host = "h1"}))
                .find("device id must be"),
            std::string::npos);
  EXPECT_NE(message(b.add_device({.id = 1, .weight = 1, .region = 0, .zone = -1, .host = "h1"}))
                .find("zone must be >= 0"),
            std::string::npos);
  EXPECT_NE(message(b.add_device({.id = 1, .weight = 1, .region = 0, .zone = 0, .host = ""}))
                .find("host must not be empty"),
            std::string::npos);
  EXPECT_NE(message(b.remove_device(7)).find("no such device"), std::string::npos);
  EXPECT_NE(message(b.set_weight(7, 1)).find("no such device"), std::string::npos);
  ASSERT_TRUE(b.add_device({.id = 1, .weight = 1, .region = 0, .zone = 0, .host = "h1"}).ok());
  ASSERT_TRUE(b.add_device({.id = 2, .weight = 0, .region = 0, .zone = 0, .host = "h2"}).ok());
  EXPECT_NE(message(b.rebalance(random).status())
                .find("3 replicas of a partition need as many distinct devices with nonzero "
                      "weight, but only 2 of its 3"),
            std::string::npos);
  ASSERT_TRUE(b.set_weight(2, 1).ok());
  EXPECT_TRUE(b.rebalance(random).ok());
}

}  // namespace
}  // namespace granary::placement

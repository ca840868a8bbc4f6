#include "engine/cluster/acting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/placement/placement.h"

namespace granary::cluster {
namespace {

constexpr int32_t kNone = placement::kNoDevice;

struct Pg {
  Pg(std::vector<int32_t> up, std::vector<int32_t> holders, std::vector<int32_t> down = {},
     std::vector<int32_t> lost = {}, std::vector<int32_t> stale = {})
      : up(std::move(up)),
        holders(std::move(holders)),
        down(std::move(down)),
        lost(std::move(lost)),
        stale(std::move(stale)) {}
  std::vector<int32_t> up, holders;
  std::vector<int32_t> down, lost, stale;

  std::vector<int32_t> acting(Redundancy r) const {
    auto has = [](const std::vector<int32_t>& v, int32_t o) {
      return std::find(v.begin(), v.end(), o) != v.end();
    };
    ActingInput in;
    in.up = &up;
    in.holders = &holders;
    in.redundancy = r;
    in.is_up = [&](int32_t o) { return !has(down, o); };
    in.intact = [&](int32_t o) { return !has(lost, o); };
    in.is_stale = [&](int32_t o) { return has(stale, o); };
    return choose_acting(in);
  }
};

// Replicated: the up set when it holds current copies; a backfill target gives way to the
// other current holders; a stale copy is left out; a dead drive the map still has up stays.
TEST(ChooseActing, ReplicatedFollowsTheCurrentCopies) {
  const Redundancy r = Redundancy::replicated(3);
  EXPECT_EQ((Pg{{1, 2, 3}, {1, 2, 3}}.acting(r)), (std::vector<int32_t>{1, 2, 3}));
  // osd.4 replaced osd.2 in the up set (a backfill target): 1 and 3 serve, and 2 while it is up.
  EXPECT_EQ((Pg{{1, 4, 3}, {1, 2, 3}, {2}}.acting(r)), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ((Pg{{1, 4, 3}, {1, 2, 3}}.acting(r)), (std::vector<int32_t>{1, 3, 2}));
  // osd.2 came back with missed writes: not current.
  EXPECT_EQ((Pg{{1, 2, 3}, {1, 2, 3}, {}, {}, {2}}.acting(r)), (std::vector<int32_t>{1, 3}));
  // osd.2's drive died but the map still has it up: clients keep sending to it.
  EXPECT_EQ((Pg{{1, 2, 3}, {1, 3}, {}, {2}}.acting(r)), (std::vector<int32_t>{1, 2, 3}));
  // No current copy left: nobody serves (I/O blocks).
  EXPECT_TRUE((Pg{{4, 5, 6}, {1, 2}, {1}, {2}}.acting(r)).empty());
}

// Erasure: by position; a position whose up member lacks its chunk goes to the chunk's current
// holder or stays empty; fewer than k current chunks: nobody.
TEST(ChooseActing, ErasureKeepsPositions) {
  const Redundancy r = Redundancy::erasure_coded(2, 1);
  EXPECT_EQ((Pg{{1, 2, 3}, {1, 2, 3}}.acting(r)), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ((Pg{{1, 4, 3}, {1, 2, 3}}.acting(r)), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ((Pg{{1, 4, 3}, {1, 2, 3}, {2}}.acting(r)), (std::vector<int32_t>{1, kNone, 3}));
  EXPECT_TRUE((Pg{{1, 4, 5}, {1, 2, 3}, {2, 3}}.acting(r)).empty());
}

TEST(ChooseActing, SameActingIgnoresTheReplicasOrderOnly) {
  EXPECT_TRUE(same_acting({1, 2, 3}, {1, 3, 2}, false));
  EXPECT_FALSE(same_acting({1, 2, 3}, {2, 1, 3}, false));
  EXPECT_FALSE(same_acting({1, 2, 3}, {1, 3, 2}, true));
  EXPECT_FALSE(same_acting({}, {1}, false));
  EXPECT_TRUE(same_acting({}, {}, true));
}

}  // namespace
}  // namespace granary::cluster

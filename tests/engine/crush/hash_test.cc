#include "engine/crush/hash.h"

#include <gtest/gtest.h>

namespace granary::crush {
namespace {

TEST(CrushHash, StrHashIsDeterministic) { EXPECT_EQ(str_hash_rjenkins("a"), str_hash_rjenkins("a")); }

}  // namespace
}  // namespace granary::crush

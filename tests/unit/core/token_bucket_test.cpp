#include "core/token_bucket.hpp"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucket, StartsFullThenRefillsAtItsRateUpToTheBurst) {
  const auto t0 = TokenBucket::Clock::time_point{} + 1h;
  TokenBucket bucket(10, 20, t0);
  int taken = 0;
  while (bucket.take(t0)) ++taken;
  EXPECT_EQ(taken, 20);
  EXPECT_FALSE(bucket.full(t0));
  EXPECT_FALSE(bucket.take(t0 + 50ms));  // half a token
  EXPECT_TRUE(bucket.take(t0 + 100ms));  // one token after 1/rate
  EXPECT_FALSE(bucket.full(t0 + 1s));
  EXPECT_TRUE(bucket.full(t0 + 3s));
  taken = 0;
  while (bucket.take(t0 + 10s)) ++taken;
  EXPECT_EQ(taken, 20) << "never more than the burst";
}

}  // namespace
}  // namespace sluice::core

// The restart policy in simulated time: backoff 250 ms doubling to 8 s, five automatic
// restarts in a row then held, a 10 s stable run resets the count, and a failed start is
// retried by a call only after its backoff.
#include "gateway/downstream/restart_policy.hpp"

#include "core/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace sluice::gateway {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

TEST(RestartPolicy, BackoffStartsAt250MillisecondsAndDoublesUpTo8Seconds) {
  core::SimulatedTime sim;
  RestartPolicy policy{core::Limits{}};
  EXPECT_EQ(policy.backoff(), 250ms);
  std::vector<milliseconds> seen;
  for (int i = 0; i < 8; ++i) {
    policy.start_failed(core::Clock::now());
    seen.push_back(policy.backoff());
  }
  EXPECT_EQ(seen, (std::vector<milliseconds>{250ms, 500ms, 1000ms, 2000ms, 4000ms, 8000ms, 8000ms,
                                             8000ms}));
}

TEST(RestartPolicy, AllowsFiveAutomaticRestartsInARowThenHolds) {
  RestartPolicy policy{core::Limits{}};
  std::vector<milliseconds> waits;
  while (auto wait = policy.next_auto_restart()) waits.push_back(*wait);
  EXPECT_EQ(waits, (std::vector<milliseconds>{250ms, 500ms, 1000ms, 2000ms, 4000ms}));
  EXPECT_EQ(policy.consecutive_failures(), 5u);
  EXPECT_FALSE(policy.next_auto_restart().has_value());
}

TEST(RestartPolicy, ARunThatStaysOnlineTenSecondsResetsTheCount) {
  core::SimulatedTime sim;
  RestartPolicy policy{core::Limits{}};
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(policy.next_auto_restart());
  policy.came_online(core::Clock::now());
  sim.advance(10s);
  policy.ended(core::Clock::now());
  EXPECT_EQ(policy.consecutive_failures(), 0u);
  EXPECT_EQ(policy.next_auto_restart(), milliseconds(250));
}

TEST(RestartPolicy, ARunShorterThanTenSecondsKeepsTheCount) {
  core::SimulatedTime sim;
  RestartPolicy policy{core::Limits{}};
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(policy.next_auto_restart());
  policy.came_online(core::Clock::now());
  sim.advance(9999ms);
  policy.ended(core::Clock::now());
  EXPECT_EQ(policy.consecutive_failures(), 4u);
  EXPECT_EQ(policy.next_auto_restart(), milliseconds(4000));
  EXPECT_FALSE(policy.next_auto_restart().has_value());
}

TEST(RestartPolicy, AFailedStartIsRetriedByACallOnlyAfterItsBackoff) {
  core::SimulatedTime sim;
  RestartPolicy policy{core::Limits{}};
  EXPECT_TRUE(policy.may_retry_start(core::Clock::now()));
  policy.start_failed(core::Clock::now());
  EXPECT_FALSE(policy.may_retry_start(core::Clock::now()));
  sim.advance(249ms);
  EXPECT_FALSE(policy.may_retry_start(core::Clock::now()));
  sim.advance(1ms);
  EXPECT_TRUE(policy.may_retry_start(core::Clock::now()));
  policy.start_failed(core::Clock::now());  // the second failure in a row waits 500 ms
  sim.advance(499ms);
  EXPECT_FALSE(policy.may_retry_start(core::Clock::now()));
  sim.advance(1ms);
  EXPECT_TRUE(policy.may_retry_start(core::Clock::now()));
}

TEST(RestartPolicy, AnExplicitStartResetsTheCount) {
  RestartPolicy policy{core::Limits{}};
  while (policy.next_auto_restart()) {
  }
  policy.reset();
  EXPECT_EQ(policy.consecutive_failures(), 0u);
  EXPECT_EQ(policy.next_auto_restart(), milliseconds(250));
}

TEST(RestartPolicy, FollowsTheConfiguredLimits) {
  core::Limits limits;
  limits.restart_backoff_initial = 100ms;
  limits.restart_backoff_max = 300ms;
  limits.max_auto_restarts = 3;
  RestartPolicy policy{limits};
  std::vector<milliseconds> waits;
  while (auto wait = policy.next_auto_restart()) waits.push_back(*wait);
  EXPECT_EQ(waits, (std::vector<milliseconds>{100ms, 200ms, 300ms}));
}

}  // namespace
}  // namespace sluice::gateway

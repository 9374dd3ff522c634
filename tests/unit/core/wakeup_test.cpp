// core::Wakeup: wake_now() resumes the sleeper before it returns, wake_later() after the waker
// is done, a wake with no sleeper does nothing, and a sleeper never woken is destroyed with
// its io_context (its frame freed, nothing it holds kept).
#include "core/wakeup.hpp"

#include "../run_until.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <memory>
#include <optional>

namespace sluice::core {
namespace {

namespace asio = boost::asio;

// Sleeps once on `wakeup`, then counts the wake. `held` lives in the frame while it sleeps.
asio::awaitable<void> sleep_once(Wakeup& wakeup, int& woken, std::shared_ptr<int> held) {
  co_await wakeup.sleep();
  ++woken;
  held.reset();
}

// As a request's wait does: the Wakeup lives in the sleeping frame.
asio::awaitable<void> sleep_in_frame(WakeupService& service, Wakeup** seen, int& woken,
                                     std::shared_ptr<int> held) {
  Wakeup wakeup(service);
  *seen = &wakeup;
  co_await wakeup.sleep();
  ++woken;
  held.reset();
}

class WakeupTest : public ::testing::Test {
 protected:
  asio::io_context io_;
  Wakeup wakeup_{WakeupService::of(io_)};
  int woken_ = 0;

  void start_sleeper(std::shared_ptr<int> held = nullptr) {
    asio::co_spawn(io_, sleep_once(wakeup_, woken_, std::move(held)), asio::detached);
    ASSERT_TRUE(test::run_until(io_, [&] { return wakeup_.has_sleeper(); }));
  }
};

TEST_F(WakeupTest, WakeNowResumesTheSleeperBeforeItReturns) {
  start_sleeper();
  wakeup_.wake_now();
  EXPECT_EQ(woken_, 1);
  EXPECT_FALSE(wakeup_.has_sleeper());
}

TEST_F(WakeupTest, WakeNowFromAnotherHandlerOfTheLoopResumesTheSleeperInsideIt) {
  start_sleeper();
  std::optional<int> seen_inside;
  asio::post(io_, [&] {
    wakeup_.wake_now();
    seen_inside = woken_;
  });
  ASSERT_TRUE(test::run_until(io_, [&] { return seen_inside.has_value(); }));
  EXPECT_EQ(*seen_inside, 1);
}

TEST_F(WakeupTest, WakeLaterResumesTheSleeperOnlyWhenTheLoopRunsIt) {
  start_sleeper();
  wakeup_.wake_later();
  EXPECT_EQ(woken_, 0);
  EXPECT_FALSE(wakeup_.has_sleeper());
  ASSERT_TRUE(test::run_until(io_, [&] { return woken_ == 1; }));
}

TEST_F(WakeupTest, AWakeWithNoSleeperDoesNothingAndIsNotKept) {
  wakeup_.wake_now();
  wakeup_.wake_later();
  start_sleeper();
  io_.restart();
  io_.poll();
  EXPECT_EQ(woken_, 0);
  EXPECT_TRUE(wakeup_.has_sleeper());
  wakeup_.wake_now();
  EXPECT_EQ(woken_, 1);
}

TEST(WakeupShutdown, ASleeperNeverWokenIsDestroyedWithItsIoContext) {
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> watch = held;
  int woken = 0;
  {
    asio::io_context io;
    Wakeup* wakeup = nullptr;
    asio::co_spawn(io, sleep_in_frame(WakeupService::of(io), &wakeup, woken, std::move(held)),
                   asio::detached);
    ASSERT_TRUE(test::run_until(io, [&] { return wakeup != nullptr && wakeup->has_sleeper(); }));
    EXPECT_FALSE(watch.expired());  // the sleeping frame holds it
  }
  EXPECT_TRUE(watch.expired());  // the frame was destroyed with the io_context
  EXPECT_EQ(woken, 0);
}

}  // namespace
}  // namespace sluice::core

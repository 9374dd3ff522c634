// The clock behind every timer: in simulated time it stands still until advanced, and a
// core::Timer fires when simulated time passes its expiry, not when real time does.
#include "core/clock.hpp"
#include "core/event.hpp"
#include "../run_until.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace sluice::core {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(SimulatedClock, StandsStillUntilAdvanced) {
  SimulatedTime sim;
  auto t0 = Clock::now();
  std::this_thread::sleep_for(2ms);  // real time passes; simulated time does not
  EXPECT_EQ(Clock::now(), t0);
  sim.advance(90s);
  EXPECT_EQ(Clock::now() - t0, 90s);
}

TEST(SimulatedClock, ATimerFiresWhenSimulatedTimePassesItsExpiryAndNotBefore) {
  SimulatedTime sim;
  asio::io_context io;
  bool fired = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        Timer timer(io, 30s);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        fired = !ec;
      },
      asio::detached);
  io.run_for(20ms);  // 20 ms of real time: far short of 30 s, and simulated time stands still
  EXPECT_FALSE(fired);
  sim.advance(29s);
  io.restart();
  io.run_for(20ms);
  EXPECT_FALSE(fired);
  sim.advance(1s);
  io.restart();
  EXPECT_TRUE(test::run_until(io, [&] { return fired; }));
}

TEST(SimulatedClock, AnEventWaitTimesOutInSimulatedTime) {
  SimulatedTime sim;
  asio::io_context io;
  Event event(io);
  std::optional<bool> result;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { result = co_await event.wait_for(1h); },
      asio::detached);
  io.run_for(10ms);
  EXPECT_FALSE(result.has_value());
  sim.advance(1h);
  io.restart();
  ASSERT_TRUE(test::run_until(io, [&] { return result.has_value(); }));
  EXPECT_FALSE(*result);
}

TEST(RealClock, IsTheSteadyClockOutsideSimulatedTime) {
  auto a = std::chrono::steady_clock::now();
  auto b = Clock::now();
  auto c = std::chrono::steady_clock::now();
  EXPECT_LE(a, b);
  EXPECT_LE(b, c);
  EXPECT_FALSE(Clock::simulated());
}

}  // namespace
}  // namespace sluice::core

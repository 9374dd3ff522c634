#pragma once
// The one clock behind every deadline and timer in sluice: read the time with Clock::now()
// and wait with a core::Timer, never with std::chrono::steady_clock or asio::steady_timer
// directly (a source-scan test holds this).
//
// In the binary it is the steady clock. A test switches it to simulated time by holding a
// SimulatedTime: the clock then stands still until the test advances it, and every Timer
// expires when simulated time passes its expiry, so timing rules (restart backoff, abandon
// bounds, queue timeouts, idle sweeps) are tested in simulated time instead of waited out.
//
// Time points are std::chrono::steady_clock::time_point (the clock shares the steady clock's
// epoch), so a time taken before a SimulatedTime began stays comparable with one taken in it.
// Threading: now() may be called from any thread; SimulatedTime is made and advanced by a
// test's own thread, before and while the loop runs.
#include <boost/asio/basic_waitable_timer.hpp>

#include <atomic>
#include <chrono>

namespace sluice::core {

class Clock {
 public:
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    if (!simulated_.load(std::memory_order_acquire)) return std::chrono::steady_clock::now();
    return time_point(duration(simulated_now_.load(std::memory_order_acquire)));
  }
  static bool simulated() noexcept { return simulated_.load(std::memory_order_acquire); }

 private:
  friend class SimulatedTime;
  static inline std::atomic<bool> simulated_{false};
  static inline std::atomic<rep> simulated_now_{0};
};

// How long the loop may sleep before looking at a timer again: the time left in real time;
// in simulated time at most 1 ms, so that an advance is seen within a millisecond.
struct ClockWaitTraits {
  static Clock::duration to_wait_duration(const Clock::duration& d) { return cap(d); }
  static Clock::duration to_wait_duration(const Clock::time_point& t) {
    return cap(t - Clock::now());
  }

 private:
  static Clock::duration cap(Clock::duration d) {
    constexpr Clock::duration kSimulatedPoll = std::chrono::milliseconds(1);
    if (Clock::simulated() && d > kSimulatedPoll) return kSimulatedPoll;
    return d;
  }
};

using Timer = boost::asio::basic_waitable_timer<Clock, ClockWaitTraits>;

// Simulated time for one test: from construction the clock stands still at the real time it
// was made at; advance() moves it on. One at a time; the destructor returns to real time.
class SimulatedTime {
 public:
  SimulatedTime() {
    Clock::simulated_now_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                                std::memory_order_release);
    Clock::simulated_.store(true, std::memory_order_release);
  }
  ~SimulatedTime() { Clock::simulated_.store(false, std::memory_order_release); }
  SimulatedTime(const SimulatedTime&) = delete;
  SimulatedTime& operator=(const SimulatedTime&) = delete;

  void advance(Clock::duration by) {
    Clock::simulated_now_.fetch_add(by.count(), std::memory_order_acq_rel);
  }
};

}  // namespace sluice::core

#pragma once
// When a downstream may be started again: the restart policy as a pure function of the time
// it is given (no timers, no clock read inside; the caller waits out what it answers).
//
// - Backoff: restart_backoff_initial (250 ms by default) before the first retry, doubling
//   with each consecutive failure up to restart_backoff_max (8 s).
// - An automatic restart after the child ended by itself is allowed max_auto_restarts (5)
//   times in a row; then the downstream is held until an operator starts it.
// - A run that stayed online for restart_stable_after (10 s) resets the count.
// - A failed start counts as a failure too, and a start retried by a call waits until
//   retry_not_before (the failure's time plus the backoff).
// Threading: not synchronised; the owning downstream's loop thread only.
#include "core/clock.hpp"
#include "core/limits.hpp"

#include <chrono>
#include <cstddef>
#include <optional>

namespace sluice::gateway {

class RestartPolicy {
 public:
  using time_point = core::Clock::time_point;

  explicit RestartPolicy(const core::Limits& limits);

  // The wait before the next attempt, after consecutive_failures() failures in a row.
  std::chrono::milliseconds backoff() const;
  std::size_t consecutive_failures() const { return failures_; }

  // A start failed at `now`: one more failure, and retries by calls wait out the backoff.
  void start_failed(time_point now);
  // Whether a call may retry a failed start at `now`.
  bool may_retry_start(time_point now) const { return now >= retry_not_before_; }
  // The downstream came online at `now`.
  void came_online(time_point now) { online_since_ = now; }
  // The child ended by itself at `now`: a run that stayed up long enough resets the count.
  void ended(time_point now);
  // The next automatic restart: the backoff to wait before it (counted as one more failure),
  // or nullopt when max_auto_restarts restarts in a row are used up (hold the downstream).
  std::optional<std::chrono::milliseconds> next_auto_restart();
  // An operator's explicit start: the count starts again.
  void reset() { failures_ = 0; }

 private:
  std::chrono::milliseconds initial_, max_, stable_after_;
  std::size_t max_auto_restarts_;
  std::size_t failures_ = 0;
  time_point online_since_{};
  time_point retry_not_before_{};
};

}  // namespace sluice::gateway

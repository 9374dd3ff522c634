// Idle shutdown (ds_idle_stop): a server with no call pending, no subscription and no activity
// for its idle timeout is stopped through the orderly teardown (invariant P4) to
// `idle_stopped`; its lists stay known, and the next call starts it again (ensure_started).
//
// The watch costs a call nothing: calls and starts bump one counter, the session already
// counts the frames it receives, and a tick every quarter of the timeout compares both, and
// whether the server is busy, with the last tick. The server is stopped once a whole timeout
// has passed since the tick that last saw a change, so it has been idle at least that long (and
// at most a quarter more): work that ends between two ticks is a change the second one sees,
// so the timeout counts from a moment after the work ended, never from the last busy tick.
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/downstream/downstream.hpp"
#include "gateway/downstream/restart_paths.hpp"

#include <algorithm>

namespace sluice::gateway {

namespace {

using std::chrono::milliseconds;

// The time between two looks at a server's activity.
core::Clock::duration tick_interval(milliseconds timeout) {
  return std::clamp<milliseconds>(timeout / 4, milliseconds(10), milliseconds(60000));
}

}  // namespace

std::optional<milliseconds> Downstream::idle_timeout() const {
  if (index_only_) return policy_.index_idle;
  // The default is for servers started on demand; an autoStart server asked to stay up.
  milliseconds timeout = config_.idle_timeout ? *config_.idle_timeout
                         : config_.auto_start ? milliseconds(0)
                                              : policy_.idle_timeout;
  if (timeout.count() == 0) return std::nullopt;
  return timeout;
}

void Downstream::mark_index_only() {
  index_only_ = true;
  watch_idle();  // again: the shorter bound counts from now
}

Downstream::ActivityMark Downstream::activity_mark() const {
  return ActivityMark{peer_.frames_received(), requests_, busy()};
}

bool Downstream::busy() const {
  if (work_in_flight() > 0 || peer_.pending_requests() > 0) return true;
  for (const auto& [name, admission] : admissions_) {
    if (admission->budget.queued() > 0) return true;
  }
  if (write_lane_ && write_lane_->queued() > 0) return true;
  return events_.holds_server && events_.holds_server();
}

void Downstream::watch_idle() {
  // One chain of ticks per server: a wait already scheduled is cancelled (its handler sees
  // the error and stops), and a handler already queued finds its generation gone or
  // reschedules the same chain (expires_after cancels the other wait).
  idle_timer_.cancel();
  if (phase() != Phase::online || !idle_timeout()) return;
  idle_mark_ = activity_mark();
  idle_since_ = core::Clock::now();
  schedule_idle_tick();
}

void Downstream::schedule_idle_tick() {
  std::optional<milliseconds> timeout = idle_timeout();
  if (!timeout) return;
  idle_timer_.expires_after(tick_interval(*timeout));
  idle_timer_.async_wait([this, alive = std::weak_ptr<char>(alive_),
                          generation = generation_](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    idle_tick(generation);
  });
}

void Downstream::idle_tick(std::uint64_t generation) {
  // A new generation has a watch of its own; a server not online is not idle-stopped (a
  // restart backoff, held, failed, or already stopping).
  if (generation != generation_ || phase() != Phase::online) return;
  std::optional<milliseconds> timeout = idle_timeout();
  if (!timeout) return;
  const core::Clock::time_point now = core::Clock::now();
  const ActivityMark mark = activity_mark();
  if (mark.busy || mark != idle_mark_) {
    idle_mark_ = mark;
    idle_since_ = now;
  } else if (now - idle_since_ >= *timeout && !held_ && !tearing_down_ && !shutting_down_ &&
             !handling_end_) {
    core::spawn(io_, idle_stop(), "a server's idle stop");
    return;
  }
  schedule_idle_tick();
}

asio::awaitable<void> Downstream::idle_stop() {
  if (phase() != Phase::online || held_ || tearing_down_ || shutting_down_) co_return;
  const milliseconds timeout = idle_timeout().value_or(milliseconds(0));
  auto path = find_restart_path("ds_idle_stop");
  if (!path) core::log::error("server {}: {}", config_.name, path.error().message);
  core::log::info(
      "server {}: idle for {} ms, stopped (restart path ds_idle_stop); the next call starts it "
      "again",
      config_.name, timeout.count());
  // The phase moves first: a call that comes during the teardown starts a new generation
  // once the teardown is done, and a close seen now is not an unexpected end.
  phase_.transition(Phase::idle_stopped);
  idle_stopped_at_ = std::chrono::system_clock::now();
  index_only_ = false;
  if (events_.lifecycle) events_.lifecycle("idle_stop", "stopped", generation_);
  co_await teardown(true);
}

}  // namespace sluice::gateway

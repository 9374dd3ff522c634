// The lifecycle of a downstream after it started (invariants P4, ds_external_kill,
// ds_auto_restart_after_exit): noticing that it ended, reading how (a foreign kill is held,
// anything else restarted), the restart backoff, the teardown, the operator's stop and the
// gateway shutdown.
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/downstream/downstream.hpp"
#include "gateway/downstream/restart_paths.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

namespace sluice::gateway {

namespace {

// Logs that a named restart path (gateway/downstream/restart_paths) was taken.
void note_restart_path(std::string_view server, std::string_view id) {
  auto path = find_restart_path(id);
  if (!path) {
    core::log::error("server {}: {}", server, path.error().message);
    return;
  }
  core::log::info("server {}: restart path {} ({})", server, (*path)->id,
                  to_string((*path)->restart_class));
}

}  // namespace

void Downstream::handle_unexpected_end(std::string reason) {
  // Claimed here, before the coroutine starts: the exit and the closed stdout are two
  // callbacks of one end, and the second must not start a second recovery.
  if (handling_end_ || shutting_down_) return;
  handling_end_ = true;
  core::spawn(io_, on_unexpected_end(std::move(reason)), "a server's recovery after it ended");
}

asio::awaitable<void> Downstream::on_unexpected_end(std::string reason) {
  if (shutting_down_) {
    handling_end_ = false;
    co_return;
  }
  // Its in-flight calls end at once (teardown closes the session), then the rest of its
  // group is killed and it is reaped. Until the outcome is known (a restart, or held),
  // callers wait instead of starting it themselves.
  record_error(std::move(reason));
  phase_.transition(Phase::restarting);
  restart_done_ = std::make_unique<core::Event>(io_);
  // A closed stdout is often seen a moment before the exit itself: wait for it briefly, so
  // that how it ended (a foreign kill or not) is read before sluice signals anything.
  if (transport_) co_await transport_->wait_end_for(limits_.exit_observe_grace);
  co_await teardown(false);
  handling_end_ = false;
  if (shutting_down_) {
    restart_done_->set();
    co_return;
  }
  if (last_foreign_signal_ != 0) {
    hold_after_foreign_kill(last_foreign_signal_);
    restart_done_->set();
    co_return;
  }
  restart_policy_.ended(core::Clock::now());
  co_await restart_with_backoff();
}

void Downstream::hold_after_foreign_kill(int signal) {
  // ds_external_kill: something else killed it. Not restarted behind the operator's back.
  external_signal_ = signal;
  held_ = true;
  note_restart_path(config_.name, "ds_external_kill");
  fail(
      fmt::format("killed by signal {}, which sluice did not send; not restarted "
                  "automatically: start it again with gateway.restart_server",
                  signal));
  if (events_.lifecycle) events_.lifecycle("external_kill", "held", generation_);
}

asio::awaitable<void> Downstream::restart_with_backoff() {
  // ds_auto_restart_after_exit: exponential backoff up to a cap, then failed and held.
  // restart_done_ was created by on_unexpected_end, which callers already wait on.
  note_restart_path(config_.name, "ds_auto_restart_after_exit");
  if (events_.lifecycle) events_.lifecycle("crash", "restarting", generation_);
  std::string why = last_error_;
  while (!shutting_down_ && !held_) {
    auto delay = restart_policy_.next_auto_restart();
    if (!delay) {
      held_ = true;
      fail(
          fmt::format("{}; restarted {} times in a row without staying up, so it is not "
                      "restarted again: start it with gateway.restart_server",
                      why, restart_policy_.consecutive_failures()));
      break;
    }
    phase_.transition(Phase::restarting);
    backoff_timer_ = std::make_unique<core::Timer>(io_, *delay);
    boost::system::error_code ec;
    co_await backoff_timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (shutting_down_ || held_) break;
    ++restarts_;
    core::log::info("server {}: restarting (attempt {})", config_.name,
                    restart_policy_.consecutive_failures());
    if (co_await start()) {
      if (events_.lifecycle) events_.lifecycle("auto_restart", "ok", generation_);
      break;
    }
    why = last_error_;
  }
  restart_done_->set();
}

asio::awaitable<void> Downstream::teardown(bool orderly) {
  if (tearing_down_) {
    // One teardown at a time; a second caller waits for it to finish.
    co_await teardown_done_->wait();
    co_return;
  }
  if (!transport_) co_return;
  tearing_down_ = true;
  teardown_done_ = std::make_unique<core::Event>(io_);
  peer_.close_session();
  co_await transport_->close(orderly);
  last_foreign_signal_ = transport_->foreign_signal();
  peer_.disconnect();
  transport_.reset();
  tearing_down_ = false;
  teardown_done_->set();
}

asio::awaitable<void> Downstream::stop(std::string reason) {
  held_ = true;  // also ends a restart loop waiting out its backoff
  if (backoff_timer_) backoff_timer_->cancel();
  idle_timer_.cancel();
  if (restart_done_ && !restart_done_->is_set()) co_await restart_done_->wait();
  if (phase() == Phase::starting && started_) co_await started_->wait();
  if (tearing_down_) co_await teardown_done_->wait();
  if (transport_) co_await teardown(true);
  settle_offline();
  last_error_ = std::move(reason);
}

asio::awaitable<void> Downstream::shutdown() {
  shutting_down_ = true;
  if (backoff_timer_) backoff_timer_->cancel();
  idle_timer_.cancel();
  if (tearing_down_) co_await teardown_done_->wait();
  if (transport_) co_await teardown(true);
  settle_offline();
}

}  // namespace sluice::gateway

// The lifecycle of a downstream's child after it started (GATEWAY-INVARIANTS §1, §4):
// noticing its exit, classifying it (ds_external_kill or ds_auto_restart_after_exit), the
// restart backoff, the orderly teardown (P4), the operator's stop and the gateway shutdown.
#include "core/log.hpp"
#include "core/restart_paths.hpp"
#include "gateway/downstream.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <csignal>

namespace sluice::gateway {

namespace {

// Logs that a named restart path (GATEWAY-INVARIANTS §4, core/restart_paths) was taken.
void note_restart_path(std::string_view server, std::string_view id) {
  auto path = core::find_restart_path(id);
  if (!path) {
    core::log::error("server {}: {}", server, path.error().message);
    return;
  }
  core::log::info("server {}: restart path {} ({})", server, (*path)->id,
                  core::to_string((*path)->restart_class));
}

}  // namespace

std::chrono::milliseconds Downstream::backoff_delay() const {
  auto delay = limits_.restart_backoff_initial;
  for (std::size_t i = 1; i < consecutive_failures_ && delay < limits_.restart_backoff_max; ++i) {
    delay *= 2;
  }
  return std::min(delay, limits_.restart_backoff_max);
}

asio::awaitable<void> Downstream::watch_exit(std::shared_ptr<asio::posix::stream_descriptor> pidfd) {
  boost::system::error_code ec;
  co_await pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;  // teardown closed the watch
  if (pidfd != pidfd_watch_) co_return;  // a newer generation owns the watch now
  exited_->set();
  if (!tearing_down_ && status_ == Status::online) {
    co_await on_unexpected_end("the server exited unexpectedly");
  }
}

asio::awaitable<void> Downstream::on_unexpected_end(std::string reason) {
  if (handling_end_ || shutting_down_) co_return;
  handling_end_ = true;
  // Its in-flight calls end at once (teardown closes the session), then the rest of its
  // group is killed and it is reaped. Until the outcome is known (a restart, or held),
  // callers wait instead of starting it themselves.
  fail(std::move(reason));
  status_ = Status::restarting;
  restart_done_ = std::make_unique<core::Event>(io_);
  // A closed stdout is often seen a moment before the exit itself: wait for it briefly, so
  // that how it ended (a foreign kill or not) is read before sluice signals anything.
  if (exited_ && !exited_->is_set()) co_await exited_->wait_for(limits_.exit_observe_grace);
  co_await teardown(false);
  handling_end_ = false;
  if (shutting_down_) {
    restart_done_->set();
    co_return;
  }
  if (last_exit_ && last_exit_->signaled && !signalled_by_sluice_) {
    int sig = last_exit_->code;
    bool crash = sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE ||
                 sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
    if (!crash) {
      // ds_external_kill: something else killed it. Not restarted behind the operator's back.
      external_signal_ = sig;
      held_ = true;
      note_restart_path(config_.name, "ds_external_kill");
      fail(fmt::format("killed by signal {}, which sluice did not send; not restarted "
                       "automatically: start it again with gateway.restart_server",
                       sig));
      if (events_.lifecycle) events_.lifecycle("external_kill", "held", generation_);
      restart_done_->set();
      co_return;
    }
  }
  if (std::chrono::steady_clock::now() - online_since_ >= limits_.restart_stable_after) {
    consecutive_failures_ = 0;
  }
  co_await restart_with_backoff();
}

asio::awaitable<void> Downstream::restart_with_backoff() {
  // ds_auto_restart_after_exit: exponential backoff up to a cap, then failed and held.
  // restart_done_ was created by on_unexpected_end, which callers already wait on.
  note_restart_path(config_.name, "ds_auto_restart_after_exit");
  if (events_.lifecycle) events_.lifecycle("crash", "restarting", generation_);
  std::string why = last_error_;
  while (!shutting_down_ && !held_) {
    if (consecutive_failures_ >= limits_.max_auto_restarts) {
      held_ = true;
      fail(fmt::format("{}; restarted {} times in a row without staying up, so it is not "
                       "restarted again: start it with gateway.restart_server",
                       why, consecutive_failures_));
      break;
    }
    ++consecutive_failures_;
    status_ = Status::restarting;
    backoff_timer_ = std::make_unique<asio::steady_timer>(io_, backoff_delay());
    boost::system::error_code ec;
    co_await backoff_timer_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (shutting_down_ || held_) break;
    ++restarts_;
    core::log::info("server {}: restarting (attempt {})", config_.name, consecutive_failures_);
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
  if (!child_) co_return;
  tearing_down_ = true;
  teardown_done_ = std::make_unique<core::Event>(io_);
  if (session_) session_->on_closed();
  if (orderly && !exited_->is_set()) {
    if (stream_) stream_->close_output();
    if (!co_await exited_->wait_for(limits_.stdin_close_grace)) {
      if (!child_->has_exited()) signalled_by_sluice_ = true;
      core::log::debug("server {}: still running after its stdin closed: SIGTERM to its group",
                       config_.name);
      child_->signal_group(SIGTERM);
      co_await exited_->wait_for(limits_.sigterm_grace);
    }
  }
  // Whatever is left of the group (the leader, or grandchildren holding the pipes) goes;
  // the leader is still unreaped here, so the group id is reserved.
  // A signal sent after the leader died does not change how it died (ds_external_kill).
  if (!child_->has_exited()) {
    signalled_by_sluice_ = true;
    core::log::debug("server {}: SIGKILL to its group", config_.name);
  }
  child_->signal_group(SIGKILL);
  co_await exited_->wait_for(std::chrono::seconds(5));
  child_->kill_now();  // reaps (and closes the fds the child object still holds)
  if (stream_) stream_->close();
  if (stderr_) {
    boost::system::error_code ec;
    stderr_->close(ec);
  }
  if (pidfd_watch_) {
    boost::system::error_code ec;
    pidfd_watch_->close(ec);
  }
  if (session_) session_->detach();
  last_exit_ = child_->exit_status();
  const auto& st = last_exit_;
  core::log::info("server {}: stopped ({} {})", config_.name,
                  st && st->signaled ? "signal" : "exit code", st ? st->code : -1);
  // Descendants that left the group (setsid) and were adopted by sluice carry this
  // child's token in their environment: they go with it.
  process::kill_adopted_orphans_with_token(spawn_token());
  child_.reset();
  session_.reset();
  stream_.reset();
  stderr_.reset();
  pidfd_watch_.reset();
  tearing_down_ = false;
  teardown_done_->set();
}

asio::awaitable<void> Downstream::stop(std::string reason) {
  held_ = true;  // also ends a restart loop waiting out its backoff
  if (backoff_timer_) backoff_timer_->cancel();
  if (restart_done_ && !restart_done_->is_set()) co_await restart_done_->wait();
  if (status_ == Status::starting && started_) co_await started_->wait();
  if (tearing_down_) co_await teardown_done_->wait();
  if (child_) co_await teardown(true);
  if (status_ != Status::unsupported_transport) status_ = Status::offline;
  last_error_ = std::move(reason);
}

asio::awaitable<void> Downstream::shutdown() {
  shutting_down_ = true;
  if (backoff_timer_) backoff_timer_->cancel();
  if (tearing_down_) co_await teardown_done_->wait();
  if (child_) co_await teardown(true);
  if (status_ != Status::unsupported_transport) status_ = Status::offline;
}

}  // namespace sluice::gateway

#include "cli/shutdown.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"
#include "process/child.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <signal.h>

namespace sluice::cli {
namespace asio = boost::asio;

namespace {

// Shutdown signals: SIGTERM, SIGINT, SIGHUP, except one inherited as ignored (nohup).
void add_shutdown_signals(asio::signal_set& set) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    set.add(sig);
  }
}

// Reaps orphans that reparented to sluice (it is a subreaper) as they exit.
// Ends once `stopping` is set: a SIGCHLD already queued when the wait is cancelled would
// otherwise re-arm the wait and keep the loop (and the process) alive.
asio::awaitable<void> reap_orphans(asio::signal_set& sigchld, gateway::Gateway& gw,
                                   const bool& stopping) {
  while (!stopping) {
    boost::system::error_code ec;
    co_await sigchld.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec || stopping) co_return;
    process::reap_adopted_orphans(gw.fleet().child_pids());
  }
}

}  // namespace

OrderlyShutdown::OrderlyShutdown(asio::io_context& io, gateway::Gateway& gw,
                                 std::chrono::milliseconds drain_bound,
                                 std::function<void()> close_clients, std::function<void()> after)
    : io_(io),
      gw_(gw),
      drain_bound_(drain_bound),
      close_clients_(std::move(close_clients)),
      after_(std::move(after)),
      signals_(io),
      sigchld_(io, SIGCHLD) {
  add_shutdown_signals(signals_);
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec || stopping_) return;
    signal_ = sig;
    stop(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP");
  });
  core::spawn(io_, reap_orphans(sigchld_, gw_, stopping_), "the reaper of adopted orphans");
}

void OrderlyShutdown::stop(std::string_view why) {
  if (stopping_) return;
  stopping_ = true;
  core::log::info("shutting down (restart path gw_shutdown): {}", why);
  // Should the orderly path die of an exception, the loop stops: the owners' destructors then
  // tear every child down (P4's synchronous part) and the process ends instead of hanging.
  core::spawn(io_, run(), "the orderly shutdown", [this] { io_.stop(); });
}

asio::awaitable<void> OrderlyShutdown::run() {
  // Open subscriptions/listen streams end gracefully (their response) before the clients go.
  gw_.clients().end_listens();
  close_clients_();
  // Requests waiting for a client's input: no client can come back to answer them now.
  gw_.bridge().end_all();
  co_await gw_.drain(drain_bound_);
  co_await gw_.shutdown();
  process::kill_adopted_orphans({});
  boost::system::error_code ec;
  signals_.cancel(ec);
  signals_.clear(ec);
  sigchld_.cancel(ec);
  sigchld_.clear(ec);
  after_();
  core::log::info("shutdown complete");
}

}  // namespace sluice::cli

#pragma once
// The orderly shutdown (restart path gw_shutdown) of every command that owns children:
// `serve` over stdio or HTTP, and the one-shot `call` and `servers --probe`
// (invariants P4, P9).
//
// At SIGTERM, SIGINT or SIGHUP (one inherited as ignored stays ignored), or stop():
// `close_clients` (C7: the clients' calls are cancelled and the cancels forwarded), abandoned
// work drained within `drain_bound`, every child torn down at once (P4: close stdin, grace,
// group SIGTERM, grace, group SIGKILL, reap), adopted orphans (setsid escapes) killed, then
// `after`; the signal sets are released so that the loop can end. Orphans that reparent to
// sluice meanwhile are reaped as they exit. Threading: the loop's thread; it must outlive
// the loop's run.
#include "gateway/gateway.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <functional>
#include <string_view>

namespace sluice::cli {

class OrderlyShutdown {
 public:
  OrderlyShutdown(boost::asio::io_context& io, gateway::Gateway& gw,
                  std::chrono::milliseconds drain_bound, std::function<void()> close_clients,
                  std::function<void()> after);
  OrderlyShutdown(const OrderlyShutdown&) = delete;
  OrderlyShutdown& operator=(const OrderlyShutdown&) = delete;

  // Starts the shutdown once; later calls (and signals) do nothing.
  void stop(std::string_view why);
  bool stopping() const { return stopping_; }
  // The signal that started the shutdown, 0 when none did.
  int signal_number() const { return signal_; }

 private:
  boost::asio::awaitable<void> run();

  boost::asio::io_context& io_;
  gateway::Gateway& gw_;
  std::chrono::milliseconds drain_bound_;
  std::function<void()> close_clients_;
  std::function<void()> after_;
  boost::asio::signal_set signals_;
  boost::asio::signal_set sigchld_;
  bool stopping_ = false;
  int signal_ = 0;
};

}  // namespace sluice::cli

#pragma once
// A one-shot event for coroutines on one io_context: wait() until set() or a deadline.
// Threading: the owning io_context thread only. The state is shared with every waiter, so
// destroying (or replacing) an Event while coroutines wait on it is safe: their timers are
// cancelled and they resume seeing is_set() false.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/clock.hpp"

#include <chrono>
#include <list>
#include <memory>

namespace sluice::core {

class Event {
 public:
  explicit Event(boost::asio::io_context& io) : io_(io), state_(std::make_shared<State>()) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    state_->destroyed = true;
    for (auto* t : state_->waiters) t->cancel();
  }

  bool is_set() const { return state_->set; }
  void set() {
    state_->set = true;
    for (auto* t : state_->waiters) t->cancel();
  }

  // Resumes when set, when `timeout` passes, or when the Event is destroyed; returns
  // whether it was set.
  boost::asio::awaitable<bool> wait_for(Clock::duration timeout) {
    std::shared_ptr<State> state = state_;  // outlives this Event if need be
    if (state->set) co_return true;
    Timer timer(io_, timeout);
    auto it = state->waiters.insert(state->waiters.end(), &timer);
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    state->waiters.erase(it);
    co_return state->set;
  }
  // Waits until set (or until the Event is destroyed).
  boost::asio::awaitable<void> wait() {
    std::shared_ptr<State> state = state_;
    while (!state->set && !state->destroyed) {
      Timer timer(io_, std::chrono::hours(24));
      auto it = state->waiters.insert(state->waiters.end(), &timer);
      boost::system::error_code ec;
      co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      state->waiters.erase(it);
    }
  }

 private:
  struct State {
    bool set = false;
    bool destroyed = false;
    std::list<Timer*> waiters;
  };
  boost::asio::io_context& io_;
  std::shared_ptr<State> state_;
};

}  // namespace sluice::core

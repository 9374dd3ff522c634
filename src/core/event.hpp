#pragma once
// A one-shot event for coroutines on one io_context: wait() until set() or a deadline.
// Threading: the owning io_context thread only. Destroying an Event with waiters cancels
// their timers (they resume seeing is_set() false).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <list>

namespace sluice::core {

class Event {
 public:
  explicit Event(boost::asio::io_context& io) : io_(io) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    for (auto* t : waiters_) t->cancel();
  }

  bool is_set() const { return set_; }
  void set() {
    set_ = true;
    for (auto* t : waiters_) t->cancel();
  }

  // Resumes when set or when `timeout` passes; returns is_set().
  boost::asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
    if (set_) co_return true;
    boost::asio::steady_timer timer(io_, timeout);
    auto it = waiters_.insert(waiters_.end(), &timer);
    boost::system::error_code ec;
    co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    waiters_.erase(it);
    co_return set_;
  }
  boost::asio::awaitable<void> wait() {
    while (!set_) co_await wait_for(std::chrono::hours(24));
  }

 private:
  boost::asio::io_context& io_;
  bool set_ = false;
  std::list<boost::asio::steady_timer*> waiters_;
};

}  // namespace sluice::core

#pragma once
// Admission (GATEWAY-INVARIANTS §2): a Budget limits calls in flight; a call that finds it
// full waits in a bounded FIFO queue for at most the queue timeout. A Permit is the slot
// itself: whoever owns it holds the slot, and its destructor hands the slot to the next
// waiter (or frees it). It belongs to the downstream request, not to the client that asked
// (§3 C2): a cancelled call keeps it until the downstream answers, dies or is given up.
//
// Threading: the gateway's io_context thread only. Ownership: Budgets are owned by their
// Downstream (per tool) or client handler (per session) and must outlive their Permits.
#include "mcp/session.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

class Budget {
 public:
  Budget(asio::io_context& io, std::size_t capacity, std::size_t queue_limit);
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;
  ~Budget();

  enum class Outcome { granted, overflow, expired, cancelled };
  // Takes a slot, waiting in FIFO order up to `queue_timeout`; a cancel while queued leaves
  // the queue without a slot.
  asio::awaitable<Outcome> acquire(std::chrono::milliseconds queue_timeout,
                                   mcp::CancelSignal* cancel);
  // Gives a slot back: to the first waiter if there is one.
  void release();

  std::size_t capacity() const { return capacity_; }
  std::size_t held() const { return held_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t available() const { return capacity_ - held_; }

 private:
  struct Waiter {
    asio::steady_timer* timer;
    bool granted = false;
    bool queued = true;
  };
  asio::io_context& io_;
  std::size_t capacity_;
  std::size_t queue_limit_;
  std::size_t held_ = 0;
  std::list<Waiter*> queue_;
};

// Slots held in one or more budgets, released (in reverse order) when destroyed.
class Permit {
 public:
  Permit() = default;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() { release(); }
  void add(Budget& budget) { held_.push_back(&budget); }
  void release() {
    while (!held_.empty()) {
      held_.back()->release();
      held_.pop_back();
    }
  }
  bool empty() const { return held_.empty(); }

 private:
  std::vector<Budget*> held_;
};

}  // namespace sluice::gateway

#pragma once
// Admission (invariants A1-A3): a Budget limits calls in flight; a call that finds it full
// waits in a bounded FIFO queue for at most the queue timeout (a core::Timer, so simulated
// time drives it in tests). A Permit is the slot itself: whoever owns it holds the slot, and
// its destructor hands the slot to the next waiter (or frees it). It belongs to the
// downstream request, not to the client that asked (invariant C2): a cancelled call keeps it
// until the downstream answers, dies or is given up.
//
// A slot is released exactly once by construction: only Budget::acquire puts a slot in a
// Permit, a Permit is move-only, and only a Permit gives a slot back (once: it forgets the
// slot as it releases it). Should a Budget still be handed back a slot it never gave out
// (a bug), that is an assertion in debug and sanitizer builds; in release builds the
// counter is left as it is (held never goes below zero, available never above the budget)
// and the event is counted (Budget::over_releases(), in gateway.health and /metrics).
//
// Threading: the gateway's io_context thread only. Ownership: Budgets are owned by their
// Downstream (per tool) or client handler (per session) and must outlive their Permits.
#include "core/cancel.hpp"
#include "core/clock.hpp"
#include "gateway/calls/counters.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/container/small_vector.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::gateway {

namespace asio = boost::asio;

class Permit;

class Budget {
 public:
  Budget(asio::io_context& io, std::size_t capacity, std::size_t queue_limit);
  Budget(const Budget&) = delete;
  Budget& operator=(const Budget&) = delete;
  ~Budget();

  enum class Outcome { granted, overflow, expired, cancelled };
  // Takes a slot, waiting in FIFO order up to `queue_timeout`; when granted, the slot is
  // added to `into` (which must outlive the wait), else `into` is unchanged. A cancel while
  // queued leaves the queue without a slot.
  asio::awaitable<Outcome> acquire(std::chrono::milliseconds queue_timeout,
                                   core::CancelSignal* cancel, Permit& into);
  // acquire's outcome when it needs no wait (a free slot, a cancel, a full queue); nullopt
  // when the caller would queue. Spares a call that is admitted at once a coroutine frame.
  std::optional<Outcome> try_acquire(const core::CancelSignal* cancel, Permit& into);

  std::size_t capacity() const { return capacity_; }
  std::size_t held() const { return held_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t available() const { return capacity_ - held_; }

  // Releases of a slot that was not held, over every Budget of the process (release builds;
  // debug and sanitizer builds assert instead).
  static std::uint64_t over_releases();

 private:
  friend class Permit;
  friend struct BudgetTestAccess;  // tests/unit/gateway: drives release() past its guard
  // Gives a slot back: to the first waiter if there is one.
  void release();

  struct Waiter {
    core::Timer* timer;
    bool granted = false;
    bool queued = true;
  };
  asio::io_context& io_;
  std::size_t capacity_;
  std::size_t queue_limit_;
  std::size_t held_ = 0;
  std::list<Waiter*> queue_;
};

// Slots held in one or more budgets, released (in reverse order) by release() or when
// destroyed. Move-only: a moved-from Permit holds nothing.
class Permit {
 public:
  Permit() = default;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  Permit(Permit&& other) noexcept : held_(std::exchange(other.held_, {})) {}
  Permit& operator=(Permit&& other) noexcept {
    if (this != &other) {
      release();
      held_ = std::exchange(other.held_, {});
    }
    return *this;
  }
  ~Permit() { release(); }
  // Gives back every slot held, each once; a second call has nothing left to give.
  void release() {
    while (!held_.empty()) {
      Budget* budget = held_.back();
      held_.pop_back();
      budget->release();
    }
  }
  bool empty() const { return held_.empty(); }
  std::size_t slots() const { return held_.size(); }

 private:
  friend class Budget;  // acquire() and try_acquire() are the only ways a slot gets in
  void add(Budget& budget) { held_.push_back(&budget); }
  boost::container::small_vector<Budget*, 4> held_;  // a call holds three slots at most
};

// One tool's admission: its budget (resolved: tool override, then the server's default,
// then the class default from readOnlyHint) and its counters (written only by Call).
// Ownership: the Downstream, per tool name; it outlives every Call admitted to it.
struct ToolAdmission {
  ToolAdmission(asio::io_context& io, std::size_t budget, std::size_t queue_limit)
      : budget(io, budget, queue_limit) {}
  Budget budget;
  OutcomeCounters counters;
};

}  // namespace sluice::gateway

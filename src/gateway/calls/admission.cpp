#include "gateway/calls/admission.hpp"

#include "core/log.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cassert>

namespace sluice::gateway {
namespace {

std::atomic<std::uint64_t> over_releases_count{0};

}  // namespace

Budget::Budget(asio::io_context& io, std::size_t capacity, std::size_t queue_limit)
    : io_(io), capacity_(capacity == 0 ? 1 : capacity), queue_limit_(queue_limit) {}

Budget::~Budget() {
  for (auto* w : queue_) w->timer->cancel();
}

std::optional<Budget::Outcome> Budget::try_acquire(const core::CancelSignal* cancel, Permit& into) {
  if (cancel && cancel->cancelled()) return Outcome::cancelled;
  if (held_ < capacity_ && queue_.empty()) {
    ++held_;
    into.add(*this);
    return Outcome::granted;
  }
  if (queue_.size() >= queue_limit_) return Outcome::overflow;
  return std::nullopt;
}

asio::awaitable<Budget::Outcome> Budget::acquire(std::chrono::milliseconds queue_timeout,
                                                 core::CancelSignal* cancel, Permit& into) {
  if (auto now = try_acquire(cancel, into)) co_return *now;
  core::Timer timer(io_, queue_timeout);
  Waiter waiter{&timer};
  auto it = queue_.insert(queue_.end(), &waiter);
  bool cancelled = false;
  std::uint64_t registration = 0;
  if (cancel) {
    registration = cancel->on_cancel([&] {
      cancelled = true;
      timer.cancel();
    });
  }
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (cancel) cancel->remove(registration);
  if (waiter.granted) {
    // release() handed its slot to us; a cancel that raced the hand-over gives it on.
    if (cancelled) {
      release();
      co_return Outcome::cancelled;
    }
    into.add(*this);
    co_return Outcome::granted;
  }
  if (waiter.queued) queue_.erase(it);
  co_return cancelled ? Outcome::cancelled : Outcome::expired;
}

std::uint64_t Budget::over_releases() {
  return over_releases_count.load(std::memory_order_relaxed);
}

void Budget::release() {
  if (held_ == 0) {
    // No slot is out, so this one was given back already (or never given): a bug.
    assert(held_ > 0 && "a Budget slot was released that was not held");
    over_releases_count.fetch_add(1, std::memory_order_relaxed);
    core::log::error("admission: a slot was released that was not held (counted in health)");
    return;
  }
  while (!queue_.empty()) {
    Waiter* next = queue_.front();
    queue_.pop_front();
    next->queued = false;
    if (next->timer->cancel() == 0 && !next->granted) {
      // Its timer already fired (expiry being delivered): it will not take the slot.
      continue;
    }
    next->granted = true;
    return;  // the slot passes to `next`; held_ is unchanged
  }
  --held_;
}

}  // namespace sluice::gateway

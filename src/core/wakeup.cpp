#include "core/wakeup.hpp"

#include <boost/asio/post.hpp>

#include <utility>

namespace sluice::core {

WakeupService& WakeupService::of(boost::asio::io_context& io) {
  return boost::asio::use_service<WakeupService>(io);
}

void WakeupService::shutdown() {
  // Each sleeper's handler is destroyed, which hands its coroutine's frames to the
  // io_context to destroy, as with a pending timer's wait.
  while (sleeping_ != nullptr) (void)sleeping_->take();
}

Wakeup::~Wakeup() { (void)take(); }

boost::asio::awaitable<void> Wakeup::sleep() {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
      [this](Handler handler) { hold(std::move(handler)); }, boost::asio::use_awaitable);
}

void Wakeup::hold(Handler handler) {
  handler_.emplace(std::move(handler));
  next_ = service_.sleeping_;
  if (next_ != nullptr) next_->prev_ = this;
  service_.sleeping_ = this;
}

std::optional<Wakeup::Handler> Wakeup::take() {
  if (!handler_) return std::nullopt;
  if (prev_ != nullptr) {
    prev_->next_ = next_;
  } else {
    service_.sleeping_ = next_;
  }
  if (next_ != nullptr) next_->prev_ = prev_;
  prev_ = next_ = nullptr;
  std::optional<Handler> handler = std::move(handler_);
  handler_.reset();
  return handler;
}

void Wakeup::wake_now() {
  if (std::optional<Handler> handler = take()) (*handler)();
}

void Wakeup::wake_later() {
  if (std::optional<Handler> handler = take()) boost::asio::post(std::move(*handler));
}

}  // namespace sluice::core

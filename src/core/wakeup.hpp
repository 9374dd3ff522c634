#pragma once
// One coroutine's sleep until code on the same io_context thread wakes it: the wait of a
// request for its answer. wake_now() resumes the sleeper inside the waker, before wake_now()
// returns, with no trip through the io_context's queue (a timer cancelled to wake a coroutine
// posts its handler, and the loop then polls the reactor once more before it runs it).
// wake_later() queues the resumption instead: for a waker that walks a collection the sleeper
// changes when it runs, or that uses its own state after waking.
//
// A sleeper never woken is destroyed with the io_context, as Asio destroys its own pending
// operations: the WakeupService holds every Wakeup that has one.
// Threading: the io_context's one thread only.
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>

namespace sluice::core {

class Wakeup;

class WakeupService : public boost::asio::execution_context::service {
 public:
  using key_type = WakeupService;
  static inline boost::asio::execution_context::id id;  // NOLINT: Asio finds services by it

  explicit WakeupService(boost::asio::execution_context& context) : service(context) {}
  static WakeupService& of(boost::asio::io_context& io);

 private:
  friend class Wakeup;
  void shutdown() override;
  Wakeup* sleeping_ = nullptr;  // the Wakeups with a sleeper, linked through them
};

class Wakeup {
 public:
  explicit Wakeup(WakeupService& service) : service_(service) {}
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Sleeps until woken; one sleeper at a time. A wake given while no one sleeps is not kept:
  // the sleeper checks what it waits for before each sleep.
  boost::asio::awaitable<void> sleep();
  bool has_sleeper() const { return handler_.has_value(); }
  // Resumes the sleeper now; this Wakeup may be gone when it returns (it lives in the
  // sleeper's frame), so the waker must not use it, nor anything the sleeper may end, after.
  void wake_now();
  // Queues the sleeper's resumption on the io_context.
  void wake_later();

 private:
  friend class WakeupService;
  using Handler = boost::asio::async_result<boost::asio::use_awaitable_t<>, void()>::handler_type;
  void hold(Handler handler);
  std::optional<Handler> take();

  WakeupService& service_;
  std::optional<Handler> handler_;
  Wakeup* prev_ = nullptr;
  Wakeup* next_ = nullptr;
};

}  // namespace sluice::core

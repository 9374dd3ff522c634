#include "gateway/catalog/indexer.hpp"

#include "core/event.hpp"
#include "core/log.hpp"
#include "core/spawn.hpp"

#include <algorithm>

namespace sluice::gateway {

// One index() call: the targets it still waits for.
struct Indexer::Waiter {
  explicit Waiter(asio::io_context& io) : done(io) {}
  std::set<const Downstream*> remaining;
  OnIndexed on_indexed;
  core::Event done;
};

asio::awaitable<void> Indexer::index(std::vector<Downstream*> targets, std::size_t concurrency,
                                     core::Clock::duration wait, OnIndexed on_indexed) {
  auto waiter = std::make_shared<Waiter>(io_);
  waiter->on_indexed = std::move(on_indexed);
  for (Downstream* d : targets) {
    waiter->remaining.insert(d);
    if (active_.insert(d).second) queue_.push_back(d);
  }
  if (waiter->remaining.empty()) co_return;
  waiters_.push_back(waiter);
  // Counted before any worker runs: a worker takes its first server as soon as it starts.
  const std::size_t bound = std::max<std::size_t>(concurrency, 1);
  const std::size_t more = std::min(bound - std::min(bound, workers_), queue_.size());
  workers_ += more;
  for (std::size_t i = 0; i < more; ++i) {
    core::spawn(io_, worker(), "the indexing of servers", [this] { --workers_; });
  }
  co_await waiter->done.wait_for(wait);
}

asio::awaitable<void> Indexer::worker() {
  while (!queue_.empty()) {
    Downstream* d = queue_.front();
    queue_.pop_front();
    const bool was_lazy = d->phase() == Phase::lazy;
    const auto began = core::Clock::now();
    bool listed = false;
    try {
      listed = co_await d->ensure_started();
    } catch (const std::exception&) {
      core::log::error("server {}: its indexing failed ({})", d->name(),
                       core::exception_type(std::current_exception()));
    }
    if (listed && was_lazy) d->mark_index_only();
    finished(*d, listed, core::Clock::now() - began);
  }
  --workers_;
}

void Indexer::finished(Downstream& d, bool listed, core::Clock::duration took) {
  active_.erase(&d);
  std::erase_if(waiters_, [&](const std::weak_ptr<Waiter>& weak) {
    auto w = weak.lock();
    if (!w) return true;
    if (w->remaining.erase(&d) == 0) return false;
    if (w->on_indexed) w->on_indexed(d, listed, took);
    if (!w->remaining.empty()) return false;
    w->done.set();
    return true;
  });
}

}  // namespace sluice::gateway

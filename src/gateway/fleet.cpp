// Starts and stops of many servers at once: autoStart, the aggregate listing's start of every
// lazy server, and shutdown. Starts run concurrently up to sluice.startConcurrency; the
// shutdown tears every server down at once, so N servers cost about one start or one
// teardown grace, not N of them.
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"

#include <typeinfo>

namespace sluice::gateway {

namespace {

// The shared state of one for_each_concurrently: workers take the next server in turn.
struct Batch {
  explicit Batch(asio::io_context& io) : done(io) {}
  std::vector<Downstream*> targets;
  std::function<asio::awaitable<void>(Downstream&)> work;
  std::size_t next = 0;
  std::size_t workers = 0;  // still running
  core::Event done;
};

asio::awaitable<void> batch_worker(std::shared_ptr<Batch> batch) {
  while (batch->next < batch->targets.size()) {
    Downstream& d = *batch->targets[batch->next++];
    try {
      co_await batch->work(d);
    } catch (const std::exception& e) {
      // Only the type: the text may quote what the server sent.
      core::log::error("server {}: start or stop failed ({})", d.name(), typeid(e).name());
    }
  }
  if (--batch->workers == 0) batch->done.set();
}

}  // namespace

asio::awaitable<void> Gateway::for_each_concurrently(
    std::vector<Downstream*> targets, std::size_t bound,
    std::function<asio::awaitable<void>(Downstream&)> work) {
  if (targets.empty()) co_return;
  auto batch = std::make_shared<Batch>(io_);
  batch->targets = std::move(targets);
  batch->work = std::move(work);
  batch->workers = std::min(std::max<std::size_t>(bound, 1), batch->targets.size());
  for (std::size_t i = 0, n = batch->workers; i < n; ++i) {
    // A worker that dies still counts as done, so the batch (a shutdown) cannot hang on it.
    core::spawn(io_, batch_worker(batch), "a start or stop of several servers", [batch] {
      if (--batch->workers == 0) batch->done.set();
    });
  }
  co_await batch->done.wait();
}

void Gateway::start() {
  for (const auto& w : config_->warnings) core::log::warn("config: {}", w);
  std::vector<Downstream*> targets;
  std::size_t unknown = 0;
  for (const auto& name : config_->auto_start) {
    if (Downstream* d = find(name)) {
      targets.push_back(d);
    } else {
      ++unknown;
    }
  }
  if (unknown > 0) {
    // One line, however long the list: a line per name would flood the log.
    core::log::warn("config: autoStart names {} server(s) that are not configured", unknown);
  }
  if (targets.empty()) return;
  core::spawn(
      io_,
      [this, targets = std::move(targets)]() -> asio::awaitable<void> {
        co_await for_each_concurrently(
            targets, config_->policy.start_concurrency,
            [](Downstream& d) -> asio::awaitable<void> { co_await d.ensure_started(); });
      },
      "the autoStart of servers");
}

asio::awaitable<void> Gateway::start_all() {
  // Fail-closed stale: nothing new is started; lists answer with what is known.
  if (!stale_refusal().empty()) co_return;
  std::vector<Downstream*> lazy;
  for (auto& d : downstreams_) {
    // A server another request is starting is waited for too: its lists are not known yet.
    if (d->status() == Status::lazy || d->status() == Status::starting) lazy.push_back(d.get());
  }
  co_await for_each_concurrently(
      std::move(lazy), config_->policy.start_concurrency,
      [](Downstream& d) -> asio::awaitable<void> { co_await d.ensure_started(); });
}

asio::awaitable<void> Gateway::shutdown() {
  std::vector<Downstream*> all;
  for (auto& d : downstreams_) all.push_back(d.get());
  const std::size_t everyone = all.size();
  co_await for_each_concurrently(
      std::move(all), everyone,
      [](Downstream& d) -> asio::awaitable<void> { co_await d.shutdown(); });
}

}  // namespace sluice::gateway

#include "store/catalog_store.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/clock.hpp"
#include "core/heap.hpp"
#include "core/log.hpp"
#include "core/signals_blocked.hpp"
#include "core/spawn.hpp"
#include "store/cache_file.hpp"
#include "store/catalog_file.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

namespace sluice::store {

struct CatalogStore::Shared {
  StoreStatus status;
};

std::size_t stored_size(const ServerListing& listing) {
  std::size_t bytes = listing.server.size() + listing.fingerprint.size() +
                      listing.server_name.size() + listing.server_version.size() +
                      listing.protocol_version.size();
  for (const auto* list :
       {&listing.tools, &listing.prompts, &listing.resources, &listing.resource_templates}) {
    for (const std::string& item : *list) bytes += item.size();
  }
  return bytes;
}

namespace {

bool same_key(const ServerListing& a, const ServerListing& b) {
  return a.server == b.server && a.fingerprint == b.fingerprint;
}

// What the worker tells the loop after each job.
struct WorkerReport {
  bool available = false;
  std::string problem;
  std::uint64_t writes = 0, failed_writes = 0;
  bool operator==(const WorkerReport&) const = default;
};

// The worker's own state: the file, and the saves that failed, retried with the next one
// (oldest first, at most kMaxRetainedWrites listings and kMaxQueuedBytes).
struct Worker {
  Worker(std::filesystem::path state_dir, std::function<bool()> stop_waiting)
      : file(std::move(state_dir), std::move(stop_waiting)) {}

  detail::CatalogFile file;
  std::deque<ServerListing> retained;
  std::size_t retained_bytes = 0;
  std::uint64_t writes = 0, failed_writes = 0;

  WorkerReport report() const { return {file.is_open(), file.problem(), writes, failed_writes}; }

  void retain(ServerListing listing) {
    retained_bytes += stored_size(listing);
    retained.push_back(std::move(listing));
    while (retained.size() > kMaxRetainedWrites || retained_bytes > kMaxQueuedBytes) {
      retained_bytes -= stored_size(retained.front());
      retained.pop_front();
    }
  }

  // Writes the retained listings, then `fresh` (when given), in order, stopping at the first
  // that fails (a lock that held one back holds the next). `fresh` counts failed if it is
  // not written; a retained listing was counted when it first failed.
  void save(std::optional<ServerListing> fresh) {
    if (fresh) {
      std::erase_if(retained, [&](const ServerListing& old) { return same_key(old, *fresh); });
      retained_bytes = 0;
      for (const ServerListing& old : retained) retained_bytes += stored_size(old);
    }
    std::deque<ServerListing> pending = std::exchange(retained, {});
    retained_bytes = 0;
    bool blocked = false;
    for (ServerListing& listing : pending) {
      if (!blocked && file.save(listing)) {
        ++writes;
      } else {
        blocked = true;
        if (file.retryable()) retain(std::move(listing));
      }
    }
    if (!fresh) return;
    if (!blocked && file.save(*fresh)) {
      ++writes;
      return;
    }
    ++failed_writes;
    if (file.retryable()) retain(std::move(*fresh));
  }

  void forget(const std::string& server) {
    std::erase_if(retained, [&](const ServerListing& old) { return old.server == server; });
    retained_bytes = 0;
    for (const ServerListing& old : retained) retained_bytes += stored_size(old);
    if (file.forget(server)) {
      ++writes;
    } else {
      ++failed_writes;
    }
  }
};


}  // namespace

CatalogStore::CatalogStore(asio::io_context& io, std::filesystem::path state_dir)
    : io_(io), state_dir_(std::move(state_dir)), shared_(std::make_shared<Shared>()) {
  if (!state_dir_.empty()) shared_->status.path = (state_dir_ / detail::kCacheFileName).string();
  core::SignalsBlocked blocked;
  worker_ = std::thread([this] { run_worker(); });
}

CatalogStore::~CatalogStore() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stop_deadline_ = core::Clock::now() + kShutdownWait;
  }
  wake_.notify_all();
  worker_.join();
}

bool CatalogStore::stop_waiting() const {
  std::lock_guard lock(mutex_);
  return stopping_ && core::Clock::now() >= stop_deadline_;
}

StoreStatus CatalogStore::status() const { return shared_->status; }

void CatalogStore::enqueue(Job job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void CatalogStore::save(ServerListing listing) {
  const std::size_t bytes = stored_size(listing);
  StoreStatus& status = shared_->status;
  if (bytes > kMaxListingBytes) {
    ++status.refused_listings;
    if (!std::exchange(said_refused_, true)) {
      core::log::warn("catalog cache: a listing over {} MiB was not stored (counted)",
                      kMaxListingBytes >> 20);
    }
    return;
  }
  bool dropped = false;
  {
    std::lock_guard lock(mutex_);
    // A queued save of the same server and fingerprint, with no removal of that server after
    // it, is replaced in place: only the newest listing matters.
    Save* same = nullptr;
    for (auto it = queue_.rbegin(); it != queue_.rend() && !same; ++it) {
      if (auto* forget = std::get_if<Forget>(&*it); forget && forget->server == listing.server) {
        break;
      }
      if (auto* queued = std::get_if<Save>(&*it); queued && same_key(queued->listing, listing)) {
        same = queued;
      }
    }
    if (same) {
      queued_bytes_ = queued_bytes_ - same->bytes + bytes;
      *same = Save{std::move(listing), bytes};
    } else if (queued_writes_ >= kMaxQueuedWrites || queued_bytes_ + bytes > kMaxQueuedBytes) {
      dropped = true;
    } else {
      ++queued_writes_;
      queued_bytes_ += bytes;
      queue_.push_back(Save{std::move(listing), bytes});
    }
  }
  if (dropped) {
    ++status.dropped_writes;
    if (!std::exchange(said_dropped_, true)) {
      core::log::warn("catalog cache: the write queue is full; a listing was dropped (counted)");
    }
    return;
  }
  wake_.notify_one();
}

void CatalogStore::forget(std::string server) { enqueue(Forget{std::move(server)}); }

asio::awaitable<std::vector<ServerListing>> CatalogStore::load_all() {
  auto initiate = [this](auto handler) {
    auto owned = std::make_shared<decltype(handler)>(std::move(handler));
    // Tracked: the loop's io_context does not run out of work while the worker reads.
    auto home = asio::prefer(asio::get_associated_executor(*owned, io_.get_executor()),
                             asio::execution::outstanding_work.tracked);
    enqueue(Load{[owned, home](std::vector<ServerListing> listings) {
      asio::post(home, [owned, listings = std::move(listings)]() mutable {
        (*owned)(std::move(listings));
      });
    }});
  };
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                          void(std::vector<ServerListing>)>(initiate,
                                                                            asio::use_awaitable);
}

asio::awaitable<std::optional<std::string>> CatalogStore::load_tool(std::string server,
                                                                    std::string fingerprint,
                                                                    std::string name) {
  LoadTool job{std::move(server), std::move(fingerprint), std::move(name), {}};
  auto initiate = [this, &job](auto handler) {
    auto owned = std::make_shared<decltype(handler)>(std::move(handler));
    auto home = asio::prefer(asio::get_associated_executor(*owned, io_.get_executor()),
                             asio::execution::outstanding_work.tracked);
    job.done = [owned, home](std::optional<std::string> tool) {
      asio::post(home, [owned, tool = std::move(tool)]() mutable { (*owned)(std::move(tool)); });
    };
    enqueue(std::move(job));
  };
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                          void(std::optional<std::string>)>(initiate,
                                                                            asio::use_awaitable);
}

asio::awaitable<void> CatalogStore::flush() {
  auto initiate = [this](auto handler) {
    auto owned = std::make_shared<decltype(handler)>(std::move(handler));
    auto home = asio::prefer(asio::get_associated_executor(*owned, io_.get_executor()),
                             asio::execution::outstanding_work.tracked);
    enqueue(Flush{[owned, home] { asio::post(home, [owned] { (*owned)(); }); }});
  };
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(initiate,
                                                                       asio::use_awaitable);
}

// The worker's loop: opens the file, then runs each job in order until the store stops and
// the queue is empty. A job that ends by an exception is logged by type; a load or flush it
// had not answered yet is answered (an empty list), so that no coroutine waits forever.
void CatalogStore::run_worker() {
  std::optional<Worker> worker;
  WorkerReport posted;
  auto report = [&] {
    if (!worker) return;
    WorkerReport now = worker->report();
    if (now == posted) return;
    posted = now;
    asio::post(io_, [shared = shared_, now = std::move(now)] {
      shared->status.available = now.available;
      shared->status.problem = now.problem;
      shared->status.writes = now.writes;
      shared->status.failed_writes = now.failed_writes;
    });
  };
  try {
    worker.emplace(state_dir_, [this] { return stop_waiting(); });
    worker->file.usable();
    report();
  } catch (...) {
    core::log::warn("catalog cache: the store could not start ({}); sluice serves without it",
                    core::exception_type(std::current_exception()));
  }
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;
      job = std::move(queue_.front());
      queue_.pop_front();
      if (const auto* save = std::get_if<Save>(&job)) {
        --queued_writes_;
        queued_bytes_ -= save->bytes;
      }
    }
    bool answered = false;
    try {
      if (auto* save = std::get_if<Save>(&job); save && worker) {
        worker->save(std::move(save->listing));
      } else if (auto* forget = std::get_if<Forget>(&job); forget && worker) {
        worker->forget(forget->server);
      } else if (auto* load = std::get_if<Load>(&job)) {
        std::vector<ServerListing> listings;
        if (worker) listings = worker->file.load_all();
        answered = true;
        load->done(std::move(listings));
        // This thread's heap held the whole cache while it was read: give its pages back.
        core::release_free_heap();
      } else if (auto* tool = std::get_if<LoadTool>(&job)) {
        std::optional<std::string> found;
        if (worker) found = worker->file.load_tool(tool->server, tool->fingerprint, tool->name);
        answered = true;
        tool->done(std::move(found));
      } else if (auto* flush = std::get_if<Flush>(&job)) {
        answered = true;
        flush->done();
      }
      report();
    } catch (...) {
      core::log::warn("catalog cache: a store operation ended by an exception ({})",
                      core::exception_type(std::current_exception()));
      if (!answered) answer_unrun(job);
    }
  }
  // Last: one more try for saves a lock held back (bounded by kShutdownWait).
  if (worker && !worker->retained.empty()) worker->save(std::nullopt);
}

// Answers a load (with an empty list) or a flush that could not run.
void CatalogStore::answer_unrun(Job& job) noexcept {
  try {
    if (auto* load = std::get_if<Load>(&job)) load->done({});
    if (auto* tool = std::get_if<LoadTool>(&job)) tool->done(std::nullopt);
    if (auto* flush = std::get_if<Flush>(&job)) flush->done();
  } catch (...) {
    // Nothing is left to tell the waiter with: it stays suspended until the loop ends.
  }
}

}  // namespace sluice::store

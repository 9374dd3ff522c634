#pragma once
// Indexer: lists the servers whose tools are not known yet, so that a search covers every
// configured server ("indexing on demand"), and `sluice index` does the same for the servers
// it names. A server is indexed by starting it (single-flight with any call that starts it
// too); a server started only to be indexed is marked so, and is stopped again once idle
// (its downstream's index idle timeout).
//
// Ownership: owned by the Gateway; borrows the Fleet, whose downstreams outlive it (removed
// ones are retired, not destroyed, while the gateway runs). Threading: the gateway's loop.
// Guarantees: at most `concurrency` servers are being started for indexing at once, across
// every caller; a server queued or being indexed is never queued twice; index() resumes when
// every target has listed or failed, or when its wait passes (the indexing goes on in the
// background then); a start that throws counts as failed.
#include "core/clock.hpp"
#include "gateway/downstream/downstream.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <vector>

namespace sluice::gateway {

class Indexer {
 public:
  // Called once per target as it ends: whether it listed, and how long its start took.
  using OnIndexed = std::function<void(const Downstream&, bool listed, core::Clock::duration)>;

  explicit Indexer(asio::io_context& io) : io_(io) {}
  Indexer(const Indexer&) = delete;
  Indexer& operator=(const Indexer&) = delete;

  // Indexes `targets` (servers already queued or being indexed are waited for, not queued
  // again), at most `concurrency` at once across every caller; resumes when all of them
  // have ended, or after `wait`.
  asio::awaitable<void> index(std::vector<Downstream*> targets, std::size_t concurrency,
                              core::Clock::duration wait, OnIndexed on_indexed = {});
  // Servers queued or being started for indexing now.
  std::size_t in_progress() const { return active_.size(); }
  bool indexing(const Downstream& d) const { return active_.count(&d) > 0; }

 private:
  struct Waiter;
  asio::awaitable<void> worker();
  void finished(Downstream& d, bool listed, core::Clock::duration took);

  asio::io_context& io_;
  std::deque<Downstream*> queue_;
  std::set<const Downstream*> active_;  // queued or being started
  std::vector<std::weak_ptr<Waiter>> waiters_;
  std::size_t workers_ = 0;
};

}  // namespace sluice::gateway

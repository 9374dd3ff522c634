#pragma once
// SynonymLookup: WordNet's synonyms of the words a rebuild of the index met for the first
// time, looked up on a thread of its own, so that the loop never reads WordNet's files (its C
// library reads them a character at a time: a fraction of a millisecond a word) and no search
// waits for them. When a lookup ends, `done` runs on the loop (the gateway rebuilds the
// index at the next search, now with those synonyms cached in the Thesaurus, synonyms.hpp).
//
// Ownership: owned by the Gateway; owns its worker thread, joined at destruction after the
// lookup stops between two words. Threading: look_up() and pending() on the loop of `io`
// only; the worker touches nothing but the Thesaurus (which serialises itself) and posts
// its end back. Guarantees: one lookup at a time; words asked for while one runs wait for the
// next (at most kMaxWords per lookup, the rest at a later rebuild); never throws for
// WordNet's sake.
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace sluice::gateway {

class SynonymLookup {
 public:
  SynonymLookup(boost::asio::io_context& io, std::function<void()> done)
      : io_(io), done_(std::move(done)) {}
  ~SynonymLookup();
  SynonymLookup(const SynonymLookup&) = delete;
  SynonymLookup& operator=(const SynonymLookup&) = delete;

  // Has `words` looked up on the worker, now or after the running lookup.
  void look_up(std::vector<std::string> words);
  // Words asked for and not looked up yet (health shows it).
  std::size_t pending() const { return running_words_ + queued_.size(); }

  static constexpr std::size_t kMaxWords = 5000;

 private:
  void start_next();
  void ended();

  boost::asio::io_context& io_;
  std::function<void()> done_;
  std::vector<std::string> queued_;
  std::size_t running_words_ = 0;
  bool running_ = false;
  std::thread worker_;
  std::atomic<bool> stop_{false};
  // Whether this object still exists, for the end the worker posts to the loop.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace sluice::gateway

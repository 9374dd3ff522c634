#include "gateway/catalog/synonym_lookup.hpp"

#include "gateway/catalog/synonyms.hpp"

#include <boost/asio/post.hpp>

#include <pthread.h>
#include <signal.h>

namespace sluice::gateway {

SynonymLookup::~SynonymLookup() {
  *alive_ = false;
  stop_.store(true, std::memory_order_relaxed);
  if (worker_.joinable()) worker_.join();
}

void SynonymLookup::look_up(std::vector<std::string> words) {
  for (auto& w : words) {
    if (queued_.size() >= kMaxWords) break;
    queued_.push_back(std::move(w));
  }
  if (!running_) start_next();
}

void SynonymLookup::start_next() {
  if (queued_.empty()) return;
  if (worker_.joinable()) worker_.join();  // the previous lookup has posted its end
  std::vector<std::string> words = std::move(queued_);
  queued_.clear();
  running_ = true;
  running_words_ = words.size();
  worker_ = std::thread([this, words = std::move(words), alive = alive_] {
    // Signals are the loop's to handle, never this thread's.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    Thesaurus::shared().look_up_words(words, stop_);
    boost::asio::post(io_, [this, alive] {
      if (*alive) ended();
    });
  });
}

void SynonymLookup::ended() {
  running_ = false;
  running_words_ = 0;
  if (done_) done_();
  start_next();
}

}  // namespace sluice::gateway

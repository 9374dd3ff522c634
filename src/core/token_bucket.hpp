#pragma once
// A token bucket: `rate` tokens per second, holding at most `burst`, full at the start.
// Used wherever sluice limits a rate (child stderr lines and bytes, HTTP requests per address).
// Threading: not synchronised; one owner.
#include "core/clock.hpp"

#include <algorithm>
#include <chrono>

namespace sluice::core {

class TokenBucket {
 public:
  using Clock = core::Clock;

  TokenBucket(double rate, double burst, Clock::time_point now = Clock::now())
      : rate_(rate), burst_(burst), tokens_(burst), last_(now) {}

  // Takes one token if there is one.
  bool take(Clock::time_point now = Clock::now()) { return take(1, now); }
  // Takes `tokens` tokens if there are that many (a byte budget takes a line's size).
  bool take(double tokens, Clock::time_point now = Clock::now()) {
    refill(now);
    if (tokens_ < tokens) return false;
    tokens_ -= tokens;
    return true;
  }
  // Whether it has refilled completely by `now` (then it is no different from a new one).
  bool full(Clock::time_point now) const {
    return tokens_ + rate_ * std::chrono::duration<double>(now - last_).count() >= burst_;
  }

 private:
  void refill(Clock::time_point now) {
    tokens_ =
        std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

  double rate_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace sluice::core

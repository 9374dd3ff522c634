#pragma once
// The ledger of the sentinel sweep (sentinel_sweep_test.cpp): every input kind sluice can
// reject or redact gets its own unique sentinel; every sink (a response stream, a log, health,
// metrics, a CLI output, a state file) collects the text it produced; check() then looks for
// every sentinel in every sink.
//
// A pair where echoing is correct is allowed explicitly, with the reason (allow()); every other
// pair is checked. A sink that produced nothing fails the check: a pass must mean that the text
// was looked at. The tally says how many inputs, sinks and pairs were covered.
//
// Used from the test's thread only.
#include "core/display.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::test {

class SentinelLedger {
 public:
  struct Tally {
    std::size_t inputs = 0;
    std::size_t sinks = 0;
    std::size_t pairs = 0;    // inputs x sinks
    std::size_t checked = 0;  // pairs looked for (every pair not allowed)
    std::size_t allowed = 0;  // pairs where echoing is correct, each with its reason
    std::size_t leaks = 0;
  };

  // A new input kind and its sentinel: "SENTINEL_<kind>_<random>" (letters, digits and '_',
  // so that it survives every quoting and no escaping changes it). `where` says where the test
  // plants it (shown with a leak).
  std::string plant(const std::string& kind, const std::string& where) {
    return plant_as(kind, where, fmt::format("SENTINEL_{}_{}", kind, random_hex()));
  }
  // An input kind whose sentinel must have a given shape (a credential format): `text` must
  // be unique to this run, as random_hex() makes it.
  std::string plant_as(const std::string& kind, const std::string& where, std::string text) {
    EXPECT_TRUE(inputs_.emplace(kind, Input{text, where}).second)
        << "input kind planted twice: " << kind;
    return text;
  }
  static std::string random_hex() {
    static std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}", rng());
  }

  // Declares a sink (so that one that never records anything fails the check).
  void sink(const std::string& name) { sinks_.try_emplace(name); }
  // Appends what a sink produced.
  void record(const std::string& name, std::string_view text) { sinks_[name].append(text); }

  // An (input, sink) pair where the sink must show the input; not looked for.
  void allow(const std::string& input, const std::string& sink, const std::string& reason) {
    EXPECT_FALSE(reason.empty());
    allowed_[{input, sink}] = reason;
  }

  // Looks for every planted sentinel in every sink; a failure for each leak (with the text
  // around it, escaped) and for each sink that recorded nothing.
  Tally check() const {
    Tally t;
    t.inputs = inputs_.size();
    t.sinks = sinks_.size();
    t.pairs = t.inputs * t.sinks;
    for (const auto& [allowed, reason] : allowed_) {
      EXPECT_TRUE(inputs_.contains(allowed.first) && sinks_.contains(allowed.second))
          << "an allowance names no planted input or declared sink: " << allowed.first << " / "
          << allowed.second;
    }
    for (const auto& [sink, text] : sinks_) {
      EXPECT_FALSE(text.empty()) << "sink " << sink << " produced no output: nothing was checked";
      for (const auto& [kind, input] : inputs_) {
        if (allowed_.contains({kind, sink})) {
          ++t.allowed;
          continue;
        }
        ++t.checked;
        std::size_t at = text.find(input.sentinel);
        if (at == std::string::npos) continue;
        ++t.leaks;
        std::size_t from = at > 160 ? at - 160 : 0;
        ADD_FAILURE() << "input " << kind << " (" << input.where << ") leaks into sink " << sink
                      << ":\n  ..." << core::display_safe(std::string_view(text).substr(from, 320))
                      << "...";
      }
    }
    return t;
  }

  const std::string& text_of(const std::string& sink) const { return sinks_.at(sink); }

 private:
  struct Input {
    std::string sentinel;
    std::string where;
  };
  std::map<std::string, Input> inputs_;       // by kind
  std::map<std::string, std::string> sinks_;  // name -> everything it produced
  std::map<std::pair<std::string, std::string>, std::string> allowed_;
};

}  // namespace sluice::test

#pragma once
// The one way unit tests wait on state: run the loop in short slices until `done()` holds,
// within a generous real-time guard (so a broken rule fails the test instead of hanging it).
// Works in real and in simulated time (core::SimulatedTime): a slice is real time.
#include <boost/asio/io_context.hpp>

#include <chrono>

namespace sluice::test {

template <typename Pred>
bool run_until(boost::asio::io_context& io, Pred done,
               std::chrono::steady_clock::duration guard = std::chrono::seconds(20)) {
  const auto give_up = std::chrono::steady_clock::now() + guard;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace sluice::test

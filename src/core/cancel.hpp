#pragma once
// One-shot cancellation for one piece of work. Callbacks run once, synchronously, at
// cancel(); a callback registered after the cancel runs at once.
// Threading: the thread of the loop that owns the work.
#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace sluice::core {

class CancelSignal {
 public:
  bool cancelled() const { return cancelled_; }
  void cancel();
  std::uint64_t on_cancel(std::function<void()> callback);
  void remove(std::uint64_t registration);

 private:
  bool cancelled_ = false;
  std::uint64_t next_ = 1;
  // Inline room for the few waits a signal usually has (a call and its admission).
  boost::container::small_vector<std::pair<std::uint64_t, std::function<void()>>, 2> callbacks_;
};

}  // namespace sluice::core

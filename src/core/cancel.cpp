#include "core/cancel.hpp"

namespace sluice::core {

void CancelSignal::cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  auto callbacks = std::move(callbacks_);
  callbacks_.clear();
  for (auto& [id, cb] : callbacks) cb();
}

std::uint64_t CancelSignal::on_cancel(std::function<void()> callback) {
  if (cancelled_) {
    callback();
    return 0;
  }
  std::uint64_t id = next_++;
  callbacks_.emplace_back(id, std::move(callback));
  return id;
}

void CancelSignal::remove(std::uint64_t registration) {
  for (auto it = callbacks_.begin(); it != callbacks_.end(); ++it) {
    if (it->first == registration) {
      callbacks_.erase(it);
      return;
    }
  }
}

}  // namespace sluice::core

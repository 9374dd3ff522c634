#include "gateway/downstream/restart_policy.hpp"

#include <algorithm>

namespace sluice::gateway {

RestartPolicy::RestartPolicy(const core::Limits& limits)
    : initial_(limits.restart_backoff_initial),
      max_(limits.restart_backoff_max),
      stable_after_(limits.restart_stable_after),
      max_auto_restarts_(limits.max_auto_restarts) {}

std::chrono::milliseconds RestartPolicy::backoff() const {
  auto delay = initial_;
  for (std::size_t i = 1; i < failures_ && delay < max_; ++i) delay *= 2;
  return std::min(delay, max_);
}

void RestartPolicy::start_failed(time_point now) {
  ++failures_;
  retry_not_before_ = now + backoff();
}

void RestartPolicy::ended(time_point now) {
  if (now - online_since_ >= stable_after_) failures_ = 0;
}

std::optional<std::chrono::milliseconds> RestartPolicy::next_auto_restart() {
  if (failures_ >= max_auto_restarts_) return std::nullopt;
  ++failures_;
  return backoff();
}

}  // namespace sluice::gateway

#include "gateway/downstream/phase.hpp"

#include "core/log.hpp"

namespace sluice::gateway {

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::lazy:
      return "lazy";
    case Phase::starting:
      return "starting";
    case Phase::online:
      return "online";
    case Phase::restarting:
      return "restarting";
    case Phase::failed:
      return "failed";
    case Phase::offline:
      return "offline";
    case Phase::idle_stopped:
      return "idle_stopped";
    case Phase::disabled:
      return "disabled";
    case Phase::untrusted:
      return "untrusted";
  }
  return "unknown";
}

bool transition_allowed(Phase from, Phase to) {
  if (from == to) return true;
  switch (from) {
    case Phase::lazy:
      return to == Phase::starting || to == Phase::failed || to == Phase::offline ||
             to == Phase::disabled || to == Phase::untrusted;
    case Phase::starting:
      return to == Phase::online || to == Phase::failed || to == Phase::offline;
    case Phase::online:
      // failed: a relisting that failed while the session stayed up.
      // idle_stopped: ds_idle_stop.
      return to == Phase::restarting || to == Phase::failed || to == Phase::offline ||
             to == Phase::idle_stopped;
    case Phase::restarting:
      return to == Phase::starting || to == Phase::failed || to == Phase::offline;
    case Phase::failed:
      return to == Phase::starting || to == Phase::restarting || to == Phase::offline;
    case Phase::offline:
      // failed: a start refused before any spawn (unset variables), or a start that was
      // under way when the shutdown came.
      return to == Phase::starting || to == Phase::failed;
    case Phase::idle_stopped:
      // starting: the next call; failed: a start refused before any spawn; offline: an
      // operator's stop or the shutdown.
      return to == Phase::starting || to == Phase::failed || to == Phase::offline;
    case Phase::disabled:
    case Phase::untrusted:
      return false;
  }
  return false;
}

bool PhaseMachine::transition(Phase to) {
  if (!transition_allowed(phase_, to)) {
    core::log::error("server {}: refused to move from {} to {}", label_, to_string(phase_),
                     to_string(to));
    return false;
  }
  phase_ = to;
  return true;
}

}  // namespace sluice::gateway

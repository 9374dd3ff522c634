#pragma once
// Where a downstream is in its life, and the one function that moves it.
//
//   lazy ──▶ starting ──▶ online ──▶ restarting ──▶ starting ...
//     │         │           │            │
//     │         ▼           ▼            ▼
//     └──────▶ failed ◀─────┴────────────┘      (failed ──▶ starting | restarting)
//   online ──▶ idle_stopped ──▶ starting | offline | failed
//   any of the six above ──▶ offline ──▶ starting | failed
//   disabled, untrusted: set once, at construction, and final (untrusted: a project file the
//   operator has not approved defines it; config/trust_store.hpp).
//
// `failed` keeps its reason beside it (the downstream's last error); `restarting` is the
// automatic restart after the child ended by itself (a backoff, then `starting` again);
// `idle_stopped` follows an idle stop (ds_idle_stop: its lists stay known and the next call
// starts it again); `offline` follows an operator's stop or the shutdown. PhaseMachine::transition
// is the only writer of a phase: a move the table does not allow is refused (the phase stays and an
// error is logged), so a new path cannot invent a transition silently. Threading: not synchronised;
// the owning downstream's loop thread only.
#include <string>
#include <string_view>

namespace sluice::gateway {

enum class Phase {
  lazy,
  starting,
  online,
  restarting,
  failed,
  offline,
  idle_stopped,
  disabled,
  untrusted
};
// The name health, the catalog and the CLI show (stable: scripts read it).
std::string_view to_string(Phase phase);

// Whether the table allows `from` -> `to`. Staying in the same phase is always allowed.
bool transition_allowed(Phase from, Phase to);

class PhaseMachine {
 public:
  // `label` names the downstream in the log line of a refused move.
  explicit PhaseMachine(std::string label) : label_(std::move(label)) {}
  Phase phase() const { return phase_; }
  // Moves to `to` when transition_allowed(phase(), to); else refuses. Whether it moved.
  bool transition(Phase to);

 private:
  std::string label_;
  Phase phase_ = Phase::lazy;
};

}  // namespace sluice::gateway

#pragma once
// The restart-path registry (the restart rules of docs/invariants.md): every path that stops,
// restarts or replaces a process, sluice itself or a downstream, is one named row of a compiled-in,
// constexpr table. `docs/restart-paths.md` lists the same rows in the same order; a unit
// test parses it and fails when the two differ.
//
// Contract: the table is immutable, lives for the whole program and is safe to read from
// any thread. Ids are unique (checked at compile time). Looking up an unknown id is an
// Error result whose message does not repeat the id; it never throws or aborts.
#include "core/error.hpp"

#include <span>
#include <string_view>

namespace sluice::gateway {

// How a restart path is governed.
enum class RestartClass {
  // sluice never does this; a static check or a guard in the one signal wrapper enforces it.
  forbidden,
  // The condition is detected and reported (health, one message, refusal); sluice does
  // not act on it by itself.
  guarded_fail_closed,
  // Stopping is the host's decision (signal, stdin EOF); sluice only runs the orderly
  // shutdown it is asked for.
  host_residual,
  // A narrow, named recovery sluice performs on a downstream, with its own guards.
  sanctioned_narrow_recovery,
  // One id, two halves (the doc writes it "forbidden / sanctioned"): acting on a live
  // holder is forbidden (it is never signalled); taking over what the kernel released when
  // the holder died is sanctioned. Kept as one value so that code and docs name the row
  // the same way, and no caller can read just one half of it.
  forbidden_live_sanctioned_released,
};

// The class as the docs write it: the enumerator name, or "forbidden / sanctioned" for
// forbidden_live_sanctioned_released.
std::string_view to_string(RestartClass restart_class);

struct RestartPath {
  std::string_view id;  // stable, snake_case; referenced by audit records and docs
  RestartClass restart_class;
  std::string_view rule;  // one line, the same text as in docs/restart-paths.md
};

// Every row, in the order docs/restart-paths.md lists them (one row per id).
std::span<const RestartPath> restart_paths();

// The row for `id`, or an Error ("unknown restart path id") when there is none.
core::Result<const RestartPath*> find_restart_path(std::string_view id);

}  // namespace sluice::gateway

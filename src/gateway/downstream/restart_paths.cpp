#include "gateway/downstream/restart_paths.hpp"

#include <array>

namespace sluice::gateway {

namespace {

using enum RestartClass;

constexpr std::array<RestartPath, 15> kRestartPaths{{
    {"gw_self_reexec", forbidden,
     "sluice never execs or replaces itself: no `exec*` outside `main()` and the spawner's "
     "child branch; a source scan and an `nm -u` symbol check over object files enforce it, "
     "and a test proves the scan catches an injected call"},
    {"gw_exit_from_request_path", forbidden,
     "no `exit`, `abort` outside `main()` and the spawner's child branch; the same source "
     "scan and `nm -u` symbol check enforce it"},
    {"gw_startup_stop", guarded_fail_closed,
     "bad config or a live singleton lock found before serving: one clear message, non-zero "
     "exit, no retry loop"},
    {"gw_binary_stale", guarded_fail_closed,
     "the executable on disk changed since start: health says `restart_required` with the "
     "exact next step; report-only by default, `failClosedWhenStale` makes mutating "
     "meta-tools refuse"},
    {"gw_shutdown", host_residual,
     "SIGTERM, SIGINT, SIGHUP or stdin EOF: C7 then P4, exit 0; a signal inherited as ignored "
     "stays ignored"},
    {"ds_restart_explicit", sanctioned_narrow_recovery,
     "`restart_server` / `disconnect_server`: single-flight per server; refuses while the "
     "server has in-flight or abandoned calls unless `force` (and `force` only when config "
     "does not forbid it); drain, P4, respawn, initialize, list, "
     "`notifications/tools/list_changed` to clients, audit record with the old and new "
     "generation"},
    {"ds_auto_restart_after_exit", sanctioned_narrow_recovery,
     "a child that exited by itself is restarted with exponential backoff up to a cap, then "
     "marked `failed`; in-flight calls end `transport_lost`; calls are never replayed"},
    {"ds_external_kill", guarded_fail_closed,
     "a child killed by a signal sluice did not send is not restarted silently: health "
     "records it, mutating calls to it fail closed until `restart_server`"},
    {"ds_stale_code", guarded_fail_closed,
     "the child's executable changed since spawn: health reports it with "
     "`restart_server(\"<name>\")` as the next step"},
    {"ds_refresh", sanctioned_narrow_recovery, "re-list a server's tools in process"},
    {"ds_idle_stop", sanctioned_narrow_recovery,
     "a server with no call pending, no subscription and no activity for its idle "
     "timeout (`idleTimeoutMs`, or `indexIdleMs` while it was started only to be "
     "indexed) is stopped through P4 to `idle_stopped`; its lists stay known and the "
     "next call starts it again; never a server in a restart backoff, held or failed; "
     "audit record `idle_stop`"},
    {"ds_config_reload", sanctioned_narrow_recovery,
     "a changed configuration applied in process (a watched file changed, or "
     "`gateway.refresh`): a file accepted before and rejected now keeps the last good "
     "configuration, and health says which file and why, value-free; added servers join "
     "the fleet lazily; removed ones take no new calls and stop through P4 once their "
     "pending calls end; changed ones restart once they have no call pending, never "
     "forced, and health shows the next step until then; changed operator settings are "
     "reported, not applied; each application is a configuration generation with an audit "
     "record `config_reload`"},
    {"kill_by_name", forbidden,
     "sluice never signals a process by name, only processes it spawned or adopted; the one "
     "signal wrapper refuses pid ≤ 1, its own pid and its own group"},
    {"ds_kill_to_cancel", forbidden,
     "a call is cancelled with `notifications/cancelled`, never by signalling its server; "
     "the one signal wrapper refuses pid ≤ 1, its own pid and its own group"},
    {"singleton_takeover", forbidden_live_sanctioned_released,
     "the lock is an `flock` the kernel releases on death; a live holder is never signalled"},
}};

constexpr bool ids_unique() {
  for (std::size_t i = 0; i < kRestartPaths.size(); ++i) {
    for (std::size_t j = i + 1; j < kRestartPaths.size(); ++j) {
      if (kRestartPaths[i].id == kRestartPaths[j].id) return false;
    }
  }
  return true;
}
static_assert(ids_unique(), "restart path ids must be unique");

}  // namespace

std::string_view to_string(RestartClass restart_class) {
  switch (restart_class) {
    case forbidden:
      return "forbidden";
    case guarded_fail_closed:
      return "guarded_fail_closed";
    case host_residual:
      return "host_residual";
    case sanctioned_narrow_recovery:
      return "sanctioned_narrow_recovery";
    case forbidden_live_sanctioned_released:
      return "forbidden / sanctioned";
  }
  return "unknown";
}

std::span<const RestartPath> restart_paths() { return kRestartPaths; }

core::Result<const RestartPath*> find_restart_path(std::string_view id) {
  for (const RestartPath& path : kRestartPaths) {
    if (path.id == id) return &path;
  }
  return core::make_error("unknown restart path id");
}

}  // namespace sluice::gateway

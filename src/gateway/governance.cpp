// Governed stops and restarts of downstreams (GATEWAY-INVARIANTS §4): restart_server,
// disconnect_server and refresh, with the refusal-while-pending rule, single flight per
// server and the operator's switch that forbids `force`; and the staleness reports.
#include "core/log.hpp"
#include "gateway/gateway.hpp"
#include "gateway/results.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace sluice::gateway {
namespace bj = boost::json;

std::size_t Gateway::cancel_pending(std::string_view server) {
  std::vector<PendingCall*> targets;
  for (auto& c : pending_) {
    if (server.empty() || c.server == server) targets.push_back(&c);
  }
  for (auto* c : targets) {
    c->cancelled_by_operator = true;
    c->work_cancel.cancel();
  }
  return targets.size();
}

asio::awaitable<std::string> Gateway::restart_server(std::string_view server, bool force,
                                                     bool restart) {
  const char* action = restart ? "restart_server" : "disconnect_server";
  Downstream* d = find(server);
  if (!d) co_return error_result(unknown_server(server));
  std::string name = d->name();
  if (operations_.count(name)) {
    co_return error_result(fmt::format("a restart or disconnect of {} is already under way", name));
  }
  std::size_t pending = 0, abandoned = 0;
  for (const auto& c : pending_) {
    if (c.server != name) continue;
    ++pending;
    if (c.state == PendingCall::State::abandoned) ++abandoned;
  }
  if (force) {
    std::string instead =
        pending > 0 ? fmt::format("{} has {} call(s) pending ({} abandoned): wait for them "
                                  "(gateway.list_pending)",
                                  name, pending, abandoned)
                    : fmt::format("{} has nothing pending: call {} without force", name, action);
    if (std::string why = force_refusal(action, instead); !why.empty()) {
      co_return error_result(why);
    }
  }
  if (pending > 0 && !force) {
    audit_.record({"refusal", "operator", name, "", std::string(action) + " refused: pending", -1,
                   d->generation()});
    co_return error_result(fmt::format(
        "{} has {} call(s) pending ({} abandoned); {} refuses while work is pending: wait for "
        "it (gateway.list_pending) or pass force: true",
        name, pending, abandoned, action));
  }
  operations_.insert(name);
  std::string prior(to_string(d->status()));
  std::uint64_t old_generation = d->generation();
  std::size_t cancelled = force ? cancel_pending(name) : 0;
  core::log::info("server {}: restart path ds_restart_explicit ({}{})", name, action,
                  force ? ", forced" : "");
  // A named local: GCC 12 mishandles temporaries of a conditional inside co_await.
  std::string reason = restart ? "restarting at an operator's request"
                               : "disconnected by gateway.disconnect_server";
  co_await d->stop(std::move(reason));
  bool ok = true;
  if (restart) ok = co_await d->ensure_started(true);
  operations_.erase(name);
  audit_.record({restart ? "restart" : "disconnect", "operator", name, "",
                 fmt::format("{}: generation {} to {}", ok ? "ok" : "failed", old_generation,
                             d->generation()),
                 -1, d->generation()});
  bj::object out;
  out["ok"] = ok;
  out["server"] = name;
  out["action"] = action;
  out["prior_status"] = prior;
  out["status"] = to_string(d->status());
  out["old_generation"] = old_generation;
  out["new_generation"] = d->generation();
  out["cancelled_request_count"] = cancelled;
  if (!ok) out["last_error"] = d->last_error();
  co_return ok ? structured_result(out)
               : error_result(fmt::format("{} could not be started again: {}", name,
                                          d->last_error()));
}

asio::awaitable<std::string> Gateway::refresh(bool force) {
  std::size_t pending = pending_.size();
  if (pending > 0 && !force) {
    co_return error_result(fmt::format(
        "{} call(s) are pending; refresh refuses while any work is pending: wait for it "
        "(gateway.list_pending) or pass force: true",
        pending));
  }
  if (force) {
    std::string instead =
        pending > 0
            ? fmt::format("{} call(s) are pending: wait for them (gateway.list_pending)", pending)
            : std::string("nothing is pending: call refresh without force");
    if (std::string why = force_refusal("refresh", instead); !why.empty()) {
      co_return error_result(why);
    }
  }
  std::size_t cancelled = force ? cancel_pending("") : 0;
  std::size_t seen = 0, online = 0, relisted = 0;
  for (auto& d : downstreams_) {
    ++seen;
    if (d->status() != Status::online) continue;
    ++online;
    if (co_await d->relist()) ++relisted;
  }
  audit_.record({"refresh", "operator", "", "", "ok", -1, 0});
  bj::object out;
  out["ok"] = relisted == online;
  out["servers_seen"] = seen;
  out["servers_online"] = online;
  out["servers_relisted"] = relisted;
  out["tools_indexed"] = catalog_.size();
  out["pending_cancelled"] = cancelled;
  co_return structured_result(out);
}

std::string Gateway::force_refusal(std::string_view action, std::string_view instead) {
  if (!config_->policy.forbid_force) return {};
  audit_.record({"refusal", "operator", "", "", fmt::format("{} refused: force forbidden", action),
                 -1, 0});
  return fmt::format("force is forbidden by the operator (sluice.forbidForce), so {} with "
                     "force: true is refused; {}",
                     action, instead);
}

bool Gateway::binary_stale() const { return self_exe_ && core::changed_since(*self_exe_); }

std::string Gateway::stale_refusal() const {
  if (!config_->policy.fail_closed_when_stale || !binary_stale()) return {};
  return "sluice's executable was replaced on disk since it started (gw_binary_stale) and "
         "sluice.failClosedWhenStale is set: restart sluice from your client to run the new "
         "binary";
}

}  // namespace sluice::gateway

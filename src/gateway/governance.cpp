#include "gateway/governance.hpp"

#include "core/log.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/object.hpp>

#include <fmt/format.h>

namespace sluice::gateway {
namespace bj = boost::json;

Governance::Governance(Fleet& fleet, CallLedger& calls, const Catalog& catalog, AuditRing& audit,
                       const config::GatewayPolicy& policy, ConfigReload* reload)
    : fleet_(fleet),
      calls_(calls),
      catalog_(catalog),
      audit_(audit),
      policy_(policy),
      reload_(reload),
      // gw_binary_stale compares the file at this path with what it was at start.
      self_exe_(core::executable_of(0)) {}

std::string Governance::restart_refusal(const Downstream& d, bool force, std::string_view action) {
  const std::string& name = d.name();
  if (operations_.count(name)) {
    return fmt::format("a restart or disconnect of {} is already under way", name);
  }
  std::size_t pending = 0, abandoned = 0;
  for (const auto& c : calls_.records()) {
    if (c.server != name) continue;
    ++pending;
    if (c.state == CallRecord::State::abandoned) ++abandoned;
  }
  if (force) {
    std::string instead =
        pending > 0 ? fmt::format(
                          "{} has {} call(s) pending ({} abandoned): wait for them "
                          "(gateway.list_pending)",
                          name, pending, abandoned)
                    : fmt::format("{} has nothing pending: call {} without force", name, action);
    return force_refusal(action, instead);
  }
  if (pending == 0) return {};
  audit_.record({"refusal", "operator", name, "", std::string(action) + " refused: pending", -1,
                 d.generation()});
  return fmt::format(
      "{} has {} call(s) pending ({} abandoned); {} refuses while work is pending: wait for "
      "it (gateway.list_pending) or pass force: true",
      name, pending, abandoned, action);
}

asio::awaitable<std::string> Governance::restart_server(std::string_view server, bool force,
                                                        bool restart) {
  const char* action = restart ? "restart_server" : "disconnect_server";
  Downstream* d = fleet_.find(server);
  if (!d) co_return mcp::error_result(fleet_.unknown_server(server));
  if (std::string why = restart_refusal(*d, force, action); !why.empty()) {
    co_return mcp::error_result(why);
  }
  std::string name = d->name();
  operations_.insert(name);
  std::string prior(to_string(d->phase()));
  std::uint64_t old_generation = d->generation();
  std::size_t cancelled = force ? calls_.cancel_all(name) : 0;
  core::log::info("server {}: restart path ds_restart_explicit ({}{})", name, action,
                  force ? ", forced" : "");
  // A named local: GCC 12 mishandles temporaries of a conditional inside co_await.
  std::string reason =
      restart ? "restarting at an operator's request" : "disconnected by gateway.disconnect_server";
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
  out["status"] = to_string(d->phase());
  out["old_generation"] = old_generation;
  out["new_generation"] = d->generation();
  out["cancelled_request_count"] = cancelled;
  if (!ok) out["last_error"] = d->last_error();
  co_return ok
      ? mcp::structured_result(out)
      : mcp::error_result(fmt::format("{} could not be started again: {}", name, d->last_error()));
}

asio::awaitable<std::string> Governance::refresh(bool force) {
  // ds_config_reload first: what it changes waits for pending calls by itself.
  bj::object config = reload_ ? reload_->reread("gateway.refresh") : bj::object{};
  std::size_t pending = calls_.size();
  if (pending > 0 && !force) {
    co_return mcp::error_result(fmt::format(
        "{} call(s) are pending; refresh refuses to relist while any work is pending: wait "
        "for it (gateway.list_pending) or pass force: true (the configuration was reread: "
        "see config_reload in gateway.health)",
        pending));
  }
  if (force) {
    std::string instead =
        pending > 0
            ? fmt::format("{} call(s) are pending: wait for them (gateway.list_pending)", pending)
            : std::string("nothing is pending: call refresh without force");
    if (std::string why = force_refusal("refresh", instead); !why.empty()) {
      co_return mcp::error_result(why);
    }
  }
  std::size_t cancelled = force ? calls_.cancel_all("") : 0;
  std::size_t seen = 0, online = 0, relisted = 0;
  // A copy: a reload may change the fleet while a relisting waits.
  std::vector<Downstream*> servers;
  for (const auto& d : fleet_.servers()) servers.push_back(d.get());
  for (Downstream* d : servers) {
    ++seen;
    if (d->phase() != Phase::online) continue;
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
  if (reload_) out["config"] = std::move(config);
  co_return mcp::structured_result(out);
}

std::string Governance::force_refusal(std::string_view action, std::string_view instead) {
  if (!policy_.forbid_force) return {};
  audit_.record(
      {"refusal", "operator", "", "", fmt::format("{} refused: force forbidden", action), -1, 0});
  return fmt::format(
      "force is forbidden by the operator (sluice.forbidForce), so {} with "
      "force: true is refused; {}",
      action, instead);
}

bool Governance::binary_stale() const { return self_exe_ && core::changed_since(*self_exe_); }

std::string Governance::stale_refusal() const {
  if (!policy_.fail_closed_when_stale || !binary_stale()) return {};
  return "sluice's executable was replaced on disk since it started (gw_binary_stale) and "
         "sluice.failClosedWhenStale is set: restart sluice from your client to run the new "
         "binary";
}

}  // namespace sluice::gateway

// gateway.health (and /health with the token, `sluice servers`): the gateway's report, every
// server counted by status, and rows for one page of them, built in one pass over the servers
// and one over the pending calls, so that a large fleet cannot stall the loop or overflow the
// answer.
#include "core/log.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"

#include <boost/json/object.hpp>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace sluice::gateway {
namespace bj = boost::json;

bj::object Gateway::health(const HealthQuery& query) const {
  // One pass over the pending calls for every row, one over the servers: linear in both.
  const auto now = std::chrono::steady_clock::now();
  std::unordered_map<std::string_view, std::int64_t> oldest_abandoned;
  for (const auto& c : pending_) {
    if (c.state != PendingCall::State::abandoned) continue;
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.abandoned_at).count();
    auto [it, fresh] = oldest_abandoned.emplace(c.server, age);
    if (!fresh) it->second = std::max<std::int64_t>(it->second, age);
  }
  // Every server is counted by status; rows are given for one page of the matching ones.
  std::map<std::string_view, std::size_t> by_status;
  std::size_t matching = 0;
  bj::array servers;
  for (const auto& d : downstreams_) {
    if (query.server && d->name() != *query.server) continue;
    std::string_view status = to_string(d->status());
    ++by_status[status];
    if (query.status && status != *query.status) continue;
    const std::size_t position = matching++;
    if (position < query.offset || servers.size() >= query.limit) continue;
    bj::object row;
    row["name"] = d->name();
    row["status"] = status;
    row["transport"] = std::holds_alternative<config::StdioServer>(d->config().transport)
                           ? std::string("stdio")
                           : std::get<config::RemoteServer>(d->config().transport).type;
    row["tool_count"] = d->tools().size();
    row["tools_known"] = d->tools_known();
    bj::array not_validatable;
    std::size_t not_validatable_count = 0;
    for (const auto& tool : d->tools()) {
      if (tool.validator || tool.schema_problem.empty()) continue;
      if (++not_validatable_count <= 20) not_validatable.push_back(bj::string(tool.name));
    }
    if (not_validatable_count > 0) {
      // Their schemas did not compile: calls are refused unless allowUnvalidatedTools.
      row["tools_not_validatable"] = not_validatable_count;
      row["tools_not_validatable_names"] = std::move(not_validatable);
    }
    row["protocol_version"] =
        d->protocol_version().empty() ? bj::value(nullptr) : bj::value(d->protocol_version());
    row["last_error"] = d->last_error().empty() ? bj::value(nullptr) : bj::value(d->last_error());
    row["source"] = d->config().source_file;
    // Admission (GATEWAY-INVARIANTS §2-§3): per tool, and summed for the server.
    OutcomeCounters total;
    std::size_t permits_held = 0, queued = 0;
    bj::array tools;
    // At most kToolRows tool rows per server (the sums below still cover every tool).
    constexpr std::size_t kToolRows = 100;
    std::size_t called_not_listed = 0;
    for (const auto& [name, a] : d->admissions()) {
      if (tools.size() < kToolRows) {
        bj::object t;
        t["tool"] = name;
        t["budget"] = a->budget.capacity();
        t["permits_held"] = a->budget.held();
        t["queued"] = a->budget.queued();
        a->counters.add_to(t);
        tools.push_back(std::move(t));
      } else {
        ++called_not_listed;
      }
      permits_held += a->budget.held();
      queued += a->budget.queued();
      const auto& c = a->counters;
      total.completed += c.completed;
      total.errored += c.errored;
      total.transport_lost += c.transport_lost;
      total.expired += c.expired;
      total.cancelled_while_queued += c.cancelled_while_queued;
      total.rejected_overflow += c.rejected_overflow;
      total.rejected_queue_timeout += c.rejected_queue_timeout;
      total.expired_holding_permit += c.expired_holding_permit;
      total.in_flight += c.in_flight;
      total.abandoned_in_flight += c.abandoned_in_flight;
    }
    // Tools not called yet: their resolved budget, nothing held (for servers with a short
    // list; a long one would drown the report, so only its count is given).
    if (called_not_listed > 0) row["called_tools_not_listed"] = called_not_listed;
    std::size_t idle =
        d->tools().size() > d->admissions().size() ? d->tools().size() - d->admissions().size() : 0;
    if (idle + tools.size() > kToolRows) row["idle_tools_not_listed"] = idle;
    for (const auto& tool : d->tools()) {
      if (idle + tools.size() > kToolRows) break;
      if (d->admissions().count(tool.name)) continue;
      bj::object t;
      t["tool"] = tool.name;
      t["budget"] = d->resolved_budget(tool);
      t["permits_held"] = 0;
      t["queued"] = 0;
      OutcomeCounters{}.add_to(t);
      tools.push_back(std::move(t));
    }
    row["permits_held"] = permits_held;
    row["queued"] = queued;
    if (const Budget* lane = d->write_lane()) {
      // A1: calls to its tools without readOnlyHint, one lane across the server.
      row["write_lane"] = bj::object{
          {"budget", lane->capacity()}, {"permits_held", lane->held()}, {"queued", lane->queued()}};
    }
    total.add_to(row);
    auto oldest = oldest_abandoned.find(d->name());
    row["oldest_abandoned_ms"] =
        oldest == oldest_abandoned.end() ? bj::value(nullptr) : bj::value(oldest->second);
    row["tools"] = std::move(tools);
    row["generation"] = d->generation();
    if (d->pid() > 0) row["pid"] = d->pid();
    row["restarts"] = d->restarts();
    // Downstream output is untrusted: what sluice dropped from this server's lists and answers.
    const auto& skipped = d->skipped_entries();
    row["skipped_list_entries"] = bj::object{{"tools", skipped.tools},
                                             {"prompts", skipped.prompts},
                                             {"resources", skipped.resources},
                                             {"resource_templates", skipped.resource_templates}};
    row["unmatched_responses"] = d->unmatched_responses();
    if (d->held()) row["held"] = true;
    std::string next_step = "gateway.restart_server {\"server_name\":\"" + d->name() + "\"}";
    if (d->external_signal() != 0) {
      row["external_signal"] = d->external_signal();
      row["restart_required"] =
          bj::object{{"reason", "ds_external_kill: killed by a signal sluice did not send"},
                     {"next_step", next_step}};
    } else if (d->executable_changed()) {
      row["restart_required"] = bj::object{
          {"reason", "ds_stale_code: its executable changed on disk since it was started"},
          {"next_step", next_step}};
    }
    servers.push_back(std::move(row));
  }
  auto uptime = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started_at_);
  bj::object gw;
  gw["version"] = options_.version;
  gw["uptime_ms"] = uptime.count();
  gw["expose"] = options_.expose_meta && options_.expose_all ? "meta,all"
                 : options_.expose_all                       ? "all"
                                                             : "meta";
  gw["tools_indexed"] = catalog_.size();
  gw["pending_calls"] = pending_.size();
  // Invariant guards: coroutines and request handlers ended by an exception (each logged),
  // and releases of an admission slot that was not held (release builds; debug asserts).
  gw["coroutine_failures"] = core::coroutine_failures();
  gw["permit_over_releases"] = Budget::over_releases();
  if (binary_stale()) {
    gw["restart_required"] = bj::object{
        {"reason", "gw_binary_stale: sluice's executable was replaced on disk since it started"},
        {"next_step",
         "restart sluice from your MCP client (reconnect the server) to run the "
         "new binary; sluice never restarts itself"},
        {"fail_closed", config_->policy.fail_closed_when_stale}};
  }
  bj::object out;
  out["gateway"] = std::move(gw);
  bj::object counts;
  for (const auto& [status, n] : by_status) counts[status] = n;
  out["servers_by_status"] = std::move(counts);
  out["servers_matching"] = matching;
  if (query.offset + servers.size() < matching) {
    out["next_cursor"] = std::to_string(query.offset + servers.size());
  }
  out["servers"] = std::move(servers);
  out["audit"] = audit_.to_json(50);
  out["audit_dropped"] = audit_.dropped();
  // Log lines sluice could not write (a stderr nobody reads, a full or slow log file).
  out["log"] = bj::object{{"lines_dropped", core::log::dropped()}};
  return out;
}

}  // namespace sluice::gateway

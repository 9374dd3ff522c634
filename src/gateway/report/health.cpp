// gateway.health (and /health with the token, `sluice servers`): the gateway's report, every
// server counted by status, and rows for one page of them, built in one pass over the servers
// and one over the pending calls, so that a large fleet cannot stall the loop or overflow the
// answer.
#include "config/trust_store.hpp"
#include "core/log.hpp"
#include "core/wall_clock.hpp"
#include "core/spawn.hpp"
#include "gateway/gateway.hpp"
#include "mcp/pagination.hpp"

#include <boost/json/object.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_map>

namespace sluice::gateway {
namespace bj = boost::json;

namespace {

// At most this many tool rows per server (the server's sums still cover every tool), and
// this many names of tools whose schema did not compile.
constexpr std::size_t kToolRows = 100;
constexpr std::size_t kNotValidatableNames = 20;

// The age of the oldest abandoned call, per server: one pass over the ledger.
std::unordered_map<std::string_view, std::int64_t> oldest_abandoned(
    const CallLedger::Records& records) {
  const auto now = core::Clock::now();
  std::unordered_map<std::string_view, std::int64_t> oldest;
  for (const auto& c : records) {
    if (c.state != CallRecord::State::abandoned) continue;
    auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.abandoned_at).count();
    auto [it, fresh] = oldest.emplace(c.server, age);
    if (!fresh) it->second = std::max<std::int64_t>(it->second, age);
  }
  return oldest;
}

// Admission (invariants A1-A3, C3): the sums for the server and its write lane into `row`;
// returns a row per tool (those called so far, then those not called yet while the list
// stays short).
bj::array add_admission(const Downstream& d, bj::object& row) {
  OutcomeCounters total;
  std::size_t permits_held = 0, queued = 0, called_not_listed = 0;
  bj::array tools;
  for (const auto& [name, a] : d.admissions()) {
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
    total += a->counters;
  }
  // Tools not called yet: their resolved budget, nothing held (for servers with a short
  // list; a long one would drown the report, so only its count is given).
  if (called_not_listed > 0) row["called_tools_not_listed"] = called_not_listed;
  const std::size_t idle =
      d.tools().size() > d.admissions().size() ? d.tools().size() - d.admissions().size() : 0;
  if (idle + tools.size() > kToolRows) row["idle_tools_not_listed"] = idle;
  for (const auto& tool : d.tools()) {
    if (idle + tools.size() > kToolRows) break;
    if (d.admissions().count(tool.name)) continue;
    bj::object t;
    t["tool"] = tool.name;
    t["budget"] = d.resolved_budget(tool);
    t["permits_held"] = 0;
    t["queued"] = 0;
    OutcomeCounters{}.add_to(t);
    tools.push_back(std::move(t));
  }
  row["permits_held"] = permits_held;
  row["queued"] = queued;
  if (const Budget* lane = d.write_lane()) {
    // A1: calls to its tools without readOnlyHint, one lane across the server.
    row["write_lane"] = bj::object{
        {"budget", lane->capacity()}, {"permits_held", lane->held()}, {"queued", lane->queued()}};
  }
  total.add_to(row);
  return tools;
}

// What the server is and how it was listed.
void add_identity(const Downstream& d, std::string_view status, bj::object& row) {
  row["name"] = d.name();
  row["status"] = status;
  row["transport"] = std::holds_alternative<config::StdioServer>(d.config().transport)
                         ? std::string("stdio")
                         : std::get<config::RemoteServer>(d.config().transport).type;
  row["tool_count"] = d.tools().size();
  row["tools_known"] = d.tools_known();
  // Where its lists came from: this run's listing, or the catalog cache's.
  if (d.tools_known()) {
    row["lists_from"] = d.peer().lists_cached() ? "cache" : "this_run";
    row["listed_at"] = core::utc_text(std::chrono::system_clock::time_point(
        std::chrono::milliseconds(d.peer().listed_at_ms())));
  }
  bj::array not_validatable;
  std::size_t not_validatable_count = 0;
  for (const auto& tool : d.tools()) {
    if (tool.validator() || tool.schema_problem().empty()) continue;
    if (++not_validatable_count <= kNotValidatableNames) {
      not_validatable.push_back(bj::string(tool.name));
    }
  }
  if (not_validatable_count > 0) {
    // Their schemas did not compile: calls are refused unless allowUnvalidatedTools.
    row["tools_not_validatable"] = not_validatable_count;
    row["tools_not_validatable_names"] = std::move(not_validatable);
  }
  row["protocol_version"] =
      d.protocol_version().empty() ? bj::value(nullptr) : bj::value(d.protocol_version());
  row["last_error"] = d.last_error().empty() ? bj::value(nullptr) : bj::value(d.last_error());
  if (d.phase() == Phase::untrusted) {
    row["next_step"] = config::approve_command(d.config().source_file);
  }
  if (!d.failure_class().empty()) {
    row["failure_class"] = d.failure_class();
    if (d.failure_class() == "auth_required") {
      row["next_step"] = "sluice auth login " + d.name();
    }
  }
  row["source"] = d.config().source_file;
}

// What the bounds of its last listings took: entries beyond the cap (dropped unread), lists
// cut short at the page bound, descriptions and titles cut.
void add_list_bounds(const SkippedEntries& skipped, bj::object& row) {
  const std::pair<const char*, const ListBounds*> lists[] = {
      {"tools", &skipped.tools_bounds},
      {"prompts", &skipped.prompts_bounds},
      {"resources", &skipped.resources_bounds},
      {"resource_templates", &skipped.resource_templates_bounds}};
  bj::object over_cap, texts_cut, withheld;
  bj::array pages_unread;
  for (const auto& [list, bounds] : lists) {
    over_cap[list] = bounds->over_cap;
    texts_cut[list] = bounds->texts_cut;
    withheld[list] = bounds->withheld;  // by the operator's policy
    if (bounds->pages_unread) pages_unread.emplace_back(list);
  }
  row["list_entries_over_cap"] = std::move(over_cap);
  row["list_texts_cut"] = std::move(texts_cut);
  row["list_entries_withheld"] = std::move(withheld);
  if (!pages_unread.empty()) row["list_pages_unread"] = std::move(pages_unread);
}

// Its process, what sluice dropped from its output, and whether it must be restarted.
void add_process(const Downstream& d, bj::object& row) {
  row["generation"] = d.generation();
  if (d.pid() > 0) row["pid"] = d.pid();
  row["restarts"] = d.restarts();
  // ds_idle_stop: the idle timeout in force (null: never) and the last idle stop (UTC).
  const std::optional<std::chrono::milliseconds> idle_timeout = d.idle_timeout();
  row["idle_timeout_ms"] = idle_timeout ? bj::value(idle_timeout->count()) : bj::value(nullptr);
  if (d.index_only()) row["index_only"] = true;
  if (const auto& at = d.idle_stopped_at(); at) {
    row["idle_stopped_at"] = core::utc_text(*at);
  } else {
    row["idle_stopped_at"] = nullptr;
  }
  // Downstream output is untrusted: what sluice dropped from this server's lists and answers.
  const auto& skipped = d.skipped_entries();
  row["skipped_list_entries"] = bj::object{{"tools", skipped.tools},
                                           {"prompts", skipped.prompts},
                                           {"resources", skipped.resources},
                                           {"resource_templates", skipped.resource_templates}};
  add_list_bounds(skipped, row);
  row["unmatched_responses"] = d.unmatched_responses();
  if (d.held()) row["held"] = true;
  std::string next_step = "gateway.restart_server {\"server_name\":\"" + d.name() + "\"}";
  if (d.external_signal() != 0) {
    row["external_signal"] = d.external_signal();
    row["restart_required"] =
        bj::object{{"reason", "ds_external_kill: killed by a signal sluice did not send"},
                   {"next_step", next_step}};
  } else if (d.executable_changed()) {
    row["restart_required"] = bj::object{
        {"reason", "ds_stale_code: its executable changed on disk since it was started"},
        {"next_step", next_step}};
  }
}

// The catalog cache: whether sluice serves with it, and what went wrong (value-free).
bj::object cache_report(const store::CatalogStore* cache) {
  if (!cache) return bj::object{{"available", false}, {"problem", "off (no state directory, or --no-cache)"}};
  const store::StoreStatus st = cache->status();
  bj::object out{{"available", st.available}, {"path", st.path}, {"writes", st.writes},
                 {"failed_writes", st.failed_writes}, {"dropped_writes", st.dropped_writes},
                 {"refused_listings", st.refused_listings}};
  out["problem"] = st.problem.empty() ? bj::value(nullptr) : bj::value(st.problem);
  return out;
}

bj::object server_row(const Downstream& d, std::string_view status,
                      const std::unordered_map<std::string_view, std::int64_t>& oldest) {
  bj::object row;
  add_identity(d, status, row);
  bj::array tools = add_admission(d, row);
  auto it = oldest.find(d.name());
  row["oldest_abandoned_ms"] = it == oldest.end() ? bj::value(nullptr) : bj::value(it->second);
  row["tools"] = std::move(tools);
  add_process(d, row);
  return row;
}

}  // namespace

bj::object Gateway::health(const HealthQuery& query) const {
  const auto oldest = oldest_abandoned(calls_.records());
  // Every server is counted by status; rows are given for one page of the matching ones.
  std::map<std::string_view, std::size_t> by_status;
  std::size_t matching = 0;
  bj::array servers;
  for (const auto& d : fleet_.servers()) {
    if (query.server && d->name() != *query.server) continue;
    std::string_view status = to_string(d->phase());
    ++by_status[status];
    if (query.status && status != *query.status) continue;
    const std::size_t position = matching++;
    if (position < query.offset || servers.size() >= query.limit) continue;
    bj::object row = server_row(*d, status, oldest);
    reload_.add_to_row(*d, row);  // a configuration change waiting for it
    results_.add_to_row(d->name(), row);  // redactions and output cuts
    servers.push_back(std::move(row));
  }
  auto uptime =
      std::chrono::duration_cast<std::chrono::milliseconds>(core::Clock::now() - started_at_);
  bj::object gw;
  gw["version"] = options_.version;
  gw["uptime_ms"] = uptime.count();
  gw["expose"] = options_.expose_meta && options_.expose_all ? "meta,all"
                 : options_.expose_all                       ? "all"
                                                             : "meta";
  gw["tools_indexed"] = catalog_.size();
  gw["servers_indexing"] = indexer_.in_progress();
  // Words of the catalog whose WordNet synonyms are being looked up (off the loop).
  gw["synonym_words_pending"] = synonyms_.pending();
  gw["catalog_cache"] = cache_report(cache_.get());
  gw["pending_calls"] = calls_.size();
  // Invariant guards: coroutines and request handlers ended by an exception (each logged),
  // and releases of an admission slot that was not held (release builds; debug asserts).
  gw["coroutine_failures"] = core::coroutine_failures();
  gw["permit_over_releases"] = Budget::over_releases();
  if (governance_.binary_stale()) {
    gw["restart_required"] = bj::object{
        {"reason", "gw_binary_stale: sluice's executable was replaced on disk since it started"},
        {"next_step",
         "restart sluice from your MCP client (reconnect the server) to run the "
         "new binary; sluice never restarts itself"},
        {"fail_closed", config_->policy.fail_closed_when_stale}};
  }
  bj::object out;
  out["gateway"] = std::move(gw);
  reload_.add_to_health(out);  // config_generation, config_files, config_reload
  bj::object counts;
  for (const auto& [status, n] : by_status) counts[status] = n;
  out["servers_by_status"] = std::move(counts);
  out["servers_matching"] = matching;
  if (query.offset + servers.size() < matching) {
    out["next_cursor"] = mcp::encode_cursor(query.offset + servers.size());
  }
  out["servers"] = std::move(servers);
  out["audit"] = audit_.to_json(50);
  out["audit_dropped"] = audit_.dropped();
  // The persistent audit log: active, its path, records written and dropped, write errors.
  out["audit_log"] = audit_log_report(audit_log_.get(), options_.audit_off_reason);
  // Log lines sluice could not write (a stderr nobody reads, a full or slow log file).
  out["log"] = bj::object{{"lines_dropped", core::log::dropped()}};
  return out;
}

}  // namespace sluice::gateway

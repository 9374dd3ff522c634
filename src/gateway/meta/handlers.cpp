// The handlers of the meta-tool table: each reads its validated arguments (the schema already
// guarantees their types) and asks the gateway part that owns the work.
#include "gateway/meta/handlers.hpp"

#include "core/json.hpp"
#include "gateway/catalog/catalog.hpp"
#include "gateway/gateway.hpp"
#include "mcp/pagination.hpp"
#include "mcp/tool_result.hpp"

#include <fmt/format.h>

namespace sluice::gateway::meta {
namespace cj = core::json;

namespace {

bool force_of(const MetaCall& call) {
  const auto* f = call.args.if_contains("force");
  return f && f->is_bool() && f->get_bool();
}

std::string string_arg(const MetaCall& call, std::string_view key) {
  return std::string(call.args.at(key).get_string());
}

}  // namespace

asio::awaitable<std::optional<std::string>> catalog_search(MetaCall& call) {
  // Search is complete: the servers whose tools are not known yet are indexed first (within
  // sluice.indexWaitMs); those still coming are listed with their status.
  const CatalogFilters filters = catalog_filters(call.args);
  std::optional<std::string_view> server;
  if (filters.server) server = *filters.server;
  co_await call.gateway.index_missing(server);
  call.gateway.prepare_catalog();
  co_return call.gateway.catalog().search(call.args);
}

// Named locals below, not temporaries: GCC 12 mishandles some temporaries inside co_await.

asio::awaitable<std::optional<std::string>> describe(MetaCall& call) {
  std::string tool_id = string_arg(call, "tool_id");
  Fleet& fleet = call.gateway.fleet();
  const bool allow_unvalidated = call.gateway.policy().allow_unvalidated_tools;
  ResolvedTool resolved = co_await fleet.resolve_tool(tool_id, Fleet::Need::listed);
  if (!resolved.server) co_return mcp::error_result(resolved.refusal);
  if (!resolved.tool->summary) {
    co_return describe_tool(*resolved.server, *resolved.tool, allow_unvalidated);
  }
  // A summary: the whole object is read from the cache. The fleet may change meanwhile, so
  // the tool is resolved again after the read.
  std::string name = resolved.tool->name;
  std::optional<std::string> whole = co_await call.gateway.cached_tool(*resolved.server, name);
  resolved = co_await fleet.resolve_tool(tool_id, Fleet::Need::listed);
  if (!resolved.server) co_return mcp::error_result(resolved.refusal);
  if (!resolved.tool->summary) {
    co_return describe_tool(*resolved.server, *resolved.tool, allow_unvalidated);
  }
  if (whole && cj::parse_strict(*whole, {call.gateway.limits().max_json_depth})) {
    co_return describe_tool(*resolved.server, *resolved.tool, allow_unvalidated, *whole);
  }
  // The cache no longer holds it (another sluice replaced the listing, or the file went):
  // the live listing answers.
  resolved = co_await fleet.resolve_tool(tool_id, Fleet::Need::online);
  if (!resolved.server) co_return mcp::error_result(resolved.refusal);
  co_return describe_tool(*resolved.server, *resolved.tool, allow_unvalidated);
}

asio::awaitable<std::optional<std::string>> invoke(MetaCall& call) {
  Gateway::InvokeRequest invoke;
  invoke.tool_id = call.args.at("tool_id").get_string();
  invoke.arguments_json = "{}";
  if (auto a = cj::member_span(call.args_text, "arguments")) invoke.arguments_json = *a;
  if (const auto* o = call.args.if_contains("options"); o && o->is_object()) {
    if (const auto* t = o->get_object().if_contains("timeout_ms"); t && t->is_int64()) {
      invoke.timeout = std::chrono::milliseconds(t->get_int64());
    }
  }
  invoke.cancel = &call.request.cancel_signal();
  invoke.progress_token = progress_token_of(call.request.message());
  invoke.client = call.caller.session;
  invoke.client_budget = &call.caller.budget;
  invoke.client_label = call.caller.label;
  // The arguments' DOM lives in the request's message, which outlives the call.
  invoke.parsed_arguments = call.args.if_contains("arguments");
  invoke.client_request_id = std::string(call.request.message().id());
  invoke.task_caller = Gateway::task_caller(call.request);
  invoke.log_level = log_level_of(call.request.message());
  auto outcome = co_await call.gateway.invoke(std::move(invoke));
  // Answered here: a downstream's result goes from the frame it came in, not from a copy.
  if (outcome.answered) call.request.respond_result(outcome.result());
  co_return std::nullopt;
}

asio::awaitable<std::optional<std::string>> health(MetaCall& call) {
  Gateway::HealthQuery query;
  if (const auto* v = call.args.if_contains("server")) query.server = std::string(v->get_string());
  if (const auto* v = call.args.if_contains("status")) query.status = std::string(v->get_string());
  if (const auto* v = call.args.if_contains("limit")) {
    query.limit = static_cast<std::size_t>(v->get_int64());
  }
  if (const auto* v = call.args.if_contains("cursor")) {
    auto offset = mcp::decode_cursor(v->get_string());
    if (!offset) co_return mcp::error_result("gateway.health: cursor is not one it gave");
    query.offset = *offset;
  }
  co_return mcp::structured_result(call.gateway.health(query));
}

asio::awaitable<std::optional<std::string>> list_pending(MetaCall& call) {
  std::optional<std::string_view> server;
  if (const auto* v = call.args.if_contains("server")) server = v->get_string();
  co_return call.gateway.list_pending(server);
}

asio::awaitable<std::optional<std::string>> cancel(MetaCall& call) {
  std::string_view id = call.args.at("request_id").get_string();
  // A task's gateway id ("task-..."; a call's request_id is server::n): its server is told.
  if (id.starts_with("task-")) {
    co_return co_await call.gateway.cancel_task(std::string(id), force_of(call));
  }
  co_return call.gateway.cancel_call(id, force_of(call));
}

asio::awaitable<std::optional<std::string>> restart_server(MetaCall& call) {
  std::string server = string_arg(call, "server_name");
  co_return co_await call.gateway.governance().restart_server(server, force_of(call), true);
}

asio::awaitable<std::optional<std::string>> disconnect_server(MetaCall& call) {
  std::string server = string_arg(call, "server_name");
  co_return co_await call.gateway.governance().restart_server(server, force_of(call), false);
}

asio::awaitable<std::optional<std::string>> refresh(MetaCall& call) {
  co_return co_await call.gateway.governance().refresh(force_of(call));
}

asio::awaitable<std::optional<std::string>> connect_server(MetaCall& call) {
  std::string server = string_arg(call, "server_name");
  Downstream* d = call.gateway.fleet().find(server);
  if (!d) co_return mcp::error_result(call.gateway.fleet().unknown_server(server));
  std::string prior(to_string(d->phase()));
  bool ok = co_await d->ensure_started(true);
  boost::json::object out;
  out["server"] = d->name();
  out["ok"] = ok;
  out["prior_status"] = prior;
  out["status"] = to_string(d->phase());
  out["tool_count"] = d->tools().size();
  if (!ok) out["last_error"] = d->last_error();
  co_return ok ? mcp::structured_result(out)
               : mcp::error_result(fmt::format("server {} could not be started ({}): {}", d->name(),
                                               to_string(d->phase()), d->last_error()));
}

}  // namespace sluice::gateway::meta

// The MCP server role sluice plays for each client connection: lifecycle, tools/list of the
// meta-tools (or of every tool in aggregate mode), tools/call dispatch through the meta-tool
// table, and the downstreams' prompts and resources (in both modes, AggregateRouter). Arguments of
// every meta-tool are validated against its own input schema with sluice's validator, so refusals
// read like any other. Every part of a request is read from the DOM of its one strict parse
// (rpc::Message); raw texts (arguments, progress token, id) are spliced through as sent.
#include "core/json.hpp"
#include "gateway/gateway.hpp"
#include "gateway/meta/meta_tools.hpp"
#include "mcp/era.hpp"
#include "mcp/protocol.hpp"
#include "mcp/tool_result.hpp"

#include <boost/json/serialize.hpp>

namespace sluice::gateway {
namespace bj = boost::json;

namespace {

// The methods that reach a downstream (besides tools/call), in both modes.
bool routed_to_a_downstream(std::string_view method) {
  return method == "prompts/get" || method == "resources/read" || method == "resources/subscribe" ||
         method == "resources/unsubscribe" || method == "completion/complete" ||
         method == "logging/setLevel";
}

}  // namespace

class Gateway::ClientHandler : public mcp::Handler {
 public:
  // `bridged`: the handler of an exchange's own session (bridge/input_bridge.hpp), which
  // serves the bridged request itself.
  ClientHandler(Gateway& gateway, std::weak_ptr<mcp::Session> session, bool bridged,
                bool task_work = false)
      : gateway_(gateway),
        bridged_(bridged),
        task_work_(task_work),
        client_budget_(gateway.io(), gateway.policy().client_cap, gateway.policy().queue_size),
        caller_{std::move(session), client_budget_, {}} {
    // The client as audit and list_pending name it: the session's transport label.
    auto s = caller_.session.lock();
    caller_.label = s ? s->label() : std::string("client");
  }

  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    const std::string& method = request.message().method();
    // Both eras on one endpoint: a request with the 2026-07-28 _meta is served on its own
    // (its _meta checked first); anything else in the revision initialize chose.
    mcp::RequestEra era = mcp::classify(request.message());
    if (era.refusal) {
      request.respond_error_raw(mcp::refusal_error(*era.refusal));
      co_return;
    }
    if (era.stateless) {
      request.add_result_members(mcp::stateless_result_members(
          method, method == "tools/list" ? gateway_.tools_ttl_ms() : 0));
    }
    if (method == "initialize") {
      initialize(request);
      co_return;
    }
    if (method == "server/discover") {
      discover(request);
      co_return;
    }
    if (method == "subscriptions/listen" && era.stateless) {
      co_await listen(request);
      co_return;
    }
    // A stateless tools/call, prompts/get or resources/read may need the client's input on
    // the way (a 2025 downstream's sampling, elicitation or roots request): the era bridge
    // serves it.
    if (era.stateless && !bridged_ && InputBridge::bridges(method)) {
      if (method == "tools/call" && co_await as_task(request, era)) co_return;
      co_await gateway_.bridge().serve(request, era, gateway_.policy().call_timeout);
      co_return;
    }
    // The tasks extension's requests, of the caller whose exchanges created the tasks.
    if (era.stateless && method.starts_with("tasks/")) {
      co_await gateway_.serve_task_request(request, InputBridge::caller_key(*request.session()),
                                           era.tasks);
      co_return;
    }
    // A tools/call's name is read once, here: the gate and the dispatch both need it.
    std::optional<std::string_view> tool_name;
    if (method == "tools/call") {
      const auto* params = request.message().params_object();
      const auto* name = params ? params->if_contains("name") : nullptr;
      if (!name || !name->is_string()) {
        request.respond_error(rpc::code::kInvalidParams, "Invalid params: name must be a string");
        co_return;
      }
      tool_name = name->get_string();
    }
    if (refused_while_stale(request, tool_name)) co_return;
    if (method == "tools/list") {
      co_await list_tools(request);
    } else if (tool_name) {
      co_await call(request, *tool_name);
    } else {
      // Prompts, resources, completion and log levels, in meta mode as in aggregate mode.
      bool routed = co_await gateway_.aggregate().route(request);
      if (!routed) request.respond_error(rpc::code::kMethodNotFound, "Method not found");
    }
  }

  void on_notification(const rpc::Message& message) override {
    // The client's roots changed: the servers that asked for them are told, so they ask again.
    if (message.method() == "notifications/roots/list_changed") gateway_.fleet().roots_changed();
  }

  // Abandoned calls of this session keep their permits in client_budget_ until they end.
  bool has_work() const override {
    return client_budget_.held() > 0 || client_budget_.queued() > 0;
  }

 private:
  void initialize(mcp::IncomingRequest& request) {
    // Set in any case: an initialized session takes the stateful era's notifications.
    auto caps = request.message().params_member("capabilities");
    std::string declared = caps ? std::string(core::json::trim(*caps)) : std::string();
    request.session()->set_peer_capabilities(
        declared.empty() || declared.front() != '{' ? std::string("{}") : std::move(declared));
    if (const auto& on_client_info = gateway_.options().on_client_info) {
      const auto* params = request.message().params_object();
      const auto* info = params ? params->if_contains("clientInfo") : nullptr;
      const auto* fields = info ? info->if_object() : nullptr;
      auto text = [fields](std::string_view key) -> std::string_view {
        const auto* v = fields ? fields->if_contains(key) : nullptr;
        return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
      };
      on_client_info(text("name"), text("version"));
    }
    bj::object result;
    result["protocolVersion"] = mcp::negotiate_initialize(request.message().params());
    // The downstreams' prompts and resources are offered in both modes; the tool list
    // changes only in aggregate mode (the meta-tools are fixed).
    bj::object capabilities{{"tools", bj::object{{"listChanged", gateway_.options().expose_all}}},
                            {"prompts", bj::object{{"listChanged", true}}},
                            {"resources", bj::object{{"subscribe", true}, {"listChanged", true}}},
                            {"logging", bj::object()},
                            {"completions", bj::object()}};
    result["capabilities"] = std::move(capabilities);
    result["serverInfo"] = server_info();
    result["instructions"] = kInstructions;
    request.respond_result(bj::serialize(result));
  }

  // A stateless tools/call of a tool that declares task support: refused (-32021) when it runs
  // only as a task and the caller did not declare the extension; run as a task by sluice when
  // the caller did and the tool's server does not broker tasks itself. True when answered here.
  asio::awaitable<bool> as_task(mcp::IncomingRequest& request, const mcp::RequestEra& era) {
    const auto* params = request.message().params_object();
    const auto* name = params ? params->if_contains("name") : nullptr;
    if (!name || !name->is_string()) co_return false;
    Gateway::TaskSupport support = co_await gateway_.task_support(std::string(name->get_string()));
    if (support.support == TaskSupportLevel::required && !era.tasks) {
      request.respond_error_raw(mcp::refusal_error(mcp::tasks_not_declared()));
      co_return true;
    }
    if (support.support == TaskSupportLevel::forbidden || !era.tasks || support.server_runs) {
      co_return false;
    }
    co_await gateway_.start_task(request, InputBridge::caller_key(*request.session()));
    co_return true;
  }

  // server/discover (2026-07-28): the revisions sluice speaks and what it serves statelessly,
  // the tasks extension among it (brokered for the servers that offer it: gateway/tasks.cpp).
  // List changes reach a stateless client on subscriptions/listen (the tool list changes only
  // in aggregate mode); resource subscriptions reach stateful clients only.
  void discover(mcp::IncomingRequest& request) {
    bj::array versions;
    for (auto v : mcp::kSupportedVersions) versions.emplace_back(v);
    versions.emplace_back(mcp::kStatelessVersion);
    bj::object result{
        {"supportedVersions", std::move(versions)},
        {"capabilities",
         bj::object{{"tools", bj::object{{"listChanged", gateway_.options().expose_all}}},
                    {"prompts", bj::object{{"listChanged", true}}},
                    {"resources", bj::object{{"listChanged", true}}},
                    {"completions", bj::object()},
                    {"extensions", bj::object{{mcp::kTasksExtension, bj::object()}}}}},
        {"instructions", kInstructions},
        {"_meta", bj::object{{mcp::meta_key::kServerInfo, server_info()}}}};
    request.respond_result(bj::serialize(result));
  }

  // subscriptions/listen: its resource subscriptions are made at their servers first (the
  // acknowledgement names those that were), and ended with it.
  asio::awaitable<void> listen(mcp::IncomingRequest& request) {
    std::vector<std::string> uris;
    const auto* params = request.message().params_object();
    const auto* filter = params ? params->if_contains("notifications") : nullptr;
    const auto* wanted = filter && filter->is_object()
                             ? filter->get_object().if_contains("resourceSubscriptions")
                             : nullptr;
    if (wanted && wanted->is_array()) {
      for (const auto& uri : wanted->get_array()) {
        if (uri.is_string()) uris.emplace_back(uri.get_string());
      }
    }
    const void* listener = &request;
    std::vector<std::string> subscribed =
        co_await gateway_.aggregate().subscribe_listener(std::move(uris), listener);
    co_await gateway_.clients().listen(request, gateway_.options().expose_all, subscribed);
    co_await gateway_.aggregate().unsubscribe_listener(std::move(subscribed), listener);
  }

  bj::object server_info() const {
    return bj::object{{"name", "sluice"},
                      {"title", "sluice MCP gateway"},
                      {"version", gateway_.options().version}};
  }
  static constexpr std::string_view kInstructions =
      "sluice fronts several MCP servers. Find tools with gateway.catalog_search, read one "
      "with gateway.describe, call it with gateway.invoke.";

  // The meta-tool row a tools/call names, when meta-tools are exposed.
  const meta::MetaTool* meta_tool(std::string_view tool_name) const {
    return gateway_.options().expose_meta ? meta::find_meta_tool(tool_name) : nullptr;
  }

  // gw_binary_stale with failClosedWhenStale: the one check every request that would reach
  // a downstream passes (tools/call under any name, prompts/get, resources/read, completion,
  // subscriptions, log level, the lifecycle meta-tools). Lists answer from what is known.
  // True when the request was refused (and answered).
  bool refused_while_stale(mcp::IncomingRequest& request,
                           std::optional<std::string_view> tool_name) const {
    bool reaches = false;
    if (tool_name) {
      const meta::MetaTool* row = meta_tool(*tool_name);
      reaches = !row || row->reaches_downstream;
    } else {
      reaches = routed_to_a_downstream(request.message().method());
    }
    if (!reaches) return false;
    std::string why = gateway_.governance().stale_refusal();
    if (why.empty()) return false;
    if (tool_name) {
      request.respond_result(mcp::error_result(why));
    } else {
      request.respond_error(rpc::code::kInternalError, why);
    }
    return true;
  }

  asio::awaitable<void> list_tools(mcp::IncomingRequest& request) {
    if (!gateway_.options().expose_all) {
      request.respond_result(gateway_.meta_tools_list());
      co_return;
    }
    co_await gateway_.start_all();
    std::string_view cursor;
    const auto* params = request.message().params_object();
    if (const auto* c = params ? params->if_contains("cursor") : nullptr) {
      if (!c->is_string()) {
        request.respond_error(rpc::code::kInvalidParams, "Invalid params: cursor");
        co_return;
      }
      cursor = c->get_string();
    }
    request.respond_result(gateway_.aggregate().tools_page(cursor, gateway_.meta_tools_list()));
  }

  // Not a coroutine itself: the call runs in the frame of the one it picks.
  asio::awaitable<void> call(mcp::IncomingRequest& request, std::string_view tool_name) {
    const meta::MetaTool* row = meta_tool(tool_name);
    if (!row && gateway_.options().expose_all &&
        (gateway_.options().passthrough || tool_name.find("__") != std::string_view::npos)) {
      return call_aggregated(request, tool_name);
    }
    return call_meta(request, tool_name, row);
  }

  asio::awaitable<void> call_meta(mcp::IncomingRequest& request, std::string_view tool_name,
                                  const meta::MetaTool* row) {
    if (!row) {
      request.respond_error(rpc::code::kInvalidParams, "Unknown tool");
      co_return;
    }
    if (std::string why = gateway_.meta_tool_denial(tool_name); !why.empty()) {
      request.respond_result(mcp::error_result(why));
      co_return;
    }
    // The meta-tool's arguments: the DOM and the raw text of the request's one parse.
    static const bj::value kNoArguments = bj::object();
    const rpc::Message& m = request.message();
    const bj::value* args = m.params_object()->if_contains("arguments");
    if (!args || args->is_null()) args = &kNoArguments;
    std::string_view args_text = "{}";
    if (auto a = m.params_member("arguments")) args_text = *a;
    if (auto problems = meta::argument_problems(*row, *args)) {
      request.respond_result(mcp::error_result(*problems));
      co_return;
    }
    meta::MetaCall meta_call{gateway_, request, args->get_object(), args_text, caller_};
    std::optional<std::string> result = co_await row->handler(meta_call);
    if (result) request.respond_result(*result);
  }

  // Aggregate mode: `server__tool` is gateway.invoke of `server::tool` with the arguments
  // as sent (validated against the tool's schema, admitted, passed through).
  asio::awaitable<void> call_aggregated(mcp::IncomingRequest& request, std::string_view name) {
    auto [server, own_name] = gateway_.aggregate().resolve_public(name);
    if (!server) {
      request.respond_error(rpc::code::kInvalidParams, "Unknown tool");
      co_return;
    }
    std::string tool_id = server->name() + "::" + own_name;
    const rpc::Message& m = request.message();
    InvokeRequest invoke;
    invoke.tool_id = tool_id;
    invoke.arguments_json = m.params_member("arguments").value_or("{}");
    // The DOM of the one parse spares invoke a second parse for validation.
    invoke.parsed_arguments = m.params_object()->if_contains("arguments");
    invoke.cancel = &request.cancel_signal();
    invoke.progress_token = meta::progress_token_of(m);
    invoke.client = caller_.session;
    invoke.client_budget = &client_budget_;
    invoke.client_label = caller_.label;
    invoke.client_request_id = std::string(m.id());
    invoke.task_caller = Gateway::task_caller(request);
    invoke.log_level = meta::log_level_of(m);
    auto outcome = co_await gateway_.invoke(std::move(invoke));
    if (!outcome.answered) co_return;
    if (!outcome.error_json.empty()) {
      request.respond_error_raw(outcome.error_json);
    } else if (task_work_ && !outcome.protocol_error_json.empty()) {
      request.respond_error_raw(outcome.protocol_error_json);  // the task fails with it
    } else {
      request.respond_result(outcome.result());
    }
  }

  Gateway& gateway_;
  const bool bridged_;
  const bool task_work_;  // the session runs a task sluice runs itself (Gateway::start_task)
  Budget client_budget_;  // invariant A1: the per-client-session cap
  meta::Caller caller_;
};
std::unique_ptr<mcp::Handler> Gateway::make_client_handler(std::shared_ptr<mcp::Session> client) {
  clients_.add(client);
  return std::make_unique<ClientHandler>(*this, std::move(client), false);
}

std::unique_ptr<mcp::Handler> Gateway::make_bridge_handler(std::shared_ptr<mcp::Session> session,
                                                           bool task) {
  // Not a client of its own: lists changes and subscriptions reach the front sessions.
  return std::make_unique<ClientHandler>(*this, std::move(session), true, task);
}

}  // namespace sluice::gateway

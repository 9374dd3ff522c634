// The MCP server role sluice plays for each client connection: lifecycle, tools/list of the
// meta-tools, and tools/call dispatch. Arguments of every meta-tool are validated against
// its own input schema with sluice's validator, so refusals read like any other.
#include "core/json.hpp"
#include "core/log.hpp"
#include "core/schema.hpp"
#include "gateway/gateway.hpp"
#include "gateway/results.hpp"
#include "mcp/protocol.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <charconv>

namespace sluice::gateway {
namespace bj = boost::json;
namespace cj = core::json;

namespace {

struct MetaTool {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::string_view input_schema;
  bool read_only;
  // Starts, stops, calls or signals a downstream (refused while fail-closed stale).
  bool reaches_downstream;
};

constexpr MetaTool kMetaTools[] = {
    {"gateway.catalog_search", "Search tools",
     "Search the tools of every server behind this gateway. Returns compact cards "
     "(tool_id, server, tool_name, short_description, availability), best match first; an "
     "empty query lists every tool. Use gateway.describe for a tool's full schema, then "
     "gateway.invoke to call it.",
     R"({"type":"object","properties":{"query":{"type":"string","maxLength":1000},)"
     R"("limit":{"type":"integer","minimum":1,"maximum":100,"default":20},)"
     R"("filters":{"type":"object","properties":{"server":{"type":"string"}},)"
     R"("additionalProperties":false}},"additionalProperties":false})",
     true, false},
    {"gateway.describe", "Describe a tool",
     "The full description, input and output schemas, annotations and an invoke template of "
     "one tool, by tool_id (server::tool). Starts the server if it is not running yet.",
     R"({"type":"object","properties":{"tool_id":{"type":"string","minLength":1,)"
     R"("maxLength":512}},"required":["tool_id"],"additionalProperties":false})",
     true, true},
    {"gateway.invoke", "Invoke a tool",
     "Call one downstream tool by tool_id (server::tool) with its arguments. The arguments are "
     "validated against the tool's input schema first; the tool's result is returned as the "
     "server gave it.",
     R"({"type":"object","properties":{"tool_id":{"type":"string","minLength":1,)"
     R"("maxLength":512},"arguments":{"type":"object"},"options":{"type":"object",)"
     R"("properties":{"timeout_ms":{"type":"integer","minimum":1000,"maximum":600000}},)"
     R"("additionalProperties":false}},"required":["tool_id"],"additionalProperties":false})",
     false, true},
    {"gateway.health", "Gateway health",
     "The gateway's version and uptime, every server counted by status, and one row per "
     "server (status, tool count, protocol version, last error, admission), up to limit rows "
     "(default 100; next_cursor gives the next page). Filter by server or status.",
     R"({"type":"object","properties":{"server":{"type":"string","minLength":1,)"
     R"("maxLength":128},"status":{"type":"string","minLength":1,"maxLength":64},)"
     R"("limit":{"type":"integer","minimum":1,"maximum":1000,"default":100},)"
     R"("cursor":{"type":"string","maxLength":20}},"additionalProperties":false})",
     true, false},
    {"gateway.list_pending", "Pending calls",
     "Every call admitted and not yet ended: request_id (server::n), tool_id, state "
     "(queued, running, abandoned), age and the requesting client. Abandoned calls were given "
     "up by their caller and keep their slot until the server answers or exits.",
     R"({"type":"object","properties":{"server":{"type":"string","minLength":1,)"
     R"("maxLength":128}},"additionalProperties":false})",
     true, false},
    {"gateway.cancel", "Cancel a call",
     "Cancel one pending call by request_id (see gateway.list_pending). The server is told to "
     "cancel it; its slot is kept until the server answers. A running call within its "
     "timeout is only cancelled with force: true.",
     R"({"type":"object","properties":{"request_id":{"type":"string","minLength":1,)"
     R"("maxLength":256},"force":{"type":"boolean","default":false}},)"
     R"("required":["request_id"],"additionalProperties":false})",
     false, true},
    {"gateway.restart_server", "Restart a server",
     "Stop a server (orderly: stdin closed, then SIGTERM, then SIGKILL to its group) and start "
     "it again. Refused while it has calls pending unless force: true (which cancels them), "
     "and force is refused when the operator forbids it.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128},"force":{"type":"boolean","default":false}},)"
     R"("required":["server_name"],"additionalProperties":false})",
     false, true},
    {"gateway.disconnect_server", "Disconnect a server",
     "Stop a server for this gateway run (the configuration is not changed); it stays offline "
     "until gateway.connect_server. Refused while it has calls pending unless force: true.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128},"force":{"type":"boolean","default":false}},)"
     R"("required":["server_name"],"additionalProperties":false})",
     false, true},
    {"gateway.refresh", "Refresh tool lists",
     "List the tools of every running server again. Refused while any call is pending unless "
     "force: true (which cancels them).",
     R"({"type":"object","properties":{"force":{"type":"boolean","default":false},)"
     R"("reason":{"type":"string","maxLength":500}},"additionalProperties":false})",
     false, true},
    {"gateway.connect_server", "Connect a server",
     "Start a configured server that is not running yet and list its tools, so that "
     "gateway.catalog_search finds them.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128}},"required":["server_name"],"additionalProperties":false})",
     false, true},
};

struct CompiledMetaTools {
  std::string list_result;  // the tools/list result text
  std::vector<core::schema::Schema> validators;
};

const CompiledMetaTools& meta_tools() {
  static const CompiledMetaTools compiled = [] {
    CompiledMetaTools c;
    bj::array tools;
    for (const auto& t : kMetaTools) {
      bj::value schema = bj::parse(t.input_schema);
      c.validators.push_back(core::schema::Schema::compile(schema).value());
      tools.push_back(bj::object{
          {"name", t.name},
          {"title", t.title},
          {"description", t.description},
          {"inputSchema", schema},
          {"annotations", bj::object{{"readOnlyHint", t.read_only}}},
      });
    }
    c.list_result = bj::serialize(bj::object{{"tools", std::move(tools)}});
    return c;
  }();
  return compiled;
}

constexpr std::size_t kToolsPageSize = 100;
constexpr auto npos = std::string_view::npos;

int meta_tool_index(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kMetaTools); ++i) {
    if (kMetaTools[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

class Gateway::ClientHandler : public mcp::Handler {
 public:
  ClientHandler(Gateway& gateway, std::weak_ptr<mcp::Session> session)
      : gateway_(gateway),
        session_(std::move(session)),
        client_budget_(gateway.io(), gateway.policy().client_cap, gateway.policy().queue_size) {}

  asio::awaitable<void> on_request(mcp::IncomingRequest& request) override {
    const auto& m = request.message();
    const std::string& method = m.method();
    if (method == "initialize") {
      initialize(request);
      co_return;
    }
    // A tools/call's name is read once, here: the gate and the dispatch both need it.
    std::optional<std::string> tool_name;
    if (method == "tools/call") {
      auto name_span = cj::member_span(m.params(), "name");
      bj::error_code ec;
      bj::value name = name_span ? bj::parse(*name_span, ec) : bj::value();
      if (ec || !name.is_string()) {
        request.respond_error(rpc::code::kInvalidParams, "Invalid params: name must be a string");
        co_return;
      }
      tool_name = std::string(name.get_string());
    }
    // gw_binary_stale with failClosedWhenStale: the one check every request that would reach
    // a downstream passes (tools/call under any name, prompts/get, resources/read, completion,
    // subscriptions, log level, the lifecycle meta-tools). Lists answer from what is known.
    if (reaches_downstream(method, tool_name)) {
      if (std::string why = gateway_.stale_refusal(); !why.empty()) {
        if (tool_name) {
          request.respond_result(error_result(why));
        } else {
          request.respond_error(rpc::code::kInternalError, why);
        }
        co_return;
      }
    }
    if (method == "tools/list") {
      if (!gateway_.options().expose_all) {
        request.respond_result(meta_tools().list_result);
        co_return;
      }
      co_await gateway_.start_all();
      std::string cursor;
      if (auto c = cj::member_span(request.message().params(), "cursor")) {
        bj::error_code ec;
        bj::value v = bj::parse(*c, ec);
        if (ec || !v.is_string()) {
          request.respond_error(rpc::code::kInvalidParams, "Invalid params: cursor");
          co_return;
        }
        cursor = std::string(v.get_string());
      }
      request.respond_result(
          gateway_.aggregate_tools_page(cursor, kToolsPageSize, meta_tools().list_result));
    } else if (method == "tools/call") {
      co_await call(request, *tool_name);
    } else if (gateway_.options().expose_all) {
      bool routed = co_await gateway_.route_aggregate(request);
      if (!routed) request.respond_error(rpc::code::kMethodNotFound, "Method not found");
    } else {
      request.respond_error(rpc::code::kMethodNotFound, "Method not found");
    }
  }

  void on_notification(const rpc::Message& message) override {
    // The client's roots changed: the servers that asked for them are told, so they ask again.
    if (message.method() == "notifications/roots/list_changed") gateway_.roots_changed();
  }

 private:
  void initialize(mcp::IncomingRequest& request) {
    if (auto caps = cj::member_span(request.message().params(), "capabilities")) {
      request.session()->set_peer_capabilities(std::string(cj::trim(*caps)));
    }
    std::string requested;
    if (auto v = cj::member_span(request.message().params(), "protocolVersion")) {
      bj::error_code ec;
      bj::value pv = bj::parse(*v, ec);
      if (!ec && pv.is_string()) requested = std::string(pv.get_string());
    }
    bj::object result;
    result["protocolVersion"] = mcp::negotiate(requested);
    bj::object capabilities{{"tools", bj::object{{"listChanged", gateway_.options().expose_all}}}};
    if (gateway_.options().expose_all) {
      capabilities["prompts"] = bj::object{{"listChanged", true}};
      capabilities["resources"] = bj::object{{"subscribe", true}, {"listChanged", true}};
      capabilities["logging"] = bj::object();
      capabilities["completions"] = bj::object();
    }
    result["capabilities"] = std::move(capabilities);
    result["serverInfo"] =
        bj::object{{"name", "sluice"}, {"title", "sluice MCP gateway"},
                   {"version", gateway_.options().version}};
    result["instructions"] =
        "sluice fronts several MCP servers. Find tools with gateway.catalog_search, read one "
        "with gateway.describe, call it with gateway.invoke.";
    request.respond_result(bj::serialize(result));
  }

  // Which requests reach a downstream (see the gate in on_request).
  bool reaches_downstream(std::string_view method,
                          const std::optional<std::string>& tool_name) const {
    if (method == "tools/call") {
      int index = gateway_.options().expose_meta ? meta_tool_index(*tool_name) : -1;
      return index < 0 || kMetaTools[index].reaches_downstream;
    }
    if (!gateway_.options().expose_all) return false;
    return method == "prompts/get" || method == "resources/read" ||
           method == "resources/subscribe" || method == "resources/unsubscribe" ||
           method == "completion/complete" || method == "logging/setLevel";
  }

  asio::awaitable<void> call(mcp::IncomingRequest& request, std::string_view tool_name) {
    std::string_view params = request.message().params();
    int index = gateway_.options().expose_meta ? meta_tool_index(tool_name) : -1;
    if (index < 0 && gateway_.options().expose_all &&
        (gateway_.options().passthrough || tool_name.find("__") != npos)) {
      co_await call_aggregated(request, tool_name);
      co_return;
    }
    if (index < 0) {
      request.respond_error(rpc::code::kInvalidParams, "Unknown tool");
      co_return;
    }
    std::string_view args_text = "{}";
    if (auto a = cj::member_span(params, "arguments")) args_text = cj::trim(*a);
    auto args = cj::parse_strict(args_text, cj::ParseLimits{gateway_.limits().max_json_depth});
    if (!args) {
      request.respond_error(rpc::code::kInvalidParams, "Invalid params: " + args.error().message);
      co_return;
    }
    if (args->is_null()) *args = bj::object();
    auto problems = meta_tools().validators[static_cast<std::size_t>(index)].validate(*args);
    if (!problems.empty()) {
      std::string text = fmt::format("invalid arguments for {}:", kMetaTools[index].name);
      for (const auto& p : problems) text += "\n" + core::schema::format(p);
      request.respond_result(error_result(text));
      co_return;
    }
    const bj::object& obj = args->get_object();
    std::string_view tool = kMetaTools[index].name;
    bool force = false;
    if (const auto* f = obj.if_contains("force"); f && f->is_bool()) force = f->get_bool();
    if (tool == "gateway.catalog_search") {
      request.respond_result(gateway_.catalog_search(obj));
    } else if (tool == "gateway.describe") {
      std::string id(obj.at("tool_id").get_string());
      std::string result = co_await gateway_.describe(id);
      request.respond_result(result);
    } else if (tool == "gateway.health") {
      Gateway::HealthQuery query;
      if (const auto* v = obj.if_contains("server")) query.server = std::string(v->get_string());
      if (const auto* v = obj.if_contains("status")) query.status = std::string(v->get_string());
      if (const auto* v = obj.if_contains("limit")) {
        query.limit = static_cast<std::size_t>(v->get_int64());
      }
      if (const auto* v = obj.if_contains("cursor")) {
        std::string_view c = v->get_string();
        auto [ptr, ec] = std::from_chars(c.data(), c.data() + c.size(), query.offset);
        if (ec != std::errc() || ptr != c.data() + c.size()) {
          request.respond_result(error_result("gateway.health: cursor is not one it gave"));
          co_return;
        }
      }
      request.respond_result(structured_result(gateway_.health(query)));
    } else if (tool == "gateway.list_pending") {
      std::optional<std::string_view> server;
      if (const auto* v = obj.if_contains("server")) server = v->get_string();
      request.respond_result(gateway_.list_pending(server));
    } else if (tool == "gateway.cancel") {
      request.respond_result(gateway_.cancel_call(obj.at("request_id").get_string(), force));
    } else if (tool == "gateway.restart_server" || tool == "gateway.disconnect_server") {
      std::string server(obj.at("server_name").get_string());
      std::string result =
          co_await gateway_.restart_server(server, force, tool == "gateway.restart_server");
      request.respond_result(result);
    } else if (tool == "gateway.refresh") {
      std::string result = co_await gateway_.refresh(force);
      request.respond_result(result);
    } else if (tool == "gateway.connect_server") {
      std::string server(obj.at("server_name").get_string());
      std::string result = co_await gateway_.connect_server(server);
      request.respond_result(result);
    } else if (tool == "gateway.invoke") {
      co_await invoke(request, args_text, obj);
    }
  }

  // Aggregate mode: `server__tool` is gateway.invoke of `server::tool` with the arguments
  // as sent (validated against the tool's schema, admitted, passed through).
  asio::awaitable<void> call_aggregated(mcp::IncomingRequest& request, std::string_view name) {
    auto [server, own_name] = gateway_.resolve_public(name);
    if (!server) {
      request.respond_error(rpc::code::kInvalidParams, "Unknown tool");
      co_return;
    }
    std::string tool_id = server->name() + "::" + own_name;
    std::string_view params = request.message().params();
    std::string_view arguments = "{}";
    if (auto a = cj::member_span(params, "arguments")) arguments = cj::trim(*a);
    std::string_view progress_token;
    if (auto meta = cj::member_span(params, "_meta")) {
      if (auto token = cj::member_span(*meta, "progressToken")) progress_token = cj::trim(*token);
    }
    auto outcome = co_await gateway_.invoke(tool_id, arguments, std::nullopt,
                                            &request.cancel_signal(), progress_token, session_,
                                            &client_budget_, label(), nullptr,
                                            std::string(request.message().id()));
    if (outcome.answered) request.respond_result(outcome.result_json);
  }

  asio::awaitable<void> invoke(mcp::IncomingRequest& request, std::string_view args_text,
                               const bj::object& args) {
    std::string tool_id(args.at("tool_id").get_string());
    std::string_view arguments = "{}";
    if (auto a = cj::member_span(args_text, "arguments")) arguments = cj::trim(*a);
    std::optional<std::chrono::milliseconds> timeout;
    if (const auto* o = args.if_contains("options"); o && o->is_object()) {
      if (const auto* t = o->get_object().if_contains("timeout_ms"); t && t->is_int64()) {
        timeout = std::chrono::milliseconds(t->get_int64());
      }
    }
    std::string_view progress_token;
    if (auto meta = cj::member_span(request.message().params(), "_meta")) {
      if (auto token = cj::member_span(*meta, "progressToken")) progress_token = cj::trim(*token);
    }
    // The arguments' DOM was built with the meta-tool's own (it lives in the caller's frame).
    const bj::value* parsed = args.if_contains("arguments");
    auto outcome = co_await gateway_.invoke(tool_id, arguments, timeout, &request.cancel_signal(),
                                            progress_token, session_, &client_budget_, label(),
                                            parsed, std::string(request.message().id()));
    if (outcome.answered) request.respond_result(outcome.result_json);
  }

  // Abandoned calls of this session keep their permits in client_budget_ until they end.
  bool has_work() const override {
    return client_budget_.held() > 0 || client_budget_.queued() > 0;
  }

  // The client as audit and list_pending name it: the session's transport label.
  std::string label() const {
    auto s = session_.lock();
    return s ? s->label() : std::string("client");
  }

  Gateway& gateway_;
  std::weak_ptr<mcp::Session> session_;
  Budget client_budget_;  // A1: the per-client-session cap
};

std::unique_ptr<mcp::Handler> Gateway::make_client_handler(std::shared_ptr<mcp::Session> client) {
  // Sessions come and go (HTTP): what is kept for the ones that ended goes here.
  auto gone = [](const std::weak_ptr<mcp::Session>& w) {
    auto s = w.lock();
    return !s || s->closed();
  };
  std::erase_if(list_subscribers_, gone);
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    std::erase_if(it->second, gone);
    it = it->second.empty() ? subscriptions_.erase(it) : std::next(it);
  }
  list_subscribers_.push_back(client);
  return std::make_unique<ClientHandler>(*this, client);
}

}  // namespace sluice::gateway

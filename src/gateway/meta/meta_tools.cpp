#include "gateway/meta/meta_tools.hpp"

#include "core/json.hpp"
#include "gateway/meta/handlers.hpp"
#include "mcp/era.hpp"
#include "schema/schema.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <vector>

namespace sluice::gateway::meta {
namespace bj = boost::json;

namespace {

// The rows. Descriptions and schemas are what clients see in tools/list: change them only
// on purpose (tests compare the list).
constexpr MetaTool kMetaTools[] = {
    {"gateway.catalog_search", "Search tools",
     "Search the tools of every configured server behind this gateway, running or not. "
     "Returns compact cards (tool_id, server, tool_name, short_description, availability, "
     "source: online or cached with its age), best match first, with how many tools exist "
     "and how many matched; an empty query lists every tool. Filters: server, read_only "
     "(only tools that change nothing), availability (online: running servers only; cached: "
     "the others). Use gateway.describe for a tool's full schema, then gateway.invoke to call "
     "it (which starts its server when needed).",
     R"({"type":"object","properties":{"query":{"type":"string","maxLength":1000},)"
     R"("limit":{"type":"integer","minimum":1,"maximum":100,"default":20},)"
     R"("filters":{"type":"object","properties":{"server":{"type":"string"},)"
     R"("read_only":{"type":"boolean"},)"
     R"("availability":{"type":"string","enum":["online","cached","any"]}},)"
     R"("additionalProperties":false}},"additionalProperties":false})",
     true, false, &catalog_search},
    {"gateway.describe", "Describe a tool",
     "The full description, input and output schemas, annotations and an invoke template of "
     "one tool, by tool_id (server::tool). Answers from the catalog cache without starting "
     "the server when its tools are known (source says so); else starts it.",
     R"({"type":"object","properties":{"tool_id":{"type":"string","minLength":1,)"
     R"("maxLength":512}},"required":["tool_id"],"additionalProperties":false})",
     true, true, &describe},
    {"gateway.invoke", "Invoke a tool",
     "Call one downstream tool by tool_id (server::tool) with its arguments. The arguments are "
     "validated against the tool's input schema first; the tool's result is returned as the "
     "server gave it.",
     R"({"type":"object","properties":{"tool_id":{"type":"string","minLength":1,)"
     R"("maxLength":512},"arguments":{"type":"object"},"options":{"type":"object",)"
     R"("properties":{"timeout_ms":{"type":"integer","minimum":1000,"maximum":600000}},)"
     R"("additionalProperties":false}},"required":["tool_id"],"additionalProperties":false})",
     false, true, &invoke},
    {"gateway.health", "Gateway health",
     "The gateway's version and uptime, every server counted by status, and one row per "
     "server (status, tool count, protocol version, last error, admission), up to limit rows "
     "(default 100; next_cursor gives the next page). Filter by server or status.",
     R"({"type":"object","properties":{"server":{"type":"string","minLength":1,)"
     R"("maxLength":128},"status":{"type":"string","minLength":1,"maxLength":64},)"
     R"("limit":{"type":"integer","minimum":1,"maximum":1000,"default":100},)"
     R"("cursor":{"type":"string","maxLength":20}},"additionalProperties":false})",
     true, false, &health},
    {"gateway.list_pending", "Pending calls",
     "Every call admitted and not yet ended: request_id (server::n), tool_id, state "
     "(queued, running, abandoned), age and the requesting client. Abandoned calls were given "
     "up by their caller and keep their slot until the server answers or exits. Also every "
     "task a client follows (the tasks extension): task_id, tool_id, its last known status, "
     "age and client.",
     R"({"type":"object","properties":{"server":{"type":"string","minLength":1,)"
     R"("maxLength":128}},"additionalProperties":false})",
     true, false, &list_pending},
    {"gateway.cancel", "Cancel a call",
     "Cancel one pending call by request_id, or one task by its task_id (see "
     "gateway.list_pending). The server is told to cancel it; a call's slot is kept until the "
     "server answers. A running call within its timeout, or a task not ended, is only "
     "cancelled with force: true.",
     R"({"type":"object","properties":{"request_id":{"type":"string","minLength":1,)"
     R"("maxLength":256},"force":{"type":"boolean","default":false}},)"
     R"("required":["request_id"],"additionalProperties":false})",
     false, true, &cancel},
    {"gateway.restart_server", "Restart a server",
     "Stop a server (orderly: stdin closed, then SIGTERM, then SIGKILL to its group) and start "
     "it again. Refused while it has calls pending unless force: true (which cancels them), "
     "and force is refused when the operator forbids it.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128},"force":{"type":"boolean","default":false}},)"
     R"("required":["server_name"],"additionalProperties":false})",
     false, true, &restart_server},
    {"gateway.disconnect_server", "Disconnect a server",
     "Stop a server for this gateway run (the configuration is not changed); it stays offline "
     "until gateway.connect_server. Refused while it has calls pending unless force: true.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128},"force":{"type":"boolean","default":false}},)"
     R"("required":["server_name"],"additionalProperties":false})",
     false, true, &disconnect_server},
    {"gateway.refresh", "Refresh tool lists",
     "List the tools of every running server again. Refused while any call is pending unless "
     "force: true (which cancels them).",
     R"({"type":"object","properties":{"force":{"type":"boolean","default":false},)"
     R"("reason":{"type":"string","maxLength":500}},"additionalProperties":false})",
     false, true, &refresh},
    {"gateway.connect_server", "Connect a server",
     "Start a configured server that is not running yet and list its tools, so that "
     "gateway.catalog_search finds them.",
     R"({"type":"object","properties":{"server_name":{"type":"string","minLength":1,)"
     R"("maxLength":128}},"required":["server_name"],"additionalProperties":false})",
     false, true, &connect_server},
};

struct Compiled {
  std::string list_result;                 // the tools/list result text
  std::vector<schema::Schema> validators;  // one per row, same order
};

const Compiled& compiled() {
  static const Compiled c = [] {
    Compiled out;
    bj::array tools;
    for (const auto& t : kMetaTools) {
      bj::value input_schema = bj::parse(t.input_schema);
      out.validators.push_back(schema::Schema::compile(input_schema).value());
      tools.push_back(bj::object{
          {"name", t.name},
          {"title", t.title},
          {"description", t.description},
          {"inputSchema", input_schema},
          {"annotations", bj::object{{"readOnlyHint", t.read_only}}},
      });
    }
    out.list_result = bj::serialize(bj::object{{"tools", std::move(tools)}});
    return out;
  }();
  return c;
}

}  // namespace

std::span<const MetaTool> meta_tools() { return kMetaTools; }

const MetaTool* find_meta_tool(std::string_view name) {
  for (const auto& t : kMetaTools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const std::string& meta_tools_list() { return compiled().list_result; }

std::optional<std::string> argument_problems(const MetaTool& tool, const bj::value& args) {
  auto row = static_cast<std::size_t>(&tool - kMetaTools);
  auto problems = compiled().validators[row].validate(args);
  if (problems.empty()) return std::nullopt;
  std::string text = fmt::format("invalid arguments for {}:", tool.name);
  for (const auto& p : problems) text += "\n" + schema::format(p);
  return text;
}

std::string_view log_level_of(const rpc::Message& request) {
  const auto* params = request.params_object();
  const auto* meta = params ? params->if_contains("_meta") : nullptr;
  const auto* fields = meta ? meta->if_object() : nullptr;
  const auto* level = fields ? fields->if_contains(mcp::meta_key::kLogLevel) : nullptr;
  return level && level->is_string() ? std::string_view(level->get_string()) : std::string_view();
}

std::string_view progress_token_of(const rpc::Message& request) {
  const auto* params = request.params_object();
  const auto* meta = params ? params->if_contains("_meta") : nullptr;
  if (!meta || !meta->is_object() || !meta->get_object().contains("progressToken")) return {};
  auto meta_text = request.params_member("_meta");
  auto token = meta_text ? core::json::member_span(*meta_text, "progressToken") : std::nullopt;
  return token ? *token : std::string_view();
}

}  // namespace sluice::gateway::meta

// One `[mcp_servers.NAME]` table of Codex's config.toml in sluice's `.mcp.json` entry shape.
// The keys are Codex's (codex-rs McpServerConfig): stdio `command`, `args`, `env`, `env_vars`,
// `cwd`; Streamable HTTP `url`, `bearer_token_env_var`, `http_headers`, `env_http_headers`;
// both `enabled`, `required`, `startup_timeout_sec`/`_ms`, `tool_timeout_sec`,
// `enabled_tools`, `disabled_tools`, `scopes`, `oauth_resource`. A shape Codex refuses (a key
// of the other transport, a wrong type) is skipped with the reason Codex would give.
#include "config/detail/codex_toml.hpp"
#include "config/detail/fields.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>

namespace sluice::config::detail {
namespace {

namespace bj = boost::json;

using Problem = std::optional<std::string>;

constexpr std::array<std::string_view, 6> kStdioOnly = {"command",  "args", "env",
                                                        "env_vars", "cwd",  "bearer_token"};
constexpr std::array<std::string_view, 6> kHttpOnly = {
    "url",         "bearer_token_env_var", "http_headers", "env_http_headers", "oauth_resource",
    "bearer_token"};
// Shared keys sluice has no counterpart for: reported, not carried over.
constexpr std::array<std::string_view, 7> kNotCarried = {
    "required", "startup_timeout_sec", "startup_timeout_ms", "enabled_tools", "disabled_tools",
    "scopes",   "oauth_resource"};
constexpr std::array<std::string_view, 19> kKnownKeys = {"command",
                                                         "args",
                                                         "env",
                                                         "env_vars",
                                                         "cwd",
                                                         "bearer_token",
                                                         "url",
                                                         "bearer_token_env_var",
                                                         "http_headers",
                                                         "env_http_headers",
                                                         "enabled",
                                                         "tool_timeout_sec",
                                                         "required",
                                                         "startup_timeout_sec",
                                                         "startup_timeout_ms",
                                                         "enabled_tools",
                                                         "disabled_tools",
                                                         "scopes",
                                                         "oauth_resource"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& keys, std::string_view key) {
  for (std::string_view k : keys) {
    if (k == key) return true;
  }
  return false;
}

std::string wrong_type(std::string_view key, std::string_view expected, const toml::node& got) {
  return fmt::format("`{}` is {}, not {}", key, toml_type_name(got), expected);
}

Problem read_string(const toml::table& table, std::string_view key,
                    std::optional<std::string>& out) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (!node->is_string()) return wrong_type(key, "a string", *node);
  out = node->as_string()->get();
  return std::nullopt;
}

Problem read_strings(const toml::table& table, std::string_view key, bj::array& out) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  const toml::array* array = node->as_array();
  if (array == nullptr) return wrong_type(key, "an array of strings", *node);
  for (const toml::node& item : *array) {
    if (!item.is_string())
      return fmt::format("`{}` holds {}, not only strings", key, toml_type_name(item));
    out.emplace_back(item.as_string()->get());
  }
  return std::nullopt;
}

Problem read_string_table(const toml::table& table, std::string_view key, bj::object& out) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  const toml::table* map = node->as_table();
  if (map == nullptr) return wrong_type(key, "a table of strings", *node);
  for (auto&& [name, value] : *map) {
    if (!value.is_string())
      return fmt::format("`{}` holds {}, not only strings", key, toml_type_name(value));
    out[name.str()] = value.as_string()->get();
  }
  return std::nullopt;
}

template <std::size_t N>
Problem refuse_keys(const toml::table& table, const std::array<std::string_view, N>& keys,
                    std::string_view transport) {
  for (std::string_view key : keys) {
    if (table.contains(key))
      return fmt::format("`{}` is not valid for a {} server", key, transport);
  }
  return std::nullopt;
}

Problem read_stdio(const toml::table& table, ClientServer& server) {
  if (Problem p = refuse_keys(table, kHttpOnly, "stdio")) return p;
  std::optional<std::string> command;
  std::optional<std::string> cwd;
  bj::array args;
  bj::object env;
  bj::array passed;
  if (Problem p = read_string(table, "command", command)) return p;
  if (Problem p = read_strings(table, "args", args)) return p;
  if (Problem p = read_string_table(table, "env", env)) return p;
  if (Problem p = read_strings(table, "env_vars", passed)) return p;
  if (Problem p = read_string(table, "cwd", cwd)) return p;
  server.entry["command"] = *command;
  if (table.contains("args")) server.entry["args"] = std::move(args);
  std::size_t forwarded = 0;
  for (const bj::value& name : passed) {
    std::string_view var = name.get_string();
    if (env.contains(var)) continue;
    env[var] = fmt::format("${{{}}}", var);
    ++forwarded;
  }
  if (forwarded > 0) {
    server.notes.push_back(fmt::format(
        "`env_vars`: {} variable{} passed from the environment became `${{NAME}}` in `env`",
        forwarded, forwarded == 1 ? "" : "s"));
  }
  if (!env.empty()) server.entry["env"] = std::move(env);
  if (cwd) server.entry["cwd"] = *cwd;
  return std::nullopt;
}

Problem read_http(const toml::table& table, ClientServer& server) {
  if (Problem p = refuse_keys(table, kStdioOnly, "Streamable HTTP")) return p;
  std::optional<std::string> url;
  std::optional<std::string> bearer_var;
  bj::object headers;
  bj::object env_headers;
  if (Problem p = read_string(table, "url", url)) return p;
  if (Problem p = read_string(table, "bearer_token_env_var", bearer_var)) return p;
  if (Problem p = read_string_table(table, "http_headers", headers)) return p;
  if (Problem p = read_string_table(table, "env_http_headers", env_headers)) return p;
  server.entry["type"] = "http";
  server.entry["url"] = *url;
  for (auto& [header, var] : env_headers) {
    headers[header] = fmt::format("${{{}}}", std::string_view(var.get_string()));
  }
  if (!env_headers.empty()) {
    server.notes.push_back(
        fmt::format("`env_http_headers`: {} header{} read from the environment became `${{NAME}}`",
                    env_headers.size(), env_headers.size() == 1 ? "" : "s"));
  }
  if (bearer_var) {
    headers["Authorization"] = fmt::format("Bearer ${{{}}}", *bearer_var);
    server.notes.push_back(
        "`bearer_token_env_var` became the header `Authorization: Bearer ${NAME}`");
  }
  if (!headers.empty()) server.entry["headers"] = std::move(headers);
  return std::nullopt;
}

Problem read_shared(const toml::table& table, ClientServer& server) {
  if (const toml::node* enabled = table.get("enabled")) {
    if (!enabled->is_boolean()) return wrong_type("enabled", "a boolean", *enabled);
    server.disabled = !enabled->as_boolean()->get();
    if (server.disabled) server.entry["disabled"] = true;
  }
  if (const toml::node* timeout = table.get("tool_timeout_sec")) {
    std::optional<double> seconds = timeout->value<double>();
    if (!seconds) return wrong_type("tool_timeout_sec", "a number", *timeout);
    double ms = std::round(*seconds * 1000.0);
    if (ms >= static_cast<double>(kCallTimeoutMsRange.min) &&
        ms <= static_cast<double>(kCallTimeoutMsRange.max)) {
      server.entry["timeoutMs"] = static_cast<std::int64_t>(ms);
      server.notes.push_back("`tool_timeout_sec` became `timeoutMs`");
    } else {
      server.notes.push_back(
          "`tool_timeout_sec` is outside sluice's range for `timeoutMs` (1 s to 24 h): not "
          "carried over");
    }
  }
  for (std::string_view key : kNotCarried) {
    if (table.contains(key)) {
      server.notes.push_back(fmt::format("`{}` has no sluice counterpart: not carried over", key));
    }
  }
  std::size_t unknown = 0;
  for (auto&& [key, node] : table) {
    if (!one_of(kKnownKeys, key.str())) ++unknown;
  }
  if (unknown > 0) {
    server.notes.push_back(fmt::format("{} key{} that sluice does not know: not carried over",
                                       unknown, unknown == 1 ? "" : "s"));
  }
  return std::nullopt;
}

}  // namespace

std::string_view toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::variant<ClientServer, SkippedServer> codex_server(std::string_view name,
                                                       const toml::node& node) {
  auto skip = [&](std::string reason) {
    return SkippedServer{.name = std::string(name), .scope = "user", .reason = std::move(reason)};
  };
  const toml::table* table = node.as_table();
  if (table == nullptr) return skip(fmt::format("is {}, not a table", toml_type_name(node)));
  bool stdio = table->contains("command");
  bool http = table->contains("url");
  if (stdio && http) return skip("has both `command` and `url`");
  if (!stdio && !http) return skip("has neither `command` nor `url`");
  ClientServer server;
  server.name = std::string(name);
  Problem problem = stdio ? read_stdio(*table, server) : read_http(*table, server);
  if (!problem) problem = read_shared(*table, server);
  if (problem) return skip(*std::move(problem));
  return server;
}

}  // namespace sluice::config::detail

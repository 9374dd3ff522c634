#include "config/client_config.hpp"

#include "config/detail/client_entry.hpp"
#include "config/json_text.hpp"
#include "core/describe.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace sluice::config {
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr std::array<std::pair<Client, std::string_view>, 6> kNames{{
    {Client::claude_code, "claude-code"},
    {Client::claude_desktop, "claude-desktop"},
    {Client::cursor, "cursor"},
    {Client::vscode, "vscode"},
    {Client::codex, "codex"},
    {Client::gemini, "gemini"},
}};

constexpr std::string_view kUserScope = "user";
constexpr std::string_view kLocalScope = "local ";  // + the project's directory

// The JSON-family clients: one object of servers ("mcpServers", VS Code's "servers"), and for
// Claude Code also `projects.<dir>.mcpServers` (the local scope).
class JsonClientDocument final : public ClientDocument {
 public:
  JsonClientDocument(Client client, JsonText text)
      : client_(client),
        text_(std::move(text)),
        key_(client == Client::vscode ? "servers" : "mcpServers") {}

  ClientServers servers() const override {
    ClientServers out;
    if (!text_.value().is_object()) return out;
    const bj::object& root = text_.value().get_object();
    detail::ClientInputs inputs;
    if (const bj::value* list = root.if_contains("inputs"); list != nullptr && list->is_array()) {
      for (const bj::value& input : list->get_array()) {
        const bj::value* id = input.is_object() ? input.get_object().if_contains("id") : nullptr;
        if (id == nullptr || !id->is_string()) continue;
        const bj::value* password = input.get_object().if_contains("password");
        inputs[std::string(id->get_string())] =
            password != nullptr && password->is_bool() && password->get_bool();
      }
    }
    add_scope(root.if_contains(key_), kUserScope, inputs, out);
    const bj::value* projects =
        client_ == Client::claude_code ? root.if_contains("projects") : nullptr;
    if (projects != nullptr && projects->is_object()) {
      for (const auto& project : projects->get_object()) {
        if (!project.value().is_object()) continue;
        add_scope(project.value().get_object().if_contains("mcpServers"),
                  std::string(kLocalScope) + std::string(project.key()), inputs, out);
      }
    }
    return out;
  }

  std::optional<std::string> sluice_entry() const override {
    const bj::value* servers =
        text_.value().is_object() ? text_.value().get_object().if_contains(key_) : nullptr;
    if (servers == nullptr || !servers->is_object()) return std::nullopt;
    for (const auto& server : servers->get_object()) {
      if (detail::starts_sluice(server.value())) return std::string(server.key());
    }
    return std::nullopt;
  }

  void remove_server(std::string_view name, std::string_view scope) override {
    JsonText::Path path = servers_path(scope);
    path.emplace_back(name);
    text_.remove(path);
  }

  void set_sluice_entry(std::string_view name, const SluiceLaunch& launch) override {
    bj::object entry;
    // Claude Code's own `claude mcp add -s user` and VS Code write the type; the others infer it.
    if (client_ == Client::claude_code || client_ == Client::vscode) entry["type"] = "stdio";
    entry["command"] = launch.command;
    bj::array args;
    for (const std::string& arg : launch.args) args.emplace_back(arg);
    entry["args"] = std::move(args);
    if (client_ == Client::claude_code) entry["env"] = bj::object();
    text_.set({key_, std::string(name)}, entry);
  }

  std::string text() const override { return text_.text(); }

 private:
  JsonText::Path servers_path(std::string_view scope) const {
    if (scope.starts_with(kLocalScope)) {
      return {"projects", std::string(scope.substr(kLocalScope.size())), "mcpServers"};
    }
    return {key_};
  }

  void add_scope(const bj::value* servers, std::string_view scope,
                 const detail::ClientInputs& inputs, ClientServers& out) const {
    if (servers == nullptr || !servers->is_object()) return;
    for (const auto& server : servers->get_object()) {
      auto read = detail::json_client_server(client_, server.key(), scope, server.value(), inputs);
      if (auto* taken = std::get_if<ClientServer>(&read)) {
        out.servers.push_back(std::move(*taken));
      } else {
        out.skipped.push_back(std::get<SkippedServer>(std::move(read)));
      }
    }
  }

  Client client_;
  JsonText text_;
  std::string key_;
};

ParsedClientConfig failed(const JsonText& text, const JsonText::Path& at, std::string problem) {
  JsonTextFailure where = place_of(text.text(), text.offset_of(at).value_or(0), std::move(problem));
  return {nullptr, {where.line, where.column, where.problem}};
}

// The objects the document edits must be objects without a key twice (JSON.parse would take the
// last, the edit the first).
std::optional<ParsedClientConfig> misshapen(Client client, const JsonText& text) {
  const std::string key = client == Client::vscode ? "servers" : "mcpServers";
  std::vector<JsonText::Path> objects{{}, {key}};
  const bj::object& root = text.value().get_object();
  if (const bj::value* projects = root.if_contains("projects");
      client == Client::claude_code && projects != nullptr) {
    if (!projects->is_object()) return failed(text, {"projects"}, "projects is not an object");
    objects.push_back({"projects"});
    for (const auto& project : projects->get_object()) {
      const bj::value* servers = project.value().is_object()
                                     ? project.value().get_object().if_contains("mcpServers")
                                     : nullptr;
      if (servers != nullptr)
        objects.push_back({"projects", std::string(project.key()), "mcpServers"});
    }
  }
  for (const JsonText::Path& path : objects) {
    std::optional<std::size_t> at = text.offset_of(path);
    if (!at) continue;
    if (text.text()[*at] != '{') {
      return failed(text, path, fmt::format("{} is not an object", path.back()));
    }
    if (std::optional<std::string> twice = text.duplicate_key(path)) {
      return failed(text, path,
                    fmt::format("{} holds the key {} twice",
                                path.empty() ? std::string("the top level") : path.back(),
                                core::show_name(*twice)));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Client> client_by_name(std::string_view name) {
  for (const auto& [client, spelled] : kNames) {
    if (spelled == name) return client;
  }
  return std::nullopt;
}

std::string_view client_name(Client client) {
  for (const auto& [c, spelled] : kNames) {
    if (c == client) return spelled;
  }
  return "";
}

const std::vector<Client>& all_clients() {
  static const std::vector<Client> clients = [] {
    std::vector<Client> out;
    for (const auto& entry : kNames) out.push_back(entry.first);
    return out;
  }();
  return clients;
}

fs::path client_config_path(Client client, const fs::path& home, const fs::path& xdg_config_home) {
  const fs::path config = xdg_config_home.empty() ? home / ".config" : xdg_config_home;
  switch (client) {
    case Client::claude_code:
      return home / ".claude.json";
    case Client::claude_desktop:
      return config / "Claude" / "claude_desktop_config.json";
    case Client::cursor:
      return home / ".cursor" / "mcp.json";
    case Client::vscode:
      return config / "Code" / "User" / "mcp.json";
    case Client::codex:
      return home / ".codex" / "config.toml";
    case Client::gemini:
      return home / ".gemini" / "settings.json";
  }
  return {};
}

ParsedClientConfig parse_client_config(Client client, std::string_view text) {
  if (client == Client::codex) return parse_codex_config(text);
  // VS Code, Cursor (a VS Code fork) and Gemini CLI read their files as JSON with comments;
  // Claude Code and Claude Desktop as strict JSON, which is what is accepted for them.
  const bool jsonc =
      client == Client::vscode || client == Client::cursor || client == Client::gemini;
  JsonTextFailure failure;
  std::optional<JsonText> parsed = JsonText::parse(std::string(text), jsonc, failure);
  if (!parsed) return {nullptr, {failure.line, failure.column, failure.problem}};
  if (parsed->value().is_object()) {
    if (std::optional<ParsedClientConfig> bad = misshapen(client, *parsed)) return std::move(*bad);
  }
  return {std::make_unique<JsonClientDocument>(client, std::move(*parsed)), {}};
}

}  // namespace sluice::config

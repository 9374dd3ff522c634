#pragma once
// The MCP server configs of the clients sluice sits behind (Claude Code, Claude Desktop, Cursor,
// VS Code, Codex, Gemini CLI): where each keeps its file, the servers it lists, and the edits
// `sluice setup` makes to it. Used by `sluice import` and `sluice setup` (src/cli/).
//
// Contract: parse_client_config() reads one file's text in that client's own format (JSON,
// VS Code's JSONC, Codex's TOML) and never throws for anything in it: a text it cannot parse is
// a ParseFailure with the place (line and column) and the kind of problem, value-free. A
// ClientDocument keeps everything it does not edit: text() of a document that was not edited
// is the text it was parsed from, byte for byte, and an edit changes only the members it names.
// Server entries come out in sluice's `.mcp.json` shape; anything that shape cannot say is
// reported (ClientServer::notes, SkippedServer::reason) by name and kind, never by value.
// Threading: none; a document is a plain value owned by its caller.
#include <boost/json.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

enum class Client { claude_code, claude_desktop, cursor, vscode, codex, gemini };

// "claude-code", "claude-desktop", "cursor", "vscode", "codex", "gemini"; nullopt for another.
std::optional<Client> client_by_name(std::string_view name);
std::string_view client_name(Client client);
// Every client, in the order above.
const std::vector<Client>& all_clients();

// The user-level file the client reads its MCP servers from, under `home` (and
// `xdg_config_home` when the client follows it; empty: `home`/.config).
std::filesystem::path client_config_path(Client client, const std::filesystem::path& home,
                                         const std::filesystem::path& xdg_config_home);

// One server a client's file lists, in sluice's `.mcp.json` entry shape
// ({command, args, env, cwd} or {type: "http"|"sse", url, headers}).
struct ClientServer {
  std::string name;
  // Where in the file it is: "user", or "project <abs dir>" / "local <abs dir>" for the
  // per-project scopes of ~/.claude.json.
  std::string scope = "user";
  boost::json::object entry;
  bool disabled = false;
  // What was translated or cannot be carried over, value-free: `${env:HOME}` became `${HOME}`,
  // the input `api-key` is asked for by VS Code and has no value here, ...
  std::vector<std::string> notes;
};

// A server the file lists that sluice cannot take, and why (value-free).
struct SkippedServer {
  std::string name;
  std::string scope = "user";
  std::string reason;
};

struct ClientServers {
  std::vector<ClientServer> servers;
  std::vector<SkippedServer> skipped;
};

// How the client is to start sluice: `command` with `args` over stdio.
struct SluiceLaunch {
  std::string command;
  std::vector<std::string> args;
};

// Where and why a text could not be parsed. line and column count from 1 (0: unknown).
struct ParseFailure {
  std::size_t line = 0;
  std::size_t column = 0;
  std::string problem;
};

// One client config file, parsed, editable in place.
class ClientDocument {
 public:
  virtual ~ClientDocument() = default;

  // The servers the file lists, in file order (every scope).
  virtual ClientServers servers() const = 0;

  // The name of an entry that already starts sluice (its command is `sluice`, or a path whose
  // file name is `sluice`); nullopt when none does.
  virtual std::optional<std::string> sluice_entry() const = 0;

  // Removes the named servers from the scope they were read in (ClientServer::scope).
  virtual void remove_server(std::string_view name, std::string_view scope) = 0;

  // Adds, or replaces, the user-level entry `name` that starts sluice as `launch` says.
  virtual void set_sluice_entry(std::string_view name, const SluiceLaunch& launch) = 0;

  // The file's text with the edits made.
  virtual std::string text() const = 0;
};

struct ParsedClientConfig {
  std::unique_ptr<ClientDocument> document;  // null when the text could not be parsed
  ParseFailure failure;
};

// Parses `text` as `client`'s config. An empty (or all-whitespace) text is an empty document of
// that client's format, to which set_sluice_entry() can add the first entry.
ParsedClientConfig parse_client_config(Client client, std::string_view text);

// Codex's config.toml (codex_config.cpp): the same contract, for TOML.
// An edit whose result would not parse back to exactly the edit meant is not made (the
// document stays as it was); `mcp_servers = { ... }` as one inline table is a ParseFailure.
ParsedClientConfig parse_codex_config(std::string_view text);

}  // namespace sluice::config

#pragma once
// `sluice import --from NAME|PATH`: the MCP servers a client's own config lists (Claude Code,
// Claude Desktop, Cursor, VS Code, Codex, Gemini CLI; client_config.hpp) copied into sluice's
// user-level config (config::user_config_file_of), with a value-free report of what was taken
// and what was skipped and why. The client's file is only read: `sluice setup --import` moves
// the servers instead (setup.hpp).
//
// Rules: a server of a name sluice's file already has is skipped unless --force; Claude Code's
// local (per-project) scopes are taken only with --project DIR (that project's) or
// --all-projects, since sluice's user file serves every project; entries named `sluice`, or that
// start sluice, are never taken. Exit codes: 0 done (some servers may be skipped), 1 the file
// cannot be read or parsed or sluice's file cannot be written, 2 a usage error.
// Threading: the calling (main) thread; plain blocking file calls.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `import`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct ImportLine {
  CLI::App* command = nullptr;
  std::string from;    // a client name or a path
  std::string client;  // --client: the format of PATH
  std::string project;
  bool all_projects = false;
  bool force = false;
  bool dry_run = false;
  bool json = false;
};

void add_import_command(CLI::App& app, ImportLine& line);

// The exit code of `import` when the line names it; nullopt otherwise.
std::optional<int> run_import_command(const ImportLine& line);

}  // namespace sluice::cli

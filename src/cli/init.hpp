#pragma once
// `sluice init [--force] [--print]`: writes the starter user config, sluice's own user-level
// file (config::user_config_file_of: $XDG_CONFIG_HOME/sluice/mcp.json, else
// ~/.config/sluice/mcp.json), when it does not exist yet.
//
// The starter file is plain `.mcp.json` JSON (Boost.JSON, no comments): its notes are the
// top-level "$comment" array and its examples the "$examples" object, keys discovery ignores
// without a warning (it reads only mcpServers, autoStart and sluice at the top level). It
// defines no server.
//
// Guarantees: the file is created 0600 in a 0700 folder, written whole (a temporary file
// renamed over the target); an existing file is never touched without --force, and with it is
// first copied to `<file>.sluice-backup-<UTC time>` (0600). Exit codes: 0 written (or printed),
// 1 refused or failed (the message names the file and the fix), 2 usage error.
// Threading: the calling (main) thread, synchronous file calls.
#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::cli {

// What the command line says about `init`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct InitLine {
  CLI::App* init = nullptr;
  bool force = false;  // overwrite an existing file, after a backup
  bool print = false;  // write the starter file to stdout instead
};

// Adds `init` to `app`.
void add_init_command(CLI::App& app, InitLine& line);

// The exit code of `init` when the line names it; nullopt when it does not.
std::optional<int> run_init_command(const InitLine& line);

// The text of the starter file (valid `.mcp.json`, no server, every line within 80 columns).
std::string_view starter_config_text();

// What init_user_config() did: the exit code and one human line (to print escaped).
struct InitOutcome {
  int exit_code = 0;
  std::string message;
  std::filesystem::path backup;  // set when an existing file was backed up
};

// Writes the starter file to `file` as `sluice init` does; `now` names the backup.
InitOutcome init_user_config(const std::filesystem::path& file, bool force,
                             std::chrono::system_clock::time_point now);

}  // namespace sluice::cli

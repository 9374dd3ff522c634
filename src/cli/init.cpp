#include "cli/init.hpp"

#include "cli/help.hpp"
#include "cli/secrets.hpp"
#include "cli/serve.hpp"
#include "cli/usage.hpp"
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "core/display.hpp"
#include "core/private_file.hpp"
#include "core/wall_clock.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <system_error>

namespace sluice::cli {
namespace fs = std::filesystem;
namespace {

// The starter file. JSON has no comments: the notes are strings of "$comment", the examples
// live under "$examples" (the shape of a whole file, so that they can be copied as they are).
constexpr std::string_view kStarter = R"json({
  "$comment": [
    "sluice's own user-level servers (written by `sluice init`).",
    "Servers go under mcpServers in the .mcp.json shape: a stdio server is",
    "{command, args, env, cwd}, a remote one {type: http|sse, url, headers}.",
    "$examples below has one of each: copy an entry into mcpServers to use it.",
    "${NAME} in env and headers is read from the environment, then from",
    "`sluice secrets set NAME`. sluice ignores top-level keys starting with $.",
    "",
    "Where each client keeps the servers it starts itself:",
    "  claude-code     ~/.claude.json (and each project's .mcp.json)",
    "  claude-desktop  ~/.config/Claude/claude_desktop_config.json",
    "  cursor          ~/.cursor/mcp.json",
    "  vscode          ~/.config/Code/User/mcp.json",
    "  codex           ~/.codex/config.toml",
    "  gemini          ~/.gemini/settings.json",
    "Copy a client's servers here: sluice import --from NAME",
    "Or move them and point the client at sluice in one step:",
    "  sluice setup --client NAME --import",
    "Check the result: sluice servers, sluice doctor"
  ],
  "mcpServers": {},
  "$examples": {
    "mcpServers": {
      "files": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/you"]
      },
      "tracker": {
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"}
      }
    }
  }
}
)json";

// `<file>.sluice-backup-<UTC time>`, with a counter when that name is taken.
fs::path backup_path_of(const fs::path& file, std::chrono::system_clock::time_point now) {
  const std::string base = file.string() + ".sluice-backup-" + core::utc_text(now);
  fs::path candidate = base;
  std::error_code ec;
  for (int n = 2; fs::symlink_status(candidate, ec).type() != fs::file_type::not_found; ++n) {
    candidate = fmt::format("{}-{}", base, n);
  }
  return candidate;
}

// Copies the existing `file` to its backup (0600); the backup's path, or the outcome that
// refuses the overwrite.
std::optional<InitOutcome> back_up(const fs::path& file, std::chrono::system_clock::time_point now,
                                   fs::path& backup) {
  core::Result<std::string> text = config::read_config_text(file);
  if (!text) {
    return InitOutcome{1,
                       fmt::format("sluice init: {} {}; nothing was changed",
                                   core::display_path(file), text.error().message),
                       {}};
  }
  backup = backup_path_of(file, now);
  if (std::optional<core::PrivateFileProblem> problem = core::replace_private_file(backup, *text)) {
    return InitOutcome{1,
                       fmt::format("sluice init: {}; nothing was changed",
                                   core::describe(*problem, "the backup", backup)),
                       {}};
  }
  return std::nullopt;
}

int print_starter() {
  std::fwrite(kStarter.data(), 1, kStarter.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

std::string_view starter_config_text() { return kStarter; }

InitOutcome init_user_config(const fs::path& file, bool force,
                             std::chrono::system_clock::time_point now) {
  std::error_code ec;
  const bool exists = fs::symlink_status(file, ec).type() != fs::file_type::not_found;
  if (exists && !force) {
    return {1,
            fmt::format("sluice init: {} already exists and was left as it is.\n"
                        "  `sluice init --force` replaces it after a backup;\n"
                        "  `sluice init --print` shows the starter file.",
                        core::display_path(file)),
            {}};
  }
  fs::path backup;
  if (exists) {
    if (std::optional<InitOutcome> refused = back_up(file, now, backup)) return *refused;
  }
  if (!core::make_private_directories(file.parent_path())) {
    return {1,
            fmt::format("sluice init: the folder {} cannot be created",
                        core::display_path(file.parent_path())),
            {}};
  }
  if (std::optional<core::PrivateFileProblem> problem =
          core::replace_private_file(file, kStarter)) {
    return {1, "sluice init: " + core::describe(*problem, "the config file", file), backup};
  }
  std::string message = fmt::format("sluice init: wrote {}", core::display_path(file));
  if (!backup.empty()) message += fmt::format("\n  the old one is {}", core::display_path(backup));
  message +=
      "\nnext: sluice import --from NAME (copy a client's servers here), or\n"
      "      sluice setup --client NAME --import (move them and point the client at sluice)";
  return {0, std::move(message), backup};
}

void add_init_command(CLI::App& app, InitLine& line) {
  line.init = app.add_subcommand(
      "init",
      "Write a starter user config, ~/.config/sluice/mcp.json, with notes on where each "
      "client keeps its servers");
  line.init->add_flag("--force", line.force,
                      "Replace an existing file, after copying it to "
                      "<file>.sluice-backup-<UTC time>");
  line.init->add_flag("--print", line.print, "Write the starter file to stdout instead");
  set_examples(*line.init,
               {{"sluice init", "Create the file when there is none (exit 1 if it exists)"},
                {"sluice init --print > my.mcp.json", "See the starter file, write nothing"},
                {"sluice init --force", "Start over; the old file is kept as a backup"}});
}

std::optional<int> run_init_command(const InitLine& line) {
  if (line.init == nullptr || !*line.init) return std::nullopt;
  if (!line.init->remaining().empty()) {
    print_err("sluice init: unexpected argument; see `sluice init --help`");
    return kUsageExit;
  }
  if (line.print) return print_starter();
  const fs::path file = config::user_config_file_of(process_environment());
  if (file.empty()) {
    print_err("sluice init: no config folder: set HOME or XDG_CONFIG_HOME");
    return 1;
  }
  InitOutcome outcome = init_user_config(file, line.force, std::chrono::system_clock::now());
  (outcome.exit_code == 0 ? print_out : print_err)(outcome.message);
  return outcome.exit_code;
}

}  // namespace sluice::cli

#pragma once
// The files `sluice setup` and `sluice import` read and change (client_config.hpp describes
// their formats): reading one whole, replacing it atomically with its mode kept, the
// timestamped backups beside it, a masked unified diff for --dry-run, and the import of a
// client's servers into sluice's own user-level config (config::user_config_file_of).
//
// Contract: plain blocking file calls on the calling (main) thread. Nothing here prints; every
// error is one value-free sentence naming the file (escaped by the caller when printed). A
// replacement never leaves a partial file: it is written beside the file, fsynced, then
// renamed over it, and refused when the file changed since it was read.
#include "config/client_config.hpp"
#include "config/json_text.hpp"

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::cli {

// A file as read: `real` is `path` with symlinks resolved (what is read, backed up and
// replaced, so a symlinked dotfile stays a symlink).
struct ClientFile {
  std::filesystem::path path;
  std::filesystem::path real;
  bool exists = false;
  std::string text;
  mode_t mode = 0600;
};

// Reads `path` (a missing file reads as empty, exists false). nullopt, with `error`, when it
// is not a regular file, larger than 64 MiB or unreadable.
std::optional<ClientFile> read_client_file(const std::filesystem::path& path, std::string& error);

// Replaces `file.real` with `text` (mode `file.mode`; a new file is created with `new_mode`,
// its missing folders 0700). The error when it fails or when the file changed since `file`
// was read; the file is then as it was.
std::optional<std::string> replace_file(const ClientFile& file, std::string_view text,
                                        mode_t new_mode);

// `<real>.sluice-backup-<UTC time, 20261201T235959Z>` (a `-2`, `-3`... suffix when taken) with
// the bytes read, or empty when there was no file. nullopt, with `error`, when it cannot be
// written.
std::optional<std::filesystem::path> write_backup(const ClientFile& file, std::string& error);

// Gives `backup` the modification time of `written`, which is how --undo later tells whether
// the file changed since setup wrote it.
void stamp_backup(const std::filesystem::path& backup, const std::filesystem::path& written);

// Whether `file` has the modification time `backup` was stamped with.
bool unchanged_since_stamp(const std::filesystem::path& file, const std::filesystem::path& backup);

// The backups of `real`, oldest first.
std::vector<std::filesystem::path> backups_of(const std::filesystem::path& real);

// A unified diff (3 lines of context) of two texts under the two labels; "" when equal.
std::string unified_diff(std::string_view before, std::string_view after,
                         std::string_view from_label, std::string_view to_label);

// `text` of `client`'s format with the values a dry run may not print masked (every string
// but commands, args, types and names; TOML string values likewise).
std::string masked_for_display(config::Client client, std::string_view text);

// Which of a client's servers an import takes.
struct ImportChoice {
  std::optional<std::string> project;  // also the local scope of this project (~/.claude.json)
  bool all_projects = false;           // also every local scope
  bool force = false;                  // replace a server of the same name in sluice's file
};

struct ImportPlan {
  std::vector<config::ClientServer> taken;
  std::vector<config::SkippedServer> skipped;
  std::vector<std::string> replaced;  // names of taken servers that replace one of sluice's
};

// Adds the servers of `found` that `choice` takes to `user` (sluice's user config) and says
// what it took and skipped. The error when the result is not a config sluice accepts
// (`user_path` names it); `user` may then be half-edited and must not be written.
std::optional<std::string> plan_import(const config::ClientServers& found,
                                       const ImportChoice& choice, config::JsonText& user,
                                       const std::filesystem::path& user_path, ImportPlan& plan);

// sluice's user-level config file (config::user_config_file_of with the environment).
std::filesystem::path user_config_path();

// The client's own file under $HOME (and $XDG_CONFIG_HOME) of this process.
std::filesystem::path default_client_path(config::Client client);

// sluice's user config, read and parsed (strict JSON, as sluice reads it).
struct UserConfig {
  ClientFile file;
  config::JsonText document;
};
// nullopt, with `error` (naming the file, and line:column when it does not parse), when it
// cannot be used; a missing file is an empty document.
std::optional<UserConfig> open_user_config(std::string& error);

// The import report for a person: what was taken (name, scope, kind, notes) and skipped (name,
// scope, why), each line escaped and wrapped at 80 columns.
std::string describe_plan(const ImportPlan& plan);

// The same as JSON members "taken" and "skipped" (byte-exact names and notes).
void plan_json(const ImportPlan& plan, boost::json::object& out);

// Lines wrapped at 80 columns, continuation lines indented by `indent` spaces; escaped.
std::string wrapped(std::string_view text, std::size_t first_indent, std::size_t indent);

}  // namespace sluice::cli

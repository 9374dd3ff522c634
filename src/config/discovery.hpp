#pragma once
// Discovery and merge of `.mcp.json` files into one GatewayConfig.
//
// Contract: discover() reads, in this order,
//   1. the project file `<project>/.mcp.json`: <project> is --project when given, else
//      find_project_dir(cwd, home); no project, no project file;
//   2. sluice's own user file (DiscoveryOptions::user_config, $XDG_CONFIG_HOME/sluice/mcp.json:
//      what `sluice init`, `import` and `setup --import` write), then `~/.mcp.json`, then
//      `~/.claude/.mcp.json` (when a home is given);
//   3. each --config file, in the order given.
// With `search` false (--no-discover) only step 3 runs; project_dir is still determined.
// A file reached twice (same file after resolving symlinks) is read once, at its first place.
// A missing file is skipped silently, except a --config file (a warning). A file that cannot
// be read or is malformed yields exactly one warning naming the file and the problem, and
// none of its servers or autoStart names are used (it is listed in files_rejected with that
// problem); every other file is served. files_looked_for lists every path looked at. The first
// definition of a server name wins; later ones are ignored without a warning (each server
// records its source_file). autoStart lists are merged in order without duplicates.
// Operator settings (the top-level "sluice" object and each entry's "sluice" object) come
// only from user-level and --config files: a project file's are ignored, with one warning
// naming the file (its servers are still served). Each file's unknown-key warning is passed
// on. An entry that starts sluice itself is skipped with a warning (DiscoveryOptions::self).
// Trust: the project file's servers are `untrusted` (ServerConfig::untrusted, one warning
// naming the file and the approve command) unless the trust store in
// DiscoveryOptions::state_dir approves its real path with the SHA-256 of the bytes parsed, or
// --trust-project trusts them for this run; a project file that is also a user-level file
// (the same file after resolving symlinks) is the user's own. A trust file that cannot be used
// (a looser mode) approves nothing, with one warning saying why and how to fix it.
// Time and memory are linear in the size of the files read.
// Never throws for anything found on disk; touches nothing but the files it reads (and the
// metadata of the folders it walks). Relative paths in the options resolve against `cwd`.
#include "config/gateway_config.hpp"
#include "config/mcp_json.hpp"
#include "core/file_identity.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

namespace sluice::config {

struct DiscoveryOptions {
  std::optional<std::filesystem::path> project_dir;     // --project
  std::filesystem::path cwd;                            // walk-up start; empty: getcwd
  std::optional<std::filesystem::path> home;            // $HOME; nullopt or empty: none
  std::vector<std::filesystem::path> explicit_configs;  // --config, repeatable
  // sluice's own user-level file (user_config_file_of()); empty: none.
  std::filesystem::path user_config;
  EnvLookup getenv;                                     // for ${VAR}; empty: nothing set
  std::size_t max_file_bytes = kMaxConfigFileBytes;
  // False (`--no-discover`): read only explicit_configs, no project or user files.
  bool search = true;
  // sluice's own executable (core::executable_of(0)). A stdio entry whose command resolves to
  // the same file (through PATH as at spawn time, symlinks followed; FileIdentity::same_file)
  // would start a gateway behind itself: it is skipped with a warning, unless it runs
  // `sluice demo-server`. nullopt: no check.
  std::optional<core::FileIdentity> self;
  // Where the operator's approvals of project files are (config::TrustStore); empty: none is
  // approved. The trust file is one of files_looked_for, so a live reload sees an approval.
  std::filesystem::path state_dir;
  // --trust-project: the project file's bytes as read now are trusted for this run, and
  // nothing is written (GatewayConfig::project_trust says trusted_for_run). With
  // `pinned_project` (the project_trust of this run's first discovery, for a reread), only
  // the bytes trusted then are.
  bool trust_project = false;
  std::optional<GatewayConfig::ProjectTrust> pinned_project;
};

GatewayConfig discover(const DiscoveryOptions& options);

// sluice's own user-level config file: `mcp.json` in $XDG_CONFIG_HOME/sluice (when absolute),
// else in ~/.config/sluice; empty when neither variable is set. Not `~/.mcp.json`: a client
// started in the home directory would take that as its project file and run the servers
// moved behind sluice a second time.
std::filesystem::path user_config_file_of(const EnvLookup& getenv);

// The project directory for a working directory: the nearest of `cwd` and its ancestors that
// holds a `.mcp.json` or a `.git` (a folder, or a file as in a git worktree). The walk stops
// below `home`: the home directory and its ancestors are never a project (their `.mcp.json`
// is the user's own file, read in step 2). Absolute and normalised; nullopt when none.
std::optional<std::filesystem::path> find_project_dir(
    const std::filesystem::path& cwd, const std::optional<std::filesystem::path>& home);

}  // namespace sluice::config

#pragma once
// `sluice secrets set NAME | list [--json] | rm NAME`: the secrets store
// (config/secrets_store.hpp) from the command line, and the `${VAR}` lookup every command's
// configuration is read with (the environment, then the store).
//
// No output of these commands holds a value: `set` reads it from stdin only (there is no
// option or argument for it; an extra argument is refused unread), with echo off on a
// terminal; `list` prints names; errors name the secret, the path and the fix.
// Threading: the calling (main) thread; each call touches the store synchronously.
#include "config/gateway_config.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sluice::cli {

// What the command line says about `secrets`. The parser holds references into it, so it
// stays where it was made while the parser lives.
struct SecretsLine {
  CLI::App* set = nullptr;
  CLI::App* list = nullptr;
  CLI::App* rm = nullptr;
  std::string name;                // set, rm
  std::vector<std::string> extra;  // set: anything after NAME, refused without being read
  bool json = false;               // list --json
};

// Adds `secrets` and its three commands to `app`.
void add_secrets_command(CLI::App& app, SecretsLine& line);

// The exit code of the secrets command the line names; nullopt when it names none.
std::optional<int> run_secrets_command(const SecretsLine& line);

// `${VAR}` lookups for discovery: sluice's environment first, then the secrets store. A store
// that cannot be used (a loose mode, a bad file) gives one line in `warnings` (value-free,
// naming the path and the fix), and only the environment is used.
config::EnvLookup variable_lookup(std::vector<std::string>& warnings);

// sluice's own environment as a lookup (no secrets store): for the paths XDG_* and HOME choose.
config::EnvLookup process_environment();

}  // namespace sluice::cli

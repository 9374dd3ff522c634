#pragma once
// `sluice setup --client NAME`: writes that client's own config file so that the client runs
// sluice (an entry `sluice` with this binary and `serve`), keeping a timestamped backup beside
// it; `--import` also moves the client's servers into sluice's user-level config and out of the
// client's file, so that nothing runs twice; `--undo` puts the newest backup back;
// `--dry-run` prints the diff (values masked) and writes nothing. docs/clients.md has each
// client's file and what setup writes there.
//
// Guarantees: a file that does not parse is never written (the error says file:line:column);
// a file that already starts sluice is left as it is; an existing entry of the chosen name that
// does not start sluice is refused (--name picks another); with --import, sluice's file and the
// client's are both written or neither is; a write replaces the file atomically with its mode.
// Exit codes: 0 done (or nothing to do), 1 refused or failed (nothing written), 2 a usage error.
// Threading: the calling (main) thread; plain blocking file calls.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `setup`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct SetupLine {
  CLI::App* command = nullptr;
  std::string client;
  std::string config_file;  // --config-file: instead of the client's own
  std::string name = "sluice";
  std::string project;  // with --import: Claude Code's local scope of this project too
  bool all_projects = false;
  bool import = false;
  bool undo = false;
  bool force = false;
  bool dry_run = false;
  bool json = false;
};

void add_setup_command(CLI::App& app, SetupLine& line);

// The exit code of `setup` when the line names it; nullopt otherwise.
std::optional<int> run_setup_command(const SetupLine& line);

}  // namespace sluice::cli

#pragma once
// `sluice trust list [--json] | approve [PATH] | revoke PATH`: the operator's approvals of
// project configuration files (config/trust_store.hpp) from the command line, and the
// `--trust-project` flag of the commands that start servers.
//
// `approve` shows what it approves before recording it: the file's real path and SHA-256, and
// each server's name with its command and args (or its URL), every value escaped for the
// terminal; what it records is the digest of exactly the bytes it showed. A missing,
// unreadable or invalid file is refused with a non-zero exit and a value-free message.
// Threading: the calling (main) thread; each call touches the trust file synchronously.
#include "cli/serve.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `trust`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct TrustLine {
  CLI::App* list = nullptr;
  CLI::App* approve = nullptr;
  CLI::App* revoke = nullptr;
  CommonOptions options;  // --project and --state-dir
  std::string path;       // approve (optional), revoke
  bool json = false;      // list --json
};

// Adds `trust` and its three commands to `app`.
void add_trust_command(CLI::App& app, TrustLine& line);

// Adds --trust-project to a command that starts servers (serve, call, servers, index).
void add_trust_project_flag(CLI::App& command, CommonOptions& options);

// The exit code of the trust command the line names; nullopt when it names none.
std::optional<int> run_trust_command(const TrustLine& line);

}  // namespace sluice::cli

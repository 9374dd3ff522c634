#pragma once
// `sluice status [--json] [--state-dir DIR] [--auth-token TOKEN] [--timeout-ms N]`: what the
// running gateways are doing, from a second terminal.
//
// It lists the registry of running gateways (gateway_registry.hpp; stale entries are removed),
// asks each one's status socket for its document (run_registration.hpp: clients, servers,
// calls in flight, abandoned calls, restart_required with its next step, the whole
// gateway.health), all at once within the timeout, and for an HTTP service also GET /health on
// its port, with the bearer token from --auth-token or SLUICE_AUTH_TOKEN (sent only there,
// never shown or stored). Human output: one block per gateway, 80 columns, every line through
// core::display_safe; `--json`: an array of the gateways' documents, byte-exact.
//
// Exit codes: 0 when the listing worked (none running included), 1 when a gateway could not be
// reached (or its HTTP front end did not answer, or refused the token given), 2 on a usage
// error or when there is no state directory.
// Threading: the calling (main) thread, with an io_context of its own for the queries.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace sluice::cli {

// What the command line says about `status`. The parser holds references into it, so it stays
// where it was made while the parser lives.
struct StatusLine {
  CLI::App* status = nullptr;
  std::string state_dir;   // --state-dir
  std::string auth_token;  // --auth-token, else SLUICE_AUTH_TOKEN
  bool json = false;       // --json
  int timeout_ms = 5000;   // --timeout-ms: how long every gateway has to answer
};

// Adds `status` to `app`.
void add_status_command(CLI::App& app, StatusLine& line);

// The exit code of `status` when the line names it; nullopt when it does not.
std::optional<int> run_status_command(const StatusLine& line);

}  // namespace sluice::cli

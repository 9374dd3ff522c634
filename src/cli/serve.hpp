#pragma once
// Running a gateway in this process: the shared setup of `serve`, `call` and `servers`.
#include "config/gateway_config.hpp"
#include "core/limits.hpp"
#include "gateway/gateway.hpp"
#include "transport/http_options.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::cli {

struct CommonOptions {
  std::vector<std::string> configs;  // --config, repeatable
  std::string project;               // --project
  std::string log_level = "info";
  std::string log_file;
  // Serving gateways (run_log.hpp): --log-stderr, and the hidden --log-max-bytes (0: the
  // default, kLogMaxBytes).
  bool log_stderr = false;
  std::uint64_t log_max_bytes = 0;
  bool no_discover = false;  // read only the --config files
  bool expose_meta = true;   // --expose meta (default)
  bool expose_all = false;   // --expose all
  bool passthrough = false;  // --passthrough (one server, no name prefix)
  core::Limits limits;
  // Flags over the operator's "sluice" settings (GatewayPolicy), when given.
  std::optional<std::int64_t> call_timeout_ms;   // --call-timeout-ms
  std::optional<std::int64_t> max_call_ms;       // --max-call-ms
  std::optional<std::size_t> start_concurrency;  // --start-concurrency
  // --state-dir: the catalog cache and the HTTP service's lock. Empty: state_dir_of()'s default.
  std::string state_dir;
  bool no_cache = false;  // --no-cache: neither read nor write the catalog cache
  // --trust-project: the project file's current bytes are trusted for this run only.
  bool trust_project = false;
  std::string audit_log;  // --audit-log (serve and call): the audit log's file (audit_setup.hpp)
};

// `sluice serve --transport http`: where the front end listens and whom it serves (its
// bounds are CommonOptions::limits), and where the command keeps its state.
struct HttpCliOptions {
  transport::HttpOptions server;  // the auth token: else SLUICE_AUTH_TOKEN
  std::string port_file;          // the bound port is written here once listening
};

// Configures logging; returns false (after printing why) on a bad level.
bool setup_logging(const CommonOptions& options);
// Discovery with the options' flags applied. `pinned`: the project file trusted for this run
// by the run's first discovery (--trust-project), so that a reread trusts only those bytes.
std::shared_ptr<const config::GatewayConfig> load_config(
    const CommonOptions& options,
    const std::optional<config::GatewayConfig::ProjectTrust>& pinned = std::nullopt);
// With --trust-project, says what it trusted for this run (nothing is recorded): a log line
// when `serving`, else a line on stderr.
void announce_run_trust(const CommonOptions& options, const config::GatewayConfig& config,
                        bool serving);
// --state-dir made absolute, else $XDG_STATE_HOME/sluice, else ~/.local/state/sluice; empty
// when there is no home to put it in.
std::filesystem::path state_dir_of(const CommonOptions& options);
// What every command's gateway is built with: limits, what clients see, the state directory
// (none with --no-cache).
gateway::GatewayOptions gateway_options(const CommonOptions& options);

// `sluice serve`: MCP over stdin/stdout until EOF or a shutdown signal. Exit code.
int serve_stdio(const CommonOptions& options);
// `sluice serve --transport http`: until a shutdown signal. Exit code (3: another HTTP
// service holds the state directory's lock).
int serve_http(const CommonOptions& options, const HttpCliOptions& http);

// `sluice call SERVER::TOOL --args JSON`.
// `timeout_ms` 0: the server's `timeoutMs`, else the default call timeout.
int call_tool(const CommonOptions& options, const std::string& tool_id, const std::string& args,
              bool json_output, int timeout_ms);

// `sluice servers`.
int list_servers(const CommonOptions& options, bool json_output, bool probe);

// `sluice index [SERVER...]`: lists the named servers (every enabled one by default), at most
// sluice.indexConcurrency at once, into the catalog cache, then stops them. A progress line per
// server on a terminal; `json_output`: one summary object on stdout. Exit code 1 when any
// failed.
// `sluice auth login SERVER`: the interactive OAuth authorization of a remote server. Exit code.
int auth_login(const CommonOptions& options, const std::string& server);
int index_servers(const CommonOptions& options, const std::vector<std::string>& servers,
                  bool json_output);

// `sluice demo`.
int run_demo(const std::string& self_path);

// Human-facing output: every line through display_safe.
void print_out(std::string_view text);
void print_err(std::string_view text);

}  // namespace sluice::cli

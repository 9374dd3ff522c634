#pragma once
// Where `sluice serve` and `sluice call` keep the persistent audit log: --audit-log, else the
// operator's sluice.audit.file (false: none), else audit.jsonl in the state directory
// (state_dir_of: --state-dir, else the XDG default; --no-cache does not turn it off).
// Pure functions over the parsed options and configuration.
#include "cli/serve.hpp"
#include "config/gateway_config.hpp"
#include "gateway/gateway.hpp"

namespace CLI {
class App;
}

namespace sluice::cli {

// --audit-log PATH, on the commands that keep the log.
void add_audit_option(CLI::App& app, CommonOptions& options);

// `gateway` with its audit_file (or audit_off_reason) set from `options` and `config`.
gateway::GatewayOptions with_audit_log(gateway::GatewayOptions gateway,
                                       const CommonOptions& options,
                                       const config::GatewayConfig& config);

}  // namespace sluice::cli

#include "cli/audit_setup.hpp"

#include "store/audit_log.hpp"

#include <CLI/CLI.hpp>

#include <system_error>
#include <utility>

namespace sluice::cli {

void add_audit_option(CLI::App& app, CommonOptions& options) {
  app.add_option(
         "--audit-log", options.audit_log,
         "Append the audit log (JSON lines, 0600) to this file instead of sluice.audit.file "
         "or audit.jsonl in the state directory")
      ->type_name("FILE");
}

gateway::GatewayOptions with_audit_log(gateway::GatewayOptions gateway,
                                       const CommonOptions& options,
                                       const config::GatewayConfig& config) {
  const config::AuditSettings& settings = config.policy.audit;
  std::filesystem::path path;
  std::error_code ec;
  if (!options.audit_log.empty()) {
    path = std::filesystem::absolute(options.audit_log, ec);
  } else if (!settings.enabled) {
    gateway.audit_off_reason = "turned off (sluice.audit.file is false)";
    return gateway;
  } else if (!settings.file.empty()) {
    path = settings.file;
  } else if (std::filesystem::path state = state_dir_of(options); !state.empty()) {
    path = state / store::kAuditFileName;
  } else {
    gateway.audit_off_reason =
        "no state directory: set HOME or XDG_STATE_HOME, or give --state-dir or --audit-log";
    return gateway;
  }
  gateway.audit_file = store::AuditFileOptions{std::move(path), settings.max_bytes, settings.keep};
  return gateway;
}

}  // namespace sluice::cli

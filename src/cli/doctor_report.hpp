#pragma once
// What `sluice doctor` prints: the checks grouped by section with a summary line, and the
// effective settings with where each came from; for a terminal, or as one JSON object.
//
// Guarantees: the human report passes every text through core::display_safe and wraps it to
// kReportWidth columns (a word longer than a line is cut); the JSON report is the checks' and
// settings' raw text, byte-exact, never escaped for a terminal. Neither holds a value read
// from a file, the environment or the secrets store: settings are numbers, flags, paths and
// counts.
// Threading: none; pure functions.
#include "cli/doctor_checks.hpp"
#include "config/gateway_config.hpp"
#include "config/mcp_json.hpp"
#include "core/limits.hpp"

#include <string>
#include <utility>
#include <vector>

namespace sluice::cli::doctor {

inline constexpr std::size_t kReportWidth = 80;

// One effective setting: its name (`sluice.callTimeoutMs`, `limits.max_message_bytes`), its
// value as text, and where it came from ("default", a file's path, "flag --max-call-ms").
struct Setting {
  std::string name;
  std::string value;
  std::string source;
};

// Where settings can come from: the "sluice" blocks of the operator's files (user-level and
// --config files, in discovery order; the first that sets a key wins), and the flags given.
struct SettingSources {
  std::vector<std::pair<std::string, config::FilePolicy>> files;
  std::vector<std::string> flags;  // the long names of the options given ("--max-call-ms")
};

// The effective limits and gateway settings, each with its source.
std::vector<Setting> settings_of(const core::Limits& limits, const config::GatewayPolicy& policy,
                                 const SettingSources& sources);

// The report for a terminal: sections, the settings table, and "N checks failed, ...".
std::string human_report(const std::vector<Check>& checks, const std::vector<Setting>& settings);

// {"checks": [{id, section, subject, status, detail, fix}], "settings": [{name, value,
// source}], "summary": {ok, warn, fail}} and a newline; `fix` is null when there is none.
std::string json_report(const std::vector<Check>& checks, const std::vector<Setting>& settings);

}  // namespace sluice::cli::doctor

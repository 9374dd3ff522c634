#pragma once
// Parsing and validation of one `.mcp.json` file.
//
// Contract: a file is accepted whole or rejected whole. On rejection the Error holds exactly
// one value-free problem: the JSON path (fixed keys of the format by name, any other key as
// `entry`), the kind of problem and the type of the offending value, never the value or an
// unknown key. A file is rejected for invalid JSON (syntax, duplicate key, nesting deeper
// than 64), a wrong type anywhere in the format, an integer outside its range (the "sluice"
// admission settings), an invalid server name, a bad header or variable name, or a control
// character where none may appear. Unknown keys are ignored; those of server entries are
// also reported, in one value-free warning per file (ConfigFile::warnings).
// Interpolation problems (an unset variable) never reject a file: they become
// ServerConfig::missing_variables and ServerConfig::warnings. A leading UTF-8 byte order mark
// is skipped.
// Pure functions apart from reading the file; safe to call from any thread.
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

// Config files larger than this are rejected unread.
inline constexpr std::size_t kMaxConfigFileBytes = 1024 * 1024;

// The keys of the top-level "sluice" object that one file sets; nullopt where the file does
// not set the key. discover() merges these across files (the first file that sets a key
// wins) and fills the rest from GatewayPolicy's defaults. Ranges, enforced by the parser:
// budgets 1..1024, client_cap 1..4096, queue_size 0..100000, queue_timeout 0..3600000 ms,
// abandon_bound 1000..86400000 ms, drain_bound 0..600000 ms, idle_timeout 0 or
// 1000..86400000 ms, index_concurrency 1..64, index_wait 0..600000 ms, index_idle
// 0..86400000 ms.
struct FilePolicy {
  std::optional<std::size_t> read_budget;                  // "readBudget"
  std::optional<std::size_t> mutating_budget;              // "mutatingBudget"
  std::optional<std::size_t> client_cap;                   // "clientCap"
  std::optional<std::size_t> queue_size;                   // "queueSize"
  std::optional<std::chrono::milliseconds> queue_timeout;  // "queueTimeoutMs"
  std::optional<std::chrono::milliseconds> abandon_bound;  // "abandonMs"
  std::optional<std::chrono::milliseconds> drain_bound;    // "drainMs"
  std::optional<bool> forbid_force;                        // "forbidForce"
  std::optional<bool> fail_closed_when_stale;              // "failClosedWhenStale"
  std::optional<std::size_t> writes_per_server;            // "writesPerServer"
  std::optional<std::size_t> start_concurrency;            // "startConcurrency"
  std::optional<std::chrono::milliseconds> call_timeout;   // "callTimeoutMs"
  std::optional<std::chrono::milliseconds> max_call;       // "maxCallMs"
  std::optional<bool> allow_unvalidated_tools;             // "allowUnvalidatedTools"
  std::optional<std::chrono::milliseconds> idle_timeout;   // "idleTimeoutMs"
  std::optional<std::size_t> index_concurrency;            // "indexConcurrency"
  std::optional<std::chrono::milliseconds> index_wait;     // "indexWaitMs"
  std::optional<std::chrono::milliseconds> index_idle;     // "indexIdleMs"
  std::optional<AccessPolicy> access;                      // "policy"
  std::optional<std::size_t> max_output_bytes;             // "maxOutputBytes"
  std::optional<RedactSettings> redact;                    // "redact"
  std::optional<AuditSettings> audit;                      // "audit"
};

// The servers, auto-start names and gateway settings of one accepted file. Each server's
// own "sluice" object (its budget and tool budgets, each 1..1024, tools in file order) is in
// ServerConfig::policy.
struct ConfigFile {
  std::vector<ServerConfig> servers;    // in file order
  std::vector<std::string> auto_start;  // in file order, unique
  FilePolicy policy;                    // from the top-level "sluice" object
  // True when the file holds a "sluice" object, at the top level or in a server entry
  // (operator settings: discover() takes them only from user-level files).
  bool has_operator_settings = false;
  // Display-safe, value-free lines about an accepted file, naming it: at most one, for the
  // keys of its server entries that sluice does not know (by name when the name is a plain
  // identifier).
  std::vector<std::string> warnings;
};

// Parses `text` as the content of `file`, which must be absolute: relative `command` paths
// and `cwd` resolve against its folder, and it becomes each server's source_file.
core::Result<ConfigFile> parse_text(std::string_view text, const std::filesystem::path& file,
                                    Origin origin, const EnvLookup& lookup);

// Reads `file` (absolute; a regular file of at most `max_bytes`) and parses it. The Error
// does not name the file; the caller adds it. A missing file is an error like any other
// unreadable one: callers that skip missing files test for them first.
core::Result<ConfigFile> parse_file(const std::filesystem::path& file, Origin origin,
                                    const EnvLookup& lookup,
                                    std::size_t max_bytes = kMaxConfigFileBytes);

// The bytes parse_file() parses: `file` (absolute; a regular file of at most `max_bytes`,
// opened without blocking on a FIFO). The Error does not name the file.
core::Result<std::string> read_config_text(const std::filesystem::path& file,
                                           std::size_t max_bytes = kMaxConfigFileBytes);

// Server names: 1 to 64 characters of [A-Za-z0-9_.-], starting with a letter or digit, with
// no "__" and no trailing '_'. So `server__tool` (aggregated tool names) splits unambiguously
// at the first "__", and `server::tool` at the first "::".
bool is_valid_server_name(std::string_view name);

}  // namespace sluice::config

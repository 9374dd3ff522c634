#pragma once
// The downstream servers sluice serves, as read from `.mcp.json` files.
//
// Contract: these are plain immutable values. discover() (discovery.hpp) builds one
// GatewayConfig at start and again at each live reload (gateway/reload.hpp); the gateway
// shares each read-only as std::shared_ptr<const GatewayConfig> and never edits it. Every
// string in `warnings` is display-safe (escaped for a terminal) and value-free: it names
// files, JSON paths, server names and variable names, never a value read from a file or the
// environment.
// docs/configuration.md describes the format and the rules.
#include "config/access_policy.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace sluice::config {

// Looks up one variable for `${VAR}` interpolation: the value, or nullopt when unset.
// Injected so that tests never read the process environment; the caller composes the
// process environment and the env stores. An empty function means "nothing is set".
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// A child process speaking MCP over its stdin/stdout.
struct StdioServer {
  // Absolute when the file gave a path (a relative one containing '/' is resolved against
  // the config file's folder); a bare name (no '/') is kept as is and looked up in PATH at
  // spawn time.
  std::string command;
  std::vector<std::string> args;
  // In file order; names unique, non-empty, without '=' or NUL.
  std::vector<std::pair<std::string, std::string>> env;
  // Absolute (a relative one is resolved against the config file's folder), or empty when not
  // configured.
  std::string cwd;
};

// The optional "oauth" object of a remote server's entry: how sluice identifies itself to the
// server's authorization server (gateway/auth/). Every field is optional; an entry without it
// still gets OAuth when the server asks for it (dynamic registration or a metadata document).
struct OAuthSettings {
  std::string client_id;      // pre-registered client id ("clientId")
  std::string client_secret;  // its secret ("clientSecret"; `${VAR}` expanded); never logged
  // An https URL of sluice's client metadata document, used as the client id where the
  // authorization server supports Client ID Metadata Documents ("clientMetadataUrl").
  std::string client_metadata_url;
  // An absolute loopback redirect URI instead of http://127.0.0.1:<port>/callback.
  std::string redirect_uri;
  std::vector<std::string> scopes;  // asked for instead of the server's own ("scopes")
  std::uint16_t callback_port = 0;  // the redirect listener's port; 0: any free port

  bool operator==(const OAuthSettings&) const = default;
};

// A remote server over Streamable HTTP ("http") or the legacy HTTP+SSE transport ("sse").
struct RemoteServer {
  std::string type;  // "http" | "sse"
  std::string url;
  // In file order; names are HTTP tokens, unique ignoring case; values hold no control
  // character other than tab.
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<OAuthSettings> oauth = std::nullopt;  // the entry's "oauth" object, if any
  // A PEM file of the CAs trusted for this server instead of the system store ("caFile";
  // relative to the config file's folder); empty: the system store.
  std::string ca_file = {};
  // Plain http:// to a host other than loopback ("allowHttp": true); refused otherwise.
  bool allow_http = false;
};

// Which discovery step a file came from. A project file may add servers but not set the
// operator's "sluice" settings (those come only from user-level and --config files).
enum class Origin { project, user, explicit_file };

// Admission settings of one server (the optional "sluice" object of its entry).
struct ServerPolicy {
  std::optional<std::size_t> budget;  // default budget of each of its tools
  std::vector<std::pair<std::string, std::size_t>> tool_budgets;  // per tool name
  // Calls of its tools without readOnlyHint in flight at once across the whole server (stdio
  // servers; invariant A1), instead of GatewayPolicy::writes_per_server.
  std::optional<std::size_t> writes;
  // The cap on the text of one tool result ("maxOutputBytes"), instead of
  // GatewayPolicy::max_output_bytes; and per tool name ("tools": {"name": {"maxOutputBytes"}}).
  std::optional<std::size_t> max_output_bytes;
  std::vector<std::pair<std::string, std::size_t>> tool_output_caps;
};

// Redaction of secrets in tool results (the top-level "sluice": {"redact": {...}}).
struct RedactSettings {
  bool built_in = true;               // "builtIn": the built-in credential patterns
  std::vector<std::string> patterns;  // "patterns": the operator's own RE2 patterns
  bool operator==(const RedactSettings&) const = default;
};

// The persistent audit log (the top-level "sluice": {"audit": {...}}; docs/state.md).
struct AuditSettings {
  bool enabled = true;  // "file": false turns the log off
  // "file": an absolute path; empty: audit.jsonl in the state directory.
  std::string file;
  std::uint64_t max_bytes = 10u << 20;  // "maxBytes": a file is rotated before passing this
  std::size_t keep = 5;                 // "keep": rotated files kept (audit.jsonl.1 ... .keep)
  bool operator==(const AuditSettings&) const = default;
};

// Gateway-wide settings (the optional top-level "sluice" object). Each key takes the value
// of the first file that sets it, in discovery order.
struct GatewayPolicy {
  std::size_t read_budget = 8;       // tools annotated readOnlyHint: true
  std::size_t mutating_budget = 4;   // every other tool
  std::size_t client_cap = 16;       // calls in flight per client session
  std::size_t queue_size = 64;       // waiting calls per budget
  std::chrono::milliseconds queue_timeout{30000};
  std::chrono::milliseconds abandon_bound{120000};
  std::chrono::milliseconds drain_bound{10000};
  bool forbid_force = false;
  bool fail_closed_when_stale = false;
  // A1: calls of tools without readOnlyHint in flight at once per stdio server, across all its
  // tools (a tool or server budget set by the operator takes that tool out of this lane).
  std::size_t writes_per_server = 1;
  // Servers started at once (aggregate listing, autoStart, indexing).
  std::size_t start_concurrency = 8;
  // The call timeout when neither the call nor the server's `timeoutMs` gives one. It is an
  // inactivity timeout: each progress notification of the call starts it again, up to
  // max_call from the call's start.
  std::chrono::milliseconds call_timeout{60000};
  std::chrono::milliseconds max_call{600000};
  // A tool whose input schema sluice cannot compile is refused unless this is set (then it is
  // called without validation).
  bool allow_unvalidated_tools = false;
  // A server idle this long (no call pending, no subscription, no activity) is stopped
  // (ds_idle_stop) when its entry sets no `idleTimeoutMs`; 0: never. Not applied to
  // autoStart servers, which idle-stop only when their own entry says so.
  std::chrono::milliseconds idle_timeout{600000};
  // Servers started at once to be indexed (listed for the catalog).
  std::size_t index_concurrency = 8;
  // How long a search waits for the servers it started indexing.
  std::chrono::milliseconds index_wait{5000};
  // A server started only to be indexed, with no call since, is stopped after this much
  // idleness instead of its idle timeout (0: as soon as it is idle).
  std::chrono::milliseconds index_idle{30000};
  // What clients may see and use ("policy": allow and deny lists; config/access_policy.hpp).
  AccessPolicy access;
  // The cap on the text of one tool result when neither its tool nor its server sets one
  // ("maxOutputBytes"); nullopt: no cap.
  std::optional<std::size_t> max_output_bytes;
  RedactSettings redact;
  AuditSettings audit;  // "audit"
};

struct ServerConfig {
  std::string name;  // valid per is_valid_server_name() (mcp_json.hpp)
  std::variant<StdioServer, RemoteServer> transport;
  std::string source_file;  // absolute path of the file that defined it
  ServerPolicy policy;
  // The entry's `timeoutMs`: this server's call timeout (see GatewayPolicy::call_timeout).
  std::optional<std::chrono::milliseconds> timeout;
  // The entry's `idleTimeoutMs` (0: never idle-stopped), instead of GatewayPolicy::idle_timeout.
  std::optional<std::chrono::milliseconds> idle_timeout;
  // Named in the merged autoStart list (set by discover()): the default idle timeout does not
  // apply to it.
  bool auto_start = false;
  // `"disabled": true` in its entry (as Claude Code, Cursor and VS Code users write it): the
  // server is listed (health and `sluice servers` show it as `disabled`) and never started.
  bool disabled = false;
  // Defined by a project file whose exact bytes the operator has not approved
  // (config/trust_store.hpp): listed (health, `sluice servers` and search show it as
  // `untrusted`, with the approve command) and never started by any path.
  bool untrusted = false;
  Origin origin = Origin::explicit_file;
  // Variables referenced without a default that were unset, or whose value cannot be used
  // where it is referenced (a control character in a header); each was substituted with
  // the empty string (or its default). In order of first use, unique. Non-empty means the
  // server will likely not work as configured: the gateway reports these names instead of
  // starting it.
  std::vector<std::string> missing_variables;
  // Why sluice never starts this stdio server: its `env` sets a variable the environment
  // hygiene refuses (config/env_hygiene.hpp), as one display-safe, value-free clause naming
  // each such variable and its danger; empty when none. Also one of `warnings`.
  std::string env_refusal;
  // Why each missing variable is missing, one display-safe, value-free line each, naming the
  // server, its file and the variable. Also part of GatewayConfig::warnings.
  std::vector<std::string> warnings;
};

struct GatewayConfig {
  // In discovery order; names unique (the first definition wins).
  std::vector<ServerConfig> servers;
  // Merged in discovery order, unique. Names may also refer to servers defined elsewhere.
  std::vector<std::string> auto_start;
  // Absolute paths of every file found, in discovery order: accepted or left out (warned).
  std::vector<std::string> files_read;
  // The files of files_read that were left out because they could not be read, parsed or
  // validated, each with the parser's value-free problem (no file content).
  struct RejectedFile {
    std::string path;
    std::string problem;
  };
  std::vector<RejectedFile> files_rejected;
  // Every path discovery looked for a file at, found or not (the project file, the user
  // files, each --config file; with no project, `<cwd>/.mcp.json`, which would make the cwd
  // one): what a live reload watches, since a file that appears later counts.
  std::vector<std::filesystem::path> files_looked_for;
  // Absolute; from --project or the walk-up; nullopt when there is no project.
  std::optional<std::filesystem::path> project_dir;
  // Display-safe, value-free, one line each, in the order found.
  std::vector<std::string> warnings;
  // From the top-level "sluice" objects; defaults where no file sets a key.
  GatewayPolicy policy;
  // The project file read (if any) and whether its servers may run: approved in the trust
  // store, trusted for this run only (--trust-project), or untrusted.
  struct ProjectTrust {
    enum class State { approved, trusted_for_run, untrusted };
    std::string path;    // the file's real path
    std::string sha256;  // of the bytes read
    State state = State::untrusted;
  };
  std::optional<ProjectTrust> project_trust;
};

}  // namespace sluice::config

#pragma once
// The checks of `sluice doctor`, as pure functions of what they inspect.
//
// The command (doctor.cpp) gathers facts from the system: the discovery result, the trust
// store's approvals, lstat() of the state and secrets directories, a bind of the HTTP port,
// /proc (doctor_probe.cpp). Each function here turns facts into Checks and touches nothing,
// so a test plants each failure by building the facts it reads.
//
// Every Check is value-free: its detail names files, servers, variables and modes, never a
// value read from a file, the environment or the secrets store. Details and fixes are raw
// text: the report escapes them for a terminal (core::display_safe) and writes them byte-exact
// in --json.
// Threading: none; plain values owned by the caller.
#include "config/gateway_config.hpp"
#include "config/trust_store.hpp"
#include "core/error.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sluice::cli::doctor {

enum class Status { ok, warn, fail };

// "ok", "warn", "fail".
std::string_view status_name(Status status);

struct Check {
  std::string section{};  // the heading it is printed under ("Configuration files", ...)
  std::string id{};       // what kind of check ("config.file", "server.command", ...); stable
  std::string subject{};  // what it is about: a path, a server name, host:port
  Status status = Status::ok;
  std::string detail{};  // one sentence, value-free
  std::string fix{};     // the command that fixes it (every fail has one); empty: none
};

// ---- Configuration files ---------------------------------------------------------------

struct ConfigFacts {
  const config::GatewayConfig* config = nullptr;  // what discovery found
  std::filesystem::path user_config{};            // sluice's user file (may be absent)
  std::filesystem::path trust_file{};             // <state>/trust.json
  std::filesystem::path cwd{};                    // where discovery started
  // The trust store's approvals, or why they cannot be read (a loose mode, a bad file).
  core::Result<std::vector<config::TrustApproval>> approvals = std::vector<config::TrustApproval>{};
};

// Each file discovery looked at (found, not present, rejected with its own message) and the
// project file's trust (approved, not approved, changed since its approval).
std::vector<Check> check_config_files(const ConfigFacts& facts);

// ---- Servers ---------------------------------------------------------------------------

struct ServerFacts {
  const config::ServerConfig* server = nullptr;
  // stdio: the executable the command resolves to as spawn resolves it; nullopt: none.
  std::optional<std::string> program{};
  bool cwd_exists = true;  // stdio with a cwd: it is a directory
  bool url_usable = true;  // remote: transport::is_usable_http_url
  // Remote with an "oauth" object: whether the token store holds tokens for its current
  // definition; nullopt when sluice cannot tell (no "oauth" object, no store).
  std::optional<bool> has_token{};
};

// Each server: its command on PATH and its cwd (stdio), its url (remote), its missing
// variables by name, the environment hygiene's refusal, an OAuth login.
std::vector<Check> check_servers(const std::vector<ServerFacts>& servers);

// ---- Private directories ---------------------------------------------------------------

// lstat() of one path.
struct PathFacts {
  std::filesystem::path path{};
  bool exists = false;
  bool is_dir = false;
  bool is_regular = false;
  bool is_symlink = false;
  uid_t uid = 0;
  mode_t mode = 0;  // permission bits
};

struct DirectoryFacts {
  std::string section{};           // "State directory", "Secrets"
  std::string id{};                // "state", "secrets": ids are "<id>.dir" and "<id>.file"
  std::string purpose{};           // "the state directory", "the secrets directory"
  PathFacts dir{};                 // path empty: there is no home to put it in
  bool creatable = false;          // missing: its nearest existing ancestor is a writable directory
  std::vector<PathFacts> files{};  // the files that must be private (0600, yours)
  uid_t me = 0;
};

// The directory exists (or can be created), is yours, a real directory, 0700 (never writable
// by group or others); each file in `files` is a regular file of yours, 0600.
std::vector<Check> check_private_directory(const DirectoryFacts& facts);

// ---- HTTP port -------------------------------------------------------------------------

struct PortFacts {
  std::string host = "127.0.0.1";
  std::uint16_t port = 3344;
  bool free = false;         // a listener could bind it
  int bind_error = 0;        // errno of the failed bind
  pid_t holder = -1;         // the process listening on it, when /proc tells (-1: unknown)
  std::string holder_exe{};  // its executable, when readable
  bool holder_is_sluice = false;
  pid_t lock_holder = -1;  // the process holding <state>/http.lock (-1: none)
};

std::vector<Check> check_http_port(const PortFacts& facts);

// ---- The sluice binary -----------------------------------------------------------------

struct RunningSluice {
  pid_t pid = -1;
  std::string exe{};      // its executable's path (without " (deleted)")
  bool deleted = false;   // the file it runs was removed
  bool replaced = false;  // its path now names another file
  pid_t parent = -1;
  std::string parent_name{};  // the parent's comm, when readable
};

struct BinaryFacts {
  std::string self{};                    // this binary's path
  std::optional<std::string> on_path{};  // what `sluice` on PATH resolves to
  bool on_path_is_self = false;          // the same file as this binary
  std::vector<RunningSluice> running{};  // this user's sluice processes but this one
};

// Whether the `sluice` on PATH is this binary, and each running sluice whose binary was
// removed or replaced since it started (it should be restarted).
std::vector<Check> check_binary(const BinaryFacts& facts);

// ---- Summary ---------------------------------------------------------------------------

struct Tally {
  std::size_t ok = 0, warn = 0, fail = 0;
};
Tally tally(const std::vector<Check>& checks);

}  // namespace sluice::cli::doctor

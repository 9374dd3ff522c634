#pragma once
// What `sluice doctor` reads from the system to feed its checks (doctor_checks.hpp): the
// program a server's command resolves to, lstat() of the private directories and their files,
// a trial bind of the HTTP port and who holds it (/proc/net/tcp, /proc/*/fd, /proc/locks), and
// this user's running sluice processes (/proc/*/exe).
//
// Every probe only reads: nothing is created, changed, signalled or started (the port's trial
// socket is closed before the function returns). A /proc entry that cannot be read (another
// user's process, one that just ended) is left out, never an error.
// Threading: the calling thread, synchronously.
#include "cli/doctor_checks.hpp"
#include "config/gateway_config.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace sluice::cli::doctor {

// The executable a stdio command resolves to as Child::spawn resolves it: a command with a '/'
// as it is, a bare name in the entry's own PATH when its env sets one, else in `path` (sluice's
// PATH; empty: /usr/local/bin:/usr/bin:/bin). nullopt when there is no executable file.
std::optional<std::string> find_program(const config::StdioServer& stdio, std::string_view path);

// The facts of one configured server; `state_dir` holds the OAuth token store.
ServerFacts server_facts(const config::ServerConfig& server, std::string_view path,
                         const std::filesystem::path& state_dir);

PathFacts path_facts(const std::filesystem::path& path);

// The state directory and every regular file (or symbolic link) directly in it.
DirectoryFacts state_directory_facts(const std::filesystem::path& dir);
// The secrets directory and its secrets.json.
DirectoryFacts secrets_directory_facts(const std::filesystem::path& dir);

// A trial bind of host:port (SO_REUSEADDR, as the HTTP service binds), and when it fails the
// listener's process and the holder of <state_dir>/http.lock.
PortFacts probe_port(const std::string& host, std::uint16_t port,
                     const std::filesystem::path& state_dir);

// This binary, the `sluice` on `path`, and this user's other sluice processes.
BinaryFacts binary_facts(std::string_view path);

}  // namespace sluice::cli::doctor

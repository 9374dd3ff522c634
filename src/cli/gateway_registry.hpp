#pragma once
// The registry of running gateways: every `sluice serve` (stdio or HTTP) writes an entry in
// the state directory's `run/` folder, `<pid>.json`, beside its status socket `<pid>.sock`
// (status_socket.hpp), so that `sluice status` can find them all (docs/state.md, "The run
// folder").
//
// The folder is 0700 and the socket 0600, both this user's own; an entry names the process by
// its pid and its start time (field 22 of /proc/<pid>/stat), so a pid reused by another process
// is told apart. A stale entry (its process gone, or the pid reused) is ignored and removed by
// the listing. An entry holds no secret: a flag says whether the HTTP service needs a bearer
// token, never the token.
//
// Threading: plain functions of the calling thread; a writer writes before its loop serves
// and removes after it ended, so no file operation runs on the event loop (invariant P8).
#include "core/error.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sluice::cli {

// One running gateway, as its entry file records it.
struct RegistryEntry {
  pid_t pid = 0;
  std::string kind;               // "stdio" or "http"
  std::uint64_t start_ticks = 0;  // its process's start time (clock ticks since boot)
  std::int64_t started_unix_ms = 0;
  std::string version;          // sluice's version
  std::string host;             // http: the address it listens on
  std::uint16_t port = 0;       // http: the bound port (0 for stdio)
  bool token_required = false;  // http: /health details and /mcp need a bearer token
};

// `<state_dir>/run`.
std::filesystem::path run_dir_of(const std::filesystem::path& state_dir);
// The entry's file and its status socket in `run_dir`.
std::filesystem::path entry_file(const std::filesystem::path& run_dir, pid_t pid);
std::filesystem::path socket_file(const std::filesystem::path& run_dir, pid_t pid);

// The start time of process `pid` (field 22 of /proc/<pid>/stat); nullopt when it is gone.
std::optional<std::uint64_t> process_start_ticks(pid_t pid);

// Creates `run_dir` (and missing parents) 0700 when missing, and checks that it is a
// directory of this user's that nobody else can use (no symbolic link, no access for group or
// others). The error names the path and the fix.
core::Result<void> prepare_run_dir(const std::filesystem::path& run_dir);

// The entry as JSON text, and back (nullopt when the text is not an entry).
std::string entry_json(const RegistryEntry& entry);
std::optional<RegistryEntry> parse_entry(std::string_view text);

// Writes `entry` to its file in `run_dir` (0600, through a temporary file renamed over it, so
// a reader never sees half of one).
core::Result<void> write_entry(const std::filesystem::path& run_dir, const RegistryEntry& entry);
// Removes the entry of `pid` and its socket (nothing when there is none).
void remove_entry(const std::filesystem::path& run_dir, pid_t pid);

// What the run folder holds: the live entries by pid, and how many stale ones were removed.
struct RegistryListing {
  std::vector<RegistryEntry> live;
  std::size_t stale_removed = 0;
  std::string problem;  // the folder cannot be used (value-free: its path and the fix)
};
// Reads every `<pid>.json` of `run_dir`; an entry whose process is gone or whose start time
// differs (the pid was reused) is removed with its socket, as is a socket left without an
// entry by a process that is gone. A missing folder lists nothing.
RegistryListing list_entries(const std::filesystem::path& run_dir);

}  // namespace sluice::cli

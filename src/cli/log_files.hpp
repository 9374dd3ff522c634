#pragma once
// The logs folder of the state directory, `<state>/logs` (0700), and what is known of the
// files in it: one file per run of a stdio gateway, `stdio-<UTC start>-<pid>.log` (for
// example `stdio-20261201T235546.123Z-4242.log`), and the HTTP service's `http.log`; each
// with its rotated parts `FILE.1` (the newest) to `FILE.<kLogRotatedKept>` (core::log rotates
// them by size). Every line in them is one core::log line:
// `<UTC time> sluice[<pid>] <level>: <message>`, and a line about one downstream server has a
// message that starts with `server <name>:` or `server <name> ` (`server fx stderr: ...`), or
// names one of its tools as `<name>::<tool>`.
//
// Threading: pure functions over names and lines, and plain blocking calls on the folder,
// from the calling (main) thread. Nothing here follows a symbolic link out of the folder when
// it removes a file.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::cli {

// A log file is rotated before it would pass kLogMaxBytes, and kLogRotatedKept rotated parts
// are kept: a run's log holds at most 15 MiB.
inline constexpr std::uint64_t kLogMaxBytes = 5u * 1024u * 1024u;
inline constexpr unsigned kLogRotatedKept = 2;
// The runs of stdio gateways whose logs are kept: a new run removes the oldest beyond these
// (never one of a sluice that is still running).
inline constexpr std::size_t kStdioRunsKept = 20;
inline constexpr std::string_view kHttpLogName = "http.log";

std::filesystem::path logs_dir_of(const std::filesystem::path& state_dir);

// `stdio-<start>-<pid>.log`, the start as `YYYYMMDDTHHMMSS.mmmZ` (UTC), so that names sort by
// start time.
std::string stdio_log_name(std::chrono::system_clock::time_point start, pid_t pid);

// One log in the folder: a stdio run's, or the HTTP service's (every run of it).
struct RunLog {
  enum class Kind { stdio, http };
  Kind kind = Kind::stdio;
  std::filesystem::path file;                // the current file (it may be missing)
  std::vector<std::filesystem::path> parts;  // the files that exist, oldest first
  std::string started;                       // stdio: as in the name (YYYYMMDDTHHMMSS.mmmZ)
  pid_t pid = 0;                             // stdio: the sluice that wrote it
};

// The start and pid of a stdio run's file name (not a rotated part); nullopt for any other.
std::optional<RunLog> parse_stdio_log_name(std::string_view name);

// The stdio runs in `dir`, newest first, then the HTTP service's log when it has a file.
// Names that are not a log's are ignored.
std::vector<RunLog> list_logs(const std::filesystem::path& dir);

// `started` for people: "2026-12-01 23:55:46" (UTC).
std::string started_text(const RunLog& run);

// Whether a sluice with this pid runs now (a process of that pid named sluice).
bool sluice_running(pid_t pid);

// Removes every file of the oldest stdio runs in `dir` so that at most `keep` runs remain,
// never one whose sluice is running (those are kept on top). Returns how many runs it removed.
std::size_t prune_stdio_runs(const std::filesystem::path& dir, std::size_t keep);

// Whether `line`, a line of a log, is about the downstream server `name` (see the top).
bool about_server(std::string_view line, std::string_view name);

}  // namespace sluice::cli

#pragma once
// sluice's log: a file, stderr, or both, never stdout (stdout is the stdio MCP transport).
// Every message passes through display_safe before it is written, so nothing raw from a
// peer reaches a terminal. Messages must also be value-free (docs/architecture.md): build them from
// names, kinds and sizes, never from rejected values.
//
// Never blocks its caller (invariant P8): write() formats the line and hands it to
// spdlog's asynchronous logger, a bounded queue (overrun_oldest) drained by one writer
// thread. That thread writes to a file description of its own, non-blocking where the kernel
// allows it (a pipe, a FIFO, a terminal, a socket), and waits at most a short bound for room;
// a line that cannot be written then is dropped, and once writing resumes one line says how
// many were dropped (queue overruns included). A client that never reads sluice's stderr,
// a full disk (ENOSPC) or a FIFO nobody reads cost dropped lines, never a stalled loop.
// Memory: at most kQueueLines lines of at most kMaxLineBytes each are queued.
// At exit the writer gets a short bound to finish; a writer stuck in the kernel (a regular
// file on a hung file system) is left to the process's exit instead of being joined.
// Threading: write(), level(), dropped() are safe from any thread.
#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::core::log {

enum class Level { trace = 0, debug = 1, info = 2, warn = 3, error = 4, off = 5 };

inline constexpr std::size_t kQueueLines = 512;
inline constexpr std::size_t kMaxLineBytes = 64u * 1024u;  // longer messages are truncated
// How long the writer waits for room before it drops a line (then it stops waiting until a
// write succeeds again), and at exit for what is queued.
inline constexpr std::chrono::milliseconds kWriteWait{200};
inline constexpr std::chrono::milliseconds kExitFlushBound{500};

// Where the lines go: every line to each target, whole or not at all; a target that cannot
// take a line drops it (counted) without holding back the others.
struct Output {
  std::string file{};      // appended to (created 0600); empty: no file
  bool to_stderr = false;  // sluice's stderr as well (alone when there is no file)
  // Rotation of `file` when it is a regular file: before a line would take it past
  // `max_bytes`, FILE.(keep-1) becomes FILE.keep, ..., FILE becomes FILE.1 and a new FILE is
  // started (a longer line gets a file of its own). 0: never rotated. A rotated file is never
  // opened through a symbolic link.
  std::uint64_t max_bytes = 0;
  unsigned keep = 0;
};

// Sets the level and where lines go from now on (before the first call: stderr). Returns an
// empty string, or why the file cannot be used (no path in it); the targets are then left as
// they were. Call at start, from the main thread.
std::string configure(Level level, const Output& output);
Level level();
std::optional<Level> parse_level(std::string_view name);
void write(Level level, std::string_view message);
// Lines not written since start: queue overruns, and each line a target could not write.
std::uint64_t dropped();
// Gives queued lines at most `bound` to be written, then stops the writer; later lines are
// dropped. Runs at exit by itself.
void shutdown(std::chrono::milliseconds bound = kExitFlushBound);

template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::debug) write(Level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::info) write(Level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::warn) write(Level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (level() <= Level::error) write(Level::error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace sluice::core::log

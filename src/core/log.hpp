#pragma once
// sluice's log: stderr or a file, never stdout (stdout is the stdio MCP transport).
// Every message passes through display_safe before it is written, so nothing raw from a
// peer reaches a terminal. Messages must also be value-free (DESIGN.md): build them from
// names, kinds and sizes, never from rejected values.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>

namespace sluice::core::log {

enum class Level { trace = 0, debug = 1, info = 2, warn = 3, error = 4, off = 5 };

// Not thread-safe to call concurrently with write(); configure once at start.
void configure(Level level, const std::string& file_path);
Level level();
std::optional<Level> parse_level(std::string_view name);
void write(Level level, std::string_view message);

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

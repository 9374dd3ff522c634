#include "core/log.hpp"

#include "core/display.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <unistd.h>

namespace sluice::core::log {
namespace {

Level g_level = Level::info;
std::FILE* g_out = nullptr;  // nullptr means stderr

constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};

}  // namespace

void configure(Level level, const std::string& file_path) {
  g_level = level;
  if (!file_path.empty()) {
    if (std::FILE* f = std::fopen(file_path.c_str(), "ae")) {
      if (g_out) std::fclose(g_out);
      g_out = f;
    }
  }
}

Level level() { return g_level; }

std::optional<Level> parse_level(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Level::off); ++i) {
    if (kNames[i] == name) return static_cast<Level>(i);
  }
  if (name == "warning") return Level::warn;
  return std::nullopt;
}

void write(Level level, std::string_view message) {
  if (level < g_level) return;
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string line = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z sluice[{}] {}: {}\n",
                                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                                 tm.tm_min, tm.tm_sec, static_cast<int>(ms.count()), getpid(),
                                 kNames[static_cast<int>(level)], display_safe(message));
  std::FILE* out = g_out ? g_out : stderr;
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace sluice::core::log

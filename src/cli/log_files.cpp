#include "cli/log_files.hpp"

#include <fmt/format.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <fstream>
#include <map>
#include <system_error>

namespace sluice::cli {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kStdioPrefix = "stdio-";
constexpr std::string_view kLogSuffix = ".log";
constexpr std::size_t kStartLength = 20;  // YYYYMMDDTHHMMSS.mmmZ

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A character of a server name (config::is_valid_server_name).
bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// `name` without a rotation suffix (".N") and that N (0 for the current file).
std::pair<std::string_view, unsigned> split_rotation(std::string_view name) {
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || !all_digits(name.substr(dot + 1))) return {name, 0};
  unsigned n = 0;
  std::string_view digits = name.substr(dot + 1);
  if (std::from_chars(digits.data(), digits.data() + digits.size(), n).ec != std::errc() ||
      n == 0) {
    return {name, 0};
  }
  return {name.substr(0, dot), n};
}

// The message of a core::log line: what follows "sluice[<pid>] <level>: ".
std::optional<std::string_view> message_of(std::string_view line) {
  std::size_t tag = line.find(" sluice[");
  if (tag == std::string_view::npos) return std::nullopt;
  std::size_t close = line.find("] ", tag);
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t colon = line.find(": ", close + 2);
  if (colon == std::string_view::npos) return std::nullopt;
  return line.substr(colon + 2);
}

}  // namespace

fs::path logs_dir_of(const fs::path& state_dir) { return state_dir / "logs"; }

std::string stdio_log_name(std::chrono::system_clock::time_point start, pid_t pid) {
  std::time_t secs = std::chrono::system_clock::to_time_t(start);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count() %
      1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{}{:04}{:02}{:02}T{:02}{:02}{:02}.{:03}Z-{}{}", kStdioPrefix,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     static_cast<int>(ms), pid, kLogSuffix);
}

std::optional<RunLog> parse_stdio_log_name(std::string_view name) {
  if (!name.starts_with(kStdioPrefix) || !name.ends_with(kLogSuffix)) return std::nullopt;
  std::string_view rest = name.substr(kStdioPrefix.size());
  rest.remove_suffix(kLogSuffix.size());
  if (rest.size() < kStartLength + 2 || rest[kStartLength] != '-') return std::nullopt;
  std::string_view start = rest.substr(0, kStartLength);
  std::string_view pid_text = rest.substr(kStartLength + 1);
  if (!all_digits(start.substr(0, 8)) || start[8] != 'T' || !all_digits(start.substr(9, 6)) ||
      start[15] != '.' || !all_digits(start.substr(16, 3)) || start[19] != 'Z' ||
      !all_digits(pid_text)) {
    return std::nullopt;
  }
  RunLog run;
  if (std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), run.pid).ec !=
          std::errc() ||
      run.pid <= 0) {
    return std::nullopt;
  }
  run.started = std::string(start);
  return run;
}

std::vector<RunLog> list_logs(const fs::path& dir) {
  // Each log's base name -> its parts by rotation number (0: the current file).
  std::map<std::string, std::map<unsigned, fs::path>, std::greater<>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->symlink_status(ec).type() != fs::file_type::regular) continue;  // no link followed
    const std::string name = it->path().filename().string();
    auto [base, n] = split_rotation(name);
    if (base == kHttpLogName || parse_stdio_log_name(base))
      found[std::string(base)][n] = it->path();
  }
  std::vector<RunLog> runs;
  std::optional<RunLog> http;
  for (const auto& [base, parts] : found) {
    RunLog run;
    if (base == kHttpLogName) {
      run.kind = RunLog::Kind::http;
    } else {
      run = *parse_stdio_log_name(base);
    }
    run.file = dir / base;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) run.parts.push_back(it->second);
    if (run.kind == RunLog::Kind::http) {
      http = std::move(run);
    } else {
      runs.push_back(std::move(run));
    }
  }
  // Newest first: by start time, then by pid.
  std::stable_sort(runs.begin(), runs.end(), [](const RunLog& a, const RunLog& b) {
    return a.started != b.started ? a.started > b.started : a.pid > b.pid;
  });
  if (http) runs.push_back(std::move(*http));
  return runs;
}

std::string started_text(const RunLog& run) {
  if (run.started.size() < kStartLength) return "-";
  const std::string& s = run.started;
  return fmt::format("{}-{}-{} {}:{}:{}", s.substr(0, 4), s.substr(4, 2), s.substr(6, 2),
                     s.substr(9, 2), s.substr(11, 2), s.substr(13, 2));
}

bool sluice_running(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");  // none: the process is gone
  std::string name;
  std::getline(comm, name);
  return name == "sluice";
}

std::size_t prune_stdio_runs(const fs::path& dir, std::size_t keep) {
  std::size_t kept = 0, removed = 0;
  for (const RunLog& run : list_logs(dir)) {
    if (run.kind != RunLog::Kind::stdio) continue;
    if (kept < keep || sluice_running(run.pid)) {
      ++kept;
      continue;
    }
    std::error_code ec;
    for (const fs::path& part : run.parts) fs::remove(part, ec);  // a link itself, not its target
    ++removed;
  }
  return removed;
}

bool about_server(std::string_view line, std::string_view name) {
  std::optional<std::string_view> message = message_of(line);
  if (!message || name.empty()) return false;
  constexpr std::string_view kServer = "server ";
  if (message->starts_with(kServer) && message->substr(kServer.size()).starts_with(name)) {
    std::string_view after = message->substr(kServer.size() + name.size());
    if (after.starts_with(':') || after.starts_with(' ')) return true;
  }
  const std::string tool_prefix = std::string(name) + "::";
  for (std::size_t at = message->find(tool_prefix); at != std::string_view::npos;
       at = message->find(tool_prefix, at + 1)) {
    if (at == 0 || !name_char((*message)[at - 1])) return true;
  }
  return false;
}

}  // namespace sluice::cli

#include "cli/run_log.hpp"

#include "cli/log_files.hpp"
#include "core/log.hpp"
#include "core/private_file.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace sluice::cli {
namespace fs = std::filesystem;

namespace {

// Why `dir` (made 0700 when missing) cannot hold logs, or nullopt. One of yours with more
// access than 0700 is tightened.
std::optional<std::string> unusable_logs_dir(const fs::path& dir) {
  if (!core::make_private_directories(dir)) return "it cannot be created";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid()) return "it is not yours";
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return "its mode cannot be set to 0700";
  }
  return std::nullopt;
}

// Why an existing `file` cannot be appended to as a log, or nullopt (none yet is fine). One of
// yours open to others is tightened to 0600.
std::optional<std::string> unusable_log_file(const fs::path& file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode)) return "it is not a regular file (a symbolic link is not followed)";
  if (st.st_uid != ::geteuid()) return "it is not yours";
  if ((st.st_mode & 077) != 0 && ::chmod(file.c_str(), 0600) != 0) {
    return "its mode cannot be set to 0600";
  }
  return std::nullopt;
}

// systemd's journal holds fd 2: JOURNAL_STREAM names its device and inode ("dev:ino").
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  unsigned long long dev = 0, ino = 0;
  struct stat st {};
  return stream != nullptr && std::sscanf(stream, "%llu:%llu", &dev, &ino) == 2 &&
         ::fstat(2, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

bool stderr_wanted(const CommonOptions& options) {
  return options.log_stderr || ::isatty(2) == 1 || stderr_is_journal();
}

// The run's file in the logs folder, or why there is none (empty: no state directory).
std::pair<fs::path, std::string> run_file(const CommonOptions& options, Service service) {
  fs::path state = state_dir_of(options);
  if (state.empty()) return {};
  fs::path dir = logs_dir_of(state);
  if (std::optional<std::string> why = unusable_logs_dir(dir)) {
    return {{}, fmt::format("the logs folder {} cannot be used: {}", dir.string(), *why)};
  }
  fs::path file;
  if (service == Service::http) {
    file = dir / kHttpLogName;
  } else {
    prune_stdio_runs(dir, kStdioRunsKept - 1);
    file = dir / stdio_log_name(std::chrono::system_clock::now(), ::getpid());
  }
  if (std::optional<std::string> why = unusable_log_file(file)) {
    return {{}, fmt::format("the log file {} cannot be used: {}", file.string(), *why)};
  }
  return {file, ""};
}

}  // namespace

void add_run_log_options(CLI::App& command, CommonOptions& options) {
  command.add_flag("--log-stderr", options.log_stderr,
                   "Log to stderr as well even when it is not a terminal (by default the log "
                   "goes to this run's file in the state directory's logs folder: see "
                   "`sluice logs`)");
  command.add_option("--log-max-bytes", options.log_max_bytes)
      ->check(CLI::Range(std::uint64_t{1024}, std::uint64_t{1} << 30))
      ->group("");  // for tests of the rotation
}

fs::path open_run_log(const CommonOptions& options, Service service) {
  const core::log::Level level = core::log::level();
  if (level == core::log::Level::off) return {};
  if (!options.log_file.empty()) {
    if (options.log_stderr) {
      core::log::configure(level, {.file = options.log_file, .to_stderr = true});
    }
    return options.log_file;
  }
  auto [file, problem] = run_file(options, service);
  if (file.empty()) {
    if (!problem.empty()) print_err("sluice: " + problem + "; logging to stderr");
    return {};
  }
  core::log::Output output{
      .file = file.string(),
      .to_stderr = stderr_wanted(options),
      .max_bytes = options.log_max_bytes > 0 ? options.log_max_bytes : kLogMaxBytes,
      .keep = kLogRotatedKept};
  if (std::string why = core::log::configure(level, output); !why.empty()) {
    print_err("sluice: cannot write the log file " + file.string() + ": " + why +
              "; logging to stderr");
    return {};
  }
  return file;
}

}  // namespace sluice::cli

#include "core/log.hpp"

#include "core/display.hpp"

#include <spdlog/async_logger.h>
#include <spdlog/details/thread_pool.h>
#include <spdlog/sinks/sink.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace sluice::core::log {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::atomic<Level> g_level{Level::info};

constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error", "off"};

// One log line: UTC time, pid, level, the escaped message (at most kMaxLineBytes of it).
std::string format_line(Level level, std::string_view message) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string safe = display_safe(message);
  if (safe.size() > kMaxLineBytes) {
    std::size_t cut = kMaxLineBytes;
    while (cut > 0 && (static_cast<unsigned char>(safe[cut]) & 0xC0) == 0x80) --cut;
    safe.resize(cut);
    safe += " (truncated)";
  }
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z sluice[{}] {}: {}\n",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, static_cast<int>(ms.count()), getpid(),
                     kNames[static_cast<int>(level)], safe);
}

// A file description of sluice's own for what fd 2 refers to, so that O_NONBLOCK does not
// change the description sluice shares with whoever started it. A pipe, FIFO or terminal is
// reopened through /proc; anything else (a regular file, a socket, a pipe with no reader
// left) is duplicated as it is.
int own_stderr() {
  struct stat st {};
  if (::fstat(2, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
    int fd = ::open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd >= 0) return fd;
  }
  return ::fcntl(2, F_DUPFD_CLOEXEC, 3);
}

bool is_socket(int fd) {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

// Non-blocking: a FIFO nobody reads neither blocks the open nor, later, a write.
int open_log_file(const std::string& path, bool no_follow) {
  return ::open(path.c_str(),
                O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                    (no_follow ? O_NOFOLLOW : 0),
                0600);
}

// One place lines go, used by the writer thread (under the sink's lock): an fd of its own,
// written a line at a time, whole or dropped, waiting at most kWriteWait for room and not at
// all while its previous line was dropped. Once a write succeeds again it first reports in one
// line how many lines it lost (its own drops and the queue's overruns). A regular file with a
// rotation is rotated by size before the line that would take it past its bound.
class Target {
 public:
  Target(int fd, std::string path, const Output& rotation, std::uint64_t overruns)
      : fd_(fd), socket_(is_socket(fd)), path_(std::move(path)), reported_(overruns) {
    struct stat st {};
    if (rotation.max_bytes > 0 && !path_.empty() && ::fstat(fd_, &st) == 0 &&
        S_ISREG(st.st_mode)) {
      max_bytes_ = rotation.max_bytes;
      keep_ = rotation.keep;
      size_ = static_cast<std::uint64_t>(st.st_size);
    }
  }
  ~Target() {
    if (fd_ >= 0) ::close(fd_);
  }
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  // Writes `line`; false when it was dropped.
  bool write(std::string_view line, std::uint64_t overruns) {
    const std::uint64_t unreported = dropped_ + overruns - reported_;
    std::string out;
    if (mid_line_) out += '\n';  // a line cut short by a failed write ends here
    if (unreported > 0) {
      out += format_line(Level::warn,
                         fmt::format("{} log lines dropped (the log could not be written "
                                     "fast enough)",
                                     unreported));
    }
    const std::size_t prefix = out.size();
    out.append(line);
    if (max_bytes_ > 0 && (fd_ < 0 || (size_ > 0 && size_ + out.size() > max_bytes_))) rotate();
    std::size_t written =
        fd_ < 0 ? 0 : write_bounded(out, stalled_ ? std::chrono::milliseconds(0) : kWriteWait);
    size_ += written;
    if (written >= prefix) reported_ += unreported;
    if (written == out.size()) {
      stalled_ = false;
      mid_line_ = false;
      return true;
    }
    stalled_ = true;
    if (written > 0) mid_line_ = out[written - 1] != '\n';
    ++dropped_;
    return false;
  }

 private:
  // FILE.(keep-1) -> FILE.keep, ..., FILE -> FILE.1, then a new FILE (no FILE.N: truncated).
  void rotate() {
    if (fd_ >= 0) ::close(fd_);
    for (unsigned k = keep_; k >= 2; --k) {
      ::rename(fmt::format("{}.{}", path_, k - 1).c_str(), fmt::format("{}.{}", path_, k).c_str());
    }
    if (keep_ >= 1) {
      ::rename(path_.c_str(), (path_ + ".1").c_str());
    } else {
      ::unlink(path_.c_str());
    }
    fd_ = open_log_file(path_, true);  // -1 (a full disk): retried at the next line
    size_ = 0;
    mid_line_ = false;
  }

  // Bytes of `data` written before an error, or before `wait` passed without room.
  std::size_t write_bounded(std::string_view data, std::chrono::milliseconds wait) {
    const auto deadline = SteadyClock::now() + wait;
    std::size_t off = 0;
    while (off < data.size()) {
      const char* p = data.data() + off;
      const std::size_t len = data.size() - off;
      ssize_t n = socket_ ? ::send(fd_, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(fd_, p, len);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;  // ENOSPC, EPIPE, EIO
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
      if (left <= 0) break;
      pollfd pfd{fd_, POLLOUT, 0};
      if (::poll(&pfd, 1, static_cast<int>(left)) == 0) break;
    }
    return off;
  }

  int fd_;
  bool socket_;
  std::string path_;             // for rotation
  std::uint64_t max_bytes_ = 0;  // 0: not rotated
  unsigned keep_ = 0;
  std::uint64_t size_ = 0;  // of the file, while rotated
  bool stalled_ = false;    // the last line was dropped: do not wait for room
  bool mid_line_ = false;   // the last write stopped inside a line
  std::uint64_t dropped_ = 0;
  std::uint64_t reported_;
};

// The writer thread's sink: each line to every target.
class NonBlockingSink final : public spdlog::sinks::sink {
 public:
  NonBlockingSink() { targets_.push_back(std::make_unique<Target>(own_stderr(), "", Output{}, 0)); }

  void set_pool(spdlog::details::thread_pool* pool) { pool_ = pool; }
  void retarget(std::vector<std::unique_ptr<Target>> targets) {
    std::lock_guard lock(mu_);
    targets_ = std::move(targets);
  }
  std::uint64_t overruns() const { return pool_ ? pool_->overrun_counter() : 0; }

  void log(const spdlog::details::log_msg& msg) override {
    std::lock_guard lock(mu_);
    const std::uint64_t lost = overruns();
    for (auto& target : targets_) {
      if (!target->write(std::string_view(msg.payload.data(), msg.payload.size()), lost)) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  void flush() override {
    {
      std::lock_guard lock(flush_mu_);
      ++flushes_;
    }
    flushed_.notify_all();
  }
  void set_pattern(const std::string&) override {}
  void set_formatter(std::unique_ptr<spdlog::formatter>) override {}

  std::uint64_t flushes() {
    std::lock_guard lock(flush_mu_);
    return flushes_;
  }
  // Whether a flush after `seen` was processed before `deadline`.
  bool wait_flush(std::uint64_t seen, SteadyClock::time_point deadline) {
    std::unique_lock lock(flush_mu_);
    return flushed_.wait_until(lock, deadline, [&] { return flushes_ > seen; });
  }
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  std::mutex mu_;  // the targets, against retarget()
  std::vector<std::unique_ptr<Target>> targets_;
  std::atomic<std::uint64_t> dropped_{0};  // by every target, past ones included
  spdlog::details::thread_pool* pool_ = nullptr;

  std::mutex flush_mu_;
  std::condition_variable flushed_;
  std::uint64_t flushes_ = 0;
};

// The logger, its queue and writer thread, and its sink. Created at first use and never
// destroyed (a writer stuck in the kernel must not be joined at exit; see shutdown()).
struct Pipeline {
  std::shared_ptr<NonBlockingSink> sink;
  std::shared_ptr<spdlog::details::thread_pool> pool;
  std::shared_ptr<spdlog::async_logger> logger;
  std::atomic<bool> stopped{false};
  std::atomic<std::uint64_t> overruns_at_stop{0};
  std::atomic<std::uint64_t> late{0};  // lines written after shutdown(), or refused by spdlog
};

Pipeline& pipeline() {
  static Pipeline* const p = [] {
    auto* made = new Pipeline();
    made->sink = std::make_shared<NonBlockingSink>();
    // The writer thread blocks every signal: they belong to the event loop's thread, and a
    // write to a pipe with no reader then fails with EPIPE instead of raising SIGPIPE.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    made->pool = std::make_shared<spdlog::details::thread_pool>(kQueueLines, 1);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    made->sink->set_pool(made->pool.get());
    made->logger = std::make_shared<spdlog::async_logger>(
        "sluice", made->sink, made->pool, spdlog::async_overflow_policy::overrun_oldest);
    made->logger->set_level(spdlog::level::trace);
    made->logger->set_error_handler(
        [](const std::string&) { pipeline().late.fetch_add(1, std::memory_order_relaxed); });
    std::atexit([] { shutdown(kExitFlushBound); });
    return made;
  }();
  return *p;
}

}  // namespace

std::string configure(Level level, const Output& output) {
  g_level.store(level, std::memory_order_relaxed);
  Pipeline& p = pipeline();  // its thread and fd exist from the start, not from a first line
  std::vector<std::unique_ptr<Target>> targets;
  const std::uint64_t overruns = p.sink->overruns();
  if (!output.file.empty()) {
    int fd = open_log_file(output.file, output.max_bytes > 0);
    if (fd < 0) {
      return errno == ENXIO ? "it is a FIFO that no process has open for reading"
                            : std::strerror(errno);
    }
    targets.push_back(std::make_unique<Target>(fd, output.file, output, overruns));
  }
  if (output.to_stderr) {
    targets.push_back(std::make_unique<Target>(own_stderr(), "", Output{}, overruns));
  }
  p.sink->retarget(std::move(targets));
  return "";
}

Level level() { return g_level.load(std::memory_order_relaxed); }

std::optional<Level> parse_level(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Level::off); ++i) {
    if (kNames[i] == name) return static_cast<Level>(i);
  }
  if (name == "warning") return Level::warn;
  return std::nullopt;
}

void write(Level level, std::string_view message) {
  if (level < g_level.load(std::memory_order_relaxed) || level == Level::off) return;
  Pipeline& p = pipeline();
  if (p.stopped.load(std::memory_order_acquire)) {
    p.late.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::string line = format_line(level, message);
  p.logger->log(spdlog::level::info, spdlog::string_view_t(line.data(), line.size()));
}

std::uint64_t dropped() {
  Pipeline& p = pipeline();
  std::uint64_t overruns = p.stopped.load(std::memory_order_acquire)
                               ? p.overruns_at_stop.load(std::memory_order_relaxed)
                               : p.pool->overrun_counter();
  return p.sink->dropped() + overruns + p.late.load(std::memory_order_relaxed);
}

void shutdown(std::chrono::milliseconds bound) {
  Pipeline& p = pipeline();
  if (p.stopped.exchange(true, std::memory_order_acq_rel)) return;
  std::uint64_t seen = p.sink->flushes();
  p.logger->flush();  // queued behind every line: processed once they are written or dropped
  bool flushed = p.sink->wait_flush(seen, SteadyClock::now() + bound);
  p.overruns_at_stop.store(p.pool->overrun_counter(), std::memory_order_relaxed);
  // A writer that finished within the bound is joined; one stuck in the kernel keeps the
  // pool (never destroyed) and ends with the process.
  if (flushed) {
    p.pool.reset();
    p.sink->set_pool(nullptr);
  }
}

}  // namespace sluice::core::log

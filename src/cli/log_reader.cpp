#include "cli/log_reader.hpp"

#include "cli/log_files.hpp"
#include "core/display.hpp"
#include "core/line_splitter.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
extern "C" {  // glibc 2.36's <sys/pidfd.h> lacks C++ linkage
#include <sys/pidfd.h>
}
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <string_view>
#include <utility>

namespace sluice::cli {
namespace fs = std::filesystem;

namespace {

// While following, a change the folder's watch missed is still seen within this bound.
constexpr int kPollMs = 1000;

// Closes a descriptor on every path out.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Never through a symbolic link, never blocking (a FIFO given as --file reads as empty).
int open_log(const fs::path& file) {
  return ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
}

// Keeps the lines the request wants, holds the last N of them until the backlog is read, and
// prints each one escaped.
class Printer {
 public:
  explicit Printer(const ReadRequest& request)
      : server_(request.server), last_(request.last), holding_(request.last.has_value()) {}

  void line(const core::Line& line) {
    if (!server_.empty() && !about_server(line.text, server_)) return;
    std::string out = core::display_safe(line.text);
    if (line.truncated) out += " (truncated)";
    out += '\n';
    if (!holding_) {
      emit(out);
      return;
    }
    held_.push_back(std::move(out));
    if (held_.size() > *last_) held_.pop_front();
  }
  // The backlog is read: the lines held are printed, and every later one as it comes.
  void end_backlog() {
    for (const std::string& out : held_) emit(out);
    held_.clear();
    holding_ = false;
    std::fflush(stdout);
  }
  std::size_t printed() const { return printed_; }

 private:
  void emit(const std::string& out) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    ++printed_;
  }

  std::string server_;
  std::optional<std::size_t> last_;
  bool holding_;
  std::deque<std::string> held_;
  std::size_t printed_ = 0;
};

// Reads `fd` from where it stands to its end, every complete line to `printer`; a last line
// without its newline waits in `splitter`.
void read_to_end(int fd, core::LineSplitter& splitter, Printer& printer) {
  std::array<char, 65536> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    splitter.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)),
                  [&](const core::Line& line) { printer.line(line); });
  }
}

void finish(core::LineSplitter& splitter, Printer& printer) {
  splitter.finish([&](const core::Line& line) { printer.line(line); });
}

// What was appended to `file` since the last look; after a rotation (another file at the
// path) the old one is read to its end, then the new one from its start; after a truncation
// the file is read again from its start.
void catch_up(const fs::path& file, Fd& fd, core::LineSplitter& splitter, Printer& printer) {
  if (fd.get() >= 0) read_to_end(fd.get(), splitter, printer);
  struct stat now {};
  const bool exists = ::lstat(file.c_str(), &now) == 0 && S_ISREG(now.st_mode);
  struct stat have {};
  if (fd.get() >= 0 && ::fstat(fd.get(), &have) == 0 && exists &&
      (now.st_ino != have.st_ino || now.st_dev != have.st_dev)) {
    finish(splitter, printer);
    fd.reset();
  } else if (fd.get() >= 0 && ::lseek(fd.get(), 0, SEEK_CUR) > have.st_size) {
    ::lseek(fd.get(), 0, SEEK_SET);
    read_to_end(fd.get(), splitter, printer);
  }
  if (fd.get() < 0 && exists) {
    fd.reset(open_log(file));
    if (fd.get() >= 0) read_to_end(fd.get(), splitter, printer);
  }
}

// SIGINT, SIGTERM and SIGHUP blocked and readable from a signalfd, for the life of the object;
// a signal that arrived is consumed before the mask is restored.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, sig);
    pthread_sigmask(SIG_BLOCK, &set_, &previous_);
    fd_.reset(::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK));
  }
  ~StopSignals() {
    drain();
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int fd() const { return fd_.get(); }

 private:
  void drain() {
    signalfd_siginfo info{};
    while (fd_.get() >= 0 && ::read(fd_.get(), &info, sizeof info) == sizeof info) {
    }
  }

  sigset_t set_{}, previous_{};
  Fd fd_;
};

// Follows `request.file` from where `fd` stands until a stop signal or the writer's end.
void follow(const ReadRequest& request, Fd& fd, core::LineSplitter& splitter, Printer& printer) {
  StopSignals stop;
  Fd watch(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (watch.get() >= 0) {
    ::inotify_add_watch(watch.get(), request.file.parent_path().c_str(),
                        IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE);
  }
  Fd writer(request.writer > 0 ? ::pidfd_open(request.writer, 0) : -1);
  bool ended = request.writer > 0 && writer.get() < 0;  // it had ended already
  while (!ended) {
    std::array<pollfd, 3> fds{pollfd{stop.fd(), POLLIN, 0}, pollfd{watch.get(), POLLIN, 0},
                              pollfd{writer.get(), POLLIN, 0}};
    if (::poll(fds.data(), fds.size(), kPollMs) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    if (fds[1].revents != 0) {
      std::array<char, 4096> events;
      while (::read(watch.get(), events.data(), events.size()) > 0) {
      }
    }
    ended = fds[2].revents != 0;
    catch_up(request.file, fd, splitter, printer);
    std::fflush(stdout);
  }
  if (ended) catch_up(request.file, fd, splitter, printer);
}

}  // namespace

std::size_t print_log(const ReadRequest& request) {
  Printer printer(request);
  for (const fs::path& part : request.parts) {
    Fd fd(open_log(part));
    if (fd.get() < 0) continue;  // removed meanwhile
    core::LineSplitter splitter(kMaxReadLineBytes, kMaxReadLineBytes);
    read_to_end(fd.get(), splitter, printer);
    finish(splitter, printer);
  }
  Fd fd(open_log(request.file));
  core::LineSplitter splitter(kMaxReadLineBytes, kMaxReadLineBytes);
  if (fd.get() >= 0) read_to_end(fd.get(), splitter, printer);
  if (request.follow) {
    printer.end_backlog();
    follow(request, fd, splitter, printer);
  }
  finish(splitter, printer);
  printer.end_backlog();
  return printer.printed();
}

}  // namespace sluice::cli

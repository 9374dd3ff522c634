#pragma once
// Child processes for the bench drivers: spawned with pipes or /dev/null, optionally leading
// their own process group, stopped with a bounded wait (SIGKILL after it), line I/O with a
// guard on every read, the /proc readings the drivers report (children, VmRSS), and the
// median over rounds that the drivers print.
// Every wait is bounded; nothing is left running.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace sluice::bench {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline constexpr auto kIoGuard = 30s;    // any single read, write or connect
inline constexpr auto kStopGuard = 10s;  // a process exiting after SIGTERM / stdin EOF

struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------
// Child processes.

// Waits up to `guard` for `pid` to exit; its wait status, or nullopt if it is still running.
inline std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds guard) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  auto deadline = Clock::now() + guard;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (pidfd >= 0) close(pidfd);
      return status;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (r < 0 || left <= 0ms) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(10)));
    }
  }
  if (pidfd >= 0) close(pidfd);
  return std::nullopt;
}

inline std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// One spawned process; owns its pid (and our ends of its pipes). The destructor stops it.
class Process {
 public:
  // With `pipes`, its stdin/stdout are pipes to us; otherwise stdin is /dev/null and stdout
  // is ours. With `own_group` it leads a new process group (its children can be killed too).
  Process(const std::vector<std::string>& argv, bool pipes, bool own_group)
      : own_group_(own_group) {
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (pipes) {
      if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
      posix_spawn_file_actions_adddup2(&fa, in[0], 0);
      posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    } else {
      posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    }
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (own_group) {
      posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
      posix_spawnattr_setpgroup(&attr, 0);
    }
    std::vector<char*> args;
    for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
    args.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &fa, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (pipes) {
      close(in[0]);
      close(out[1]);
      in_ = in[1];
      out_ = out[0];
    }
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("cannot spawn " + argv[0] + ": " + std::strerror(rc));
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    stop(true);
    kill_group();
  }

  pid_t pid() const { return pid_; }
  bool running() {
    if (status_ || pid_ < 0) return false;
    status_ = wait_exit(pid_, 0ms);
    return !status_;
  }
  std::optional<int> exit_status() const { return status_; }
  // SIGKILLs whatever is left in its process group (when it leads one): the last sweep.
  void kill_group() {
    if (pid_ >= 0 && own_group_) kill(-pid_, SIGKILL);
  }

  // Closes its stdin (if a pipe) and, with `sigterm`, sends SIGTERM; waits up to kStopGuard,
  // then SIGKILLs it (its whole group when it leads one). Returns its wait status.
  int stop(bool sigterm) {
    close_fd(in_);
    if (pid_ >= 0 && !status_) {
      if (sigterm) kill(pid_, SIGTERM);
      status_ = wait_exit(pid_, kStopGuard);
      if (!status_) {
        std::fprintf(stderr, "http_load: pid %d still running %lld s after stop, killing it\n",
                     static_cast<int>(pid_), static_cast<long long>(kStopGuard.count()));
        kill(own_group_ ? -pid_ : pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
        status_ = status;
        killed_ = true;
      }
    }
    close_fd(out_);
    return status_.value_or(0);
  }
  bool was_killed() const { return killed_; }

  void write_line(std::string_view line) {
    std::string data(line);
    data += '\n';
    std::size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(in_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw ProtocolError("direct: write to the fixture failed");
      done += static_cast<std::size_t>(n);
    }
  }

  std::string read_line() {
    for (;;) {
      auto nl = pending_.find('\n', scanned_);
      if (nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        scanned_ = 0;
        return line;
      }
      scanned_ = pending_.size();
      pollfd pfd{out_, POLLIN, 0};
      int ready = poll(&pfd, 1, static_cast<int>(std::chrono::milliseconds(kIoGuard).count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) throw ProtocolError("direct: no answer from the fixture within 30 s");
      char chunk[65536];
      ssize_t n = read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw ProtocolError("direct: the fixture closed its stdout");
      pending_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  pid_t pid_ = -1;
  bool own_group_ = false;
  bool killed_ = false;
  int in_ = -1, out_ = -1;
  std::string pending_;
  std::size_t scanned_ = 0;
  std::optional<int> status_;
};

// A program found on PATH (the drivers spawn by path), or empty.
inline std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t at = 0; at <= dirs.size();) {
    std::size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(at, end - at) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return {};
}

inline constexpr auto kPortGuard = 20s;  // sluice writing its port file

// The port `sluice serve --transport http --port-file FILE` wrote, once it has.
inline int wait_for_port(Process& sluice, const std::string& port_file) {
  auto deadline = Clock::now() + kPortGuard;
  while (Clock::now() < deadline) {
    std::ifstream in(port_file);
    std::string text;
    if (in && std::getline(in, text) && !text.empty()) {
      int port = std::atoi(text.c_str());
      if (port > 0 && port < 65536) return port;
    }
    if (!sluice.running()) {
      throw ProtocolError("sluice exited before listening (" +
                          describe_status(sluice.exit_status().value_or(0)) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw ProtocolError("no port file within 20 s");
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks), which tells a pid from a reused
// one; empty if the process is gone or a zombie (exited, not yet reaped).
inline std::string start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') return {};
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

struct ChildId {
  pid_t pid;
  std::string started;
};

// The direct children of `pid` (sluice's downstream servers), from /proc/<pid>/task/*/children.
inline std::vector<ChildId> children_of(pid_t pid) {
  std::vector<ChildId> out;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    long child = 0;
    while (in >> child)
      out.push_back({static_cast<pid_t>(child), start_time(static_cast<pid_t>(child))});
  }
  return out;
}

// Kills (SIGKILL) those of `children` still alive; how many were.
inline int kill_survivors(const std::vector<ChildId>& children) {
  int survivors = 0;
  for (const auto& c : children) {
    if (!c.started.empty() && kill(c.pid, 0) == 0 && start_time(c.pid) == c.started) {
      ++survivors;
      kill(c.pid, SIGKILL);
    }
  }
  return survivors;
}

// One field of /proc/PID/status in KiB: VmRSS (the whole resident set), RssAnon (the
// process's own heap and stacks) or RssFile (pages of the binary and its libraries).
inline long status_kib(pid_t pid, std::string_view field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  throw std::runtime_error("cannot read " + std::string(field) + " of pid " + std::to_string(pid));
}
inline long rss_kib(pid_t pid) { return status_kib(pid, "VmRSS"); }

// The nanoseconds every thread of `pid` has run on a CPU so far (the first field of each
// /proc/PID/task/TID/schedstat: what `perf stat -e task-clock` counts, without perf);
// threads that already ended are not counted.
inline double cpu_ns(pid_t pid) {
  double total = 0;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    double ns = 0;
    if (in >> ns) total += ns;
  }
  return total;
}

// The median over `rounds` of what `of` takes from each (an odd count is exact; an even one
// takes the upper).
template <typename Round, typename Of>
double median_by(const std::vector<Round>& rounds, Of of) {
  std::vector<double> v;
  v.reserve(rounds.size());
  for (const Round& r : rounds) v.push_back(of(r));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace sluice::bench

#pragma once
// A child process sluice owns (invariants P1-P3). Every spawn in sluice goes through
// Child::spawn: new session and process group (setsid), stdin/stdout/stderr pipes sluice
// owns, every other fd closed, an explicit environment, and a pidfd through which every
// wait and signal goes (no pid-reuse hazard). Group signals are sent only while the leader
// is unreaped, so the group id is still reserved.
//
// Ownership: the Child owns the pidfd and whichever pipe ends were not taken by a
// transport. Its destructor performs the synchronous part of teardown if the orderly path
// was skipped: SIGKILL to the group, reap, close every fd. Threading: one owner thread.
#include "core/error.hpp"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::process {

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset();
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct SpawnSpec {
  std::string program;  // absolute, relative with '/', or a bare name looked up in PATH
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // configured variables
  std::string cwd;                                       // empty: inherit
  // Variables taken from sluice's own environment when set (never the whole environment):
  // only what describes the user, the locale and where programs are, none of them a secret
  // or a way to load code (invariant P1). Anything else a server needs, its entry names.
  std::vector<std::string> inherit = {"PATH", "HOME",   "USER",   "LOGNAME", "SHELL",
                                      "LANG", "LC_ALL", "LC_CTYPE", "TZ",    "TMPDIR"};
};

struct ExitStatus {
  bool signaled = false;
  int code = 0;  // exit code, or the signal number when signaled
};

class Child {
 public:
  static core::Result<std::unique_ptr<Child>> spawn(const SpawnSpec& spec);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  UniqueFd take_stdin() { return std::move(stdin_); }
  UniqueFd take_stdout() { return std::move(stdout_); }
  UniqueFd take_stderr() { return std::move(stderr_); }
  void close_stdin() { stdin_.reset(); }

  bool reaped() const { return exit_.has_value(); }
  const std::optional<ExitStatus>& exit_status() const { return exit_; }

  // Reaps the leader if it has exited (non-blocking). True once reaped.
  bool try_reap();
  // Whether the leader has exited (reaped, or a zombie not yet reaped); never reaps.
  bool has_exited() const;
  // Sends `sig` to the whole group, only while the leader is unreaped; after the reap,
  // to nobody (the group id may have been reused). Returns whether it was sent.
  bool signal_group(int sig);
  // The synchronous end of teardown: SIGKILL the group, reap the leader (blocking; a
  // SIGKILLed process cannot delay it beyond the kernel's own teardown), close every fd.
  void kill_now();

 private:
  Child() = default;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd stdin_, stdout_, stderr_;
  std::optional<ExitStatus> exit_;
};

// The one wrapper through which sluice signals a process (the restart paths kill_by_name,
// ds_kill_to_cancel): refuses pid <= 1, sluice's own pid and its own process group.
bool send_signal_to_group(pid_t pgid, int sig);
bool send_signal_to_process(pid_t pid, int sig);

// Marks sluice as a child subreaper, so orphaned descendants reparent to it.
bool become_subreaper();

// Reaps and kills descendants that reparented to sluice (orphans of torn-down children),
// except the listed live children sluice still owns. Returns how many were found.
std::size_t kill_adopted_orphans(const std::vector<pid_t>& owned);
// The variable every spawned child gets, holding its owner's token; descendants inherit it
// unless they scrub their environment.
inline constexpr std::string_view kOwnerTokenVariable = "SLUICE_OWNER";
// Kills and reaps adopted orphans whose environment carries `token` (descendants of a
// torn-down child that left its process group). Returns how many.
std::size_t kill_adopted_orphans_with_token(std::string_view token);
// Reaps adopted orphans that have exited (non-blocking), leaving owned children alone.
std::size_t reap_adopted_orphans(const std::vector<pid_t>& owned);

}  // namespace sluice::process

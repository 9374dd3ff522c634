#pragma once
// A child process under supervision on the event loop: the process::Child plus everything
// that watches and ends it. It owns the spawn (with the owner token in the environment), the
// exit event (a pidfd watch on the loop, never polling), the stderr drain (invariants P5, P8),
// the orderly teardown (invariant P4), the classification of how the child ended, and the
// identity of the executable the kernel ran (the stale-code check).
//
// Ownership: one owner (a downstream's transport, a probe) holds it by unique_ptr. It owns
// the Child (pidfd, process group, the pipe ends not taken), the pidfd watch and the stderr
// reader. teardown() is the orderly path; the destructor performs the synchronous remainder
// if it was skipped (closes the watch and the drain, then the Child's SIGKILL of the group,
// reap and close), so no exception, cancellation or early return leaks the child.
// Threading: the io_context thread it was spawned on only.
// Guarantees: the exit callback runs at most once, only while the object lives, and never
// after teardown() began; after teardown() the leader is reaped and every fd is closed.
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/file_identity.hpp"
#include "core/limits.hpp"
#include "process/child.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace sluice::process {

namespace asio = boost::asio;

// How a child's run ended, as sluice reads it.
enum class ExitKind {
  running,            // not reaped yet
  exited,             // it exited with a code
  crashed,            // a crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS)
  stopped_by_sluice,  // a signal, after sluice's teardown had signalled it
  foreign_kill,       // any other signal: a kill sluice did not send
};
// The kind for a reaped leader's status; `signalled_by_sluice`: teardown signalled it first.
ExitKind classify(const std::optional<ExitStatus>& status, bool signalled_by_sluice);

class SupervisedChild {
 public:
  // Spawns `spec` with `owner_token` in its environment (kOwnerTokenVariable), starts the
  // exit watch and the stderr drain. `name` labels its log lines; `limits` must outlive it.
  static core::Result<std::unique_ptr<SupervisedChild>> spawn(asio::io_context& io, SpawnSpec spec,
                                                              std::string name,
                                                              std::string owner_token,
                                                              const core::Limits& limits);
  ~SupervisedChild();
  SupervisedChild(const SupervisedChild&) = delete;
  SupervisedChild& operator=(const SupervisedChild&) = delete;

  pid_t pid() const { return child_->pid(); }
  // The pipes to the child's stdin and from its stdout, for a transport (once each).
  UniqueFd take_stdin() { return child_->take_stdin(); }
  UniqueFd take_stdout() { return child_->take_stdout(); }

  // Runs `callback` once when the leader exits by itself (not after teardown() began).
  void on_exit(std::function<void()> callback);
  // Whether the leader's exit was seen on the loop.
  bool exit_seen() const;
  // Waits until the exit is seen or `timeout` passes; whether it was seen.
  asio::awaitable<bool> wait_exit_for(core::Clock::duration timeout);

  // Invariant P4. Orderly (`close_stdin` set): close the child's stdin (through
  // `close_stdin`, since a transport owns that pipe), wait stdin_close_grace, SIGTERM the
  // group, wait sigterm_grace; then in any case SIGKILL what is left of the group, wait
  // sigkill_wait for the exit, reap, close the pipes, the drain and the watch, and kill the
  // adopted descendants that carry the owner token. Runs once; later calls return at once.
  asio::awaitable<void> teardown(std::function<void()> close_stdin);

  // After teardown: how the leader ended.
  const std::optional<ExitStatus>& exit_status() const { return exit_; }
  ExitKind exit_kind() const { return classify(exit_, signalled_by_sluice_); }

  // The executable the kernel ran, read at spawn (unset when it could not be read).
  const std::optional<core::FileIdentity>& executable() const { return executable_; }
  // Whether that executable was replaced, modified or removed on disk since the spawn.
  bool executable_changed() const;

 private:
  struct Watch;
  SupervisedChild(asio::io_context& io, std::string name, std::string owner_token,
                  const core::Limits& limits);
  static asio::awaitable<void> watch_exit(std::shared_ptr<Watch> watch);
  void close_watchers();

  asio::io_context& io_;
  std::string name_;
  std::string owner_token_;
  const core::Limits& limits_;
  std::unique_ptr<Child> child_;
  std::shared_ptr<Watch> watch_;
  std::shared_ptr<asio::posix::stream_descriptor> stderr_;
  std::optional<core::FileIdentity> executable_;
  std::optional<ExitStatus> exit_;
  bool signalled_by_sluice_ = false;
  bool tearing_down_ = false;
};

}  // namespace sluice::process

#include "process/supervised_child.hpp"

#include "core/log.hpp"
#include "core/spawn.hpp"
#include "process/stderr_drain.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>
#include <csignal>

namespace sluice::process {

ExitKind classify(const std::optional<ExitStatus>& status, bool signalled_by_sluice) {
  if (!status) return ExitKind::running;
  if (!status->signaled) return ExitKind::exited;
  if (signalled_by_sluice) return ExitKind::stopped_by_sluice;
  switch (status->code) {
    case SIGSEGV:
    case SIGABRT:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGTRAP:
    case SIGSYS:
      return ExitKind::crashed;
    default:
      return ExitKind::foreign_kill;
  }
}

// The pidfd watch, shared with its coroutine so that the coroutine never touches a
// SupervisedChild that is gone: `closed` is set before the descriptor is closed.
struct SupervisedChild::Watch {
  Watch(asio::io_context& io, int fd) : pidfd(io, fd), exited(io) {}
  asio::posix::stream_descriptor pidfd;
  core::Event exited;
  std::function<void()> on_exit;
  bool closed = false;
};

SupervisedChild::SupervisedChild(asio::io_context& io, std::string name, std::string owner_token,
                                 const core::Limits& limits)
    : io_(io), name_(std::move(name)), owner_token_(std::move(owner_token)), limits_(limits) {}

core::Result<std::unique_ptr<SupervisedChild>> SupervisedChild::spawn(asio::io_context& io,
                                                                      SpawnSpec spec,
                                                                      std::string name,
                                                                      std::string owner_token,
                                                                      const core::Limits& limits) {
  spec.env.emplace_back(std::string(kOwnerTokenVariable), owner_token);
  auto child = Child::spawn(spec);
  if (!child) return child.error();
  std::unique_ptr<SupervisedChild> self(
      new SupervisedChild(io, std::move(name), std::move(owner_token), limits));
  self->child_ = std::move(*child);
  // The binary the kernel actually ran (the stale-code check compares against it later).
  self->executable_ = core::executable_of(self->child_->pid());
  self->watch_ = std::make_shared<Watch>(io, ::dup(self->child_->pidfd()));
  core::spawn(io, watch_exit(self->watch_), "a server's exit watch");
  self->stderr_ =
      std::make_shared<asio::posix::stream_descriptor>(io, self->child_->take_stderr().release());
  core::spawn(io, drain_stderr(self->stderr_, self->name_, limits), "a server's stderr drain");
  return self;
}

SupervisedChild::~SupervisedChild() {
  close_watchers();
  // child_'s destructor SIGKILLs the group and reaps if teardown did not run.
}

void SupervisedChild::close_watchers() {
  boost::system::error_code ec;
  if (stderr_) stderr_->close(ec);
  if (watch_) {
    watch_->closed = true;
    watch_->on_exit = nullptr;
    watch_->pidfd.close(ec);
  }
}

asio::awaitable<void> SupervisedChild::watch_exit(std::shared_ptr<Watch> watch) {
  boost::system::error_code ec;
  co_await watch->pidfd.async_wait(asio::posix::stream_descriptor::wait_read,
                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec || watch->closed) co_return;  // teardown or the destructor closed the watch
  watch->exited.set();
  // The callback may end the owner; nothing of it is touched after the call.
  if (auto callback = std::move(watch->on_exit)) callback();
}

void SupervisedChild::on_exit(std::function<void()> callback) {
  watch_->on_exit = std::move(callback);
}

bool SupervisedChild::exit_seen() const { return watch_->exited.is_set(); }

asio::awaitable<bool> SupervisedChild::wait_exit_for(core::Clock::duration timeout) {
  auto watch = watch_;  // the Event outlives this object if need be
  co_return co_await watch->exited.wait_for(timeout);
}

asio::awaitable<void> SupervisedChild::teardown(std::function<void()> close_stdin) {
  if (tearing_down_) co_return;
  tearing_down_ = true;
  watch_->on_exit = nullptr;  // an exit from here on is the teardown's own doing
  auto watch = watch_;
  if (close_stdin && !watch->exited.is_set()) {
    close_stdin();
    if (!co_await watch->exited.wait_for(limits_.stdin_close_grace)) {
      if (!child_->has_exited()) signalled_by_sluice_ = true;
      core::log::debug("server {}: still running after its stdin closed: SIGTERM to its group",
                       name_);
      child_->signal_group(SIGTERM);
      co_await watch->exited.wait_for(limits_.sigterm_grace);
    }
  }
  // Whatever is left of the group (the leader, or grandchildren holding the pipes) goes;
  // the leader is still unreaped here, so the group id is reserved. A signal sent after the
  // leader died does not change how it died (a foreign kill stays one).
  if (!child_->has_exited()) {
    signalled_by_sluice_ = true;
    core::log::debug("server {}: SIGKILL to its group", name_);
  }
  child_->signal_group(SIGKILL);
  co_await watch->exited.wait_for(limits_.sigkill_wait);
  child_->kill_now();  // reaps (and closes the fds the child object still holds)
  close_watchers();
  exit_ = child_->exit_status();
  core::log::info("server {}: stopped ({} {})", name_,
                  exit_ && exit_->signaled ? "signal" : "exit code", exit_ ? exit_->code : -1);
  // Descendants that left the group (setsid) and were adopted by sluice carry this child's
  // token in their environment: they go with it.
  kill_adopted_orphans_with_token(owner_token_);
}

bool SupervisedChild::executable_changed() const {
  return executable_ && core::changed_since(*executable_);
}

}  // namespace sluice::process

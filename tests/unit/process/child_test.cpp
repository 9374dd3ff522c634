// process::Child and the signal wrapper against real processes (invariants P1-P4).
#include "process/child.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace sluice::process {
namespace {

using namespace std::chrono_literals;

// Everything the child wrote to stdout until EOF (bounded by a guard).
std::string read_all(int fd) {
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A group is gone when no process is left in it (kill with signal 0 finds none).
bool group_gone(pid_t pgid) { return ::kill(-pgid, 0) != 0 && errno == ESRCH; }

std::unique_ptr<Child> spawn_sh(const std::string& script,
                                std::vector<std::pair<std::string, std::string>> env = {}) {
  SpawnSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", script};
  spec.env = std::move(env);
  auto child = Child::spawn(spec);
  EXPECT_TRUE(child.has_value());
  return child ? std::move(*child) : nullptr;
}

TEST(Child, LeadsItsOwnSessionAndProcessGroup) {
  auto c = spawn_sh("exec sleep 100");
  ASSERT_TRUE(c);
  EXPECT_EQ(::getpgid(c->pid()), c->pid());
  EXPECT_EQ(::getsid(c->pid()), c->pid());
  EXPECT_NE(::getsid(c->pid()), ::getsid(0));
}

TEST(Child, DestroyingItKillsItsWholeGroupAndReaps) {
  auto c = spawn_sh("sleep 100 & sleep 100 & wait");
  ASSERT_TRUE(c);
  pid_t pgid = c->pid();
  EXPECT_FALSE(group_gone(pgid));
  c.reset();  // the synchronous teardown: SIGKILL to the group, reap, close
  // The leader was reaped by the destructor; its group members were SIGKILLed with it and
  // are reaped by their reaper (init or a subreaper) right after.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!group_gone(pgid) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(group_gone(pgid));
}

TEST(Child, SeesOnlyItsThreeStandardFds) {
  int leaked[2];
  ASSERT_EQ(::pipe(leaked), 0);  // deliberately without O_CLOEXEC
  auto c = spawn_sh("ls /proc/$$/fd");
  ASSERT_TRUE(c);
  UniqueFd out = c->take_stdout();
  std::string fds = read_all(out.get());
  ::close(leaked[0]);
  ::close(leaked[1]);
  EXPECT_EQ(fds, "0\n1\n2\n");
}

TEST(Child, GetsABuiltEnvironmentNotTheGatewaysOwn) {
  ::setenv("SLUICE_TEST_NOT_FOR_CHILDREN", "secret", 1);
  auto c = spawn_sh("env", {{"CONFIGURED", "yes"}});
  ::unsetenv("SLUICE_TEST_NOT_FOR_CHILDREN");
  ASSERT_TRUE(c);
  UniqueFd out = c->take_stdout();
  std::string env = read_all(out.get());
  EXPECT_NE(env.find("CONFIGURED=yes\n"), std::string::npos);
  EXPECT_NE(env.find("PATH="), std::string::npos);
  EXPECT_EQ(env.find("SLUICE_TEST_NOT_FOR_CHILDREN"), std::string::npos);
}

TEST(Child, StdinIsAPipeTheGatewayOwns) {
  auto c = spawn_sh("read line; echo \"got $line\"");
  ASSERT_TRUE(c);
  UniqueFd in = c->take_stdin();
  UniqueFd out = c->take_stdout();
  ASSERT_EQ(::write(in.get(), "hello\n", 6), 6);
  in.reset();
  EXPECT_EQ(read_all(out.get()), "got hello\n");
}

// A command is configuration, not a secret: the error names it (issue 9 item 24), and the
// working directory when that is what is wrong.
TEST(Child, AMissingCommandIsAnErrorThatNamesTheCommand) {
  SpawnSpec spec;
  spec.program = "sluice-no-such-command-3f9";
  auto c = Child::spawn(spec);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, "command sluice-no-such-command-3f9 was not found in PATH");
  spec.program = "/bin/true";
  spec.cwd = "/nonexistent-dir-3f9";
  auto d = Child::spawn(spec);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message.find("working directory /nonexistent-dir-3f9"), std::string::npos)
      << d.error().message;
}

TEST(Child, HasExitedPeeksWithoutReapingAndGroupSignalsStopAfterTheReap) {
  auto c = spawn_sh("exit 3");
  ASSERT_TRUE(c);
  pollfd p{c->pidfd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1);  // pidfd readable: exited
  EXPECT_TRUE(c->has_exited());
  EXPECT_FALSE(c->reaped()) << "has_exited must not reap";
  EXPECT_TRUE(c->signal_group(0)) << "the zombie leader still reserves its group id";
  ASSERT_TRUE(c->try_reap());
  EXPECT_EQ(c->exit_status()->code, 3);
  EXPECT_FALSE(c->exit_status()->signaled);
  EXPECT_FALSE(c->signal_group(SIGKILL)) << "after the reap the id may be reused";
}

TEST(SignalWrapper, RefusesPidOneItselfAndItsOwnGroup) {
  EXPECT_FALSE(send_signal_to_group(1, 0));
  EXPECT_FALSE(send_signal_to_group(0, 0));
  EXPECT_FALSE(send_signal_to_group(-5, 0));
  EXPECT_FALSE(send_signal_to_group(::getpid(), 0));
  EXPECT_FALSE(send_signal_to_group(::getpgrp(), 0));
  EXPECT_FALSE(send_signal_to_process(1, 0));
  EXPECT_FALSE(send_signal_to_process(::getpid(), 0));
  EXPECT_FALSE(send_signal_to_process(0, 0));
}

}  // namespace
}  // namespace sluice::process

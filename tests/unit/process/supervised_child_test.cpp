// process::SupervisedChild against real children: the orderly teardown of invariant P4 in
// its order, how an end is classified (exited, crashed, stopped by sluice, a foreign kill),
// the exit event, the executable identity, and the stderr budget of invariant P8.
#include "process/supervised_child.hpp"

#include "process/stderr_drain.hpp"
#include "../run_until.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::process {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Short graces, so a test waits milliseconds where the binary waits seconds.
core::Limits quick_limits() {
  core::Limits limits;
  limits.stdin_close_grace = 100ms;
  limits.sigterm_grace = 200ms;
  limits.sigkill_wait = 2s;
  return limits;
}

class SupervisedChildTest : public ::testing::Test {
 protected:
  std::unique_ptr<SupervisedChild> spawn_sh(const std::string& script) {
    SpawnSpec spec;
    spec.program = "/bin/sh";
    spec.args = {"-c", script};
    auto child = SupervisedChild::spawn(io_, spec, "test", "test-token", limits_);
    EXPECT_TRUE(child.has_value());
    return child ? std::move(*child) : nullptr;
  }
  // Runs the teardown to its end; `orderly`: stdin closed first (the child's own stdin,
  // which here nobody else holds).
  void teardown(SupervisedChild& child, bool orderly) {
    bool done = false;
    UniqueFd in = orderly ? child.take_stdin() : UniqueFd();
    std::function<void()> close_stdin;
    if (orderly) close_stdin = [&in] { in.reset(); };
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          co_await child.teardown(close_stdin);
          done = true;
        },
        asio::detached);
    ASSERT_TRUE(test::run_until(io_, [&] { return done; }));
  }
  // Whether a process is gone (reaped: kill finds no such process).
  static bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

  core::Limits limits_ = quick_limits();
  asio::io_context io_;
};

TEST_F(SupervisedChildTest, AChildThatExitsWhenItsStdinClosesEndsWithoutASignal) {
  auto child = spawn_sh("cat >/dev/null; exit 7");
  ASSERT_TRUE(child);
  pid_t pid = child->pid();
  teardown(*child, true);
  ASSERT_TRUE(child->exit_status().has_value());
  EXPECT_FALSE(child->exit_status()->signaled);
  EXPECT_EQ(child->exit_status()->code, 7);
  EXPECT_EQ(child->exit_kind(), ExitKind::exited);
  EXPECT_TRUE(gone(pid));
}

TEST_F(SupervisedChildTest, AChildThatIgnoresStdinGetsSigtermAfterTheGrace) {
  auto child = spawn_sh("trap 'exit 9' TERM; while :; do sleep 0.05; done");
  ASSERT_TRUE(child);
  auto started = std::chrono::steady_clock::now();
  teardown(*child, true);
  EXPECT_GE(std::chrono::steady_clock::now() - started, limits_.stdin_close_grace);
  ASSERT_TRUE(child->exit_status().has_value());
  EXPECT_FALSE(child->exit_status()->signaled);
  EXPECT_EQ(child->exit_status()->code, 9) << "SIGTERM came before SIGKILL";
}

TEST_F(SupervisedChildTest, AChildThatIgnoresSigtermIsKilledAfterBothGraces) {
  auto child = spawn_sh("trap '' TERM; while :; do sleep 0.05; done");
  ASSERT_TRUE(child);
  pid_t pid = child->pid();
  auto started = std::chrono::steady_clock::now();
  teardown(*child, true);
  EXPECT_GE(std::chrono::steady_clock::now() - started,
            limits_.stdin_close_grace + limits_.sigterm_grace);
  ASSERT_TRUE(child->exit_status().has_value());
  EXPECT_TRUE(child->exit_status()->signaled);
  EXPECT_EQ(child->exit_status()->code, SIGKILL);
  EXPECT_EQ(child->exit_kind(), ExitKind::stopped_by_sluice);
  EXPECT_TRUE(gone(pid));
}

TEST_F(SupervisedChildTest, ATeardownThatIsNotOrderlyKillsAtOnce) {
  limits_.stdin_close_grace = 10s;  // far longer than any kill takes, even on a busy machine
  auto child = spawn_sh("trap '' TERM; while :; do sleep 0.05; done");
  ASSERT_TRUE(child);
  auto started = std::chrono::steady_clock::now();
  teardown(*child, false);
  EXPECT_LT(std::chrono::steady_clock::now() - started, limits_.stdin_close_grace);
  EXPECT_EQ(child->exit_kind(), ExitKind::stopped_by_sluice);
}

TEST_F(SupervisedChildTest, AKillSluiceDidNotSendIsAForeignKill) {
  auto child = spawn_sh("exec sleep 100");
  ASSERT_TRUE(child);
  bool exited = false;
  child->on_exit([&] { exited = true; });
  ASSERT_EQ(::kill(child->pid(), SIGTERM), 0);
  ASSERT_TRUE(test::run_until(io_, [&] { return exited; }));
  EXPECT_TRUE(child->exit_seen());
  teardown(*child, false);
  EXPECT_EQ(child->exit_kind(), ExitKind::foreign_kill);
  EXPECT_EQ(child->exit_status()->code, SIGTERM);
}

TEST_F(SupervisedChildTest, ACrashSignalIsACrashNotAForeignKill) {
  auto child = spawn_sh("kill -SEGV $$");
  ASSERT_TRUE(child);
  bool exited = false;
  child->on_exit([&] { exited = true; });
  ASSERT_TRUE(test::run_until(io_, [&] { return exited; }));
  teardown(*child, false);
  EXPECT_EQ(child->exit_kind(), ExitKind::crashed);
}

TEST_F(SupervisedChildTest, TheExitCallbackDoesNotRunForTheTeardownsOwnKill) {
  auto child = spawn_sh("exec sleep 100");
  ASSERT_TRUE(child);
  int calls = 0;
  child->on_exit([&] { ++calls; });
  teardown(*child, false);
  io_.restart();
  io_.run_for(50ms);
  EXPECT_EQ(calls, 0);
}

TEST_F(SupervisedChildTest, DestroyingItWithoutATeardownKillsTheChild) {
  auto child = spawn_sh("exec sleep 100");
  ASSERT_TRUE(child);
  pid_t pid = child->pid();
  child.reset();
  EXPECT_TRUE(gone(pid));
  io_.restart();
  io_.run_for(20ms);  // the watch and the drain end without touching what is gone
}

TEST_F(SupervisedChildTest, KnowsTheExecutableItRanAndNoticesWhenItIsReplaced) {
  fs::path dir = fs::temp_directory_path() / ("sluice-exe-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path exe = dir / "sleeper";
  fs::copy_file("/bin/sleep", exe, fs::copy_options::overwrite_existing);
  SpawnSpec spec;
  spec.program = exe.string();
  spec.args = {"100"};
  auto child = SupervisedChild::spawn(io_, spec, "test", "test-token", limits_);
  ASSERT_TRUE(child.has_value());
  ASSERT_TRUE((*child)->executable().has_value());
  EXPECT_EQ((*child)->executable()->path, fs::canonical(exe).string());
  EXPECT_FALSE((*child)->executable_changed());
  fs::path replacement = dir / "sleeper.new";
  fs::copy_file("/bin/sleep", replacement);
  fs::rename(replacement, exe);  // a new inode under the same path, as an upgrade does
  EXPECT_TRUE((*child)->executable_changed());
  teardown(**child, false);
  fs::remove_all(dir);
}

TEST(ExitClassification, ReadsHowARunEnded) {
  EXPECT_EQ(classify(std::nullopt, false), ExitKind::running);
  EXPECT_EQ(classify(ExitStatus{false, 0}, false), ExitKind::exited);
  EXPECT_EQ(classify(ExitStatus{false, 1}, true), ExitKind::exited);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) {
    EXPECT_EQ(classify(ExitStatus{true, sig}, false), ExitKind::crashed) << sig;
  }
  for (int sig : {SIGKILL, SIGTERM, SIGINT, SIGHUP}) {
    EXPECT_EQ(classify(ExitStatus{true, sig}, false), ExitKind::foreign_kill) << sig;
    EXPECT_EQ(classify(ExitStatus{true, sig}, true), ExitKind::stopped_by_sluice) << sig;
  }
}

TEST(StderrBudget, LetsABurstOfTwiceTheLineRateThroughThenHoldsLinesBack) {
  core::Limits limits;  // 50 lines/s, bursts of 100
  auto t0 = core::Clock::time_point{} + 1h;
  StderrBudget budget(limits, t0);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(budget.admit(10, t0)) << i;
  EXPECT_FALSE(budget.admit(10, t0));
  EXPECT_FALSE(budget.admit(10, t0));
  EXPECT_TRUE(budget.admit(10, t0 + 20ms)) << "one line's worth refilled at 50 lines/s";
  EXPECT_EQ(budget.take_final_report(), 2u);
}

TEST(StderrBudget, HoldsBackLinesOverTheByteRateButAlwaysFitsOneWholeLine) {
  core::Limits limits;
  limits.stderr_bytes_per_second = 1000;  // bursts of 2000, but a 64 KiB line must fit
  auto t0 = core::Clock::time_point{} + 1h;
  StderrBudget budget(limits, t0);
  EXPECT_TRUE(budget.admit(limits.max_stderr_line_bytes, t0));
  EXPECT_FALSE(budget.admit(1, t0));
  EXPECT_EQ(budget.take_final_report(), 1u);
}

TEST(StderrBudget, ReportsWhatItHeldBackAtMostOnceASecond) {
  core::Limits limits;
  limits.stderr_lines_per_second = 1;  // bursts of 2
  auto t0 = core::Clock::time_point{} + 1h;
  StderrBudget budget(limits, t0);
  ASSERT_TRUE(budget.admit(1, t0));
  ASSERT_TRUE(budget.admit(1, t0));
  EXPECT_FALSE(budget.admit(1, t0));
  EXPECT_FALSE(budget.admit(1, t0));
  EXPECT_EQ(budget.take_report(t0), 2u) << "the first report is due at once";
  EXPECT_FALSE(budget.admit(1, t0 + 100ms));
  EXPECT_EQ(budget.take_report(t0 + 500ms), 0u) << "not again within the second";
  EXPECT_EQ(budget.take_report(t0 + 1s), 1u);
  EXPECT_EQ(budget.take_final_report(), 0u);
}

}  // namespace
}  // namespace sluice::process

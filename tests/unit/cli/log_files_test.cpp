// The logs folder (cli/log_files.hpp): run-log names, the listing `sluice logs` reads, the
// pruning a new stdio run does, and which lines are about a server.
#include "cli/log_files.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace sluice::cli {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class LogsFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sluice-logs-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void touch(const std::string& name) { std::ofstream(dir_ / name) << "x\n"; }

  fs::path dir_;
};

// A pid no process has (above the kernel's largest, 2^22).
constexpr pid_t kNoSuchPid = 5000000;

std::string line_of(std::string_view message) {
  return "2026-12-01T23:55:46.123Z sluice[42] info: " + std::string(message);
}

TEST(RunLogName, NamesSortByStartTimeAndParseBack) {
  auto t = std::chrono::sys_days{std::chrono::year{2026} / 12 / 1} + 23h + 55min + 46s + 123ms;
  std::string name = stdio_log_name(t, 4242);
  EXPECT_EQ(name, "stdio-20261201T235546.123Z-4242.log");
  EXPECT_LT(stdio_log_name(t, 99999), stdio_log_name(t + 1ms, 1));
  auto run = parse_stdio_log_name(name);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->pid, 4242);
  EXPECT_EQ(run->started, "20261201T235546.123Z");
  EXPECT_EQ(started_text(*run), "2026-12-01 23:55:46");
}

TEST(RunLogName, OtherNamesAreNotRunLogs) {
  for (std::string_view name :
       {"stdio-20261201T235546.123Z-4242.log.1", "stdio-20261201T235546.123Z-.log",
        "stdio-20261201T235546Z-4242.log", "stdio-2026120xT235546.123Z-4242.log", "http.log",
        "stdio-20261201T235546.123Z-42a.log", "stdio-20261201T235546.123Z-0.log"}) {
    EXPECT_FALSE(parse_stdio_log_name(name).has_value()) << name;
  }
}

TEST_F(LogsFolder, ListsStdioRunsNewestFirstWithTheirPartsOldestFirstThenTheHttpLog) {
  touch("stdio-20261201T100000.000Z-11.log");
  touch("stdio-20261201T100000.000Z-11.log.1");
  touch("stdio-20261201T100000.000Z-11.log.2");
  touch("stdio-20261202T100000.000Z-12.log");
  touch("http.log");
  touch("http.log.1");
  touch("notes.txt");
  touch("stdio-20261201T100000.000Z-11.log.x");
  fs::create_symlink(dir_ / "http.log", dir_ / "stdio-20261203T100000.000Z-13.log");

  std::vector<RunLog> runs = list_logs(dir_);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].pid, 12);
  EXPECT_EQ(runs[1].pid, 11);
  ASSERT_EQ(runs[1].parts.size(), 3u);
  EXPECT_EQ(runs[1].parts[0].filename(), "stdio-20261201T100000.000Z-11.log.2");
  EXPECT_EQ(runs[1].parts[2].filename(), "stdio-20261201T100000.000Z-11.log");
  EXPECT_EQ(runs[1].file.filename(), "stdio-20261201T100000.000Z-11.log");
  EXPECT_EQ(runs[2].kind, RunLog::Kind::http);
  ASSERT_EQ(runs[2].parts.size(), 2u);
  EXPECT_EQ(runs[2].parts[0].filename(), "http.log.1");
}

TEST_F(LogsFolder, PruningKeepsTheNewestRunsAndEveryRunStillRunning) {
  for (int day = 10; day < 20; ++day) {
    std::string name = "stdio-202612" + std::to_string(day) + "T100000.000Z-" +
                       std::to_string(kNoSuchPid + day) + ".log";
    touch(name);
    touch(name + ".1");
  }
  // The oldest of all, but its sluice (this process) is running... as far as the name goes:
  // this test's process is not called sluice, so it counts as ended too.
  touch("stdio-20261101T100000.000Z-" + std::to_string(::getpid()) + ".log");
  touch("http.log");

  EXPECT_EQ(prune_stdio_runs(dir_, 4), 7u);
  std::vector<RunLog> runs = list_logs(dir_);
  ASSERT_EQ(runs.size(), 5u);  // 4 stdio runs and the HTTP log
  EXPECT_EQ(runs[0].pid, kNoSuchPid + 19);
  EXPECT_EQ(runs[3].pid, kNoSuchPid + 16);
  EXPECT_FALSE(fs::exists(
      dir_ / ("stdio-20261215T100000.000Z-" + std::to_string(kNoSuchPid + 15) + ".log.1")));
  EXPECT_TRUE(fs::exists(dir_ / "http.log"));
}

TEST(SluiceRunning, OnlyALiveProcessNamedSluiceCounts) {
  EXPECT_FALSE(sluice_running(kNoSuchPid));
  EXPECT_FALSE(sluice_running(::getpid())) << "this test is not called sluice";
  EXPECT_FALSE(sluice_running(0));
}

TEST(AboutServer, ALineIsAboutAServerWhenItsMessageStartsWithItOrNamesOneOfItsTools) {
  EXPECT_TRUE(about_server(line_of("server fx: online, 3 tools, protocol 2025-06-18"), "fx"));
  EXPECT_TRUE(about_server(line_of("server fx stderr: hello"), "fx"));
  EXPECT_TRUE(about_server(line_of("refused a call to fx::echo: 1 schema problem(s)"), "fx"));
  EXPECT_TRUE(about_server(line_of("abandoned call 7 of fx::slow ended (completed)"), "fx"));
}

TEST(AboutServer, AnotherServerWhoseNameStartsTheSameIsNotIt) {
  EXPECT_FALSE(about_server(line_of("server fx2: online, 3 tools"), "fx"));
  EXPECT_FALSE(about_server(line_of("server fx2 stderr: fx::echo"), "fx2x"));
  EXPECT_FALSE(about_server(line_of("refused a call to afx::echo"), "fx"));
  EXPECT_FALSE(about_server(line_of("refused a call to a.fx::echo"), "fx"));
  EXPECT_FALSE(about_server(line_of("config: autoStart names 1 server(s)"), "fx"));
}

TEST(AboutServer, OnlyTheMessageCountsNotTheTimeOrTheLevel) {
  EXPECT_FALSE(about_server("server fx: not a log line", "fx"));
  EXPECT_FALSE(about_server("2026-12-01T23:55:46.123Z sluice[42] info: server other: fx", "fx"));
  EXPECT_TRUE(about_server("2026-12-01T23:55:46.123Z sluice[42] debug: server fx: x", "fx"));
}

}  // namespace
}  // namespace sluice::cli

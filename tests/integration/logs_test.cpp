// The per-run log files of serving gateways and `sluice logs`, against the real binary: a stdio
// gateway writes its own file (0600 in a 0700 folder) and nothing to a stderr that is not a
// terminal; the HTTP service writes http.log; files rotate by size; a new run keeps only the
// newest runs; `sluice logs` prints a log escaped, filters by server, follows, lists.
#include "cli/log_files.hpp"
#include "core/display.hpp"
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// A pid no process has (above the kernel's largest, 2^22).
constexpr pid_t kNoSuchPid = 5000000;

class LogsTest : public ::testing::Test {
 protected:
  fs::path logs() const { return state_ / "logs"; }
  std::vector<std::string> gateway_args(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"serve",       "--no-discover", "--config",
                                  cfg_.string(), "--state-dir",   state_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  void configure(const std::string& servers_json) {
    cfg_ = dir_.write("mcp.json", R"({"mcpServers":)" + servers_json + "}");
  }
  // `sluice logs <args> --state-dir STATE`.
  RunResult logs_command(std::vector<std::string> args) const {
    args.insert(args.begin(), "logs");
    args.push_back("--state-dir");
    args.push_back(state_.string());
    return run_sluice(args, dir_.path(), dir_.path());
  }
  // The current file of the run of `pid` (empty until it exists).
  fs::path run_file(pid_t pid) const {
    for (const cli::RunLog& run : cli::list_logs(logs())) {
      if (run.kind == cli::RunLog::Kind::stdio && run.pid == pid) return run.file;
    }
    return {};
  }
  // Waits (bounded) until the run's file holds `text`: the log is written by its own thread.
  bool wait_logged(pid_t pid, const std::string& text) const {
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (std::chrono::steady_clock::now() < deadline) {
      fs::path file = run_file(pid);
      if (!file.empty() && read_file(file).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);  // another process's file: no event to wait on here
    }
    return false;
  }
  void plant_run(const std::string& started, pid_t pid, const std::string& text) const {
    fs::create_directories(logs());
    std::ofstream(logs() / ("stdio-" + started + "-" + std::to_string(pid) + ".log")) << text;
  }

  TempDir dir_;
  fs::path state_ = dir_.path() / "state";
  std::string marker_ = new_marker();
  fs::path cfg_;
};

TEST_F(LogsTest, AStdioGatewayWritesItsOwnFilePrivateInAPrivateFolder) {
  configure(R"({"fx":)" + fixture_entry(marker_) + "}");
  pid_t pid = 0;
  {
    Sluice s(gateway_args(), dir_.path(), dir_.path());
    pid = s.pid();
    s.initialize();
    expect_clean_exit(s);
  }
  fs::path file = run_file(pid);
  ASSERT_FALSE(file.empty());
  EXPECT_TRUE(file.filename().string().starts_with("stdio-"));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(logs().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string text = read_file(file);
  EXPECT_NE(text.find(" info: sluice "), std::string::npos) << text;
  EXPECT_NE(text.find("serving 1 server(s) over stdio"), std::string::npos) << text;
  EXPECT_NE(text.find("shutdown complete"), std::string::npos) << text;
}

TEST_F(LogsTest, AStderrThatIsNotATerminalGetsNoLogLinesUnlessLogStderrIsGiven) {
  configure(R"({"fx":)" + fixture_entry(marker_, {"--stderr-banner"}) + R"(},"autoStart":["fx"])");
  for (bool log_stderr : {false, true}) {
    std::vector<std::string> extra{"--log-level", "debug"};
    if (log_stderr) extra.push_back("--log-stderr");
    Sluice s(gateway_args(extra), dir_.path(), dir_.path());
    s.initialize();
    ASSERT_TRUE(wait_logged(s.pid(), "server fx stderr: fixture fixture starting"));
    expect_clean_exit(s);
    s.join_stderr();
    if (log_stderr) {
      EXPECT_NE(s.stderr_text().find("server fx stderr: fixture fixture starting"),
                std::string::npos);
    } else {
      EXPECT_EQ(s.stderr_text(), "");
    }
  }
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
}

// sluice with its stderr a terminal (a pseudo-terminal this test reads) and stdin at EOF.
TEST_F(LogsTest, ATerminalStderrGetsTheLogLinesAsWell) {
  configure("{}");
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  int terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(terminal, 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, terminal, 2);
  std::vector<std::string> args = gateway_args();
  args.insert(args.begin(), SLUICE_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string home = "HOME=" + dir_.path().string();
  char* envp[] = {home.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, SLUICE_BINARY, &fa, nullptr, argv.data(), envp), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(terminal);
  std::string seen;
  auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (seen.find("shutdown complete") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: the terminal's last writer is gone
    seen.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::close(master);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(seen.find("serving 0 server(s) over stdio"), std::string::npos) << seen;
  EXPECT_NE(read_file(run_file(pid)).find("shutdown complete"), std::string::npos);
}

// Under systemd, stderr is the journal's stream, which JOURNAL_STREAM names (device:inode).
TEST_F(LogsTest, AStderrThatIsTheJournalGetsTheLogLinesAsWell) {
  configure("{}");
  std::vector<std::string> args{
      "-c", "JOURNAL_STREAM=$(stat -L -c %d:%i /dev/stderr) exec \"$0\" \"$@\"", SLUICE_BINARY};
  for (const std::string& a : gateway_args()) args.push_back(a);
  Sluice s(args, dir_.path(), dir_.path(), "/bin/sh");
  s.initialize();
  expect_clean_exit(s);
  s.join_stderr();
  EXPECT_NE(s.stderr_text().find("serving 0 server(s) over stdio"), std::string::npos);
  EXPECT_NE(read_file(run_file(s.pid())).find("shutdown complete"), std::string::npos);
}

TEST_F(LogsTest, LogsPrintsTheNewestRunEscaped) {
  const std::string hostile = "red \x1b[31m bell \x07 bidi \xe2\x80\xae end";
  configure(R"({"hx":{"command":")" FIXTURE_SERVER R"(","args":["--mode=hostile-text"],)"
            R"("env":{"SLUICE_FIXTURE_MARKER":")" +
            marker_ +
            R"(","FIXTURE_STDERR_TEXT":"red \u001b[31m bell \u0007 bidi \u202e end"}}},)"
            R"("autoStart":["hx"])");
  {
    Sluice s(gateway_args({"--log-level", "debug"}), dir_.path(), dir_.path());
    s.initialize();
    ASSERT_TRUE(wait_logged(s.pid(), "server hx stderr: red "));
    expect_clean_exit(s);
  }
  RunResult r = logs_command({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("server hx stderr: " + core::display_safe(hostile)), std::string::npos)
      << r.out;
  for (std::string_view raw : {"\x1b", "\x07", "\xe2\x80\xae"}) {
    EXPECT_EQ(r.out.find(raw), std::string::npos);
  }

  // A file may hold anything (written by hand, or by another program): it is escaped too.
  plant_run("29991231T000000.000Z", kNoSuchPid, "planted " + hostile + "\n");
  r = logs_command({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "planted " + core::display_safe(hostile) + "\n");
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
}

TEST_F(LogsTest, ServerKeepsOnlyTheLinesOfThatServer) {
  configure(R"({"fx":)" + fixture_entry(marker_, {"--stderr-banner"}) + R"(,"fy":)" +
            fixture_entry(marker_, {"--stderr-banner"}) + R"(},"autoStart":["fx","fy"])");
  {
    Sluice s(gateway_args({"--log-level", "debug"}), dir_.path(), dir_.path());
    s.initialize();
    ASSERT_TRUE(wait_logged(s.pid(), "server fx: online"));
    ASSERT_TRUE(wait_logged(s.pid(), "server fy: online"));
    expect_clean_exit(s);
  }
  RunResult r = logs_command({"--server", "fx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("server fx: online"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("server fx stderr: fixture fixture starting"), std::string::npos);
  EXPECT_EQ(r.out.find("server fy"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("serving 2 server(s)"), std::string::npos) << r.out;
  RunResult all = logs_command({});
  EXPECT_NE(all.out.find("server fy: online"), std::string::npos);
  EXPECT_NE(all.out.find("serving 2 server(s)"), std::string::npos);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
}

TEST_F(LogsTest, FollowPrintsEachNewLineAndEndsCleanlyOnSigterm) {
  configure(R"({"fx":)" + fixture_entry(marker_) + "}");
  Sluice s(gateway_args({"--log-level", "debug"}), dir_.path(), dir_.path());
  s.initialize();
  ASSERT_TRUE(wait_logged(s.pid(), "serving 1 server(s)"));
  Sluice follower({"logs", "-f", "--pid", std::to_string(s.pid()), "--state-dir", state_.string()},
                  dir_.path(), dir_.path());
  auto seen = [&](const std::string& text) {
    while (auto line = follower.read_line()) {
      if (line->find(text) != std::string::npos) return true;
    }
    return false;
  };
  ASSERT_TRUE(seen("serving 1 server(s)"));
  auto r = s.call_tool("gateway.invoke",
                       R"({"tool_id":"fx::stderr","arguments":{"lines":1,"bytes":12}})");
  ASSERT_FALSE(is_error(r)) << text_of(r);
  EXPECT_TRUE(seen("server fx stderr: line 0 eeee"));
  follower.signal(SIGTERM);
  EXPECT_EQ(follower.wait_exit(), 0);
  expect_clean_exit(s);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
}

TEST_F(LogsTest, FollowEndsByItselfWhenTheGatewayEnds) {
  configure("{}");
  Sluice s(gateway_args(), dir_.path(), dir_.path());
  s.initialize();
  ASSERT_TRUE(wait_logged(s.pid(), "serving 0 server(s)"));
  Sluice follower({"logs", "-f", "--state-dir", state_.string()}, dir_.path(), dir_.path());
  ASSERT_TRUE(follower.read_line().has_value());
  expect_clean_exit(s);
  std::string rest;
  while (auto line = follower.read_line()) rest += *line + "\n";
  EXPECT_NE(rest.find("shutdown complete"), std::string::npos) << rest;
  EXPECT_EQ(follower.wait_exit(), 0);
}

TEST_F(LogsTest, ALogIsRotatedBySizeAndLogsReadsThePartsInOrder) {
  configure(R"({"fx":)" + fixture_entry(marker_) + "}");
  pid_t pid = 0;
  {
    Sluice s(gateway_args({"--log-level", "debug", "--log-max-bytes", "4096"}), dir_.path(),
             dir_.path());
    pid = s.pid();
    s.initialize();
    // 90 lines of 150 bytes (within the stderr budgets): over three files of 4 KiB.
    auto r = s.call_tool("gateway.invoke",
                         R"({"tool_id":"fx::stderr","arguments":{"lines":90,"bytes":150}})");
    ASSERT_FALSE(is_error(r)) << text_of(r);
    ASSERT_TRUE(wait_logged(pid, "stderr: line 89 eee"));
    expect_clean_exit(s);
  }
  fs::path file = run_file(pid);
  ASSERT_FALSE(file.empty());
  for (const char* suffix : {"", ".1", ".2"}) {
    fs::path part = file.string() + suffix;
    ASSERT_TRUE(fs::exists(part)) << part;
    EXPECT_LE(fs::file_size(part), 4096u) << part;
    struct stat st {};
    ASSERT_EQ(::stat(part.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << part;
  }
  EXPECT_FALSE(fs::exists(file.string() + ".3")) << "two rotated parts are kept";
  RunResult r = logs_command({"--pid", std::to_string(pid), "--server", "fx"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int previous = -1, count = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto at = line.find("stderr: line ");
    if (at == std::string::npos) continue;
    int n = std::stoi(line.substr(at + 13));
    if (previous >= 0) {
      EXPECT_EQ(n, previous + 1) << "in order, none lost between parts";
    }
    previous = n;
    ++count;
  }
  EXPECT_EQ(previous, 89);
  EXPECT_GT(count, 10);
  EXPECT_LT(count, 90) << "the oldest part was dropped";
  RunResult last = logs_command({"--pid", std::to_string(pid), "-n", "1"});
  EXPECT_NE(last.out.find("shutdown complete"), std::string::npos) << last.out;
  EXPECT_EQ(std::count(last.out.begin(), last.out.end(), '\n'), 1);
  EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
}

TEST_F(LogsTest, ANewRunKeepsOnlyTheNewestRunsAndNeverOneStillRunning) {
  configure("{}");
  // A gateway that runs on, its file renamed to look older than every other.
  Sluice running(gateway_args(), dir_.path(), dir_.path());
  running.initialize();
  ASSERT_TRUE(wait_logged(running.pid(), "serving 0 server(s)"));
  const fs::path oldest = logs() / fmt::format("stdio-20250101T000000.000Z-{}.log", running.pid());
  fs::rename(run_file(running.pid()), oldest);
  for (int i = 0; i < 25; ++i) {
    std::string started = fmt::format("202601{:02}T120000.000Z", i + 1);
    plant_run(started, kNoSuchPid + i, "old\n");
    std::ofstream(logs() / fmt::format("stdio-{}-{}.log.1", started, kNoSuchPid + i)) << "older\n";
  }
  pid_t pid = 0;
  {
    Sluice s(gateway_args(), dir_.path(), dir_.path());
    pid = s.pid();
    s.initialize();
    expect_clean_exit(s);
  }
  // The new run and the 19 newest planted ones, and the running one on top.
  std::vector<cli::RunLog> runs = cli::list_logs(logs());
  ASSERT_EQ(runs.size(), cli::kStdioRunsKept + 1);
  EXPECT_EQ(runs.front().pid, pid);
  EXPECT_EQ(runs[runs.size() - 2].pid, kNoSuchPid + 6) << "the 6 oldest planted runs are gone";
  EXPECT_EQ(runs.back().pid, running.pid()) << "a running gateway's file is never removed";
  EXPECT_FALSE(
      fs::exists(logs() / fmt::format("stdio-20260106T120000.000Z-{}.log.1", kNoSuchPid + 5)));
  expect_clean_exit(running);
  EXPECT_NE(read_file(oldest).find("shutdown complete"), std::string::npos);
}

TEST_F(LogsTest, NoLogSaysWhereItLookedAndUsageErrorsExitTwo) {
  RunResult none = logs_command({});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find(logs().string()), std::string::npos) << none.err;
  RunResult http = logs_command({"--http"});
  EXPECT_EQ(http.exit_code, 1);
  EXPECT_NE(http.err.find("http.log"), std::string::npos) << http.err;
  EXPECT_EQ(logs_command({"--http", "--pid", "7"}).exit_code, 2);
  EXPECT_EQ(logs_command({"--json"}).exit_code, 2);
  EXPECT_EQ(logs_command({"--list", "-f"}).exit_code, 2);
  RunResult bad = logs_command({"--server", "not a name\x1b"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.find("not a name"), std::string::npos) << "the value is not echoed";
  RunResult help = run_sluice({"logs", "--help"}, dir_.path(), dir_.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos);
  EXPECT_NE(help.out.find("Exit codes:"), std::string::npos);
}

TEST_F(LogsTest, ListShowsEachRunAndItsJsonIsExact) {
  configure("{}");
  pid_t pid = 0;
  {
    Sluice s(gateway_args(), dir_.path(), dir_.path());
    pid = s.pid();
    s.initialize();
    expect_clean_exit(s);
  }
  RunResult list = logs_command({"--list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("stdio  " + std::to_string(pid)), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("ended"), std::string::npos) << list.out;
  std::istringstream rows(list.out);
  for (std::string row; std::getline(rows, row);) {
    if (!row.starts_with("Logs in")) {
      EXPECT_LE(row.size(), 80u) << row;
    }
  }
  RunResult json = logs_command({"--list", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  bj::value v = bj::parse(json.out);
  EXPECT_EQ(v.at("logs_dir").as_string(), logs().string());
  const auto& first = v.at("logs").at(0);
  EXPECT_EQ(first.at("kind").as_string(), "stdio");
  EXPECT_EQ(first.at("pid").to_number<pid_t>(), pid);
  EXPECT_EQ(first.at("running").as_bool(), false);
  EXPECT_GT(first.at("bytes").to_number<std::uint64_t>(), 0u);
}

TEST_F(LogsTest, TheHttpServiceLogsToHttpLogWhichLogsHttpPrints) {
  const fs::path port_file = dir_.path() / "port";
  {
    Sluice s({"serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0", "--port-file",
              port_file.string(), "--no-discover", "--state-dir", state_.string()},
             dir_.path(), dir_.path());
    ASSERT_TRUE(wait_file(port_file)) << s.stderr_text();
    s.signal(SIGTERM);
    EXPECT_EQ(s.wait_exit(), 0);
    s.join_stderr();
    EXPECT_EQ(s.stderr_text(), "");
  }
  struct stat st {};
  ASSERT_EQ(::stat((logs() / "http.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  RunResult r = logs_command({"--http"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("serving 0 server(s) on http://127.0.0.1:"), std::string::npos) << r.out;
  RunResult last = logs_command({"--http", "-n", "1"});
  EXPECT_EQ(std::count(last.out.begin(), last.out.end(), '\n'), 1);
  EXPECT_NE(last.out.find("shutdown complete"), std::string::npos) << last.out;
}

}  // namespace
}  // namespace sluice::test

// invariant P8 against the real binary: no log sink blocks the loop. sluice's stderr
// may be a pipe nobody reads (the MCP specification lets a client ignore it) and --log-file
// may be a full or a slow file; with a downstream flooding its stderr (re-logged at debug),
// calls keep being answered, drops are counted in health, and every ending (SIGTERM, SIGINT,
// SIGHUP, stdin EOF) exits 0 within the teardown bound with no process left.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/value.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace sluice::test {
namespace {
namespace bj = boost::json;

// The graces (0.5 s after closing stdin, 2 s after SIGTERM) plus a margin.
constexpr auto kNonblockingLogTeardownBound = 5s;
constexpr std::size_t kPipeCapacity = 65536;

std::uint64_t log_lines_dropped(Sluice& s) {
  auto h = s.call_tool("gateway.health", "{}").at("structuredContent");
  return h.at("log").at("lines_dropped").to_number<std::uint64_t>();
}

// A flooding server (1 KiB stderr lines, no pause) and a well-behaved one, both started.
std::filesystem::path flood_config(const TempDir& dir, const std::string& marker) {
  return dir.write(".mcp.json", R"({"mcpServers":{"flood":)" +
                                    fixture_entry(marker, {"--mode=flood-stderr-lines"}) +
                                    R"(,"fx":)" + fixture_entry(marker) +
                                    R"(},"autoStart":["flood","fx"]})");
}

void expect_echo_answers(Sluice& s, int calls) {
  for (int i = 0; i < calls; ++i) {
    auto r = s.call_tool("gateway.invoke",
                         R"({"tool_id":"fx::echo","arguments":{"text":"still here"}})");
    ASSERT_EQ(text_of(r), "still here") << "call " << i;
  }
}

enum class Ending { sigterm, sigint, sighup, eof };

class UnreadStderr : public ::testing::TestWithParam<Ending> {};

TEST_P(UnreadStderr, CallsAreAnsweredAndEveryEndingExitsZeroWithNothingLeft) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = flood_config(dir, marker);
  {
    Sluice s({"serve", "--log-stderr", "--no-discover", "--config", cfg.string(), "--log-level",
              "debug"},
             dir.path(), dir.path(), SLUICE_BINARY, /*read_stderr=*/false);
    s.initialize();
    // Wait (bounded) until sluice's stderr pipe has no room for a line: from here a blocking
    // write would block for good.
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (log_lines_dropped(s) == 0 && std::chrono::steady_clock::now() < deadline) {
      expect_echo_answers(s, 1);
    }
    ASSERT_GE(s.stderr_unread_bytes(), kPipeCapacity / 2) << "sluice's stderr pipe never filled";
    expect_echo_answers(s, 50);
    EXPECT_GT(log_lines_dropped(s), 0u);
    auto t0 = std::chrono::steady_clock::now();
    switch (GetParam()) {
      case Ending::sigterm:
        s.signal(SIGTERM);
        break;
      case Ending::sigint:
        s.signal(SIGINT);
        break;
      case Ending::sighup:
        s.signal(SIGHUP);
        break;
      case Ending::eof:
        s.close_stdin();
        break;
    }
    EXPECT_EQ(s.wait_exit(kNonblockingLogTeardownBound), 0);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    RecordProperty("exit_ms", std::to_string(ms.count()));
    std::printf("exit with an unread stderr: %lld ms\n", static_cast<long long>(ms.count()));
  }
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

std::string ending_name(const ::testing::TestParamInfo<Ending>& info) {
  static const char* names[] = {"Sigterm", "Sigint", "Sighup", "Eof"};
  return names[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(P8, UnreadStderr,
                         ::testing::Values(Ending::sigterm, Ending::sigint, Ending::sighup,
                                           Ending::eof),
                         ending_name);

TEST(UnreadStderrResumed, OneLineSaysHowManyLinesWereDropped) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = flood_config(dir, marker);
  {
    Sluice s({"serve", "--log-stderr", "--no-discover", "--config", cfg.string(), "--log-level",
              "debug"},
             dir.path(), dir.path(), SLUICE_BINARY, /*read_stderr=*/false);
    s.initialize();
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (log_lines_dropped(s) == 0 && std::chrono::steady_clock::now() < deadline) {
      expect_echo_answers(s, 1);
    }
    ASSERT_GT(log_lines_dropped(s), 0u);
    s.read_stderr_now();
    // The flood keeps logging, so writing resumes as soon as the pipe has room.
    deadline = std::chrono::steady_clock::now() + kGuard;
    while (s.stderr_text().find(" log lines dropped") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      expect_echo_answers(s, 1);
    }
    EXPECT_NE(s.stderr_text().find(" log lines dropped"), std::string::npos);
    expect_clean_exit(s);
  }
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(ChildStderr, ReloggedLinesHaveAByteBudgetAsWellAsALineBudget) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker) + "}}");
  {
    Sluice s({"serve", "--log-stderr", "--no-discover", "--config", cfg.string(), "--log-level",
              "debug"},
             dir.path(), dir.path());
    s.initialize();
    // 20 lines of 60 KiB: within the line budget (50/s, bursts of 100), 1.2 MiB over the
    // byte budget (64 KiB/s, bursts of 128 KiB).
    auto r = s.call_tool("gateway.invoke",
                         R"({"tool_id":"fx::stderr","arguments":{"lines":20,"bytes":61440}})");
    ASSERT_FALSE(is_error(r)) << text_of(r);
    // Then one short line ("line 0 eee"), logged once the budget has refilled a little.
    s.call_tool("gateway.invoke", R"({"tool_id":"fx::stderr","arguments":{"lines":1,"bytes":10}})");
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (s.stderr_text().find("stderr: line 0 eee\n") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      s.request("ping", "");
    }
    std::string err = s.stderr_text();
    ASSERT_NE(err.find("stderr: line 0 eee\n"), std::string::npos);
    std::size_t long_lines = count_of(err, "stderr: line ") - 1;
    EXPECT_LE(long_lines, 3u) << "of 20 lines of 60 KiB";
    EXPECT_NE(err.find("lines not logged (over 50 lines/s or 65536 bytes/s)"), std::string::npos);
    expect_clean_exit(s);
  }
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

// Under a sustained flood the count of lines not logged is reported at most once a second, not
// after every line the budget lets through (which doubled the log it protects).
TEST(ChildStderr, ASustainedFloodReportsItsDropsAtMostOnceASecond) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"fx":)" +
                                        fixture_entry(marker, {"--mode=flood-stderr-lines"}) +
                                        R"(},"autoStart":["fx"]})");
  {
    Sluice s({"serve", "--log-stderr", "--no-discover", "--config", cfg.string(), "--log-level",
              "debug"},
             dir.path(), dir.path());
    s.initialize();
    // 250 logged lines: the burst (100) and then about 3 s at 50 lines/s.
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (count_of(s.stderr_text(), "stderr: eee") < 250 &&
           std::chrono::steady_clock::now() < deadline) {
      s.request("ping", "");
    }
    std::string err = s.stderr_text();
    ASSERT_GE(count_of(err, "stderr: eee"), 250u);
    std::size_t reports = count_of(err, "lines not logged");
    EXPECT_GE(reports, 1u);
    EXPECT_LE(reports, 8u) << "reports of dropped lines for 250 lines logged";
    expect_clean_exit(s);
  }
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

TEST(LogFile, AFullFileSystemDropsAndCountsAndNeverBlocks) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = flood_config(dir, marker);
  {
    Sluice s({"serve", "--no-discover", "--config", cfg.string(), "--log-level", "debug",
              "--log-file", "/dev/full"},
             dir.path(), dir.path());
    s.initialize();
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (log_lines_dropped(s) == 0 && std::chrono::steady_clock::now() < deadline) {
      expect_echo_answers(s, 1);
    }
    EXPECT_GT(log_lines_dropped(s), 0u);
    expect_echo_answers(s, 20);
    s.signal(SIGTERM);
    EXPECT_EQ(s.wait_exit(kNonblockingLogTeardownBound), 0);
  }
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

TEST(LogFile, AFifoNobodyReadsDropsAndCountsAndNeverBlocks) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = flood_config(dir, marker);
  auto fifo = dir.path() / "slow.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader that never reads: the FIFO opens, then fills.
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  {
    Sluice s({"serve", "--no-discover", "--config", cfg.string(), "--log-level", "debug",
              "--log-file", fifo.string()},
             dir.path(), dir.path());
    s.initialize();
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (log_lines_dropped(s) == 0 && std::chrono::steady_clock::now() < deadline) {
      expect_echo_answers(s, 1);
    }
    EXPECT_GT(log_lines_dropped(s), 0u);
    expect_echo_answers(s, 20);
    s.close_stdin();
    EXPECT_EQ(s.wait_exit(kNonblockingLogTeardownBound), 0);
  }
  ::close(reader);
  EXPECT_TRUE(wait_no_marker(marker, kNonblockingLogTeardownBound).empty());
}

}  // namespace
}  // namespace sluice::test

// The one-shot commands (`sluice call`, `sluice servers --probe`) as owners of children
// (invariant P9): a signal runs the same teardown as `serve` (setsid escapes
// included), then they exit 128+n. And they are quiet: warnings only unless --log-level
// says otherwise, while `serve` logs a child's stderr lines at debug, not info.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <signal.h>

namespace sluice::test {
namespace {

// The graces (0.5 s after closing stdin, 2 s after SIGTERM) plus a margin.
constexpr auto kOneShotTeardownBound = 5s;

class OneShotSignal : public ::testing::TestWithParam<int> {};

TEST_P(OneShotSignal, CallTearsItsServerAndItsEscapedGrandchildDownThenExits128PlusN) {
  const int sig = GetParam();
  TempDir dir;
  std::string marker = new_marker();
  // The server forks a grandchild that leaves its group (setsid) and sleeps.
  auto cfg = dir.write(".mcp.json", R"({"mcpServers":{"fx":)" +
                                        fixture_entry(marker, {"--mode=grandchild-setsid"}) + "}}");
  auto started = dir.path() / "started";
  std::string args = R"({"path":")" + (dir.path() / "never").string() + R"(","marker":")" +
                     (dir.path() / "passed").string() + R"(","started":")" + started.string() +
                     R"("})";
  {
    Sluice s({"call", "fx::gate", "--args", args, "--no-discover", "--config", cfg.string()},
             dir.path(), dir.path());
    ASSERT_TRUE(wait_file(started)) << "the blocking tool never started";
    ASSERT_GE(processes_with_marker(marker).size(), 2u);
    s.signal(sig);
    EXPECT_EQ(s.wait_exit(kOneShotTeardownBound), 128 + sig);
  }
  EXPECT_TRUE(wait_no_marker(marker, kOneShotTeardownBound).empty());
}

// The server never answers initialize and outlives its stdin: only a teardown ends it.
TEST_P(OneShotSignal, ServersProbeTearsItsServersDownThenExits128PlusN) {
  const int sig = GetParam();
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = dir.write(
      ".mcp.json", R"({"mcpServers":{"fx":)" +
                       fixture_entry(marker, {"--mode=never-initialize", "--linger-after-eof"}) +
                       "}}");
  {
    Sluice s({"servers", "--probe", "--no-discover", "--config", cfg.string(),
              "--initialize-timeout-ms", "600000"},
             dir.path(), dir.path());
    auto deadline = std::chrono::steady_clock::now() + kGuard;
    while (processes_with_marker(marker).empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_FALSE(processes_with_marker(marker).empty()) << "the probe never started the server";
    s.signal(sig);
    EXPECT_EQ(s.wait_exit(kOneShotTeardownBound), 128 + sig);
  }
  EXPECT_TRUE(wait_no_marker(marker, kOneShotTeardownBound).empty());
}

INSTANTIATE_TEST_SUITE_P(P9, OneShotSignal, ::testing::Values(SIGTERM, SIGINT, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGTERM  ? "Sigterm"
                                              : info.param == SIGINT ? "Sigint"
                                                                     : "Sighup");
                         });

// A server that writes one stderr line at start ("fixture fixture starting").
std::filesystem::path banner_config(const TempDir& dir, const std::string& marker) {
  return dir.write(".mcp.json",
                   R"({"mcpServers":{"fx":)" + fixture_entry(marker, {"--stderr-banner"}) + "}}");
}

TEST(QuietOneShot, CallLogsNothingBelowWarnUnlessAsked) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = banner_config(dir, marker);
  std::vector<std::string> args{"call",          "fx::echo", "--args",    R"({"text":"hi"})",
                                "--no-discover", "--config", cfg.string()};
  auto quiet = run_sluice(args, dir.path(), dir.path());
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "hi\n");
  EXPECT_EQ(quiet.err, "");
  args.insert(args.end(), {"--log-level", "debug"});
  auto loud = run_sluice(args, dir.path(), dir.path());
  EXPECT_EQ(loud.exit_code, 0);
  EXPECT_NE(loud.err.find(" debug: server fx stderr: fixture fixture starting"), std::string::npos)
      << loud.err;
  EXPECT_TRUE(wait_no_marker(marker, kOneShotTeardownBound).empty());
}

TEST(QuietOneShot, ServersProbeLogsNothingBelowWarnByDefault) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = banner_config(dir, marker);
  auto r = run_sluice({"servers", "--probe", "--no-discover", "--config", cfg.string()}, dir.path(),
                      dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("fx"), std::string::npos);
  EXPECT_TRUE(wait_no_marker(marker, kOneShotTeardownBound).empty());
}

TEST(QuietServe, AChildsStderrIsLoggedAtDebugNotInfo) {
  TempDir dir;
  std::string marker = new_marker();
  auto cfg = banner_config(dir, marker);
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"serve", "--log-stderr", "--no-discover", "--config",
                                  cfg.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    Sluice s(args, dir.path(), dir.path());
    s.initialize();
    auto r = s.call_tool("gateway.connect_server", R"({"server_name":"fx"})");
    EXPECT_FALSE(is_error(r)) << text_of(r);
    // Ordered after the banner: the fixture writes it before it reads its first request.
    s.call_tool("gateway.invoke", R"({"tool_id":"fx::stderr","arguments":{"lines":1}})");
    expect_clean_exit(s);
    s.join_stderr();
    return s.stderr_text();
  };
  std::string info = run({});
  EXPECT_NE(info.find(" info: sluice "), std::string::npos) << info;  // what an operator needs
  EXPECT_EQ(info.find("stderr: fixture fixture starting"), std::string::npos) << info;
  std::string debug = run({"--log-level", "debug"});
  EXPECT_NE(debug.find(" debug: server fx stderr: fixture fixture starting"), std::string::npos)
      << debug;
  EXPECT_TRUE(wait_no_marker(marker, kOneShotTeardownBound).empty());
}

}  // namespace
}  // namespace sluice::test

// The sluice command line as a person uses it: call, servers, demo, --version, bad input.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace sluice::test {
namespace {
namespace bj = boost::json;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.write("cfg/.mcp.json", R"({"mcpServers":{"fx":)" + fixture_entry(marker_) +
                                              R"(,"remote":{"type":"sse","url":"http://127.0.0.1:9/sse"}}})");
  }
  void TearDown() override {
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty()) << "a fixture process was left behind";
  }
  RunResult run(std::vector<std::string> args) {
    args.insert(args.end(), {"--no-discover", "--config", config_.string()});
    return run_sluice(args, dir_.path(), dir_.path());
  }
  TempDir dir_;
  std::string marker_ = new_marker();
  std::filesystem::path config_;
};

TEST_F(Cli, CallPrintsTheToolsTextAndExitsZero) {
  auto r = run({"call", "fx::echo", "--args", R"({"text":"from the cli"})"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "from the cli\n");
}

TEST_F(Cli, CallJsonPrintsTheRawResultByteExact) {
  auto r = run({"call", "fx::big_number", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12345678901234567890123"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("1E0"), std::string::npos) << r.out;
  EXPECT_TRUE(bj::parse(r.out).is_object());
}

TEST_F(Cli, CallOfAFailingToolExitsOneWithTheMessageOnStderr) {
  auto r = run({"call", "fx::fail", "--args", R"({"message":"it broke"})"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("it broke"), std::string::npos);
}

TEST_F(Cli, CallWithInvalidArgumentsNeverPrintsTheValue) {
  const std::string sentinel = "SENTINEL-cli-4d2e";
  auto r = run({"call", "fx::echo", "--args", R"({"text":{"k":")" + sentinel + R"("}})"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("$.text:"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find(sentinel), std::string::npos);
}

TEST_F(Cli, CallWithArgsThatAreNotJsonIsAUsageError) {
  auto r = run({"call", "fx::echo", "--args", "{SENTINEL-nojson"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ((r.out + r.err).find("SENTINEL-nojson"), std::string::npos);
}

TEST_F(Cli, ControlCharactersFromAServerNeverReachTheTerminalRaw) {
  auto r = run({"call", "fx::echo", "--args", R"({"text":"red\u001b[31m bell\u0007 rlo\u202e"})"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find('\a'), std::string::npos);
  EXPECT_EQ(r.out.find("\u202e"), std::string::npos);
  EXPECT_NE(r.out.find("\\x1b[31m"), std::string::npos) << r.out;
}

TEST_F(Cli, ServersListsEachServerWithItsSourceAndStatus) {
  auto r = run({"servers"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fx"), std::string::npos);
  EXPECT_NE(r.out.find("lazy"), std::string::npos);
  EXPECT_NE(r.out.find("unsupported_transport"), std::string::npos);
  EXPECT_NE(r.out.find(config_.string()), std::string::npos);
}

TEST_F(Cli, ServersProbeStartsEachServerAndReportsItsTools) {
  auto r = run({"servers", "--probe", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto rows = bj::parse(r.out).at("servers").as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("status"), "online");
  EXPECT_GE(rows[0].at("tool_count").as_int64(), 10);
}

TEST_F(Cli, VersionPrintsTheVersion) {
  auto r = run_sluice({"--version"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("sluice ", 0), 0u) << r.out;
}

TEST_F(Cli, AnUnknownOptionIsAUsageErrorThatDoesNotEchoIt) {
  auto r = run_sluice({"--SENTINEL-flag"}, dir_.path(), dir_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ((r.out + r.err).find("SENTINEL-flag"), std::string::npos) << r.err;
}

TEST_F(Cli, DemoRunsTheWholeTourWithNoConfigurationOnTheMachine) {
  auto r = run_sluice({"demo"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* step : {"[1] initialize", "[5] gateway.catalog_search", "demo::word_count",
                           "7 words, 2 lines", "$.text: must be a string", "[9] gateway.health"}) {
    EXPECT_NE(r.out.find(step), std::string::npos) << step << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos);
}

TEST_F(Cli, AMalformedConfigFileIsLeftOutWithOneValueFreeWarning) {
  auto bad = dir_.write("bad/.mcp.json",
                        R"({"mcpServers":{"x":{"command":"a","args":[1,"SENTINEL-cfg"]}}})");
  auto r = run_sluice({"servers", "--no-discover", "--config", bad.string(), "--config",
                       config_.string()},
                      dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("$.mcpServers.entry.args[0]"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("SENTINEL-cfg"), std::string::npos);
  EXPECT_NE(r.out.find("fx"), std::string::npos) << "the good file is still served";
}

}  // namespace
}  // namespace sluice::test

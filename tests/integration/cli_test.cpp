// The sluice command line as a person uses it: call, servers, demo, --version, bad input.
#include "harness.hpp"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <boost/json/parse.hpp>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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
  EXPECT_NE(r.out.find("remote"), std::string::npos);
  EXPECT_EQ(r.out.find("unsupported"), std::string::npos) << r.out;
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

// Usage errors: exit 2, one line naming what was wrong (an option or command by its name, the
// valid values or range), never the rejected value and never the parser's internal names.
void expect_usage_error(const RunResult& r, std::initializer_list<std::string_view> says) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  for (std::string_view s : says) EXPECT_NE(r.err.find(s), std::string::npos) << s << "\n" << r.err;
  for (std::string_view internal : {"Error", "invalid command line", "not expected"}) {
    EXPECT_EQ(r.err.find(internal), std::string::npos) << internal << "\n" << r.err;
  }
}

TEST_F(Cli, AnUnknownOptionIsNamedWhenItIsAPlainName) {
  auto r = run_sluice({"--frobnicate-now"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"unknown option --frobnicate-now", "sluice --help"});
}

TEST_F(Cli, AnUnknownOptionIsNamedButItsValueIsNot) {
  auto r = run_sluice({"serve", "--token=SENTINEL-value"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"unknown option --token", "sluice serve --help"});
  EXPECT_EQ(r.err.find("SENTINEL-value"), std::string::npos) << r.err;
}

TEST_F(Cli, AnUnknownOptionThatIsNotAPlainNameIsDescribedNotEchoed) {
  auto r = run_sluice({"--SENTINEL-flag;$(id)"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"unknown option (a string of 21 characters)"});
  EXPECT_EQ((r.out + r.err).find("SENTINEL-flag"), std::string::npos) << r.err;
}

TEST_F(Cli, AnOptionOfAnotherCommandSaysWhichCommandHasIt) {
  auto r = run_sluice({"--transport", "http"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"unknown option --transport", "sluice serve"});
}

TEST_F(Cli, AnUnknownCommandIsNamedWithTheCommandsThatExist) {
  auto r = run_sluice({"frobnicate"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"unknown command frobnicate", "serve, call, servers, index, auth, demo"});
  EXPECT_EQ(r.err.find("demo-server"), std::string::npos) << "internal commands stay hidden";
}

TEST_F(Cli, AnUnexpectedArgumentIsDescribedNotEchoed) {
  auto r = run({"call", "fx::echo", "SENTINEL-extra"});
  expect_usage_error(r, {"unexpected argument (a string of 14 characters)", "sluice call --help"});
  EXPECT_EQ(r.err.find("SENTINEL-extra"), std::string::npos) << r.err;
}

TEST_F(Cli, AValueOutOfRangeNamesTheOptionAndTheRangeNotTheValue) {
  auto r = run_sluice({"serve", "--transport", "http", "--port", "70123"}, dir_.path(),
                      dir_.path());
  expect_usage_error(r, {"--port must be an integer from 0 to 65535"});
  EXPECT_EQ(r.err.find("70123"), std::string::npos) << r.err;
}

TEST_F(Cli, AValueThatIsNotANumberNamesTheOptionAndTheRangeNotTheValue) {
  auto r = run({"call", "fx::echo", "--timeout-ms", "SENTINEL-ms"});
  expect_usage_error(r, {"--timeout-ms must be an integer from 1000 to "});
  EXPECT_EQ(r.err.find("SENTINEL-ms"), std::string::npos) << r.err;
}

TEST_F(Cli, AValueOutsideTheChoicesListsTheChoices) {
  auto r = run_sluice({"--expose", "SENTINEL-expose"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"--expose must be one of meta, all, meta,all"});
  EXPECT_EQ(r.err.find("SENTINEL-expose"), std::string::npos) << r.err;
}

TEST_F(Cli, AMissingArgumentSaysWhatIsMissing) {
  auto r = run_sluice({"call"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"call needs SERVER::TOOL"});
}

TEST_F(Cli, AnOptionWithoutItsValueSaysItNeedsOne) {
  auto r = run_sluice({"call", "fx::echo", "--args"}, dir_.path(), dir_.path());
  expect_usage_error(r, {"--args needs a value"});
}

TEST_F(Cli, AFlagGivenAValueSaysItTakesNone) {
  auto r = run({"servers", "--json=SENTINEL-yes"});
  expect_usage_error(r, {"--json takes no value"});
  EXPECT_EQ(r.err.find("SENTINEL-yes"), std::string::npos) << r.err;
}

TEST_F(Cli, HttpOptionsWithoutTheHttpTransportAreRefusedNotIgnored) {
  for (std::vector<std::string> args : {std::vector<std::string>{"serve", "--port", "3345"},
                                        {"serve", "--transport", "stdio", "--auth-token", "t"},
                                        {"serve", "--allow-host", "example.test"}}) {
    auto r = run_sluice(args, dir_.path(), dir_.path());
    expect_usage_error(r, {"applies only with --transport http"});
  }
}

TEST_F(Cli, OptionsBeforeACommandAreRefusedNotIgnored) {
  auto r = run_sluice({"--config", config_.string(), "call", "fx::echo"}, dir_.path(),
                      dir_.path());
  expect_usage_error(r, {"--config", "after `call`"});
}

TEST_F(Cli, HelpListsTheChoicesOfExposeOnceAndExitsZero) {
  auto r = run_sluice({"--help"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::size_t line = r.out.find("--expose");
  ASSERT_NE(line, std::string::npos) << r.out;
  std::string expose = r.out.substr(line, r.out.find("\n  -", line + 1) - line);
  EXPECT_EQ(expose.find("meta,all"), expose.rfind("meta,all")) << expose;
  EXPECT_EQ(expose.find("{"), std::string::npos) << expose;
}

TEST_F(Cli, EachCommandsHelpExitsZero) {
  for (const char* command : {"serve", "call", "servers", "index", "demo"}) {
    auto r = run_sluice({command, "--help"}, dir_.path(), dir_.path());
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << command << "\n" << r.out;
  }
}

// The docs and the source comments name only commands that exist: every `sluice <command>` in
// README.md, docs/*.md and src/ has a help of its own (an unknown word before --help gets the
// top-level help).
TEST_F(Cli, EveryCommandTheDocsNameExists) {
  namespace fs = std::filesystem;
  const fs::path root(SLUICE_SOURCE_DIR);
  std::vector<fs::path> files{root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) files.push_back(entry.path());
  for (const auto& entry : fs::recursive_directory_iterator(root / "src")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  static const re2::RE2 kCommand("`sluice ([a-z][a-z-]*)");
  std::set<std::string> commands;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    re2::StringPiece rest(text);
    std::string command;
    while (re2::RE2::FindAndConsume(&rest, kCommand, &command)) commands.insert(command);
  }
  EXPECT_TRUE(commands.contains("call")) << "the scan is not reading the docs";
  for (const std::string& command : commands) {
    auto r = run_sluice({command, "--help"}, dir_.path(), dir_.path());
    EXPECT_NE(r.out.find("Usage: sluice " + command + " "), std::string::npos)
        << "`sluice " << command << "` is named but is not a command\n"
        << r.out;
  }
}

TEST_F(Cli, DemoRunsTheWholeTourWithNoConfigurationOnTheMachine) {
  auto r = run_sluice({"demo"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* step : {"[1] initialize", "[3] gateway.catalog_search",
                           "demo::word_count (source online)", "[5] gateway.catalog_search",
                           "7 words, 2 lines", "$.text: must be a string", "[9] gateway.health"}) {
    EXPECT_NE(r.out.find(step), std::string::npos) << step << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos);
  // Its catalog cache lived in its own folder: nothing is left in the user's state directory.
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / ".local" / "state" / "sluice"));
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

// What one server entry may say besides its transport: `"disabled": true`, and keys sluice
// does not know (one value-free warning per file); and that parsing stays linear in the size
// of what a file lists (autoStart names, headers, variables).
#include "../cpu_time.hpp"
#include "config/mcp_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr std::string_view kServerEntrySentinel = "SNTL7q";

const std::filesystem::path kServerEntryFile = "/projects/app/.mcp.json";

ConfigFile server_entry_parse_ok(std::string_view text, const EnvLookup& env = {}) {
  core::Result<ConfigFile> file = parse_text(text, kServerEntryFile, Origin::user, env);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  return file ? *file : ConfigFile{};
}

std::string server_entry_parse_error(std::string_view text) {
  core::Result<ConfigFile> file = parse_text(text, kServerEntryFile, Origin::user, EnvLookup{});
  EXPECT_FALSE(file.has_value());
  return file ? std::string() : file.error().message;
}

TEST(ServerEntry, DisabledTrueMarksTheServerDisabledAndFalseOrAbsentDoesNot) {
  ConfigFile file = server_entry_parse_ok(R"({"mcpServers": {
      "off": {"command": "srv", "disabled": true},
      "on": {"command": "srv", "disabled": false},
      "plain": {"command": "srv"},
      "remote-off": {"type": "http", "url": "https://example.test/mcp", "disabled": true}}})");
  ASSERT_THAT(file.servers, SizeIs(4));
  EXPECT_TRUE(file.servers[0].disabled);
  EXPECT_FALSE(file.servers[1].disabled);
  EXPECT_FALSE(file.servers[2].disabled);
  EXPECT_TRUE(file.servers[3].disabled);
  EXPECT_THAT(file.warnings, IsEmpty());
}

TEST(ServerEntry, DisabledThatIsNotABooleanLeavesTheFileOutWithoutEchoingIt) {
  std::string error = server_entry_parse_error(R"({"mcpServers": {
      "a": {"command": "srv"}, "b": {"command": "srv", "disabled": "SNTL7q"}}})");
  EXPECT_EQ(error,
            "$.mcpServers.entry.disabled (server entry 2): expected a boolean, found a string of "
            "6 characters");
}

TEST(ServerEntry, ADisabledServerDoesNotWarnAboutItsUnsetVariables) {
  ConfigFile file = server_entry_parse_ok(
      R"({"mcpServers": {"off": {"command": "srv", "env": {"T": "${NOT_SET_ANYWHERE}"},
                                 "disabled": true}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_THAT(file.servers[0].warnings, IsEmpty());
}

TEST(ServerEntry, UnknownKeysGiveOneWarningPerFileNamingPlainKeysOnly) {
  ConfigFile file = server_entry_parse_ok(R"json({"mcpServers": {
      "a": {"command": "srv", "envFile": "SNTL7q", "trust": true},
      "b": {"command": "srv", "envFile": "x", "SNTL7q key;$(id)": 1, "timeout": 5},
      "c": {"type": "http", "url": "https://example.test/mcp", "a.b": "SNTL7q"}}})json");
  ASSERT_THAT(file.servers, SizeIs(3));
  ASSERT_THAT(file.warnings, SizeIs(1));
  const std::string& w = file.warnings[0];
  EXPECT_THAT(w, HasSubstr(kServerEntryFile.string()));
  EXPECT_THAT(w, HasSubstr("envFile"));
  EXPECT_THAT(w, HasSubstr("trust"));
  EXPECT_THAT(w, HasSubstr("timeout"));
  EXPECT_THAT(w, HasSubstr("2 other keys"));
  EXPECT_THAT(w, HasSubstr("ignored"));
  EXPECT_THAT(w, Not(HasSubstr(kServerEntrySentinel)));
  EXPECT_THAT(w, Not(HasSubstr("a.b")));
  EXPECT_EQ(w.find("envFile"), w.rfind("envFile")) << "each key is named once: " << w;
}

TEST(ServerEntry, KnownKeysAndHarmlessClientKeysGiveNoWarning) {
  ConfigFile file = server_entry_parse_ok(R"({"mcpServers": {
      "a": {"type": "stdio", "command": "srv", "args": [], "env": {}, "cwd": "/srv",
            "timeoutMs": 5000, "disabled": false, "sluice": {"budget": 2},
            "description": "d", "autoApprove": ["t"], "alwaysAllow": ["t"]},
      "b": {"type": "sse", "url": "https://example.test/sse", "headers": {},
            "description": "d"}}})");
  EXPECT_THAT(file.warnings, IsEmpty());
}

TEST(ServerEntry, TheUnknownKeyWarningStaysShortWhateverTheNumberOfKeys) {
  std::string text = R"({"mcpServers": {"a": {"command": "srv")";
  for (int i = 0; i < 200; ++i) text += ",\"key" + std::to_string(i) + "\": 1";
  text += "}}}";
  ConfigFile file = server_entry_parse_ok(text);
  ASSERT_THAT(file.warnings, SizeIs(1));
  EXPECT_LT(file.warnings[0].size(), 1000u) << file.warnings[0];
  EXPECT_THAT(file.warnings[0], HasSubstr("key0"));
  EXPECT_THAT(file.warnings[0], HasSubstr("other keys"));
}

TEST(ServerEntry, OperatorSettingsAreNotedWhereverTheFileHoldsThem) {
  EXPECT_FALSE(
      server_entry_parse_ok(R"({"mcpServers": {"a": {"command": "srv"}}})").has_operator_settings);
  EXPECT_TRUE(server_entry_parse_ok(R"({"sluice": {}})").has_operator_settings);
  EXPECT_TRUE(server_entry_parse_ok(R"({"mcpServers": {"a": {"command": "srv", "sluice": {}}}})")
                  .has_operator_settings);
}

// Issue 9 item 12: 139,000 autoStart names took 50 s of CPU (a linear search per name).
TEST(ServerEntry, AnAutoStartListOf200000NamesParsesInLinearTime) {
  constexpr int kNames = 200000;
  std::string text = R"({"autoStart": [)";
  for (int i = 0; i < kNames; ++i) text += "\"s" + std::to_string(i) + "\",";
  for (int i = 0; i < 1000; ++i) text += "\"s" + std::to_string(i) + "\",";  // duplicates
  text += R"("s0"]})";
  const double start = sluice::test::thread_cpu_seconds();
  ConfigFile file = server_entry_parse_ok(text);
  const double took = sluice::test::thread_cpu_seconds() - start;
  ASSERT_THAT(file.auto_start, SizeIs(kNames));
  EXPECT_EQ(file.auto_start.front(), "s0");
  EXPECT_EQ(file.auto_start.back(), "s" + std::to_string(kNames - 1));
  EXPECT_LT(took, 5.0) << "parsing 200,000 autoStart names took " << took << " s of CPU";
}

TEST(ServerEntry, ManyHeadersAndVariablesInOneEntryParseInLinearTime) {
  constexpr int kCount = 50000;
  std::string text = R"({"mcpServers": {"r": {"type": "http", "url": "https://example.test/",
                                              "headers": {)";
  for (int i = 0; i < kCount; ++i) {
    if (i > 0) text += ",";
    text += "\"X-H" + std::to_string(i) + "\": \"${UNSET_H" + std::to_string(i) + "}\"";
  }
  text += R"(}}, "s": {"command": "srv", "env": {)";
  for (int i = 0; i < kCount; ++i) {
    if (i > 0) text += ",";
    text += "\"E" + std::to_string(i) + "\": \"${UNSET_E" + std::to_string(i) + "}\"";
  }
  text += "}}}}";
  const double start = sluice::test::thread_cpu_seconds();
  ConfigFile file = server_entry_parse_ok(text);
  const double took = sluice::test::thread_cpu_seconds() - start;
  ASSERT_THAT(file.servers, SizeIs(2));
  EXPECT_THAT(file.servers[0].missing_variables, SizeIs(kCount));
  EXPECT_THAT(file.servers[1].missing_variables, SizeIs(kCount));
  EXPECT_LT(took, 5.0) << "parsing took " << took << " s of CPU";
}

TEST(ServerEntry, HeaderNamesStillCollideIgnoringCase) {
  EXPECT_THAT(server_entry_parse_error(R"({"mcpServers": {"r": {"url": "https://example.test/",
                                                   "headers": {"X-Key": "a", "x-KEY": "b"}}}})"),
              HasSubstr("duplicate header name"));
}

}  // namespace
}  // namespace sluice::config

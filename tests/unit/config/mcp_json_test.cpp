#include "config/mcp_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

namespace sluice::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;
using ::testing::StartsWith;

// Planted in every rejected value; no error or warning may contain it.
constexpr std::string_view kMcpJsonSentinel = "SNTL7q";

const std::filesystem::path kMcpJsonFile = "/projects/app/.mcp.json";

EnvLookup mcp_json_env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ConfigFile parse_ok(std::string_view text, const EnvLookup& env = {}) {
  core::Result<ConfigFile> file = parse_text(text, kMcpJsonFile, Origin::project, env);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  return file ? *file : ConfigFile{};
}

std::string parse_error(std::string_view text) {
  core::Result<ConfigFile> file = parse_text(text, kMcpJsonFile, Origin::project, EnvLookup{});
  EXPECT_FALSE(file.has_value());
  return file ? std::string() : file.error().message;
}

const StdioServer& stdio(const ServerConfig& s) { return std::get<StdioServer>(s.transport); }
const RemoteServer& remote(const ServerConfig& s) { return std::get<RemoteServer>(s.transport); }

bool contains_sentinel(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find(kMcpJsonSentinel) != std::string_view::npos ||
         lower.find("sntl7q") != std::string::npos;
}

TEST(McpJson, ParsesAStdioServerWithAllFields) {
  ConfigFile file = parse_ok(R"({"mcpServers": {"files": {
      "command": "/usr/bin/fs-server", "args": ["--root", "."],
      "env": {"B": "2", "A": "1"}, "cwd": "/srv"}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  const ServerConfig& s = file.servers[0];
  EXPECT_EQ(s.name, "files");
  EXPECT_EQ(s.source_file, kMcpJsonFile.string());
  EXPECT_EQ(s.origin, Origin::project);
  EXPECT_EQ(stdio(s).command, "/usr/bin/fs-server");
  EXPECT_THAT(stdio(s).args, ElementsAre("--root", "."));
  EXPECT_THAT(stdio(s).env, ElementsAre(Pair("B", "2"), Pair("A", "1")));
  EXPECT_EQ(stdio(s).cwd, "/srv");
  EXPECT_THAT(s.missing_variables, IsEmpty());
  EXPECT_THAT(s.warnings, IsEmpty());
}

TEST(McpJson, KeepsServersInFileOrder) {
  ConfigFile file = parse_ok(
      R"({"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"},
                         "mid": {"command": "m"}}})");
  ASSERT_THAT(file.servers, SizeIs(3));
  EXPECT_EQ(file.servers[0].name, "zeta");
  EXPECT_EQ(file.servers[1].name, "alpha");
  EXPECT_EQ(file.servers[2].name, "mid");
}

TEST(McpJson, AcceptsAnExplicitStdioType) {
  ConfigFile file = parse_ok(R"({"mcpServers": {"s": {"type": "stdio", "command": "srv"}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_EQ(stdio(file.servers[0]).command, "srv");
}

TEST(McpJson, ParsesRemoteServersWithTheirType) {
  ConfigFile file = parse_ok(R"({"mcpServers": {
      "h": {"type": "http", "url": "https://example.com/mcp",
            "headers": {"Authorization": "Bearer x", "X-Trace": "1"}},
      "s": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
      "streamable": {"type": "streamable-http", "url": "https://example.com/a"},
      "untyped": {"url": "HTTPS://example.com/b"}}})");
  ASSERT_THAT(file.servers, SizeIs(4));
  EXPECT_EQ(remote(file.servers[0]).type, "http");
  EXPECT_EQ(remote(file.servers[0]).url, "https://example.com/mcp");
  EXPECT_THAT(remote(file.servers[0]).headers,
              ElementsAre(Pair("Authorization", "Bearer x"), Pair("X-Trace", "1")));
  EXPECT_EQ(remote(file.servers[1]).type, "sse");
  EXPECT_EQ(remote(file.servers[1]).url, "http://127.0.0.1:9000/sse");
  EXPECT_EQ(remote(file.servers[2]).type, "http");
  EXPECT_EQ(remote(file.servers[3]).type, "http");
}

TEST(McpJson, IgnoresUnknownKeys) {
  ConfigFile file = parse_ok(R"({"version": 3, "mcpServers": {"s": {"command": "c",
      "description": {"nested": [1, 2]}, "url": "ignored for stdio"}}, "extra": null})");
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_EQ(stdio(file.servers[0]).command, "c");
}

TEST(McpJson, EmptyObjectHasNoServers) {
  ConfigFile file = parse_ok("{}");
  EXPECT_THAT(file.servers, IsEmpty());
  EXPECT_THAT(file.auto_start, IsEmpty());
}

TEST(McpJson, SkipsAUtf8ByteOrderMark) {
  ConfigFile file = parse_ok("\xEF\xBB\xBF{\"mcpServers\": {\"s\": {\"command\": \"c\"}}}");
  EXPECT_THAT(file.servers, SizeIs(1));
}

TEST(McpJson, AutoStartKeepsFileOrderWithoutDuplicates) {
  ConfigFile file = parse_ok(R"({"autoStart": ["b", "a", "b", "c"]})");
  EXPECT_THAT(file.auto_start, ElementsAre("b", "a", "c"));
}

TEST(McpJson, RelativeCommandWithSlashResolvesAgainstTheFilesFolder) {
  ConfigFile file = parse_ok(R"({"mcpServers": {
      "rel": {"command": "./bin/server"},
      "up": {"command": "../tools/srv"},
      "bare": {"command": "npx"},
      "abs": {"command": "/opt/srv"}}})");
  ASSERT_THAT(file.servers, SizeIs(4));
  EXPECT_EQ(stdio(file.servers[0]).command, "/projects/app/bin/server");
  EXPECT_EQ(stdio(file.servers[1]).command, "/projects/tools/srv");
  EXPECT_EQ(stdio(file.servers[2]).command, "npx");
  EXPECT_EQ(stdio(file.servers[3]).command, "/opt/srv");
}

TEST(McpJson, RelativeCwdResolvesAgainstTheFilesFolder) {
  ConfigFile file = parse_ok(R"({"mcpServers": {
      "rel": {"command": "c", "cwd": "sub/dir"},
      "dot": {"command": "c", "cwd": "."},
      "abs": {"command": "c", "cwd": "/var/lib"},
      "none": {"command": "c"}}})");
  ASSERT_THAT(file.servers, SizeIs(4));
  EXPECT_EQ(stdio(file.servers[0]).cwd, "/projects/app/sub/dir");
  EXPECT_EQ(stdio(file.servers[1]).cwd, "/projects/app");
  EXPECT_EQ(stdio(file.servers[2]).cwd, "/var/lib");
  EXPECT_EQ(stdio(file.servers[3]).cwd, "");
}

TEST(McpJson, InterpolatesCommandArgsEnvUrlAndHeaders) {
  EnvLookup env = mcp_json_env_of(
      {{"TOOLS", "/opt/tools"}, {"PORT", "8080"}, {"TOKEN", "tok"}, {"HOST", "example.com"}});
  ConfigFile file = parse_ok(R"({"mcpServers": {
      "local": {"command": "${TOOLS}/srv", "args": ["--port=${PORT}", "${LEVEL:-info}"],
                "env": {"API_TOKEN": "${TOKEN}", "PLAIN": "$TOKEN"}},
      "remote": {"type": "http", "url": "https://${HOST}/mcp",
                 "headers": {"Authorization": "Bearer ${TOKEN}"}}}})",
                             env);
  ASSERT_THAT(file.servers, SizeIs(2));
  EXPECT_EQ(stdio(file.servers[0]).command, "/opt/tools/srv");
  EXPECT_THAT(stdio(file.servers[0]).args, ElementsAre("--port=8080", "info"));
  EXPECT_THAT(stdio(file.servers[0]).env,
              ElementsAre(Pair("API_TOKEN", "tok"), Pair("PLAIN", "$TOKEN")));
  EXPECT_EQ(remote(file.servers[1]).url, "https://example.com/mcp");
  EXPECT_THAT(remote(file.servers[1]).headers, ElementsAre(Pair("Authorization", "Bearer tok")));
  EXPECT_THAT(file.servers[0].warnings, IsEmpty());
  EXPECT_THAT(file.servers[1].warnings, IsEmpty());
}

TEST(McpJson, UnsetVariableLeavesTheServerListedWithAnEmptyValueAndAWarning) {
  ConfigFile file = parse_ok(R"({"mcpServers": {"github": {"type": "http",
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}", "X-Other": "${GITHUB_TOKEN}"}}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  const ServerConfig& s = file.servers[0];
  EXPECT_THAT(remote(s).headers,
              ElementsAre(Pair("Authorization", "Bearer "), Pair("X-Other", "")));
  EXPECT_THAT(s.missing_variables, ElementsAre("GITHUB_TOKEN"));
  ASSERT_THAT(s.warnings, SizeIs(1));
  EXPECT_THAT(s.warnings[0], HasSubstr("server github"));
  EXPECT_THAT(s.warnings[0], HasSubstr(kMcpJsonFile.string()));
  EXPECT_THAT(s.warnings[0], HasSubstr("GITHUB_TOKEN is not set"));
}

TEST(McpJson, HeaderVariableWithALineBreakIsNotUsedAndItsValueNeverShown) {
  EnvLookup env = mcp_json_env_of({{"TOKEN", std::string(kMcpJsonSentinel) + "\r\nInjected: 1"}});
  ConfigFile file = parse_ok(R"({"mcpServers": {"api": {"url": "https://a.example/mcp",
      "headers": {"Authorization": "Bearer ${TOKEN}"}}}})",
                             env);
  ASSERT_THAT(file.servers, SizeIs(1));
  const ServerConfig& s = file.servers[0];
  EXPECT_THAT(remote(s).headers, ElementsAre(Pair("Authorization", "Bearer ")));
  EXPECT_THAT(s.missing_variables, ElementsAre("TOKEN"));
  ASSERT_THAT(s.warnings, SizeIs(1));
  EXPECT_THAT(s.warnings[0], HasSubstr("variable TOKEN holds a character not allowed"));
  EXPECT_FALSE(contains_sentinel(s.warnings[0]));
}

TEST(McpJson, EnvValuesMayHoldLineBreaks) {
  EnvLookup env = mcp_json_env_of({{"PEM", "-----BEGIN-----\nabc\n-----END-----"}});
  ConfigFile file = parse_ok(R"({"mcpServers": {"s": {"command": "c",
      "env": {"KEY": "${PEM}", "LITERAL": "a\nb"}}}})",
                             env);
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_THAT(
      stdio(file.servers[0]).env,
      ElementsAre(Pair("KEY", "-----BEGIN-----\nabc\n-----END-----"), Pair("LITERAL", "a\nb")));
  EXPECT_THAT(file.servers[0].missing_variables, IsEmpty());
}

TEST(McpJson, UnsetVariableInACommandStillListsTheServer) {
  ConfigFile file = parse_ok(R"({"mcpServers": {"s": {"command": "${NODE_BIN}",
      "args": ["${A}", "${B:-b}"]}}})");
  ASSERT_THAT(file.servers, SizeIs(1));
  EXPECT_EQ(stdio(file.servers[0]).command, "");
  EXPECT_THAT(stdio(file.servers[0]).args, ElementsAre("", "b"));
  EXPECT_THAT(file.servers[0].missing_variables, ElementsAre("NODE_BIN", "A"));
  EXPECT_THAT(file.servers[0].warnings, SizeIs(2));
}

TEST(McpJson, ServerNamesFollowTheCharsetAndSeparatorRules) {
  EXPECT_TRUE(is_valid_server_name("github"));
  EXPECT_TRUE(is_valid_server_name("my-server.v2_beta"));
  EXPECT_TRUE(is_valid_server_name("0x"));
  EXPECT_TRUE(is_valid_server_name(std::string(64, 'a')));
  EXPECT_FALSE(is_valid_server_name(""));
  EXPECT_FALSE(is_valid_server_name(std::string(65, 'a')));
  EXPECT_FALSE(is_valid_server_name("a__b"));
  EXPECT_FALSE(is_valid_server_name("a_"));
  EXPECT_FALSE(is_valid_server_name("a::b"));
  EXPECT_FALSE(is_valid_server_name("-flag"));
  EXPECT_FALSE(is_valid_server_name(".hidden"));
  EXPECT_FALSE(is_valid_server_name("_private"));
  EXPECT_FALSE(is_valid_server_name("with space"));
  EXPECT_FALSE(is_valid_server_name("caf\xC3\xA9"));
  EXPECT_FALSE(is_valid_server_name("a\x1b[31m"));
}

// Every malformed file: exactly one problem, at the expected JSON path, without the value.
struct MalformedCase {
  std::string label;
  std::string text;
  std::string expected;  // the start of the error message
};

std::string with_sentinel(std::string text) {
  for (std::size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) {
    text.replace(at, 1, kMcpJsonSentinel);
  }
  return text;
}

class MalformedFile : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedFile, YieldsOneValueFreeErrorWithTheJsonPath) {
  const MalformedCase& c = GetParam();
  std::string text = with_sentinel(c.text);
  ASSERT_TRUE(contains_sentinel(text) || c.label == "number_in_args");
  std::string error = parse_error(text);
  EXPECT_THAT(error, StartsWith(c.expected));
  EXPECT_FALSE(contains_sentinel(error)) << error;
  EXPECT_EQ(error.find("987654"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    McpJson, MalformedFile,
    ::testing::Values(
        MalformedCase{"syntax", R"({"mcpServers": {"a": {"command": "@)", "invalid JSON"},
        MalformedCase{"trailing_comma", R"({"mcpServers": {"a": {"command": "@"},}})",
                      "invalid JSON"},
        MalformedCase{"duplicate_key",
                      R"({"mcpServers": {"a": {"command": "x"}, "a": {"command": "@"}}})",
                      "JSON object with a duplicate key"},
        MalformedCase{"too_deep", std::string(100, '[') + "\"@\"" + std::string(100, ']'),
                      "JSON nested deeper than 64 levels"},
        MalformedCase{"root_not_object", R"(["@"])",
                      "$: expected an object, found an array of 1 item"},
        MalformedCase{"servers_not_object", R"({"mcpServers": ["@"]})",
                      "$.mcpServers: expected an object, found an array of 1 item"},
        MalformedCase{"entry_not_object", R"({"mcpServers": {"ok": {"command": "c"}, "b": "@"}})",
                      "$.mcpServers.entry (server entry 2): expected an object, found a string "
                      "of 6 characters"},
        MalformedCase{
            "name_with_space", R"({"mcpServers": {"bad @": {"command": "c"}}})",
            "$.mcpServers.entry (server entry 1): invalid server name (a string of 10 characters)"},
        MalformedCase{"name_with_separator", R"({"mcpServers": {"a__@": {"command": "c"}}})",
                      "$.mcpServers.entry (server entry 1): invalid server name"},
        MalformedCase{
            "empty_name", R"({"mcpServers": {"": {"command": "@"}}})",
            "$.mcpServers.entry (server entry 1): invalid server name (a string of 0 characters)"},
        MalformedCase{"name_with_escape",
                      "{\"mcpServers\": {\"a\\u001b[31m@\": {\"command\": \"c\"}}}",
                      "$.mcpServers.entry (server entry 1): invalid server name"},
        MalformedCase{"neither_command_nor_url", R"({"mcpServers": {"a": {"args": ["@"]}}})",
                      "$.mcpServers.entry (server entry 1): expected a \"command\""},
        MalformedCase{"type_not_string", R"({"mcpServers": {"a": {"type": ["@"]}}})",
                      "$.mcpServers.entry.type (server entry 1): expected a string, found an array "
                      "of 1 item"},
        MalformedCase{
            "unknown_type", R"({"mcpServers": {"a": {"type": "@", "command": "c"}}})",
            "$.mcpServers.entry.type (server entry 1): unknown transport type (a string of 6 "
            "characters)"},
        MalformedCase{"stdio_without_command", R"({"mcpServers": {"a": {"type": "stdio",
                      "args": ["@"]}}})",
                      "$.mcpServers.entry.command (server entry 1): missing"},
        MalformedCase{
            "command_not_string", R"({"mcpServers": {"a": {"command": {"@": 1}}}})",
            "$.mcpServers.entry.command (server entry 1): expected a non-empty string, found an "
            "object with 1 key"},
        MalformedCase{"command_empty", R"({"mcpServers": {"@": {"command": ""}}})",
                      "$.mcpServers.entry.command (server entry 1): expected a non-empty string"},
        MalformedCase{
            "command_with_nul", R"({"mcpServers": {"a": {"command": "@\u0000x"}}})",
            "$.mcpServers.entry.command (server entry 1): a string of 8 characters contains a NUL "
            "character"},
        MalformedCase{"args_not_array", R"({"mcpServers": {"a": {"command": "c",
                      "args": "@"}}})",
                      "$.mcpServers.entry.args (server entry 1): expected an array of strings, "
                      "found a string"},
        MalformedCase{"number_in_args", R"({"mcpServers": {"a": {"command": "c",
                      "args": ["x", "y", 987654321]}}})",
                      "$.mcpServers.entry.args[2] (server entry 1): expected a string, found an "
                      "integer"},
        MalformedCase{"object_in_args", R"({"mcpServers": {"a": {"command": "c",
                      "args": [{"@": "@"}]}}})",
                      "$.mcpServers.entry.args[0] (server entry 1): expected a string, found an "
                      "object with 1 "
                      "key"},
        MalformedCase{"env_not_object", R"({"mcpServers": {"a": {"command": "c",
                      "env": ["@"]}}})",
                      "$.mcpServers.entry.env (server entry 1): expected an object of strings"},
        MalformedCase{
            "env_value_not_string", R"({"mcpServers": {"a": {"command": "c",
                      "env": {"@": true}}}})",
            "$.mcpServers.entry.env.entry (server entry 1): expected a string, found a boolean"},
        MalformedCase{"env_name_with_equals", R"({"mcpServers": {"a": {"command": "c",
                      "env": {"A=@": "v"}}}})",
                      "$.mcpServers.entry.env.entry (server entry 1): invalid variable name"},
        MalformedCase{"cwd_not_string", R"({"mcpServers": {"@": {"command": "c",
                      "cwd": 987654}}})",
                      "$.mcpServers.entry.cwd (server entry 1): expected a non-empty string, found "
                      "an integer"},
        MalformedCase{"remote_without_url", R"({"mcpServers": {"a": {"type": "sse",
                      "headers": {"X": "@"}}}})",
                      "$.mcpServers.entry.url (server entry 1): missing"},
        MalformedCase{"url_not_http", R"({"mcpServers": {"a": {"url": "ftp://@/x"}}})",
                      "$.mcpServers.entry.url (server entry 1): a string of 14 characters is not "
                      "an http:// or "
                      "https:// URL"},
        MalformedCase{
            "url_with_line_break", R"({"mcpServers": {"a": {"url": "https://@\n"}}})",
            "$.mcpServers.entry.url (server entry 1): a string of 15 characters contains a control "
            "character"},
        MalformedCase{"headers_not_object", R"({"mcpServers": {"a": {"url": "https://h",
                      "headers": "@"}}})",
                      "$.mcpServers.entry.headers (server entry 1): expected an object of strings"},
        MalformedCase{"header_value_not_string", R"({"mcpServers": {"a": {"url": "https://h",
                      "headers": {"X-@": 987654}}}})",
                      "$.mcpServers.entry.headers.entry (server entry 1): expected a string, found "
                      "an integer"},
        MalformedCase{"header_name_invalid", R"({"mcpServers": {"a": {"url": "https://h",
                      "headers": {"Bad Name @": "v"}}}})",
                      "$.mcpServers.entry.headers.entry (server entry 1): invalid header name"},
        MalformedCase{"header_value_injection", R"({"mcpServers": {"a": {"url": "https://h",
                      "headers": {"X-A": "@\r\nInjected: 1"}}}})",
                      "$.mcpServers.entry.headers.entry (server entry 1): a string of 19 "
                      "characters contains a "
                      "control character"},
        MalformedCase{"header_names_differ_in_case", R"({"mcpServers": {"a": {"url": "https://h",
                      "headers": {"Authorization": "x", "authorization": "@"}}}})",
                      "$.mcpServers.entry.headers.entry (server entry 1): duplicate header name"},
        MalformedCase{"auto_start_not_array", R"({"autoStart": "@"})",
                      "$.autoStart: expected an array of server names, found a string"},
        MalformedCase{"auto_start_not_string", R"({"autoStart": ["a", {"@": 1}]})",
                      "$.autoStart[1]: expected a server name, found an object with 1 key"},
        MalformedCase{"auto_start_bad_name", R"({"autoStart": ["ok", "bad @"]})",
                      "$.autoStart[1]: invalid server name (a string of 10 characters)"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.label; });

}  // namespace
}  // namespace sluice::config

// The operator's policy: glob matching, allow and deny lists and the reasons they give, the
// "policy", "maxOutputBytes" and "redact" keys of the "sluice" blocks (value-free errors), and
// servers withheld at discovery.
#include "config/access_policy.hpp"
#include "config/discovery.hpp"
#include "config/glob.hpp"
#include "config/mcp_json.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

constexpr std::string_view kSentinel = "SNTL7q";
const std::filesystem::path kFile = "/home/op/.mcp.json";

core::Result<ConfigFile> parse(std::string_view text) {
  return parse_text(text, kFile, Origin::user, EnvLookup{});
}

TEST(Glob, AStarMatchesAnyRunOfCharactersIncludingNone) {
  EXPECT_TRUE(glob_match("delete_*", "delete_"));
  EXPECT_TRUE(glob_match("delete_*", "delete_repo"));
  EXPECT_TRUE(glob_match("*_repo", "delete_repo"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_TRUE(glob_match("a*b*c", "abc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
  EXPECT_FALSE(glob_match("delete_*", "undelete_repo"));
}

TEST(Glob, AStarBacktracksToFindALaterMatch) {
  EXPECT_TRUE(glob_match("*ab", "aab"));
  EXPECT_TRUE(glob_match("*issue*comment", "create_issue_and_issue_comment"));
  EXPECT_FALSE(glob_match("*issue*comment", "create_issue_comments"));
}

TEST(Glob, AQuestionMarkMatchesExactlyOneCharacterEvenAMultiByteOne) {
  EXPECT_TRUE(glob_match("get_?", "get_a"));
  EXPECT_FALSE(glob_match("get_?", "get_"));
  EXPECT_FALSE(glob_match("get_?", "get_ab"));
  EXPECT_TRUE(glob_match("caf?", "caf\xC3\xA9"));
  EXPECT_FALSE(glob_match("caf??", "caf\xC3\xA9"));
}

TEST(Glob, EveryOtherCharacterMatchesItselfCaseSensitively) {
  EXPECT_TRUE(glob_match("gateway.restart_server", "gateway.restart_server"));
  EXPECT_FALSE(glob_match("gateway.restart_server", "gateway.Restart_server"));
  EXPECT_FALSE(glob_match("gateway.restart", "gateway.restart_server"));
  EXPECT_FALSE(glob_match("", "x"));
}

TEST(AccessPolicy, DenyNamesTheListTheEntryAndItsPattern) {
  AccessPolicy p;
  p.deny.tools = {"fs::write_file", "*::drop_*", "github::delete_*"};
  EXPECT_EQ(p.denial(Subject::tools, "github", "delete_repo"),
            "denied by policy.deny.tools entry 3 (\"github::delete_*\")");
  EXPECT_EQ(p.denial(Subject::tools, "db", "drop_table"),
            "denied by policy.deny.tools entry 2 (\"*::drop_*\")");
  EXPECT_EQ(p.denial(Subject::tools, "github", "get_repo"), "");
  // The server part matches the server, the name part the name: no match across them.
  EXPECT_EQ(p.denial(Subject::tools, "fs::write", "file"), "");
}

TEST(AccessPolicy, AnEmptyAllowListAllowsAllAndANonEmptyOneRestricts) {
  AccessPolicy p;
  EXPECT_TRUE(p.allows(Subject::prompts, "s", "anything"));
  p.allow.prompts = {"s::review_*"};
  EXPECT_TRUE(p.allows(Subject::prompts, "s", "review_code"));
  EXPECT_EQ(p.denial(Subject::prompts, "s", "summarize"),
            "not allowed by policy.allow.prompts (none of its 1 entry matches)");
  // Another subject's allow list does not restrict this one.
  EXPECT_TRUE(p.allows(Subject::tools, "s", "summarize"));
}

TEST(AccessPolicy, DenyWinsOverAllow) {
  AccessPolicy p;
  p.allow.servers = {"git*"};
  p.deny.servers = {"gitlab"};
  EXPECT_TRUE(p.allows(Subject::servers, {}, "github"));
  EXPECT_EQ(p.denial(Subject::servers, {}, "gitlab"),
            "denied by policy.deny.servers entry 1 (\"gitlab\")");
  EXPECT_FALSE(p.allows(Subject::servers, {}, "fs"));
}

TEST(AccessPolicy, MetaToolAndResourcePatterns) {
  AccessPolicy p;
  p.deny.meta_tools = {"gateway.restart_*"};
  p.deny.resources = {"fs::file:///etc/*"};
  EXPECT_FALSE(p.allows(Subject::meta_tools, {}, "gateway.restart_server"));
  EXPECT_TRUE(p.allows(Subject::meta_tools, {}, "gateway.invoke"));
  EXPECT_FALSE(p.allows(Subject::resources, "fs", "file:///etc/shadow"));
  EXPECT_TRUE(p.allows(Subject::resources, "fs", "file:///home/a"));
}

TEST(PolicyKeys, ThePolicyBlockIsReadFromTheSluiceObject) {
  auto file = parse(R"({"mcpServers": {}, "sluice": {"policy": {
      "allow": {"servers": ["gh*"]},
      "deny": {"tools": ["github::delete_*"], "prompts": ["a::b"], "resources": ["a::x:*"],
               "metaTools": ["gateway.restart_server"], "servers": ["evil"]}}}})");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_TRUE(file->policy.access.has_value());
  const AccessPolicy& p = *file->policy.access;
  EXPECT_THAT(p.allow.servers, ElementsAre("gh*"));
  EXPECT_THAT(p.deny.tools, ElementsAre("github::delete_*"));
  EXPECT_THAT(p.deny.prompts, ElementsAre("a::b"));
  EXPECT_THAT(p.deny.resources, ElementsAre("a::x:*"));
  EXPECT_THAT(p.deny.meta_tools, ElementsAre("gateway.restart_server"));
  EXPECT_THAT(p.deny.servers, ElementsAre("evil"));
}

TEST(PolicyKeys, OutputCapsAreReadGatewayWidePerServerAndPerTool) {
  auto file = parse(R"({"sluice": {"maxOutputBytes": 32768}, "mcpServers": {"a": {
      "command": "c", "sluice": {"maxOutputBytes": 4096,
      "tools": {"big": {"maxOutputBytes": 1024, "budget": 2}, "plain": 3}}}}})");
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->policy.max_output_bytes, 32768u);
  const ServerPolicy& s = file->servers[0].policy;
  EXPECT_EQ(s.max_output_bytes, 4096u);
  EXPECT_THAT(s.tool_output_caps, ElementsAre(Pair("big", 1024u)));
  EXPECT_THAT(s.tool_budgets, ElementsAre(Pair("big", 2u), Pair("plain", 3u)));
}

TEST(PolicyKeys, RedactSettingsAreRead) {
  auto file = parse(R"({"mcpServers": {}, "sluice": {"redact": {"builtIn": false,
      "patterns": ["acme_[0-9a-f]{32}"]}}})");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_TRUE(file->policy.redact.has_value());
  EXPECT_FALSE(file->policy.redact->built_in);
  EXPECT_THAT(file->policy.redact->patterns, ElementsAre("acme_[0-9a-f]{32}"));
}

struct BadKey {
  std::string_view name;
  std::string text;  // `@` is replaced with the sentinel
  std::string_view error;
};

class PolicyKeysRefused : public ::testing::TestWithParam<BadKey> {};

TEST_P(PolicyKeysRefused, WithAValueFreeProblem) {
  std::string text = GetParam().text;
  for (std::size_t at = text.find('@'); at != std::string::npos; at = text.find('@', at)) {
    text.replace(at, 1, kSentinel);
  }
  auto file = parse(text);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message, GetParam().error);
  EXPECT_THAT(file.error().message, Not(HasSubstr(kSentinel)));
}

INSTANTIATE_TEST_SUITE_P(
    Table, PolicyKeysRefused,
    ::testing::Values(
        BadKey{"policy_not_object", R"({"sluice": {"policy": ["@"]}})",
               "$.sluice.policy: expected an object, found an array of 1 item"},
        BadKey{"deny_list_not_array", R"({"sluice": {"policy": {"deny": {"tools": "@"}}}})",
               "$.sluice.policy.deny.tools: expected an array of strings, found a string of 6 "
               "characters"},
        BadKey{"tool_pattern_without_server",
               R"({"sluice": {"policy": {"deny": {"tools": ["ok::x", "@"]}}}})",
               "$.sluice.policy.deny.tools[1]: expected a pattern server::name (at most 512 "
               "printable characters, no quote or backslash), found a string of 6 characters"},
        BadKey{"pattern_with_control_character",
               R"({"sluice": {"policy": {"allow": {"servers": ["@\n"]}}}})",
               "$.sluice.policy.allow.servers[0]: expected a server name pattern (at most 512 "
               "printable characters, no quote or backslash), found a string of 7 characters"},
        BadKey{"cap_too_small", R"({"sluice": {"maxOutputBytes": 10}})",
               "$.sluice.maxOutputBytes: must be at least 256 (an integer)"},
        BadKey{"tool_cap_not_integer",
               R"({"mcpServers": {"a": {"command": "c", "sluice": {"tools": {"t": )"
               R"({"maxOutputBytes": "@"}}}}}})",
               "$.mcpServers.entry.sluice.tools.entry.maxOutputBytes (server entry 1): expected "
               "an integer, found a string of 6 characters"},
        BadKey{"redact_pattern_not_re2", R"({"sluice": {"redact": {"patterns": ["(@"]}}})",
               "$.sluice.redact.patterns[0]: RE2 cannot compile this pattern (a string of 7 "
               "characters)"},
        BadKey{"redact_pattern_matches_empty", R"({"sluice": {"redact": {"patterns": ["x*"]}}})",
               "$.sluice.redact.patterns[0]: this pattern matches the empty string"},
        BadKey{"redact_built_in_not_bool", R"({"sluice": {"redact": {"builtIn": "@"}}})",
               "$.sluice.redact.builtIn: expected a boolean, found a string of 6 characters"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PolicyWithholding, AServerThePolicyWithholdsLeavesTheConfigurationWithAWarning) {
  test::TempDir dir;
  test::write(dir.path() / "home/.mcp.json", R"({
      "mcpServers": {"github": {"command": "gh"}, "evil": {"command": "e"},
                     "fs": {"command": "f"}},
      "autoStart": ["evil", "fs"],
      "sluice": {"policy": {"allow": {"servers": ["github", "evil"]},
                            "deny": {"servers": ["ev*"]}}}})");
  DiscoveryOptions o;
  o.cwd = dir.path();
  o.home = dir.path() / "home";
  GatewayConfig config = discover(o);
  ASSERT_EQ(config.servers.size(), 1u);
  EXPECT_EQ(config.servers[0].name, "github");
  EXPECT_TRUE(config.auto_start.empty());
  std::string warnings;
  for (const auto& w : config.warnings) warnings += w + "\n";
  EXPECT_THAT(warnings, HasSubstr("server evil"));
  EXPECT_THAT(warnings, HasSubstr("denied by policy.deny.servers entry 1 (\"ev*\")"));
  EXPECT_THAT(warnings, HasSubstr("not allowed by policy.allow.servers"));
}

TEST(PolicyWithholding, AProjectFilesPolicyIsIgnored) {
  test::TempDir dir;
  test::write(dir.path() / "proj/.git/HEAD", "");
  test::write(dir.path() / "proj/.mcp.json", R"({"mcpServers": {},
      "sluice": {"policy": {"deny": {"servers": ["*"]}}, "maxOutputBytes": 300}})");
  test::write(dir.path() / "home/.mcp.json", R"({"mcpServers": {"a": {"command": "c"}}})");
  DiscoveryOptions o;
  o.cwd = dir.path() / "proj";
  o.home = dir.path() / "home";
  GatewayConfig config = discover(o);
  EXPECT_TRUE(config.policy.access.empty());
  EXPECT_FALSE(config.policy.max_output_bytes.has_value());
  ASSERT_EQ(config.servers.size(), 1u);
}

}  // namespace
}  // namespace sluice::config

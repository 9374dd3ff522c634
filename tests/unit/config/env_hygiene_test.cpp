#include "config/env_hygiene.hpp"

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

class RefusedName : public ::testing::TestWithParam<std::string_view> {};

TEST_P(RefusedName, IsRefusedWhateverItsValue) {
  EXPECT_TRUE(refused_variable(GetParam(), "").has_value());
  EXPECT_TRUE(refused_variable(GetParam(), "/usr/lib/x").has_value());
}

INSTANTIATE_TEST_SUITE_P(
    EnvHygiene, RefusedName,
    ::testing::Values("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_DEBUG_OUTPUT", "LD_BIND_NOW",
                      "DYLD_INSERT_LIBRARIES", "GCONV_PATH", "GLIBC_TUNABLES", "BASH_ENV", "ENV",
                      "ZDOTDIR", "BASH_FUNC_ls%%", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
                      "IFS", "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB",
                      "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP",
                      "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "OPENSSL_CONF",
                      "OPENSSL_ENGINES", "OPENSSL_MODULES", "SSLKEYLOGFILE"));

class AllowedName : public ::testing::TestWithParam<std::string_view> {};

TEST_P(AllowedName, IsPassedOn) { EXPECT_FALSE(refused_variable(GetParam(), "x").has_value()); }

// What servers are configured with every day, and names that only look like refused ones.
INSTANTIATE_TEST_SUITE_P(EnvHygiene, AllowedName,
                         ::testing::Values("PATH", "HOME", "GITHUB_TOKEN", "NODE_PATH", "LOG_LEVEL",
                                           "LDFLAGS", "ld_preload", "ENVIRONMENT", "MY_ENV",
                                           "CLASSPATH", "LANG", "NODE_ENV"));

TEST(EnvHygiene, NodeOptionsIsRefusedOnlyWhenItAsksToPreloadCode) {
  EXPECT_FALSE(refused_variable("NODE_OPTIONS", "--max-old-space-size=4096").has_value());
  EXPECT_FALSE(refused_variable("NODE_OPTIONS", "--enable-source-maps --no-warnings"));
  for (std::string_view evil :
       {"--require ./x.js", "--require=./x.js", "-r ./x.js", "-r./x.js",
        "--max-old-space-size=64 --import ./x.mjs", "--loader ./l.mjs",
        "--experimental-loader=./l.mjs", "--inspect", "--inspect-brk=0",
        "--openssl-config=/tmp/o.cnf", "  \"--require\" x", "--tls-keylog=/tmp/k"}) {
    EXPECT_TRUE(refused_variable("NODE_OPTIONS", evil).has_value()) << evil;
  }
}

TEST(EnvHygiene, ALabelShowsAPlainNameAndOnlyTheFamilyOfAnyOther) {
  EXPECT_EQ(refused_variable_label("LD_PRELOAD"), "LD_PRELOAD");
  EXPECT_EQ(refused_variable_label("BASH_FUNC_ls%%"), "a variable starting with BASH_FUNC_");
}

TEST(EnvHygiene, TheRefusalNamesEachVariableAndItsDangerAndNoValue) {
  EXPECT_THAT(env_refusal({{"GITHUB_TOKEN", "secret"}, {"PATH", "/bin"}}), IsEmpty());
  std::string one = env_refusal({{"LD_PRELOAD", "/tmp/sentinel-evil.so"}});
  EXPECT_THAT(one, HasSubstr("its env sets LD_PRELOAD, which sluice never passes"));
  EXPECT_THAT(one, HasSubstr("dynamic loader"));
  EXPECT_THAT(one, Not(HasSubstr("sentinel-evil")));
  std::string two = env_refusal({{"BASH_ENV", "/tmp/sentinel-a"},
                                 {"OK", "x"},
                                 {"NODE_OPTIONS", "--require /tmp/sentinel-b"}});
  EXPECT_THAT(two, HasSubstr("BASH_ENV (it "));
  EXPECT_THAT(two, HasSubstr("NODE_OPTIONS (it "));
  EXPECT_THAT(two, Not(HasSubstr("sentinel")));
}

EnvLookup only(std::string name, std::string value) {
  return [name = std::move(name),
          value = std::move(value)](std::string_view asked) -> std::optional<std::string> {
    if (asked == name) return value;
    return std::nullopt;
  };
}

TEST(EnvHygiene, AnEntryThatSetsARefusedVariableIsKeptRefusedWithAWarningAndTheFileServed) {
  auto file = parse_text(R"({"mcpServers": {
      "evil": {"command": "srv", "env": {"LD_PRELOAD": "/tmp/sentinel-x.so"}},
      "fine": {"command": "srv", "env": {"TOKEN": "t"}}}})",
                         "/work/.mcp.json", Origin::user, {});
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_EQ(file->servers.size(), 2u);
  EXPECT_THAT(file->servers[0].env_refusal, HasSubstr("LD_PRELOAD"));
  ASSERT_EQ(file->servers[0].warnings.size(), 1u);
  EXPECT_THAT(file->servers[0].warnings[0], HasSubstr("server evil (/work/.mcp.json)"));
  EXPECT_THAT(file->servers[0].warnings[0], HasSubstr("sluice does not start it"));
  EXPECT_THAT(file->servers[0].warnings[0], Not(HasSubstr("sentinel")));
  EXPECT_THAT(file->servers[1].env_refusal, IsEmpty());
}

TEST(EnvHygiene, AValueThatBecomesAPreloadThroughInterpolationIsRefused) {
  auto file = parse_text(R"({"mcpServers": {
      "node": {"command": "node", "env": {"NODE_OPTIONS": "${OPTS}"}}}})",
                         "/work/.mcp.json", Origin::user, only("OPTS", "--require /tmp/x.js"));
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_THAT(file->servers[0].env_refusal, HasSubstr("NODE_OPTIONS"));
  auto harmless = parse_text(R"({"mcpServers": {
      "node": {"command": "node", "env": {"NODE_OPTIONS": "${OPTS}"}}}})",
                             "/work/.mcp.json", Origin::user, only("OPTS", "--no-warnings"));
  ASSERT_TRUE(harmless);
  EXPECT_THAT(harmless->servers[0].env_refusal, IsEmpty());
}

}  // namespace
}  // namespace sluice::config

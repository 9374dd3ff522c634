// The settings of idle shutdown and indexing: a server entry's `idleTimeoutMs`, the
// gateway-wide `idleTimeoutMs`, `indexConcurrency`, `indexWaitMs` and `indexIdleMs`, their
// defaults and merge, and which servers are autoStart (the default idle timeout skips them).
// Range errors are in the bad-value tables of policy_test.cpp.
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using test::TempDir;
using test::write;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const ServerConfig* idle_settings_find(const GatewayConfig& config, std::string_view name) {
  for (const ServerConfig& s : config.servers) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(IdleSettingsParse, AServerEntryMayTurnIdleStopOffSetItsOwnTimeoutOrSayNothing) {
  core::Result<ConfigFile> file = parse_text(R"({"mcpServers": {
      "never": {"command": "c", "idleTimeoutMs": 0},
      "own": {"command": "c", "idleTimeoutMs": 1000},
      "longest": {"command": "c", "idleTimeoutMs": 86400000},
      "silent": {"command": "c"}}})",
                                             "/p/.mcp.json", Origin::user, EnvLookup{});
  ASSERT_TRUE(file.has_value()) << file.error().message;
  ASSERT_THAT(file->servers, SizeIs(4));
  EXPECT_EQ(file->servers[0].idle_timeout, milliseconds(0));
  EXPECT_EQ(file->servers[1].idle_timeout, milliseconds(1000));
  EXPECT_EQ(file->servers[2].idle_timeout, milliseconds(86400000));
  EXPECT_FALSE(file->servers[3].idle_timeout.has_value());
  EXPECT_THAT(file->warnings, IsEmpty()) << "idleTimeoutMs is a key sluice knows";
}

TEST(IdleSettingsParse, ZeroTurnsTheDefaultIdleTimeoutOff) {
  core::Result<ConfigFile> file =
      parse_text(R"({"sluice": {"idleTimeoutMs": 0, "indexWaitMs": 0, "indexIdleMs": 0}})",
                 "/p/.mcp.json", Origin::user, EnvLookup{});
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_EQ(file->policy.idle_timeout, milliseconds(0));
  EXPECT_EQ(file->policy.index_wait, milliseconds(0));
  EXPECT_EQ(file->policy.index_idle, milliseconds(0));
  EXPECT_FALSE(file->policy.index_concurrency.has_value());
}

// Layout: <root>/home (the home folder), <root>/work/project (a git checkout, the working
// directory) and <root>/extra (--config files).
class IdleSettingsDiscovery : public ::testing::Test {
 protected:
  IdleSettingsDiscovery() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
  }
  fs::path home() const { return root_.path() / "home"; }
  fs::path project() const { return root_.path() / "work" / "project"; }
  fs::path extra(std::string_view name) const { return root_.path() / "extra" / name; }
  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.cwd = project();
    o.home = home();
    o.trust_project = true;  // about discovery, not trust (trust_store_test.cpp)
    return o;
  }

  TempDir root_;
};

TEST_F(IdleSettingsDiscovery, DefaultsAreTenMinutesEightAtOnceFiveSecondsAndThirtySeconds) {
  write(home() / ".mcp.json", R"({"mcpServers": {"a": {"command": "c"}}})");
  GatewayConfig config = discover(options());
  EXPECT_EQ(config.policy.idle_timeout, milliseconds(600000));
  EXPECT_EQ(config.policy.index_concurrency, 8u);
  EXPECT_EQ(config.policy.index_wait, milliseconds(5000));
  EXPECT_EQ(config.policy.index_idle, milliseconds(30000));
}

TEST_F(IdleSettingsDiscovery, EachKeyTakesTheFirstOperatorFileThatSetsIt) {
  write(home() / ".mcp.json", R"({"sluice": {"idleTimeoutMs": 0, "indexWaitMs": 100}})");
  write(extra("late.json"), R"({"sluice": {"idleTimeoutMs": 5000, "indexWaitMs": 9,
      "indexConcurrency": 2, "indexIdleMs": 1500}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.warnings, IsEmpty());
  EXPECT_EQ(config.policy.idle_timeout, milliseconds(0));
  EXPECT_EQ(config.policy.index_wait, milliseconds(100));
  EXPECT_EQ(config.policy.index_concurrency, 2u);
  EXPECT_EQ(config.policy.index_idle, milliseconds(1500));
}

TEST_F(IdleSettingsDiscovery, AProjectFileCannotChangeTheOperatorsIdleAndIndexSettings) {
  write(project() / ".mcp.json", R"({"mcpServers": {"p": {"command": "c"}},
      "sluice": {"idleTimeoutMs": 1000, "indexConcurrency": 64, "indexIdleMs": 0}})");
  GatewayConfig config = discover(options());
  EXPECT_EQ(config.policy.idle_timeout, milliseconds(600000));
  EXPECT_EQ(config.policy.index_concurrency, 8u);
  EXPECT_EQ(config.policy.index_idle, milliseconds(30000));
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], ::testing::HasSubstr("\"sluice\" settings are ignored"));
}

TEST_F(IdleSettingsDiscovery, EveryServerKnowsWhetherTheMergedAutoStartListNamesIt) {
  // "b" is listed by the other file than the one that defines it.
  write(home() / ".mcp.json", R"({"mcpServers": {"a": {"command": "c"}, "b": {"command": "c"}},
      "autoStart": ["a"]})");
  write(extra("late.json"), R"({"mcpServers": {"c": {"command": "c"}}, "autoStart": ["b"]})");
  DiscoveryOptions o = options();
  o.explicit_configs = {extra("late.json")};
  GatewayConfig config = discover(o);
  ASSERT_NE(idle_settings_find(config, "a"), nullptr);
  ASSERT_NE(idle_settings_find(config, "b"), nullptr);
  ASSERT_NE(idle_settings_find(config, "c"), nullptr);
  EXPECT_TRUE(idle_settings_find(config, "a")->auto_start);
  EXPECT_TRUE(idle_settings_find(config, "b")->auto_start);
  EXPECT_FALSE(idle_settings_find(config, "c")->auto_start);
}

}  // namespace
}  // namespace sluice::config

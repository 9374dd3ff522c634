// What discover() refuses to take from the files it reads: operator settings from a project
// file (issue 9 item 4), an entry that starts sluice itself (item 21); and that a large
// configuration is merged in time linear in its size (item 12).
#include "../cpu_time.hpp"
#include "config/discovery.hpp"
#include "config_files.hpp"
#include "core/file_identity.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr std::string_view kDiscoveryGuardsSentinel = "SNTL7q";

using test::TempDir;
using test::write;

void write_executable(const fs::path& file, std::string_view text) {
  write(file, text);
  ::chmod(file.c_str(), 0755);
}

std::vector<std::string> names_of(const GatewayConfig& config) {
  std::vector<std::string> names;
  for (const ServerConfig& s : config.servers) names.push_back(s.name);
  return names;
}

const ServerConfig* discovery_guards_find(const GatewayConfig& config, std::string_view name) {
  auto it = std::find_if(config.servers.begin(), config.servers.end(),
                         [&](const ServerConfig& s) { return s.name == name; });
  return it == config.servers.end() ? nullptr : &*it;
}

std::string json_string(const fs::path& p) { return "\"" + p.string() + "\""; }

class DiscoveryGuards : public ::testing::Test {
 protected:
  DiscoveryGuards() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
  }
  fs::path home() const { return root_.path() / "home"; }
  fs::path project() const { return root_.path() / "work" / "project"; }
  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.cwd = project();
    o.home = home();
    o.trust_project = true;  // about discovery, not trust (trust_store_test.cpp)
    return o;
  }
  TempDir root_;
};

// Item 4: a repository's .mcp.json cannot loosen what the operator set in ~/.mcp.json.
TEST_F(DiscoveryGuards, AProjectFileCannotLoosenTheOperatorsForbidForce) {
  write(project() / ".mcp.json", R"({"mcpServers": {"p": {"command": "srv"}},
                                     "sluice": {"forbidForce": false}})");
  write(home() / ".mcp.json", R"({"sluice": {"forbidForce": true}})");
  GatewayConfig config = discover(options());
  EXPECT_TRUE(config.policy.forbid_force);
  EXPECT_THAT(names_of(config), ElementsAre("p")) << "the project's servers are still served";
}

TEST_F(DiscoveryGuards, AProjectFilesSluiceBlocksAreIgnoredWithOneWarningNamingTheFile) {
  write(project() / ".mcp.json", R"({"mcpServers": {
        "p": {"command": "srv", "sluice": {"budget": 1024, "tools": {"SNTL7q": 1000}}},
        "q": {"command": "srv", "sluice": {"budget": 512}}},
      "sluice": {"mutatingBudget": 1024, "queueSize": 99999, "forbidForce": false}})");
  GatewayConfig config = discover(options());
  GatewayPolicy defaults;
  EXPECT_EQ(config.policy.mutating_budget, defaults.mutating_budget);
  EXPECT_EQ(config.policy.queue_size, defaults.queue_size);
  EXPECT_EQ(config.policy.forbid_force, defaults.forbid_force);
  ASSERT_NE(discovery_guards_find(config, "p"), nullptr);
  EXPECT_FALSE(discovery_guards_find(config, "p")->policy.budget.has_value());
  EXPECT_THAT(discovery_guards_find(config, "p")->policy.tool_budgets, IsEmpty());
  EXPECT_FALSE(discovery_guards_find(config, "q")->policy.budget.has_value());
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr((project() / ".mcp.json").string()));
  EXPECT_THAT(config.warnings[0], HasSubstr("\"sluice\""));
  EXPECT_THAT(config.warnings[0], HasSubstr("ignored"));
  EXPECT_THAT(config.warnings[0], Not(HasSubstr(kDiscoveryGuardsSentinel)));
}

TEST_F(DiscoveryGuards, UserAndExplicitFilesStillSetOperatorSettings) {
  write(home() / ".claude" / ".mcp.json",
        R"({"mcpServers": {"u": {"command": "srv", "sluice": {"budget": 3}}},
            "sluice": {"queueSize": 7}})");
  write(root_.path() / "extra.json", R"({"sluice": {"clientCap": 5}})");
  DiscoveryOptions o = options();
  o.explicit_configs = {root_.path() / "extra.json"};
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.warnings, IsEmpty());
  EXPECT_EQ(config.policy.queue_size, 7u);
  EXPECT_EQ(config.policy.client_cap, 5u);
  EXPECT_EQ(discovery_guards_find(config, "u")->policy.budget, 3u);
}

// Item 9: known in the merged result; unknown keys of a file warned once for that file.
TEST_F(DiscoveryGuards, DisabledServersAreKeptAndUnknownKeysAreWarnedOncePerFile) {
  write(project() / ".mcp.json", R"({"mcpServers": {
        "off": {"command": "srv", "disabled": true, "envFile": "x"},
        "on": {"command": "srv", "envFile": "y"}}})");
  write(home() / ".mcp.json", R"({"mcpServers": {"u": {"command": "srv", "trust": true}}})");
  GatewayConfig config = discover(options());
  EXPECT_THAT(names_of(config), ElementsAre("off", "on", "u"));
  EXPECT_TRUE(discovery_guards_find(config, "off")->disabled);
  EXPECT_FALSE(discovery_guards_find(config, "on")->disabled);
  ASSERT_THAT(config.warnings, SizeIs(2));
  EXPECT_THAT(config.warnings[0], HasSubstr((project() / ".mcp.json").string()));
  EXPECT_THAT(config.warnings[0], HasSubstr("envFile"));
  EXPECT_THAT(config.warnings[1], HasSubstr((home() / ".mcp.json").string()));
  EXPECT_THAT(config.warnings[1], HasSubstr("trust"));
}

// Item 12: merging stays linear (autoStart names and server names are deduplicated with a
// hash set, not a linear search per name).
TEST_F(DiscoveryGuards, ALargeConfigurationIsMergedInLinearTime) {
  constexpr int kNames = 200000;
  constexpr int kServers = 30000;
  auto file_text = [&](int first_server) {
    std::string text = R"({"mcpServers": {)";
    for (int i = 0; i < kServers; ++i) {
      if (i > 0) text += ",";
      text += "\"s" + std::to_string(first_server + i) + R"(": {"command": "srv"})";
    }
    text += R"(}, "autoStart": [)";
    for (int i = 0; i < kNames; ++i) {
      if (i > 0) text += ",";
      text += "\"a" + std::to_string(i) + "\"";
    }
    return text + "]}";
  };
  write(project() / ".mcp.json", file_text(0));
  write(home() / ".mcp.json", file_text(kServers / 2));  // half the names defined again
  DiscoveryOptions o = options();
  o.max_file_bytes = 16 * 1024 * 1024;
  const double start = sluice::test::thread_cpu_seconds();
  GatewayConfig config = discover(o);
  const double took = sluice::test::thread_cpu_seconds() - start;
  EXPECT_THAT(config.warnings, IsEmpty());
  EXPECT_THAT(config.servers, SizeIs(kServers + kServers / 2));
  EXPECT_THAT(config.auto_start, SizeIs(kNames));
  EXPECT_LT(took, 5.0) << "discovery took " << took << " s of CPU";
}

// Item 21: `claude mcp add -s project sluice -- sluice serve` puts sluice itself in the file.
class SelfEntry : public DiscoveryGuards {
 protected:
  SelfEntry() {
    write_executable(bin() / "sluice", "#!/bin/sh\n");
    write_executable(bin() / "other", "#!/bin/sh\n");
    fs::create_directories(root_.path() / "links");
    fs::create_symlink(bin() / "sluice", root_.path() / "links" / "gw");
  }
  fs::path bin() const { return root_.path() / "bin"; }
  DiscoveryOptions self_options(std::string path_variable) const {
    DiscoveryOptions o = options();
    o.self = core::identity_of((bin() / "sluice").string());
    o.getenv = [path =
                    std::move(path_variable)](std::string_view name) -> std::optional<std::string> {
      if (name == "PATH") return path;
      return std::nullopt;
    };
    return o;
  }
};

TEST_F(SelfEntry, AnEntryThatStartsSluiceItselfIsSkippedWithOneWarningEach) {
  write(project() / ".mcp.json",
        R"({"mcpServers": {
              "by-name": {"command": "sluice", "args": ["serve"]},
              "by-path": {"command": )" +
            json_string(bin() / "sluice") + R"(},
              "by-link": {"command": )" +
            json_string(root_.path() / "links" / "gw") +
            R"(, "args": ["--expose", "all"]},
              "by-relative": {"command": "../../bin/sluice"},
              "other": {"command": "other"},
              "demo": {"command": "sluice", "args": ["demo-server"]}},
            "autoStart": ["by-name"]})");
  GatewayConfig config = discover(self_options("/nonexistent-dir:" + bin().string()));
  EXPECT_THAT(names_of(config), ElementsAre("other", "demo"));
  ASSERT_THAT(config.warnings, SizeIs(4));
  for (const std::string& w : config.warnings) {
    EXPECT_THAT(w, HasSubstr("starts sluice itself"));
    EXPECT_THAT(w, HasSubstr((project() / ".mcp.json").string()));
  }
  EXPECT_THAT(config.warnings[0], HasSubstr("by-name"));
}

TEST_F(SelfEntry, TheEntrysOwnPathVariableDecidesWhereABareNameIsFound) {
  write(project() / ".mcp.json",
        R"({"mcpServers": {
              "own-path": {"command": "sluice", "env": {"PATH": )" +
            json_string(bin()) + R"(}},
              "elsewhere": {"command": "sluice", "env": {"PATH": "/nonexistent-dir"}}}})");
  GatewayConfig config = discover(self_options(bin().string()));
  EXPECT_THAT(names_of(config), ElementsAre("elsewhere"));
  EXPECT_THAT(config.warnings, SizeIs(1));
}

TEST_F(SelfEntry, WithoutAnIdentityToCompareNothingIsSkipped) {
  write(project() / ".mcp.json", R"({"mcpServers": {"by-name": {"command": "sluice"}}})");
  DiscoveryOptions o = self_options(bin().string());
  o.self.reset();
  GatewayConfig config = discover(o);
  EXPECT_THAT(names_of(config), ElementsAre("by-name"));
  EXPECT_THAT(config.warnings, IsEmpty());
}

// The self check compares files (device and inode), not modification times: the running
// sluice is the same program after its file is touched.
TEST_F(SelfEntry, AnEntryStartingSluiceIsSkippedAfterItsFileWasModified) {
  write(project() / ".mcp.json", R"({"mcpServers": {"by-name": {"command": "sluice"}}})");
  DiscoveryOptions o = self_options(bin().string());
  ASSERT_TRUE(o.self.has_value());
  const fs::path sluice = bin() / "sluice";
  fs::last_write_time(sluice, fs::last_write_time(sluice) - std::chrono::hours(1));
  ASSERT_TRUE(core::changed_since(*o.self));
  GatewayConfig config = discover(o);
  EXPECT_THAT(names_of(config), IsEmpty());
  EXPECT_THAT(config.warnings, SizeIs(1));
}

TEST(ExecutableIdentity, TheRunningProgramIsKnownAndEqualsItsPath) {
  std::optional<core::FileIdentity> self = core::executable_of(0);
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self, core::identity_of(fs::read_symlink("/proc/self/exe").string()));
  EXPECT_FALSE(core::identity_of("/nonexistent-dir/x").has_value());
}

}  // namespace
}  // namespace sluice::config

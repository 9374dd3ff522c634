// What a reread of the configuration changed (ds_config_reload): servers added, removed and
// changed by name, what defines a server, the operator keys that changed, and a file that
// was accepted before and is rejected now, which keeps everything as it was.
#include "config/discovery.hpp"
#include "gateway/reload.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sluice::gateway {
namespace {
namespace fs = std::filesystem;

config::ServerConfig stdio(const std::string& name, std::vector<std::string> args = {}) {
  config::ServerConfig s;
  s.name = name;
  s.transport = config::StdioServer{"/bin/server", std::move(args), {}, {}};
  s.source_file = "/home/u/.mcp.json";
  return s;
}

std::map<std::string, const config::ServerConfig*> by_name(const config::GatewayConfig& c) {
  std::map<std::string, const config::ServerConfig*> out;
  for (const auto& s : c.servers) out.emplace(s.name, &s);
  return out;
}

TEST(ReloadDiff, ServersAreAddedRemovedAndChangedByName) {
  config::GatewayConfig served;
  served.servers = {stdio("kept"), stdio("gone"), stdio("edited", {"--a"})};
  config::GatewayConfig next;
  next.servers = {stdio("kept"), stdio("edited", {"--b"}), stdio("new")};
  ConfigDiff diff = diff_configs(by_name(served), served, served.policy, next);
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0]->name, "new");
  ASSERT_EQ(diff.removed.size(), 1u);
  EXPECT_EQ(diff.removed[0], "gone");
  ASSERT_EQ(diff.changed.size(), 1u);
  EXPECT_EQ(diff.changed[0]->name, "edited");
  EXPECT_TRUE(diff.newly_rejected.empty());
  EXPECT_TRUE(diff.operator_keys.empty());
}

TEST(ReloadDiff, WhatDefinesAServerIsItsTransportPolicyTimeoutsAndDisabledNotItsFile) {
  config::ServerConfig a = stdio("s", {"--x"});
  config::ServerConfig moved = a;
  moved.source_file = "/projects/app/.mcp.json";
  moved.origin = config::Origin::project;
  moved.warnings = {"a warning"};
  EXPECT_TRUE(defines_same(a, moved));
  auto differs = [&](auto edit) {
    config::ServerConfig b = a;
    edit(b);
    return !defines_same(a, b);
  };
  EXPECT_TRUE(differs([](auto& b) { std::get<config::StdioServer>(b.transport).command = "/x"; }));
  EXPECT_TRUE(differs([](auto& b) { std::get<config::StdioServer>(b.transport).args.clear(); }));
  EXPECT_TRUE(differs(
      [](auto& b) { std::get<config::StdioServer>(b.transport).env.emplace_back("K", "v"); }));
  EXPECT_TRUE(differs([](auto& b) { std::get<config::StdioServer>(b.transport).cwd = "/tmp"; }));
  EXPECT_TRUE(differs([](auto& b) { b.transport = config::RemoteServer{"http", "http://h", {}}; }));
  EXPECT_TRUE(differs([](auto& b) { b.policy.budget = 2; }));
  EXPECT_TRUE(differs([](auto& b) { b.policy.writes = 3; }));
  EXPECT_TRUE(differs([](auto& b) { b.timeout = std::chrono::milliseconds(5); }));
  EXPECT_TRUE(differs([](auto& b) { b.idle_timeout = std::chrono::milliseconds(5); }));
  EXPECT_TRUE(differs([](auto& b) { b.disabled = true; }));
  config::ServerConfig r1 = a, r2 = a;
  r1.transport = config::RemoteServer{"http", "http://h", {{"A", "1"}}};
  r2.transport = config::RemoteServer{"http", "http://h", {{"A", "2"}}};
  EXPECT_FALSE(defines_same(r1, r2));
}

TEST(ReloadDiff, ChangedOperatorSettingsAreNamedAsTheFileSpellsThem) {
  config::GatewayPolicy a, b;
  EXPECT_TRUE(changed_operator_keys(a, b).empty());
  b.read_budget = 2;
  b.forbid_force = true;
  b.index_wait = std::chrono::milliseconds(1);
  EXPECT_EQ(changed_operator_keys(a, b),
            (std::vector<std::string>{"readBudget", "forbidForce", "indexWaitMs"}));
}

TEST(ReloadDiff, AFileAcceptedBeforeAndRejectedNowKeepsEverything) {
  config::GatewayConfig served;
  served.files_read = {"/home/u/.mcp.json", "/p/.mcp.json"};
  served.files_rejected = {{"/p/.mcp.json", "not JSON"}};
  served.servers = {stdio("a")};
  config::GatewayConfig next;
  next.files_read = served.files_read;
  next.files_rejected = {{"/p/.mcp.json", "still not JSON"}};
  next.servers = {stdio("b")};
  // Rejected then and now: the rest applies.
  ConfigDiff same_file = diff_configs(by_name(served), served, served.policy, next);
  EXPECT_TRUE(same_file.newly_rejected.empty());
  EXPECT_EQ(same_file.added.size(), 1u);
  // Accepted then, rejected now: nothing else is looked at.
  next.files_rejected.push_back({"/home/u/.mcp.json", "at $.mcpServers: an array"});
  ConfigDiff broken = diff_configs(by_name(served), served, served.policy, next);
  ASSERT_EQ(broken.newly_rejected.size(), 1u);
  EXPECT_EQ(broken.newly_rejected[0].path, "/home/u/.mcp.json");
  EXPECT_TRUE(broken.added.empty());
  EXPECT_TRUE(broken.removed.empty());
}

TEST(ReloadDiff, DiscoveryListsRejectedFilesAndEveryPathItLookedAt) {
  fs::path dir = fs::temp_directory_path() / ("sluice-reload-diff-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "home");
  fs::create_directories(dir / "work");
  std::ofstream(dir / "home" / ".mcp.json") << R"({"mcpServers": [)";
  std::ofstream(dir / "extra.json") << R"({"mcpServers": {"s": {"command": "/bin/true"}}})";
  config::DiscoveryOptions options;
  options.cwd = dir / "work";
  options.home = dir / "home";
  options.explicit_configs = {dir / "extra.json"};
  config::GatewayConfig found = config::discover(options);
  ASSERT_EQ(found.files_rejected.size(), 1u);
  EXPECT_EQ(found.files_rejected[0].path, (dir / "home" / ".mcp.json").string());
  EXPECT_FALSE(found.files_rejected[0].problem.empty());
  EXPECT_EQ(found.files_rejected[0].problem.find("[)"), std::string::npos) << "value-free";
  const auto& looked = found.files_looked_for;
  auto looked_at = [&](const fs::path& p) {
    return std::find(looked.begin(), looked.end(), p) != looked.end();
  };
  EXPECT_TRUE(looked_at(dir / "home" / ".claude" / ".mcp.json")) << "missing files count";
  EXPECT_TRUE(looked_at(dir / "extra.json"));
  EXPECT_TRUE(looked_at(dir / "work" / ".mcp.json")) << "a project file that may appear";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sluice::gateway

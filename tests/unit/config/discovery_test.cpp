#include "config/discovery.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr std::string_view kDiscoverySentinel = "SNTL7q";

using test::TempDir;
using test::write;

std::string server_file(std::initializer_list<std::string_view> names) {
  std::string text = R"({"mcpServers": {)";
  bool first = true;
  for (std::string_view name : names) {
    if (!first) text += ", ";
    first = false;
    text += "\"" + std::string(name) + R"(": {"command": "cmd-)" + std::string(name) + "\"}";
  }
  return text + "}}";
}

std::vector<std::string> discovery_names_of(const GatewayConfig& config) {
  std::vector<std::string> names;
  for (const ServerConfig& s : config.servers) names.push_back(s.name);
  return names;
}

const ServerConfig* discovery_find(const GatewayConfig& config, std::string_view name) {
  auto it = std::find_if(config.servers.begin(), config.servers.end(),
                         [&](const ServerConfig& s) { return s.name == name; });
  return it == config.servers.end() ? nullptr : &*it;
}

// Layout: <root>/home (the home folder) and <root>/work/project (a git checkout).
class Discovery : public ::testing::Test {
 protected:
  Discovery() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
    fs::create_directories(project() / "src" / "deep");
  }

  fs::path home() const { return root_.path() / "home"; }
  fs::path project() const { return root_.path() / "work" / "project"; }

  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.cwd = project() / "src" / "deep";
    o.home = home();
    o.trust_project = true;  // about discovery, not trust (trust_store_test.cpp)
    return o;
  }

  TempDir root_;
};

TEST_F(Discovery, ReadsProjectThenHomeThenClaudeThenExplicitConfigs) {
  write(project() / ".mcp.json", server_file({"p"}));
  write(home() / ".mcp.json", server_file({"u"}));
  write(home() / ".claude" / ".mcp.json", server_file({"c"}));
  write(root_.path() / "extra" / "one.json", server_file({"e1"}));
  write(root_.path() / "extra" / "two.json", server_file({"e2"}));
  DiscoveryOptions o = options();
  o.explicit_configs = {root_.path() / "extra" / "two.json", root_.path() / "extra" / "one.json"};

  GatewayConfig config = discover(o);

  EXPECT_THAT(config.warnings, IsEmpty());
  EXPECT_THAT(discovery_names_of(config), ElementsAre("p", "u", "c", "e2", "e1"));
  EXPECT_THAT(config.files_read,
              ElementsAre((project() / ".mcp.json").string(), (home() / ".mcp.json").string(),
                          (home() / ".claude" / ".mcp.json").string(),
                          (root_.path() / "extra" / "two.json").string(),
                          (root_.path() / "extra" / "one.json").string()));
  EXPECT_EQ(discovery_find(config, "p")->origin, Origin::project);
  EXPECT_EQ(discovery_find(config, "u")->origin, Origin::user);
  EXPECT_EQ(discovery_find(config, "c")->origin, Origin::user);
  EXPECT_EQ(discovery_find(config, "e1")->origin, Origin::explicit_file);
  ASSERT_TRUE(config.project_dir.has_value());
  EXPECT_TRUE(fs::equivalent(*config.project_dir, project()));
}

TEST_F(Discovery, FirstDefinitionOfAServerNameWins) {
  write(project() / ".mcp.json", R"({"mcpServers": {"shared": {"command": "from-project"}}})");
  write(home() / ".mcp.json", R"({"mcpServers": {"shared": {"command": "from-home"},
                                                  "own": {"command": "x"}}})");
  GatewayConfig config = discover(options());

  EXPECT_THAT(discovery_names_of(config), ElementsAre("shared", "own"));
  const ServerConfig* shared = discovery_find(config, "shared");
  EXPECT_EQ(std::get<StdioServer>(shared->transport).command, "from-project");
  EXPECT_EQ(shared->source_file, (project() / ".mcp.json").string());
  EXPECT_THAT(config.warnings, IsEmpty());
}

TEST_F(Discovery, MergesAutoStartInOrderWithoutDuplicates) {
  write(project() / ".mcp.json", R"({"autoStart": ["b", "a"]})");
  write(home() / ".mcp.json", R"({"autoStart": ["a", "c", "b", "d"]})");
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.auto_start, ElementsAre("b", "a", "c", "d"));
}

TEST_F(Discovery, WalkUpStopsAtTheNearestGitFolder) {
  write(root_.path() / "work" / ".mcp.json", server_file({"outer"}));
  write(project() / ".mcp.json", server_file({"inner"}));
  GatewayConfig config = discover(options());
  EXPECT_THAT(discovery_names_of(config), ElementsAre("inner"));
}

TEST_F(Discovery, WalkUpStopsAtAGitFileAsInAWorktree) {
  fs::path worktree = project() / "src" / "wt";
  write(worktree / ".git", "gitdir: /elsewhere\n");
  fs::create_directories(worktree / "a");
  write(project() / ".mcp.json", server_file({"main"}));
  EXPECT_TRUE(fs::equivalent(*find_project_dir(worktree / "a", home()), worktree));
}

TEST_F(Discovery, WalkUpStopsAtTheNearestMcpJsonWithoutGit) {
  write(project() / "src" / ".mcp.json", server_file({"sub"}));
  write(project() / ".mcp.json", server_file({"top"}));
  GatewayConfig config = discover(options());
  EXPECT_THAT(discovery_names_of(config), ElementsAre("sub"));
  EXPECT_TRUE(fs::equivalent(*config.project_dir, project() / "src"));
}

TEST_F(Discovery, WalkUpNeverTreatsHomeAsAProject) {
  fs::create_directories(home() / ".git");
  fs::create_directories(home() / "notes" / "today");
  write(home() / ".mcp.json", server_file({"mine"}));
  DiscoveryOptions o = options();
  o.cwd = home() / "notes" / "today";

  GatewayConfig config = discover(o);

  EXPECT_FALSE(config.project_dir.has_value());
  EXPECT_THAT(discovery_names_of(config), ElementsAre("mine"));
  EXPECT_EQ(discovery_find(config, "mine")->origin, Origin::user);
  EXPECT_THAT(config.files_read, ElementsAre((home() / ".mcp.json").string()));
}

TEST_F(Discovery, NoMarkerMeansNoProjectFile) {
  fs::create_directories(root_.path() / "loose" / "dir");
  write(home() / ".mcp.json", server_file({"u"}));
  DiscoveryOptions o = options();
  o.cwd = root_.path() / "loose" / "dir";
  // The temp root is an ancestor of home, so the walk ends there and never leaves the test.
  GatewayConfig config = discover(o);
  EXPECT_FALSE(config.project_dir.has_value());
  EXPECT_THAT(discovery_names_of(config), ElementsAre("u"));
  EXPECT_THAT(config.warnings, IsEmpty());
}

TEST_F(Discovery, ProjectOptionOverridesTheWalkUp) {
  write(project() / ".mcp.json", server_file({"walked"}));
  write(root_.path() / "other" / ".mcp.json", server_file({"chosen"}));
  DiscoveryOptions o = options();
  o.project_dir = root_.path() / "other";
  GatewayConfig config = discover(o);
  EXPECT_THAT(discovery_names_of(config), ElementsAre("chosen"));
  EXPECT_EQ(config.project_dir, root_.path() / "other");
}

TEST_F(Discovery, RelativeProjectAndConfigPathsResolveAgainstCwd) {
  write(project() / "src" / "alt" / ".mcp.json", server_file({"alt"}));
  write(project() / "src" / "deep" / "mine.json", server_file({"mine"}));
  DiscoveryOptions o = options();
  o.project_dir = "../alt";
  o.explicit_configs = {"mine.json"};
  GatewayConfig config = discover(o);
  EXPECT_THAT(discovery_names_of(config), ElementsAre("alt", "mine"));
  EXPECT_THAT(config.warnings, IsEmpty());
}

TEST_F(Discovery, ProjectOptionThatIsNotADirectoryIsWarned) {
  DiscoveryOptions o = options();
  o.project_dir = root_.path() / "nowhere";
  GatewayConfig config = discover(o);
  EXPECT_FALSE(config.project_dir.has_value());
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr((root_.path() / "nowhere").string()));
}

TEST_F(Discovery, MissingProjectAndHomeFilesAreSkippedSilently) {
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.servers, IsEmpty());
  EXPECT_THAT(config.files_read, IsEmpty());
  EXPECT_THAT(config.warnings, IsEmpty());
}

TEST_F(Discovery, NoHomeMeansNoUserFiles) {
  write(home() / ".mcp.json", server_file({"u"}));
  DiscoveryOptions o = options();
  o.home.reset();
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.servers, IsEmpty());
}

TEST_F(Discovery, WithoutSearchOnlyExplicitConfigsAreRead) {
  write(project() / ".mcp.json", server_file({"p"}));
  write(home() / ".mcp.json", server_file({"u"}));
  write(root_.path() / "only.json", server_file({"only"}));
  DiscoveryOptions o = options();
  o.search = false;
  o.explicit_configs = {root_.path() / "only.json"};
  GatewayConfig config = discover(o);
  EXPECT_THAT(discovery_names_of(config), ElementsAre("only"));
  EXPECT_THAT(config.files_read, ElementsAre((root_.path() / "only.json").string()));
  EXPECT_TRUE(config.project_dir.has_value());
}

TEST_F(Discovery, MissingExplicitConfigIsWarned) {
  DiscoveryOptions o = options();
  o.explicit_configs = {root_.path() / "absent.json"};
  GatewayConfig config = discover(o);
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr((root_.path() / "absent.json").string()));
  EXPECT_THAT(config.warnings[0], HasSubstr("does not exist"));
}

TEST_F(Discovery, ControlCharactersInAPathAreEscapedInWarnings) {
  DiscoveryOptions o = options();
  o.explicit_configs = {root_.path() / "evil\x1b]0;title\x07\n.json"};
  GatewayConfig config = discover(o);
  ASSERT_THAT(config.warnings, SizeIs(1));
  for (char c : config.warnings[0]) {
    EXPECT_GE(static_cast<unsigned char>(c), 0x20) << config.warnings[0];
    EXPECT_NE(c, '\x7f');
  }
}

TEST_F(Discovery, TheSameFileReachedTwiceIsReadOnce) {
  write(home() / ".mcp.json", server_file({"u"}));
  fs::create_symlink(home() / ".mcp.json", root_.path() / "link.json");
  DiscoveryOptions o = options();
  o.explicit_configs = {home() / ".mcp.json", root_.path() / "link.json"};
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.files_read, ElementsAre((home() / ".mcp.json").string()));
  EXPECT_THAT(config.warnings, IsEmpty());
}

TEST_F(Discovery, MalformedFileIsLeftOutWithOneWarningAndOthersAreServed) {
  write(project() / ".mcp.json", R"({"mcpServers": {
      "good": {"command": "g"},
      "bad": {"command": "c", "args": ["ok", ")" +
                                     std::string(kDiscoverySentinel) + R"(", 7]}}})");
  write(home() / ".mcp.json", server_file({"u", "good"}));
  GatewayConfig config = discover(options());

  EXPECT_THAT(discovery_names_of(config), ElementsAre("u", "good"));
  EXPECT_EQ(discovery_find(config, "good")->source_file, (home() / ".mcp.json").string());
  ASSERT_THAT(config.warnings, SizeIs(1));
  const std::string& warning = config.warnings[0];
  EXPECT_THAT(warning, HasSubstr((project() / ".mcp.json").string()));
  EXPECT_THAT(warning, HasSubstr("$.mcpServers.entry.args[2] (server entry 2): expected a "
                                 "string, found an integer"));
  EXPECT_THAT(warning, HasSubstr("left out"));
  EXPECT_EQ(warning.find(kDiscoverySentinel), std::string::npos);
  EXPECT_THAT(config.files_read, SizeIs(2));
}

TEST_F(Discovery, InvalidJsonIsLeftOutWithOneWarningWithoutItsText) {
  write(project() / ".mcp.json",
        R"({"mcpServers": {"a": {"command": ")" + std::string(kDiscoverySentinel) + "\x1b[2J");
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.servers, IsEmpty());
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr("invalid JSON"));
  EXPECT_EQ(config.warnings[0].find(kDiscoverySentinel), std::string::npos);
  EXPECT_EQ(config.warnings[0].find('\x1b'), std::string::npos);
}

TEST_F(Discovery, AFolderNamedLikeAConfigFileIsWarned) {
  fs::create_directories(project() / ".mcp.json");
  GatewayConfig config = discover(options());
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr("not a regular file"));
}

TEST_F(Discovery, AFifoGivenAsConfigIsRefusedWithoutBlocking) {
  fs::path fifo = root_.path() / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  DiscoveryOptions o = options();
  o.explicit_configs = {fifo};
  GatewayConfig config = discover(o);
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr("not a regular file"));
}

TEST_F(Discovery, OversizedFileIsLeftOut) {
  write(project() / ".mcp.json", server_file({"big"}) + std::string(200, ' '));
  DiscoveryOptions o = options();
  o.max_file_bytes = 100;
  GatewayConfig config = discover(o);
  EXPECT_THAT(config.servers, IsEmpty());
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr("larger than 100 bytes"));
}

TEST_F(Discovery, RelativeCommandResolvesAgainstItsOwnFilesFolder) {
  write(home() / ".mcp.json",
        R"({"mcpServers": {"tool": {"command": "./bin/tool", "cwd": "data"}}})");
  GatewayConfig config = discover(options());
  ASSERT_THAT(config.servers, SizeIs(1));
  const StdioServer& s = std::get<StdioServer>(config.servers[0].transport);
  EXPECT_EQ(s.command, (home() / "bin" / "tool").string());
  EXPECT_EQ(s.cwd, (home() / "data").string());
}

TEST_F(Discovery, InterpolatesFromTheInjectedLookupAndWarnsByNameOnly) {
  write(project() / ".mcp.json", R"({"mcpServers": {"api": {"url": "https://a.example/mcp",
      "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Region": "${REGION:-eu}"}}}})");
  DiscoveryOptions o = options();
  o.getenv = [](std::string_view name) -> std::optional<std::string> {
    if (name == "REGION") return std::string(kDiscoverySentinel);
    return std::nullopt;
  };
  GatewayConfig config = discover(o);
  ASSERT_THAT(config.servers, SizeIs(1));
  EXPECT_THAT(std::get<RemoteServer>(config.servers[0].transport).headers,
              ElementsAre(std::pair<std::string, std::string>("Authorization", "Bearer "),
                          std::pair<std::string, std::string>("X-Region", kDiscoverySentinel)));
  EXPECT_THAT(config.servers[0].missing_variables, ElementsAre("API_TOKEN"));
  ASSERT_THAT(config.warnings, SizeIs(1));
  EXPECT_THAT(config.warnings[0], HasSubstr("server api"));
  EXPECT_THAT(config.warnings[0], HasSubstr("API_TOKEN"));
  EXPECT_EQ(config.warnings[0].find(kDiscoverySentinel), std::string::npos);
}

TEST_F(Discovery, WarningsOfAShadowedDefinitionAreNotShown) {
  write(project() / ".mcp.json", R"({"mcpServers": {"s": {"command": "c"}}})");
  write(home() / ".mcp.json", R"({"mcpServers": {"s": {"command": "${UNSET_BIN}"}}})");
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.warnings, IsEmpty());
  EXPECT_THAT(config.servers[0].missing_variables, IsEmpty());
}

}  // namespace
}  // namespace sluice::config

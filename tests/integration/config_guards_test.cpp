// What sluice refuses to take from the .mcp.json files it finds, through the real binary with
// discovery on (HOME and the project in a scratch folder): a project file cannot loosen the
// operator's settings (issue 9 item 4); a disabled server is never started by any path
// (item 9); an entry that starts sluice itself is skipped, and a sluice started by a sluice
// refuses to serve (item 21).
#include "harness.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

// The parent of `pid` (from /proc/<pid>/stat), or -1.
pid_t parent_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 2));
  char state = 0;
  pid_t ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

// Processes running the sluice binary (by file identity) that descend from `root`.
std::vector<pid_t> nested_sluices(pid_t root) {
  struct stat self {};
  std::vector<pid_t> found;
  if (::stat(SLUICE_BINARY, &self) != 0) return found;
  DIR* d = ::opendir("/proc");
  if (!d) return found;
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == root) continue;
    struct stat exe {};
    if (::stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &exe) != 0) continue;
    if (exe.st_dev != self.st_dev || exe.st_ino != self.st_ino) continue;
    for (pid_t p = parent_of(pid); p > 1; p = parent_of(p)) {
      if (p == root) {
        found.push_back(pid);
        break;
      }
    }
  }
  ::closedir(d);
  return found;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// HOME and a git checkout under one scratch folder; sluice runs in the checkout with
// discovery on, as a client would start it.
class ConfigGuards : public ::testing::Test {
 protected:
  ConfigGuards() { fs::create_directories(project() / ".git"); }
  void TearDown() override {
    if (sluice_) {
      expect_clean_exit(*sluice_);
      sluice_.reset();
    }
    EXPECT_TRUE(wait_no_marker(marker_, kGuard).empty());
  }
  fs::path home() const { return dir_.path() / "home"; }
  fs::path project() const { return dir_.path() / "project"; }
  void write_home(const std::string& text) { dir_.write("home/.mcp.json", text); }
  void write_project(const std::string& text) { dir_.write("project/.mcp.json", text); }
  // The project's servers are trusted for the run (issue 13: untrusted ones never start).
  Sluice& start(std::vector<std::string> args = {"serve"}) {
    args.push_back("--trust-project");
    args.push_back("--log-stderr");  // the tests read the log on stderr
    sluice_ = std::make_unique<Sluice>(args, home(), project());
    sluice_->initialize();
    return *sluice_;
  }
  bj::value health_row(const std::string& name) {
    auto h = sluice_->call_tool("gateway.health", "{}");
    for (const auto& row : h.at("structuredContent").at("servers").as_array()) {
      if (row.at("name") == name.c_str()) return row;
    }
    ADD_FAILURE() << "no health row for " << name;
    return nullptr;
  }

  TempDir dir_;
  std::string marker_ = new_marker();
  std::unique_ptr<Sluice> sluice_;
};

// Item 4.
TEST_F(ConfigGuards, AProjectFileCannotLoosenForbidForceSetInTheUsersFile) {
  write_home(R"({"sluice": {"forbidForce": true}})");
  write_project(R"({"mcpServers": {"fx": )" + fixture_entry(marker_) +
                R"(}, "sluice": {"forbidForce": false}})");
  Sluice& s = start();
  auto connected = s.call_tool("gateway.connect_server", R"({"server_name":"fx"})");
  ASSERT_FALSE(is_error(connected)) << text_of(connected);
  auto forced = s.call_tool("gateway.restart_server", R"({"server_name":"fx","force":true})");
  EXPECT_TRUE(is_error(forced)) << text_of(forced);
  EXPECT_TRUE(contains(text_of(forced), "forbidForce")) << text_of(forced);
  EXPECT_EQ(health_row("fx").at("generation"), 1) << "the forced restart did not happen";
  std::string err = s.stderr_text();
  EXPECT_TRUE(contains(err, (project() / ".mcp.json").string() + ": its \"sluice\" settings are "
                                                                 "ignored"))
      << err;
}

// Item 9: every path that starts a server leaves a disabled one alone.
TEST_F(ConfigGuards, ADisabledServerIsListedAsDisabledAndNeverStarted) {
  bj::object off = bj::parse(fixture_entry(marker_)).as_object();
  off["disabled"] = true;
  write_project(R"({"mcpServers": {"off": )" + bj::serialize(off) + R"(},
                    "autoStart": ["off"]})");
  Sluice& s = start({"serve", "--expose", "meta,all"});
  auto listed = s.request("tools/list", "{}");
  EXPECT_FALSE(contains(bj::serialize(listed), "off__")) << bj::serialize(listed);
  for (auto [tool, args] : std::vector<std::pair<std::string, std::string>>{
           {"gateway.invoke", R"({"tool_id":"off::echo","arguments":{}})"},
           {"gateway.describe", R"({"tool_id":"off::echo"})"},
           {"gateway.connect_server", R"({"server_name":"off"})"},
           {"gateway.restart_server", R"({"server_name":"off"})"}}) {
    auto r = s.call_tool(tool, args);
    EXPECT_TRUE(is_error(r)) << tool;
    EXPECT_TRUE(contains(text_of(r), "disabled in " + (project() / ".mcp.json").string()))
        << tool << ": " << text_of(r);
  }
  bj::value row = health_row("off");
  EXPECT_EQ(row.at("status"), "disabled") << bj::serialize(row);
  EXPECT_TRUE(processes_with_marker(marker_).empty()) << "a disabled server was started";
}

TEST_F(ConfigGuards, ServersProbeListsADisabledServerWithoutStartingIt) {
  bj::object off = bj::parse(fixture_entry(marker_)).as_object();
  off["disabled"] = true;
  write_project(R"({"mcpServers": {"off": )" + bj::serialize(off) + "}}");
  auto r = run_sluice({"servers", "--probe", "--json"}, home(), project());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bj::value rows = bj::parse(r.out).at("servers");
  ASSERT_EQ(rows.as_array().size(), 1u) << r.out;
  EXPECT_EQ(rows.at(0).at("status"), "disabled") << r.out;
  EXPECT_EQ(rows.at(0).at("generation"), 0) << r.out;
}

// Item 21: exactly what `claude mcp add -s project sluice -- sluice serve` writes.
TEST_F(ConfigGuards, AnEntryThatStartsSluiceItselfIsSkippedAndNothingNests) {
  write_project(R"({"mcpServers": {"sluice": {"type": "stdio", "command": ")" +
                std::string(SLUICE_BINARY) + R"(", "args": ["serve"], "env": {}},
                    "fx": )" + fixture_entry(marker_) + "}}");
  Sluice& s = start({"serve", "--expose", "meta,all"});
  auto listed = s.request("tools/list", "{}");
  EXPECT_TRUE(contains(bj::serialize(listed), "fx__echo")) << bj::serialize(listed);
  EXPECT_TRUE(nested_sluices(s.pid()).empty());
  auto h = s.call_tool("gateway.health", "{}");
  EXPECT_EQ(h.at("structuredContent").at("servers").as_array().size(), 1u) << bj::serialize(h);
  // The log is written by its own thread: wait for the line (bounded), do not race it.
  const std::string expected = "server sluice (" + (project() / ".mcp.json").string() +
                               ") is skipped: its command starts sluice itself";
  std::string err = s.stderr_text();
  for (auto until = std::chrono::steady_clock::now() + kGuard;
       !contains(err, expected) && std::chrono::steady_clock::now() < until;
       err = s.stderr_text()) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(contains(err, expected)) << err;
}

// Item 21: an entry the identity check cannot see through (a shell wrapper) still cannot
// nest: the inner sluice finds the owner token in its environment and refuses to serve.
TEST_F(ConfigGuards, ASluiceStartedByASluiceRefusesToServe) {
  write_project(R"({"mcpServers": {"wrapped": {"command": "/bin/sh",
                    "args": ["-c", "exec \"$0\" serve --no-discover", ")" +
                std::string(SLUICE_BINARY) + R"("]}}})");
  Sluice& s = start({"serve", "--expose", "meta,all"});
  s.request("tools/list", "{}");
  EXPECT_TRUE(nested_sluices(s.pid()).empty());
  bj::value row = health_row("wrapped");
  EXPECT_NE(row.at("status"), "online") << bj::serialize(row);
  EXPECT_GE(row.at("generation").to_number<int>(), 1) << "it was started: " << bj::serialize(row);
}

TEST_F(ConfigGuards, TheOwnerTokenInTheEnvironmentMakesServeExitTwoWithOneMessage) {
  Sluice s({"SLUICE_OWNER=4242.srv.1", SLUICE_BINARY, "serve", "--no-discover"}, home(),
           project(), "/usr/bin/env");
  s.close_stdin();
  EXPECT_EQ(s.wait_exit(), 2);
  s.join_stderr();
  std::string err = s.stderr_text();
  EXPECT_TRUE(contains(err, "started by another sluice")) << err;
  EXPECT_FALSE(contains(err, "4242")) << "the token's value is not echoed: " << err;
}

TEST_F(ConfigGuards, OneShotCommandsStillWorkUnderTheOwnerToken) {
  Sluice s({"SLUICE_OWNER=4242.srv.1", SLUICE_BINARY, "servers", "--no-discover"}, home(),
           project(), "/usr/bin/env");
  s.close_stdin();
  EXPECT_EQ(s.wait_exit(), 0);
  s.join_stderr();
}

}  // namespace
}  // namespace sluice::test

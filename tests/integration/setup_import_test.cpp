// `sluice setup` and `sluice import` run as a user would: the real binary, a TempDir HOME with
// the sample client files of tests/data/clients, and sluice's user config under that HOME.
#include "harness.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace sluice::test {
namespace {
namespace bj = boost::json;
namespace fs = std::filesystem;

std::string setup_import_read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string sample(const std::string& name) {
  return setup_import_read(fs::path(SLUICE_SOURCE_DIR) / "tests/data/clients" / name);
}

std::vector<fs::path> backups_in(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().find(".sluice-backup-") != std::string::npos) {
      found.push_back(entry.path());
    }
  }
  return found;
}

// A HOME whose XDG_CONFIG_HOME is its own .config (sluice's child inherits it), for one test.
class SetupImport : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("XDG_CONFIG_HOME");
    if (old != nullptr) saved_ = old;
    ::setenv("XDG_CONFIG_HOME", (dir_.path() / ".config").c_str(), 1);
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("XDG_CONFIG_HOME", saved_->c_str(), 1);
    } else {
      ::unsetenv("XDG_CONFIG_HOME");
    }
  }
  RunResult sluice(const std::vector<std::string>& args) {
    return run_sluice(args, dir_.path(), dir_.path());
  }
  fs::path home() const { return dir_.path(); }
  fs::path user_config() const { return dir_.path() / ".config/sluice/mcp.json"; }

 private:
  TempDir dir_;
  std::optional<std::string> saved_;
};

TEST_F(SetupImport, ClaudeCodeSetupMovesTheUserServersBehindSluiceAndUndoPutsTheFileBack) {
  const std::string before = sample("claude.json");
  fs::path file = home() / ".claude.json";
  { std::ofstream(file, std::ios::binary) << before; }
  ::chmod(file.c_str(), 0640);

  RunResult r = sluice({"setup", "--client", "claude-code", "--import"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("now starts sluice"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("app-db (local /home/user/app): local to one project"), std::string::npos)
      << r.out;
  bj::value after = bj::parse(setup_import_read(file));
  const bj::object& servers = after.at("mcpServers").as_object();
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers.at("sluice").at("command").as_string(), SLUICE_BINARY);
  EXPECT_EQ(servers.at("sluice").at("args"), bj::array{"serve"});
  EXPECT_TRUE(
      after.at("projects").at("/home/user/app").at("mcpServers").as_object().contains("app-db"));
  EXPECT_NE(setup_import_read(file).find("\"memory-command\": 1e400"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);

  bj::value mine = bj::parse(setup_import_read(user_config()));
  EXPECT_TRUE(mine.at("mcpServers").as_object().contains("files"));
  EXPECT_TRUE(mine.at("mcpServers").as_object().contains("github"));
  ASSERT_EQ(::stat(user_config().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(backups_in(home()).size(), 1u);

  // sluice itself now reads those servers from its user config.
  RunResult listed = sluice({"servers", "--json"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("\"files\""), std::string::npos) << listed.out;

  // Run again: the file already starts sluice; nothing changes.
  RunResult again = sluice({"setup", "--client", "claude-code"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already starts sluice (entry sluice)"), std::string::npos);
  EXPECT_EQ(backups_in(home()).size(), 1u);

  RunResult undone = sluice({"setup", "--client", "claude-code", "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.err;
  EXPECT_NE(undone.out.find("restored"), std::string::npos);
  EXPECT_EQ(setup_import_read(file), before);
  EXPECT_TRUE(backups_in(home()).empty());
}

TEST_F(SetupImport, ADryRunPrintsAMaskedDiffAndWritesNothing) {
  fs::path file = home() / ".config/Claude/claude_desktop_config.json";
  fs::create_directories(file.parent_path());
  const std::string before = sample("claude_desktop_config.json");
  { std::ofstream(file, std::ios::binary) << before; }
  RunResult r = sluice({"setup", "--client", "claude-desktop", "--import", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("-    \"weather\": {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+    \"sluice\": {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"WEATHER_KEY\": \"\u2026\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("abc123"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dry run: nothing was written"), std::string::npos);
  EXPECT_EQ(setup_import_read(file), before);
  EXPECT_FALSE(fs::exists(user_config()));
  EXPECT_TRUE(backups_in(file.parent_path()).empty());
}

TEST_F(SetupImport, AFileThatDoesNotParseIsRefusedWithItsPlace) {
  fs::path file = home() / "broken.json";
  { std::ofstream(file, std::ios::binary) << sample("broken.json"); }
  RunResult r = sluice({"setup", "--client", "claude-desktop", "--config-file", file.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("broken.json:3:26: invalid JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos);
  EXPECT_EQ(setup_import_read(file), sample("broken.json"));
  EXPECT_TRUE(backups_in(home()).empty());
}

TEST_F(SetupImport, AnEntryNamedSluiceThatIsNotSluiceIsRefusedUnlessAnotherNameIsGiven) {
  fs::path file = home() / ".cursor/mcp.json";
  fs::create_directories(file.parent_path());
  { std::ofstream(file, std::ios::binary) << sample("named-sluice.json"); }
  RunResult refused = sluice({"setup", "--client", "cursor"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--name OTHER"), std::string::npos) << refused.err;
  EXPECT_EQ(setup_import_read(file), sample("named-sluice.json"));
  RunResult named = sluice({"setup", "--client", "cursor", "--name", "gateway", "--json"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  bj::value report = bj::parse(named.out);
  EXPECT_EQ(report.at("entry").as_string(), "gateway");
  EXPECT_EQ(report.at("changed").as_bool(), true);
  bj::value after = bj::parse(setup_import_read(file));
  EXPECT_EQ(after.at("mcpServers").at("gateway").at("command").as_string(), SLUICE_BINARY);
  EXPECT_TRUE(after.at("mcpServers").as_object().contains("sluice"));
}

TEST_F(SetupImport, AMissingFileIsCreatedWithOnlySluiceAndUndoRemovesIt) {
  fs::path file = home() / ".config/Code/User/mcp.json";
  RunResult r = sluice({"setup", "--client", "vscode"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bj::value made = bj::parse(setup_import_read(file));
  EXPECT_EQ(made.at("servers").at("sluice").at("type").as_string(), "stdio");
  EXPECT_EQ(made.as_object().size(), 1u);
  RunResult undone = sluice({"setup", "--client", "vscode", "--undo"});
  ASSERT_EQ(undone.exit_code, 0) << undone.err;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(backups_in(file.parent_path()).empty());
}

TEST_F(SetupImport, UndoRefusesAFileChangedSinceSetupUnlessForced) {
  fs::path file = home() / ".gemini/settings.json";
  fs::create_directories(file.parent_path());
  const std::string before = sample("gemini-settings.json");
  { std::ofstream(file, std::ios::binary) << before; }
  ASSERT_EQ(sluice({"setup", "--client", "gemini"}).exit_code, 0);
  std::string edited = setup_import_read(file);
  edited.insert(edited.rfind('}'), " ");
  { std::ofstream(file, std::ios::binary) << edited; }
  RunResult refused = sluice({"setup", "--client", "gemini", "--undo"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("changed"), std::string::npos);
  EXPECT_EQ(setup_import_read(file), edited);
  RunResult forced = sluice({"setup", "--client", "gemini", "--undo", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(setup_import_read(file), before);
}

TEST_F(SetupImport, ImportReportsWhatItTookAndSkippedAndKeepsWhatIsThere) {
  fs::path file = home() / "vscode.json";
  { std::ofstream(file, std::ios::binary) << sample("vscode-mcp.json"); }
  RunResult r = sluice({"import", "--from", file.string(), "--client", "vscode", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bj::value report = bj::parse(r.out);
  const bj::array& taken = report.at("taken").as_array();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].at("name").as_string(), "perplexity");
  EXPECT_EQ(taken[0].at("kind").as_string(), "stdio");
  EXPECT_EQ(report.at("written").as_bool(), true);
  bj::value mine = bj::parse(setup_import_read(user_config()));
  EXPECT_EQ(mine.at("mcpServers").at("perplexity").at("env").at("PERPLEXITY_API_KEY").as_string(),
            "${PERPLEXITY_KEY}");

  RunResult again = sluice({"import", "--from", file.string(), "--client", "vscode"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("perplexity (user): sluice's user config has a server of that name"),
            std::string::npos)
      << again.out;
  EXPECT_NE(again.out.find("nothing to write"), std::string::npos);

  { std::ofstream(home() / ".claude.json", std::ios::binary) << sample("claude.json"); }
  RunResult claude = sluice({"import", "--from", "claude-code", "--all-projects", "--json"});
  ASSERT_EQ(claude.exit_code, 0) << claude.err;
  mine = bj::parse(setup_import_read(user_config()));
  for (const char* name : {"perplexity", "fetch", "files", "github", "app-db"}) {
    EXPECT_TRUE(mine.at("mcpServers").as_object().contains(name)) << name;
  }
}

TEST_F(SetupImport, ImportOfAFileThatDoesNotParseWritesNothing) {
  fs::path file = home() / "claude_desktop_config.json";
  { std::ofstream(file, std::ios::binary) << sample("broken.json"); }
  RunResult r = sluice({"import", "--from", file.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":3:26:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(user_config()));
}

}  // namespace
}  // namespace sluice::test

#include "cli/init.hpp"
#include "config/discovery.hpp"
#include "config/mcp_json.hpp"

#include "../config/config_files.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace sluice::cli {
namespace {
namespace fs = std::filesystem;
namespace bj = boost::json;
using config::test::TempDir;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

const std::chrono::system_clock::time_point kNoon{std::chrono::seconds(1796212800)};

TEST(StarterConfig, IsAConfigFileWithNoServerThatDiscoveryReadsWithoutAWarning) {
  TempDir dir;
  const fs::path file = dir.path() / "mcp.json";
  auto parsed = config::parse_text(starter_config_text(), file, config::Origin::user, {});
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->servers.empty());
  EXPECT_TRUE(parsed->warnings.empty()) << parsed->warnings.front();
  EXPECT_FALSE(parsed->has_operator_settings);
}

TEST(StarterConfig, ItsExamplesAreValidServerEntriesAsWritten) {
  bj::value doc = bj::parse(starter_config_text());
  const bj::value& examples = doc.as_object().at("$examples");
  TempDir dir;
  auto parsed =
      config::parse_text(bj::serialize(examples), dir.path() / "x.json", config::Origin::user, {});
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->servers.size(), 2u);
  EXPECT_TRUE(parsed->warnings.empty()) << parsed->warnings.front();
  EXPECT_EQ(parsed->servers[0].name, "files");
  EXPECT_EQ(parsed->servers[1].name, "tracker");
}

TEST(StarterConfig, NamesWhereEveryClientKeepsItsServersAndFitsEightyColumns) {
  const std::string text(starter_config_text());
  for (const char* where : {"~/.claude.json", "~/.cursor/mcp.json", "~/.config/Code/User/mcp.json",
                            "~/.codex/config.toml", "~/.gemini/settings.json",
                            "~/.config/Claude/claude_desktop_config.json",
                            "sluice import --from NAME", "sluice setup --client NAME --import"}) {
    EXPECT_NE(text.find(where), std::string::npos) << where;
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST(InitUserConfig, CreatesThePrivateFileAndItsFolder) {
  TempDir dir;
  const fs::path file = dir.path() / "config" / "sluice" / "mcp.json";
  InitOutcome outcome = init_user_config(file, false, kNoon);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.message;
  EXPECT_EQ(read(file), starter_config_text());
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_EQ(mode_of(file.parent_path()), 0700u);
  EXPECT_NE(outcome.message.find(file.string()), std::string::npos) << outcome.message;
}

TEST(InitUserConfig, RefusesToTouchAnExistingFileWithoutForce) {
  TempDir dir;
  const fs::path file = dir.path() / "mcp.json";
  config::test::write(file, R"({"mcpServers":{"mine":{"command":"x"}}})");
  InitOutcome outcome = init_user_config(file, false, kNoon);
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_NE(outcome.message.find("already exists"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("--force"), std::string::npos) << outcome.message;
  EXPECT_EQ(read(file), R"({"mcpServers":{"mine":{"command":"x"}}})");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(InitUserConfig, ForceBacksTheOldFileUpBesideItBeforeReplacingIt) {
  TempDir dir;
  const fs::path file = dir.path() / "mcp.json";
  const std::string old = R"({"mcpServers":{"mine":{"command":"x"}}})";
  config::test::write(file, old);
  InitOutcome first = init_user_config(file, true, kNoon);
  ASSERT_EQ(first.exit_code, 0) << first.message;
  EXPECT_EQ(first.backup, dir.path() / "mcp.json.sluice-backup-2026-12-02T12:00:00Z");
  EXPECT_EQ(read(first.backup), old);
  EXPECT_EQ(mode_of(first.backup), 0600u);
  EXPECT_EQ(read(file), starter_config_text());
  // A second --force in the same second keeps both backups.
  InitOutcome second = init_user_config(file, true, kNoon);
  ASSERT_EQ(second.exit_code, 0) << second.message;
  EXPECT_NE(second.backup, first.backup);
  EXPECT_EQ(read(first.backup), old);
}

TEST(InitUserConfig, ForceRefusesWhatItCannotBackUpAndChangesNothing) {
  TempDir dir;
  const fs::path file = dir.path() / "mcp.json";
  fs::create_directories(file);  // a folder where the file should be
  InitOutcome outcome = init_user_config(file, true, kNoon);
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_NE(outcome.message.find("nothing was changed"), std::string::npos) << outcome.message;
  EXPECT_TRUE(fs::is_directory(file));
}

TEST(UserConfigFile, IsReadByDiscoveryBeforeTheHomeFiles) {
  TempDir dir;
  const fs::path file = dir.path() / "xdg" / "sluice" / "mcp.json";
  ASSERT_EQ(init_user_config(file, false, kNoon).exit_code, 0);
  config::DiscoveryOptions options;
  options.cwd = dir.path();
  options.home = dir.path();
  options.user_config = file;
  config::GatewayConfig config = config::discover(options);
  EXPECT_TRUE(config.servers.empty());
  EXPECT_TRUE(config.warnings.empty()) << config.warnings.front();
}

}  // namespace
}  // namespace sluice::cli

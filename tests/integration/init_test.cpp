// `sluice init` as a user runs it: the starter file under the XDG config folder of HOME, the
// refusal to touch an existing one, --force with its backup, --print.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace sluice::test {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// HOME alone decides where the user config is: XDG_CONFIG_HOME is unset for the test (and
// put back after it).
class Init : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME")) saved_xdg_ = xdg;
    ::unsetenv("XDG_CONFIG_HOME");
  }
  void TearDown() override {
    if (saved_xdg_) ::setenv("XDG_CONFIG_HOME", saved_xdg_->c_str(), 1);
  }
  fs::path file() const { return dir_.path() / ".config" / "sluice" / "mcp.json"; }
  TempDir dir_;
  std::optional<std::string> saved_xdg_;
};

TEST_F(Init, WritesTheStarterFileThatServersThenReadsWithoutAWarning) {
  RunResult r = run_sluice({"init"}, dir_.path(), dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(file().string()), std::string::npos) << r.out;
  EXPECT_EQ(fs::status(file()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  RunResult servers = run_sluice({"servers"}, dir_.path(), dir_.path());
  EXPECT_EQ(servers.exit_code, 0) << servers.err;
  EXPECT_EQ(servers.err.find(file().string()), std::string::npos) << servers.err;
}

TEST_F(Init, RefusesAnExistingFileAndForceKeepsABackup) {
  dir_.write(".config/sluice/mcp.json", R"({"mcpServers":{}})");
  RunResult refused = run_sluice({"init"}, dir_.path(), dir_.path());
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("already exists"), std::string::npos) << refused.err;
  EXPECT_EQ(read(file()), R"({"mcpServers":{}})");

  RunResult forced = run_sluice({"init", "--force"}, dir_.path(), dir_.path());
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  int backups = 0;
  for (const auto& entry : fs::directory_iterator(file().parent_path())) {
    if (entry.path().filename().string().starts_with("mcp.json.sluice-backup-")) {
      ++backups;
      EXPECT_EQ(read(entry.path()), R"({"mcpServers":{}})");
    }
  }
  EXPECT_EQ(backups, 1);
  EXPECT_NE(read(file()), R"({"mcpServers":{}})");
}

TEST_F(Init, PrintWritesTheStarterFileToStdoutAndNothingToDisk) {
  RunResult r = run_sluice({"init", "--print"}, dir_.path(), dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"mcpServers\": {}"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(file()));
}

TEST_F(Init, AnUnexpectedArgumentIsAUsageError) {
  RunResult r = run_sluice({"init", "extra"}, dir_.path(), dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(file()));
}

}  // namespace
}  // namespace sluice::test

// The trust store (approvals of project files by real path and SHA-256 of their bytes) and
// what discover() makes of it: a project file's servers are untrusted until its exact bytes
// are approved, or trusted for one run by --trust-project; the user's own files never need it.
#include "config/trust_store.hpp"
#include "config/discovery.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write;
using ::testing::HasSubstr;
using State = GatewayConfig::ProjectTrust::State;

constexpr std::string_view kProjectFile = R"({"mcpServers": {"p": {"command": "srv"}}})";

mode_t trust_store_mode_of(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::stat(file.c_str(), &st), 0) << file;
  return st.st_mode & 07777;
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class Trust : public ::testing::Test {
 protected:
  Trust() {
    fs::create_directories(home());
    fs::create_directories(project() / ".git");
  }
  fs::path home() const { return root_.path() / "home"; }
  fs::path project() const { return root_.path() / "work" / "project"; }
  fs::path state() const { return root_.path() / "state" / "sluice"; }
  fs::path project_file() const { return project() / ".mcp.json"; }
  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.cwd = project();
    o.home = home();
    o.state_dir = state();
    return o;
  }
  void approve_as_it_is() {
    TrustStore store(state());
    const std::string text = read_all(project_file());
    ASSERT_TRUE(store.approve({real_path_of(project_file()).string(), content_digest(text), 1}));
  }
  TempDir root_;
};

TEST(ContentDigest, IsTheSha256OfTheBytesInLowercaseHex) {
  EXPECT_EQ(content_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(content_digest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(ApproveCommand, QuotesAPathAShellWouldSplitOrExpand) {
  EXPECT_EQ(approve_command("/home/a/p/.mcp.json"), "sluice trust approve /home/a/p/.mcp.json");
  EXPECT_EQ(approve_command("/home/a/my project/.mcp.json"),
            "sluice trust approve '/home/a/my project/.mcp.json'");
  EXPECT_EQ(approve_command("/x/it's $(id)/.mcp.json"),
            "sluice trust approve '/x/it'\\''s $(id)/.mcp.json'");
}

TEST_F(Trust, AnApprovalIsOfTheExactBytesAndTheRealPath) {
  TrustStore store(state());
  const std::string path = (project() / ".mcp.json").string();
  ASSERT_TRUE(store.approve({path, content_digest("one"), 1}));
  EXPECT_TRUE(store.approves(path, content_digest("one")).value());
  EXPECT_FALSE(store.approves(path, content_digest("one ")).value()) << "one more byte";
  EXPECT_FALSE(store.approves(path + "x", content_digest("one")).value()) << "another file";
}

TEST_F(Trust, TheTrustFileIsWrittenWithMode0600InA0700Directory) {
  TrustStore store(state());
  ASSERT_TRUE(store.approve({"/p/.mcp.json", content_digest("x"), 1}));
  EXPECT_EQ(trust_store_mode_of(store.file()), 0600u);
  EXPECT_EQ(trust_store_mode_of(state()), 0700u);
}

TEST_F(Trust, ALooserModeIsRefusedWithTheChmodToRun) {
  TrustStore store(state());
  ASSERT_TRUE(store.approve({"/p/.mcp.json", content_digest("x"), 1}));
  ASSERT_EQ(::chmod(store.file().c_str(), 0644), 0);
  auto approved = store.approves("/p/.mcp.json", content_digest("x"));
  ASSERT_FALSE(approved) << "a file others can read approves nothing";
  EXPECT_THAT(approved.error().message, HasSubstr("chmod 600 " + store.file().string()));
  EXPECT_FALSE(store.approve({"/q/.mcp.json", content_digest("y"), 2})) << "nor is it rewritten";
}

TEST_F(Trust, ApprovingAgainReplacesTheFilesEarlierApprovalAndRevokeRemovesIt) {
  TrustStore store(state());
  ASSERT_TRUE(store.approve({"/p/.mcp.json", content_digest("old"), 1}));
  ASSERT_TRUE(store.approve({"/q/.mcp.json", content_digest("q"), 2}));
  ASSERT_TRUE(store.approve({"/p/.mcp.json", content_digest("new"), 3}));
  auto all = store.list();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_FALSE(store.approves("/p/.mcp.json", content_digest("old")).value());
  EXPECT_TRUE(store.approves("/p/.mcp.json", content_digest("new")).value());
  EXPECT_TRUE(store.revoke("/p/.mcp.json").value());
  EXPECT_FALSE(store.revoke("/p/.mcp.json").value()) << "nothing left to revoke";
  EXPECT_FALSE(store.approves("/p/.mcp.json", content_digest("new")).value());
  EXPECT_TRUE(store.approves("/q/.mcp.json", content_digest("q")).value());
}

TEST_F(Trust, AProjectFilesServersAreUntrustedUntilItsBytesAreApproved) {
  write(project_file(), kProjectFile);
  GatewayConfig before = discover(options());
  ASSERT_EQ(before.servers.size(), 1u);
  EXPECT_TRUE(before.servers[0].untrusted);
  ASSERT_TRUE(before.project_trust);
  EXPECT_EQ(before.project_trust->state, State::untrusted);
  EXPECT_THAT(before.warnings.back(),
              HasSubstr("run: " + approve_command(project_file().string())));
  approve_as_it_is();
  GatewayConfig after = discover(options());
  EXPECT_FALSE(after.servers[0].untrusted);
  EXPECT_EQ(after.project_trust->state, State::approved);
}

TEST_F(Trust, OneChangedByteMakesTheProjectFileUntrustedAgain) {
  write(project_file(), kProjectFile);
  approve_as_it_is();
  write(project_file(), std::string(kProjectFile) + " ");
  GatewayConfig config = discover(options());
  EXPECT_TRUE(config.servers[0].untrusted);
}

TEST_F(Trust, AnApprovalOfTheFileASymlinkPointsToCoversTheSymlink) {
  write(root_.path() / "real" / "mcp.json", kProjectFile);
  fs::create_symlink(root_.path() / "real" / "mcp.json", project_file());
  approve_as_it_is();
  EXPECT_FALSE(discover(options()).servers[0].untrusted);
}

TEST_F(Trust, TheUsersOwnFilesAreTrustedWithoutAnApproval) {
  write(home() / ".mcp.json", R"({"mcpServers": {"u": {"command": "srv"}}})");
  write(root_.path() / "extra.json", R"({"mcpServers": {"e": {"command": "srv"}}})");
  DiscoveryOptions o = options();
  o.explicit_configs.push_back(root_.path() / "extra.json");
  GatewayConfig config = discover(o);
  ASSERT_EQ(config.servers.size(), 2u);
  EXPECT_FALSE(config.servers[0].untrusted);
  EXPECT_FALSE(config.servers[1].untrusted);
  EXPECT_FALSE(config.project_trust) << "no project file was read";
}

TEST_F(Trust, TrustProjectTrustsTheBytesOfThisRunOnlyAndWritesNothing) {
  write(project_file(), kProjectFile);
  DiscoveryOptions o = options();
  o.trust_project = true;
  GatewayConfig first = discover(o);
  EXPECT_FALSE(first.servers[0].untrusted);
  ASSERT_TRUE(first.project_trust);
  EXPECT_EQ(first.project_trust->state, State::trusted_for_run);
  EXPECT_FALSE(fs::exists(state() / kTrustFileName)) << "nothing is recorded";
  // A reread of the same run trusts the bytes of its start, not a change made since.
  o.pinned_project = first.project_trust;
  EXPECT_FALSE(discover(o).servers[0].untrusted);
  write(project_file(), std::string(kProjectFile) + "\n");
  EXPECT_TRUE(discover(o).servers[0].untrusted);
  EXPECT_TRUE(discover(options()).servers[0].untrusted) << "and the next run trusts nothing";
}

TEST_F(Trust, ALooseTrustFileApprovesNothingAndSaysHowToFixIt) {
  write(project_file(), kProjectFile);
  approve_as_it_is();
  ASSERT_EQ(::chmod((state() / kTrustFileName).c_str(), 0644), 0);
  GatewayConfig config = discover(options());
  EXPECT_TRUE(config.servers[0].untrusted);
  EXPECT_THAT(testing::PrintToString(config.warnings), HasSubstr("chmod 600"));
}

TEST_F(Trust, TheTrustFileIsWatchedWhenThereIsAProject) {
  write(project_file(), kProjectFile);
  GatewayConfig config = discover(options());
  EXPECT_THAT(config.files_looked_for, ::testing::Contains(state() / kTrustFileName));
}

}  // namespace
}  // namespace sluice::config

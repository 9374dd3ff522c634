#include "cli/gateway_registry.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sluice::cli {
namespace {
namespace fs = std::filesystem;

class GatewayRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/sluice-registry-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    root_ = name;
    run_ = run_dir_of(root_ / "state");
  }
  void TearDown() override {
    ::chmod(run_.c_str(), 0700);
    fs::remove_all(root_);
  }

  // An entry of this test process, as a gateway would write it.
  RegistryEntry own_entry() const {
    RegistryEntry e;
    e.pid = ::getpid();
    e.kind = "stdio";
    e.start_ticks = process_start_ticks(e.pid).value_or(0);
    e.started_unix_ms = 1764622805000;
    e.version = "1.2.3";
    return e;
  }

  static void touch(const fs::path& path) { std::ofstream(path) << ""; }

  // The pid of a process that has exited and been reaped.
  static pid_t gone_pid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
  }

  static unsigned mode_of(const fs::path& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st.st_mode & 0777;
  }

  fs::path root_, run_;
};

TEST_F(GatewayRegistry, TheStartTimeOfALiveProcessIsKnownAndOfAGoneOneIsNot) {
  EXPECT_TRUE(process_start_ticks(::getpid()).has_value());
  EXPECT_FALSE(process_start_ticks(gone_pid()).has_value());
}

TEST_F(GatewayRegistry, AnEntryRoundTripsThroughItsJsonText) {
  RegistryEntry e = own_entry();
  e.kind = "http";
  e.host = "127.0.0.1";
  e.port = 3344;
  e.token_required = true;
  std::optional<RegistryEntry> back = parse_entry(entry_json(e));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->pid, e.pid);
  EXPECT_EQ(back->kind, "http");
  EXPECT_EQ(back->start_ticks, e.start_ticks);
  EXPECT_EQ(back->started_unix_ms, e.started_unix_ms);
  EXPECT_EQ(back->version, "1.2.3");
  EXPECT_EQ(back->host, "127.0.0.1");
  EXPECT_EQ(back->port, 3344);
  EXPECT_TRUE(back->token_required);
  EXPECT_FALSE(parse_entry(R"({"pid":1,"kind":"ftp","start_ticks":1})").has_value());
  EXPECT_FALSE(parse_entry(R"({"pid":-4,"kind":"stdio","start_ticks":1})").has_value());
  EXPECT_FALSE(parse_entry("not json").has_value());
}

TEST_F(GatewayRegistry, TheRunFolderIsMadePrivateAndTheEntryFileTooWhateverTheUmask) {
  const mode_t old = ::umask(0);
  auto ready = prepare_run_dir(run_);
  auto written = write_entry(run_, own_entry());
  ::umask(old);
  ASSERT_TRUE(ready) << ready.error().message;
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(mode_of(run_), 0700u);
  EXPECT_EQ(mode_of(run_.parent_path()), 0700u);
  EXPECT_EQ(mode_of(entry_file(run_, ::getpid())), 0600u);
}

TEST_F(GatewayRegistry, ARunFolderOpenToOthersIsRefusedWithTheFix) {
  ASSERT_TRUE(prepare_run_dir(run_));
  ::chmod(run_.c_str(), 0750);
  auto ready = prepare_run_dir(run_);
  ASSERT_FALSE(ready);
  EXPECT_NE(ready.error().message.find("chmod 700 " + run_.string()), std::string::npos);
  RegistryListing listing = list_entries(run_);
  EXPECT_FALSE(listing.problem.empty());
  EXPECT_TRUE(listing.live.empty());
}

TEST_F(GatewayRegistry, TheEntryOfALiveProcessIsListed) {
  ASSERT_TRUE(prepare_run_dir(run_));
  ASSERT_TRUE(write_entry(run_, own_entry()));
  RegistryListing listing = list_entries(run_);
  ASSERT_EQ(listing.live.size(), 1u);
  EXPECT_EQ(listing.live[0].pid, ::getpid());
  EXPECT_EQ(listing.stale_removed, 0u);
  EXPECT_TRUE(fs::exists(entry_file(run_, ::getpid())));
}

TEST_F(GatewayRegistry, TheEntryOfAProcessThatIsGoneIsRemovedWithItsSocket) {
  ASSERT_TRUE(prepare_run_dir(run_));
  RegistryEntry e = own_entry();
  e.pid = gone_pid();
  ASSERT_TRUE(write_entry(run_, e));
  touch(socket_file(run_, e.pid));
  RegistryListing listing = list_entries(run_);
  EXPECT_TRUE(listing.live.empty());
  EXPECT_EQ(listing.stale_removed, 1u);
  EXPECT_FALSE(fs::exists(entry_file(run_, e.pid)));
  EXPECT_FALSE(fs::exists(socket_file(run_, e.pid)));
}

TEST_F(GatewayRegistry, AnEntryWhosePidWasReusedByAnotherProcessIsRemoved) {
  ASSERT_TRUE(prepare_run_dir(run_));
  RegistryEntry e = own_entry();
  e.start_ticks += 1;  // the pid is alive, but it is not the process that wrote the entry
  ASSERT_TRUE(write_entry(run_, e));
  RegistryListing listing = list_entries(run_);
  EXPECT_TRUE(listing.live.empty());
  EXPECT_EQ(listing.stale_removed, 1u);
  EXPECT_FALSE(fs::exists(entry_file(run_, e.pid)));
}

TEST_F(GatewayRegistry, ASocketWithoutAnEntryIsKeptWhileItsProcessLives) {
  ASSERT_TRUE(prepare_run_dir(run_));
  touch(socket_file(run_, ::getpid()));  // a gateway between binding and writing its entry
  const pid_t gone = gone_pid();
  touch(socket_file(run_, gone));
  RegistryListing listing = list_entries(run_);
  EXPECT_TRUE(fs::exists(socket_file(run_, ::getpid())));
  EXPECT_FALSE(fs::exists(socket_file(run_, gone)));
}

TEST_F(GatewayRegistry, RemovingAnEntryRemovesItsFileAndSocket) {
  ASSERT_TRUE(prepare_run_dir(run_));
  ASSERT_TRUE(write_entry(run_, own_entry()));
  touch(socket_file(run_, ::getpid()));
  remove_entry(run_, ::getpid());
  EXPECT_FALSE(fs::exists(entry_file(run_, ::getpid())));
  EXPECT_FALSE(fs::exists(socket_file(run_, ::getpid())));
  EXPECT_TRUE(list_entries(run_).live.empty());
}

TEST_F(GatewayRegistry, AMissingRunFolderListsNothingAndIsNotCreated) {
  RegistryListing listing = list_entries(run_);
  EXPECT_TRUE(listing.live.empty());
  EXPECT_TRUE(listing.problem.empty());
  EXPECT_FALSE(fs::exists(run_));
}

}  // namespace
}  // namespace sluice::cli

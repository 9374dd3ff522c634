// FileWatch on a real folder: a write, an editor's rename-over save, a file that appears
// later and a deletion are each reported once; other files in the folder are not; a burst is
// debounced into one report (in simulated time); nothing is reported after stop().
#include "config/file_watch.hpp"

#include "../run_until.hpp"
#include "core/clock.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sluice::config {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

class FileWatchTest : public testing::Test {
 protected:
  FileWatchTest() {
    dir_ =
        fs::temp_directory_path() / ("sluice-watch-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~FileWatchTest() override { fs::remove_all(dir_); }

  void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  // Runs the loop a little: what the kernel queued so far is read.
  void settle_loop(std::chrono::milliseconds how_long) {
    sluice::test::run_until(
        io_, [] { return false; }, how_long);
  }
  bool changes_reach(int n) {
    return sluice::test::run_until(
        io_, [&] { return changes_ >= n; }, 5s);
  }

  boost::asio::io_context io_;
  fs::path dir_;
  int changes_ = 0;
};

TEST_F(FileWatchTest, AWriteToAWatchedFileIsReportedOnce) {
  write(dir_ / ".mcp.json", "{}");
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  EXPECT_TRUE(watch.watch({dir_ / ".mcp.json"}).empty());
  write(dir_ / ".mcp.json", R"({"mcpServers":{}})");
  ASSERT_TRUE(changes_reach(1));
  settle_loop(100ms);
  EXPECT_EQ(changes_, 1);
}

TEST_F(FileWatchTest, AChangeMadeWhileTheFilesAreWatchedAgainIsNotLost) {
  // A reread watches its files again; a change that came just before (its event still
  // queued, unread) must still be reported: the folder's watch is kept, not dropped and added.
  write(dir_ / ".mcp.json", "{}");
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  EXPECT_TRUE(watch.watch({dir_ / ".mcp.json"}).empty());
  write(dir_ / ".mcp.json", R"({"mcpServers":{}})");  // queued; the loop has not read it
  EXPECT_TRUE(watch.watch({dir_ / ".mcp.json", dir_ / "other.json"}).empty());
  EXPECT_EQ(watch.directories(), 1u);
  ASSERT_TRUE(changes_reach(1)) << "the change made before the files were watched again";
  // A folder no longer wanted is dropped: nothing more is reported from it.
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  EXPECT_TRUE(watch.watch({elsewhere / ".mcp.json"}).empty());
  EXPECT_EQ(watch.directories(), 1u);
  settle_loop(100ms);
  const int before = changes_;
  write(dir_ / ".mcp.json", "{}");
  settle_loop(100ms);
  EXPECT_EQ(changes_, before);
}

TEST_F(FileWatchTest, AnEditorsRenameOverSaveIsSeen) {
  write(dir_ / ".mcp.json", "{}");
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  watch.watch({dir_ / ".mcp.json"});
  write(dir_ / ".mcp.json.swp", R"({"mcpServers":{}})");
  fs::rename(dir_ / ".mcp.json.swp", dir_ / ".mcp.json");
  ASSERT_TRUE(changes_reach(1));
  // The file is a new inode now: a second save is seen too.
  write(dir_ / ".mcp.json.swp", "{}");
  fs::rename(dir_ / ".mcp.json.swp", dir_ / ".mcp.json");
  EXPECT_TRUE(changes_reach(2));
}

TEST_F(FileWatchTest, AFileThatAppearsLaterAndADeletionAreSeen) {
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  EXPECT_TRUE(watch.watch({dir_ / ".mcp.json"}).empty());
  write(dir_ / ".mcp.json", "{}");
  ASSERT_TRUE(changes_reach(1));
  fs::remove(dir_ / ".mcp.json");
  EXPECT_TRUE(changes_reach(2));
}

TEST_F(FileWatchTest, OtherFilesInTheFolderAreIgnored) {
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  watch.watch({dir_ / ".mcp.json"});
  write(dir_ / "notes.txt", "x");
  write(dir_ / ".mcp.json.bak", "x");
  settle_loop(150ms);
  EXPECT_EQ(changes_, 0);
  write(dir_ / ".mcp.json", "{}");
  EXPECT_TRUE(changes_reach(1));
}

TEST_F(FileWatchTest, ABurstOfEventsIsDebouncedIntoOneChange) {
  core::SimulatedTime time;
  FileWatch watch(io_, 200ms, [&] { ++changes_; });
  watch.watch({dir_ / ".mcp.json", dir_ / "other.json"});
  for (int i = 0; i < 5; ++i) {
    write(dir_ / ".mcp.json", std::string(static_cast<std::size_t>(i + 1), ' '));
    write(dir_ / "other.json", "{}");
  }
  settle_loop(50ms);
  EXPECT_EQ(changes_, 0) << "nothing before the debounce has passed";
  ASSERT_TRUE(sluice::test::run_until(io_, [&] {
    time.advance(10ms);
    return changes_ >= 1;
  }));
  time.advance(1s);
  settle_loop(50ms);
  EXPECT_EQ(changes_, 1);
}

TEST_F(FileWatchTest, AMissingFolderIsNoProblemAndNothingIsReportedAfterStop) {
  FileWatch watch(io_, 20ms, [&] { ++changes_; });
  EXPECT_TRUE(watch.watch({dir_ / "absent" / ".mcp.json", dir_ / ".mcp.json"}).empty());
  EXPECT_EQ(watch.directories(), 1u);
  watch.stop();
  write(dir_ / ".mcp.json", "{}");
  settle_loop(100ms);
  EXPECT_EQ(changes_, 0);
}

}  // namespace
}  // namespace sluice::config

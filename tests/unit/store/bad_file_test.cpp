// The cache file when it is bad: corrupt (rebuilt), written by a newer sluice (left
// untouched), in a read-only or unusable place, a symbolic link, locked by another
// connection, or on a disk that refuses to grow. The store says so in status() and never
// throws, crashes or blocks the loop.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.hpp"
#include "store/catalog_store.hpp"
#include "store_files.hpp"

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace sluice::store {
namespace {

using test::listing;
using test::load;

std::vector<std::filesystem::path> files_named(const std::filesystem::path& dir,
                                               const std::string& prefix) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with(prefix)) found.push_back(entry.path());
  }
  return found;
}

void write_file(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A store on `dir` that cannot use its file: unavailable, loads nothing, counts its save
// failed, and answers flush.
void expect_serves_without_the_cache(const std::filesystem::path& dir, const std::string& why) {
  asio::io_context io;
  CatalogStore store(io, dir);
  EXPECT_TRUE(load(io, store).empty());
  store.save(listing("files", "fp"));
  const StoreStatus status = test::settled_status(io, store);
  EXPECT_FALSE(status.available);
  EXPECT_TRUE(contains(status.problem, why)) << status.problem;
  EXPECT_EQ(status.writes, 0u);
  EXPECT_EQ(status.failed_writes, 1u);
}

TEST(CatalogStoreBadFile, AFileThatIsNotADatabaseIsMovedAsideAndRebuiltEmpty) {
  test::TempDir dir;
  const std::string junk(8192, 'j');
  write_file(dir.path() / "catalog.sqlite3", junk);
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    EXPECT_TRUE(load(io, store).empty());
    store.save(listing("files", "fp"));
    const StoreStatus status = test::settled_status(io, store);
    EXPECT_TRUE(status.available);
    EXPECT_TRUE(contains(status.problem, "corrupt")) << status.problem;
    EXPECT_EQ(status.writes, 1u);
  }
  const auto aside = files_named(dir.path(), "catalog.sqlite3.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(test::bytes_of(aside[0]), junk);
  asio::io_context io;
  CatalogStore store(io, dir.path());
  EXPECT_EQ(load(io, store).size(), 1u);
  EXPECT_EQ(test::settled_status(io, store).problem, "");
}

TEST(CatalogStoreBadFile, AMalformedDatabaseIsMovedAsideWhenReadAndRebuiltEmpty) {
  test::TempDir dir;
  const std::filesystem::path file = dir.path() / "catalog.sqlite3";
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    for (int i = 0; i < 50; ++i) store.save(listing("server-" + std::to_string(i), "fp"));
  }
  // The header stays valid (same schema version); every page after the first is garbage.
  std::string bytes = test::bytes_of(file);
  ASSERT_GT(bytes.size(), 8192u);
  for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  write_file(file, bytes);

  asio::io_context io;
  CatalogStore store(io, dir.path());
  EXPECT_TRUE(load(io, store).empty());
  EXPECT_TRUE(contains(test::settled_status(io, store).problem, "corrupt"));
  EXPECT_EQ(files_named(dir.path(), "catalog.sqlite3.corrupt-").size(), 1u);
  store.save(listing("files", "fp"));
  EXPECT_EQ(load(io, store).size(), 1u);
  EXPECT_TRUE(store.status().available);
}

TEST(CatalogStoreBadFile, AFileOfANewerSluiceIsLeftUntouchedAndTheStoreIsUnavailable) {
  test::TempDir dir;
  const std::filesystem::path file = dir.path() / "catalog.sqlite3";
  ASSERT_TRUE(test::write_sqlite(file,
                                 "CREATE TABLE future (x); INSERT INTO future VALUES (1); "
                                 "PRAGMA user_version = 99;"));
  const std::string before = test::bytes_of(file);
  expect_serves_without_the_cache(dir.path(), "newer sluice (schema version 99)");
  EXPECT_EQ(test::bytes_of(file), before);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "catalog.sqlite3-wal"));
  EXPECT_TRUE(files_named(dir.path(), "catalog.sqlite3.corrupt-").empty());
}

TEST(CatalogStoreBadFile, AReadOnlyStateDirectoryLeavesTheStoreUnavailable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file modes";
  test::TempDir dir;
  const std::filesystem::path state = dir.path() / "state";
  ASSERT_EQ(::mkdir(state.c_str(), 0500), 0);
  expect_serves_without_the_cache(state, "cannot be opened for writing");
  ASSERT_EQ(::mkdir((dir.path() / "locked").c_str(), 0500), 0);
  expect_serves_without_the_cache(dir.path() / "locked" / "state", "cannot be created");
}

TEST(CatalogStoreBadFile, AReadOnlyCacheFileLeavesTheStoreUnavailableAndTheFileIntact) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores file modes";
  test::TempDir dir;
  const std::filesystem::path file = dir.path() / "catalog.sqlite3";
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    store.save(listing("files", "fp"));
  }
  ::chmod(file.c_str(), 0400);
  const std::string before = test::bytes_of(file);
  expect_serves_without_the_cache(dir.path(), "cannot be opened for writing");
  EXPECT_EQ(test::bytes_of(file), before);
}

TEST(CatalogStoreBadFile, AnUnusableStatePathOrNoneLeavesTheStoreUnavailable) {
  test::TempDir dir;
  write_file(dir.path() / "plain-file", "x");
  expect_serves_without_the_cache(dir.path() / "plain-file" / "state", "cannot be created");
  expect_serves_without_the_cache(dir.path() / "plain-file", "not a directory");
  expect_serves_without_the_cache({}, "no state directory");
  const std::filesystem::path shared = dir.path() / "shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ::chmod(shared.c_str(), 0777);
  expect_serves_without_the_cache(shared, "not be writable by others");
}

TEST(CatalogStoreBadFile, ACacheFileThatIsASymbolicLinkIsNotFollowed) {
  test::TempDir dir;
  write_file(dir.path() / "elsewhere", "keep me");
  std::filesystem::create_symlink(dir.path() / "elsewhere", dir.path() / "catalog.sqlite3");
  expect_serves_without_the_cache(dir.path(), "symbolic link");
  EXPECT_EQ(test::bytes_of(dir.path() / "elsewhere"), "keep me");
}

// Another connection holds the write lock: the write waits on the worker while the loop keeps
// running, is counted failed after the bounded wait, and goes with the next save once the
// lock is gone.
TEST(CatalogStoreBadFile, AWriteBehindAnotherConnectionsLockNeverBlocksTheLoopAndIsRetried) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("first", "fp"));
  test::flush(io, store);

  test::WriteLock other(dir.path());

  const auto saved_at = core::Clock::now();
  store.save(listing("held", "fp"));
  bool fired = false;
  std::uint64_t failed_when_fired = 99;
  core::Timer timer(io, std::chrono::milliseconds(20));
  timer.async_wait([&](boost::system::error_code) {
    store.save(listing("during", "fp"));  // a save on the loop does not wait for the worker
    fired = true;
    failed_when_fired = store.status().failed_writes;
  });
  ASSERT_TRUE(sluice::test::run_until(io, [&] { return store.status().failed_writes == 1; }));
  EXPECT_TRUE(fired);
  EXPECT_EQ(failed_when_fired, 0u) << "the loop ran while the write waited for the lock";
  EXPECT_GE(core::Clock::now() - saved_at, kBusyWait - std::chrono::milliseconds(100));
  EXPECT_TRUE(contains(store.status().problem, "locked by another process"));
  EXPECT_EQ(store.status().writes, 1u);

  other.release();
  store.save(listing("after", "fp"));
  const StoreStatus status = test::settled_status(io, store);
  EXPECT_EQ(status.writes, 4u) << "the held listing went with the next save";
  EXPECT_EQ(status.failed_writes, 1u);
  EXPECT_EQ(status.problem, "");
  EXPECT_EQ(load(io, store).size(), 4u);
}

// The write queue is bounded: with the worker held behind a lock, saves of distinct servers
// beyond kMaxQueuedWrites are dropped and counted.
TEST(CatalogStoreBadFile, SavesBeyondTheQueueBoundAreDroppedAndCounted) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  test::flush(io, store);
  test::WriteLock other(dir.path());
  const std::size_t sent = kMaxQueuedWrites + 50;
  for (std::size_t i = 0; i < sent; ++i) store.save(listing("s" + std::to_string(i), "fp"));
  const std::uint64_t dropped = store.status().dropped_writes;
  EXPECT_GE(dropped, sent - kMaxQueuedWrites - 1);
  EXPECT_LE(dropped, sent - kMaxQueuedWrites);
  other.release();
  const StoreStatus status = test::settled_status(io, store);
  EXPECT_EQ(status.writes, sent - dropped);
  EXPECT_EQ(load(io, store).size(), sent - dropped);
}

// A file that cannot grow (here the process's file size limit; a full disk fails the same
// way): the write is counted failed, the loop and the store go on, and the listing is
// written with the next save once there is room.
TEST(CatalogStoreBadFile, AFileThatCannotGrowCountsTheWriteFailedAndRetriesIt) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("small", "fp"));
  test::flush(io, store);

  std::vector<std::string> tools(2000, std::string(1024, 't'));
  rlimit previous{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  const auto previous_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = previous;
  small.rlim_cur = 512 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  store.save(listing("big", "fp", tools));
  const StoreStatus failed = test::settled_status(io, store);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &previous), 0);
  ::signal(SIGXFSZ, previous_handler);

  EXPECT_EQ(failed.failed_writes, 1u);
  EXPECT_TRUE(failed.available);
  EXPECT_TRUE(contains(failed.problem, "retried with the next save")) << failed.problem;
  store.save(listing("later", "fp"));
  const StoreStatus status = test::settled_status(io, store);
  EXPECT_EQ(status.writes, 3u);
  EXPECT_EQ(status.problem, "");
  EXPECT_EQ(load(io, store).size(), 3u);
}

}  // namespace
}  // namespace sluice::store

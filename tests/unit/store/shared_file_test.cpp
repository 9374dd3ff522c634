// Two stores on one state directory, as two sluice processes (two clients each running their
// own stdio sluice) hold it: each sees what the other committed on its next load_all().
#include <gtest/gtest.h>

#include <poll.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.hpp"
#include "store/catalog_store.hpp"
#include "store_files.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace sluice::store {
namespace {

using test::listing;
using test::load;

bool has_server(const std::vector<ServerListing>& all, const std::string& server) {
  return std::any_of(all.begin(), all.end(),
                     [&](const ServerListing& one) { return one.server == server; });
}

TEST(CatalogStoreShared, TwoStoresOnOneDirectoryReadEachOthersListings) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore a(io, dir.path());
  CatalogStore b(io, dir.path());
  a.save(listing("from-a", "fp"));
  test::flush(io, a);
  EXPECT_TRUE(has_server(load(io, b), "from-a"));
  b.save(listing("from-b", "fp"));
  test::flush(io, b);
  const std::vector<ServerListing> seen_by_a = load(io, a);
  EXPECT_TRUE(has_server(seen_by_a, "from-a"));
  EXPECT_TRUE(has_server(seen_by_a, "from-b"));
}

// Another sluice opened the same new file a moment before and holds its write lock while it
// turns the file to WAL. Turning it to WAL here too means taking that lock from inside a read,
// where SQLite answers SQLITE_BUSY at once instead of calling the busy handler (two such
// upgrades could deadlock). The store waits for the lock on its bound like for any other.
TEST(CatalogStoreShared, AStoreOpeningANewFileWhileAnotherWritesItWaitsForTheLock) {
  test::TempDir dir;
  const std::filesystem::path file = dir.path() / "catalog.sqlite3";
  ASSERT_TRUE(test::write_sqlite(file, "CREATE TABLE other (x)"));
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("waited", "fp"));
  core::Timer timer(io, std::chrono::milliseconds(200));
  timer.async_wait([&](boost::system::error_code) {
    sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(writer);
    writer = nullptr;
  });
  const StoreStatus status = test::settled_status(io, store);
  if (writer != nullptr) sqlite3_close(writer);
  EXPECT_EQ(status.writes, 1u);
  EXPECT_EQ(status.failed_writes, 0u);
  EXPECT_EQ(status.problem, "");
  EXPECT_TRUE(has_server(load(io, store), "waited"));
}

// One byte over a pipe, waited for with a guard; false when none came.
bool send_byte(int fd) { return ::write(fd, "x", 1) == 1; }
bool receive_byte(int fd) {
  pollfd p{fd, POLLIN, 0};
  char c = 0;
  return ::poll(&p, 1, 20000) == 1 && ::read(fd, &c, 1) == 1;
}

// The child's half: its own loop and store on the same directory, opened while the parent
// opens its own. Returns its exit code: 0 when it saw the parent's listing.
int child_process(const std::filesystem::path& dir, int to_parent, int from_parent) {
  asio::io_context io;
  int code = 0;
  {
    CatalogStore store(io, dir);
    store.save(listing("from-child", "fp"));
    test::flush(io, store);
    if (store.status().writes != 1) code = 2;
    if (!send_byte(to_parent) || !receive_byte(from_parent)) code = 3;
    if (code == 0 && !has_server(load(io, store), "from-parent")) code = 4;
    store.save(listing("from-child-again", "fp"));
    test::flush(io, store);
    if (code == 0 && store.status().writes != 2) code = 5;
    if (code != 0) std::fprintf(stderr, "child: %s\n", store.status().problem.c_str());
  }
  if (!send_byte(to_parent)) code = 6;
  return code;
}

TEST(CatalogStoreShared, TwoProcessesOnOneDirectoryShareTheCache) {
  test::TempDir dir;
  int to_parent[2], from_parent[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(from_parent), 0);
  // Forked before this process opens any store: the child inherits no SQLite connection.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(child_process(dir.path(), to_parent[1], from_parent[0]));

  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    ASSERT_TRUE(receive_byte(to_parent[0])) << "the child did not save its listing";
    EXPECT_TRUE(has_server(load(io, store), "from-child"));
    store.save(listing("from-parent", "fp"));
    test::flush(io, store);
    EXPECT_TRUE(send_byte(from_parent[1]));
    ASSERT_TRUE(receive_byte(to_parent[0])) << "the child did not finish";
    const std::vector<ServerListing> all = load(io, store);
    EXPECT_TRUE(has_server(all, "from-child-again"));
    EXPECT_EQ(all.size(), 3u);
    EXPECT_EQ(store.status().problem, "");
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's check that failed (see child_process)";
  for (int fd : {to_parent[0], to_parent[1], from_parent[0], from_parent[1]}) ::close(fd);
}

}  // namespace
}  // namespace sluice::store

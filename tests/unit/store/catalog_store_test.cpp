// CatalogStore on a real SQLite file in a scratch directory: listings outlive the store that
// saved them, a server keeps only its newest fingerprints, removal, modes whatever the umask,
// and the size cap.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "store/catalog_store.hpp"
#include "store_files.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace sluice::store {
namespace {

using test::listing;
using test::load;

std::vector<std::string> fingerprints_of(const std::vector<ServerListing>& all,
                                         const std::string& server) {
  std::vector<std::string> out;
  for (const ServerListing& one : all) {
    if (one.server == server) out.push_back(one.fingerprint);
  }
  return out;
}

TEST(CatalogStore, AListingSavedByOneStoreIsLoadedWholeByTheNextOnTheSameDirectory) {
  test::TempDir dir;
  ServerListing saved =
      listing("files", "fp-1",
              {R"({"name":"read_file","description":"Ünïcode \"quoted\""})",
               R"({"name":"write_file"})", std::string("{\"nul\":\"a\0b\"}", 14)});
  saved.listed_at_ms = 1764590000123;
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    store.save(saved);
    test::flush(io, store);
    EXPECT_TRUE(store.status().available);
    EXPECT_EQ(store.status().writes, 1u);
  }
  asio::io_context io;
  CatalogStore store(io, dir.path());
  const std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(all.size(), 1u);
  const ServerListing& got = all[0];
  EXPECT_EQ(got.server, "files");
  EXPECT_EQ(got.fingerprint, "fp-1");
  EXPECT_EQ(got.listed_at_ms, 1764590000123);
  EXPECT_EQ(got.server_name, "fixture");
  EXPECT_EQ(got.server_version, "1.0");
  EXPECT_EQ(got.protocol_version, "2025-06-18");
  EXPECT_EQ(got.tools, saved.tools);  // in order, byte for byte
  EXPECT_EQ(got.prompts, saved.prompts);
  EXPECT_EQ(got.resources, saved.resources);
  EXPECT_EQ(got.resource_templates, saved.resource_templates);
  EXPECT_EQ(store.status().path, (dir.path() / "catalog.sqlite3").string());
  EXPECT_EQ(store.status().problem, "");
}

TEST(CatalogStore, TheListsLifetimeAServerGaveIsKeptAndAVersion1FileGainsIt) {
  test::TempDir dir;
  const std::filesystem::path file = dir.path() / "catalog.sqlite3";
  // A cache written by a sluice of schema version 1 (no list_ttl_ms), with one listing.
  ASSERT_TRUE(
      test::write_sqlite(file,
                         "CREATE TABLE listing (id INTEGER PRIMARY KEY, server TEXT NOT NULL, "
                         "fingerprint TEXT NOT NULL, listed_at_ms INTEGER NOT NULL, "
                         "server_name TEXT NOT NULL, server_version TEXT NOT NULL, "
                         "protocol_version TEXT NOT NULL, UNIQUE (server, fingerprint)); "
                         "CREATE TABLE item (listing INTEGER NOT NULL, kind INTEGER NOT NULL, "
                         "ord INTEGER NOT NULL, json TEXT NOT NULL, "
                         "PRIMARY KEY (listing, kind, ord)) WITHOUT ROWID; "
                         "INSERT INTO listing VALUES (1, 'old', 'fp', 5, 'o', '1', "
                         "'2025-11-25'); INSERT INTO item VALUES (1, 0, 0, '{\"name\":\"t\"}'); "
                         "PRAGMA user_version = 1;"));
  ServerListing modern = listing("new", "fp-2", {R"({"name":"echo"})"});
  modern.protocol_version = "2026-07-28";
  modern.list_ttl_ms = 60000;
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    store.save(modern);
    test::flush(io, store);
    EXPECT_TRUE(store.status().available) << store.status().problem;
  }
  asio::io_context io;
  CatalogStore store(io, dir.path());
  std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(all.size(), 2u);
  std::sort(all.begin(), all.end(),
            [](const ServerListing& a, const ServerListing& b) { return a.server < b.server; });
  EXPECT_EQ(all[0].server, "new");
  EXPECT_EQ(all[0].list_ttl_ms, 60000);
  EXPECT_EQ(all[1].server, "old");
  EXPECT_EQ(all[1].list_ttl_ms, -1) << "a version-1 listing did not say";
  EXPECT_EQ(all[1].tools, std::vector<std::string>{R"({"name":"t"})"})
      << "kept through the upgrade";
}

TEST(CatalogStore, OneToolIsReadByNameFromTheNewestListingOfItsServerAndFingerprint) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("files", "fp", {R"({"name":"read","v":1})", R"({"name":"write","v":1})"}));
  store.save(listing("files", "other-fp", {R"({"name":"read","v":2})"}));
  store.save(listing("notes", "fp", {R"({"name":"read","v":3})"}));
  test::flush(io, store);
  store.save(listing("files", "fp", {"not json", R"({"name":"write","v":4})"}));
  auto tool = [&](const char* server, const char* fp, const char* name) {
    auto got = test::await_on(io, store.load_tool(server, fp, name));
    EXPECT_TRUE(got.has_value()) << "the read did not resume";
    return got.value_or(std::optional<std::string>("(no answer)"));
  };
  EXPECT_EQ(tool("files", "fp", "write"), R"({"name":"write","v":4})");
  EXPECT_EQ(tool("files", "fp", "read"), std::nullopt);  // not in the newest listing
  EXPECT_EQ(tool("files", "other-fp", "read"), R"({"name":"read","v":2})");
  EXPECT_EQ(tool("notes", "fp", "read"), R"({"name":"read","v":3})");
  EXPECT_EQ(tool("nobody", "fp", "read"), std::nullopt);
}

TEST(CatalogStore, DestroyingTheStoreFinishesTheWritesItHadQueued) {
  test::TempDir dir;
  {
    asio::io_context io;
    CatalogStore store(io, dir.path());
    for (int i = 0; i < 20; ++i) store.save(listing("server-" + std::to_string(i), "fp"));
  }
  asio::io_context io;
  CatalogStore store(io, dir.path());
  EXPECT_EQ(load(io, store).size(), 20u);
}

TEST(CatalogStore, ALaterSaveOfTheSameServerAndFingerprintReplacesTheEarlierOne) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("files", "fp", {R"({"name":"old"})"}));
  test::flush(io, store);
  store.save(listing("files", "fp", {R"({"name":"new"})", R"({"name":"newer"})"}));
  const std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].tools, (std::vector<std::string>{R"({"name":"new"})", R"({"name":"newer"})"}));
}

TEST(CatalogStore, EachServerNameKeepsOnlyItsThreeMostRecentFingerprintsNewestFirst) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("other", "o-1"));
  for (int i = 1; i <= 5; ++i) store.save(listing("files", "fp-" + std::to_string(i)));
  test::flush(io, store);
  store.save(listing("files", "fp-4"));  // saved again: the newest now
  const std::vector<ServerListing> all = load(io, store);
  EXPECT_EQ(fingerprints_of(all, "files"), (std::vector<std::string>{"fp-4", "fp-5", "fp-3"}));
  EXPECT_EQ(fingerprints_of(all, "other"), (std::vector<std::string>{"o-1"}));
}

TEST(CatalogStore, ForgetRemovesEveryListingOfThatServerAndNoOther) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("files", "fp-1"));
  store.save(listing("files", "fp-2"));
  store.save(listing("memory", "m-1"));
  store.forget("files");
  store.save(listing("files", "fp-3"));  // after the removal: kept
  const std::vector<ServerListing> all = load(io, store);
  EXPECT_EQ(fingerprints_of(all, "files"), (std::vector<std::string>{"fp-3"}));
  EXPECT_EQ(fingerprints_of(all, "memory"), (std::vector<std::string>{"m-1"}));
  EXPECT_EQ(all.size(), 2u);
}

// Queued saves are merged only where no removal of that server lies between them. The worker
// is held behind another connection's lock while the three are queued, so that they all wait
// in the queue together.
TEST(CatalogStore, ASaveQueuedAfterARemovalIsKeptAndTheOneBeforeItIsNot) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  test::flush(io, store);
  {
    test::WriteLock other(dir.path());
    store.save(listing("holder", "fp"));  // the worker waits on the lock with this one
    store.save(listing("files", "fp", {R"({"name":"before"})"}));
    store.forget("files");
    store.save(listing("files", "fp", {R"({"name":"after"})"}));
  }
  const std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(fingerprints_of(all, "files"), (std::vector<std::string>{"fp"}));
  for (const ServerListing& one : all) {
    if (one.server == "files") {
      EXPECT_EQ(one.tools[0], R"({"name":"after"})");
    }
  }
}

TEST(CatalogStore, FilesAre0600InA0700DirectoryWhateverTheUmask) {
  test::TempDir dir;
  const std::filesystem::path state = dir.path() / "made" / "state";
  const mode_t previous = ::umask(0);
  {
    asio::io_context io;
    CatalogStore store(io, state);
    store.save(listing("files", "fp"));
    test::flush(io, store);
    EXPECT_EQ(test::mode_of(dir.path() / "made"), 0700u);
    EXPECT_EQ(test::mode_of(state), 0700u);
    EXPECT_EQ(test::mode_of(state / "catalog.sqlite3"), 0600u);
    EXPECT_EQ(test::mode_of(state / "catalog.sqlite3-wal"), 0600u);
    EXPECT_EQ(test::mode_of(state / "catalog.sqlite3-shm"), 0600u);
  }
  // A file left readable by others (an older copy, a restore) is made 0600 when opened.
  ::chmod((state / "catalog.sqlite3").c_str(), 0644);
  {
    asio::io_context io;
    CatalogStore store(io, state);
    EXPECT_EQ(load(io, store).size(), 1u);
    EXPECT_EQ(test::mode_of(state / "catalog.sqlite3"), 0600u);
    EXPECT_EQ(test::mode_of(state / "catalog.sqlite3-wal"), 0600u);
  }
  ::umask(previous);
}

TEST(CatalogStore, AListingOverTheSizeCapIsRefusedAndCounted) {
  test::TempDir dir;
  asio::io_context io;
  CatalogStore store(io, dir.path());
  ServerListing huge = listing("huge", "fp", {std::string(kMaxListingBytes, 'x')});
  store.save(std::move(huge));
  store.save(listing("small", "fp"));
  const StoreStatus status = test::settled_status(io, store);
  EXPECT_EQ(status.refused_listings, 1u);
  EXPECT_EQ(status.writes, 1u);
  const std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].server, "small");
}

TEST(CatalogStore, ThousandsOfToolsAreSavedAndLoadedInOrder) {
  test::TempDir dir;
  std::vector<std::string> tools;
  for (int i = 0; i < 10000; ++i) {
    tools.push_back(R"({"name":"tool_)" + std::to_string(i) + R"(","description":"does )" +
                    std::to_string(i) + R"("})");
  }
  asio::io_context io;
  CatalogStore store(io, dir.path());
  store.save(listing("big", "fp", tools));
  const std::vector<ServerListing> all = load(io, store);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].tools, tools);
}

}  // namespace
}  // namespace sluice::store

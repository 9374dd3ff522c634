#pragma once
// What the catalog store tests share: a scratch state directory removed with everything in
// it, a listing to save, reading a file's bytes, and running one of the store's awaitables
// on a loop until it resumes (within run_until's guard).
#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../run_until.hpp"
#include "store/catalog_store.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sluice::store::test {

namespace asio = boost::asio;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-store-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    // A test may have left a directory without write permission.
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec)) ::chmod(it->path().c_str(), 0700);
    }
    ::chmod(path_.c_str(), 0700);
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline ServerListing listing(const std::string& server, const std::string& fingerprint,
                             std::vector<std::string> tools = {R"({"name":"echo"})"}) {
  ServerListing made{
      server, fingerprint, 1700000000000, "fixture", "1.0", "2025-06-18", std::move(tools), {},
      {},     {}};
  made.prompts = {R"({"name":"greet"})"};
  made.resources = {R"({"uri":"file:///a","name":"a"})"};
  made.resource_templates = {R"({"uriTemplate":"file:///{p}","name":"p"})"};
  return made;
}

// Another connection holding the file's write lock (an exclusive transaction) while it
// lives: the store's writes wait behind it on the worker.
class WriteLock {
 public:
  explicit WriteLock(const std::filesystem::path& dir) {
    EXPECT_EQ(sqlite3_open((dir / "catalog.sqlite3").c_str(), &db_), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db_, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  WriteLock(const WriteLock&) = delete;
  WriteLock& operator=(const WriteLock&) = delete;
  ~WriteLock() { release(); }
  void release() {
    if (!db_) return;
    EXPECT_EQ(sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Runs `sql` on the SQLite file `file` (created when missing): a file another sluice wrote.
inline bool write_sqlite(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  const bool ok = sqlite3_open(file.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

inline std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline unsigned mode_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

// Runs `work` on `io` until it resumes; nullopt when it did not within the guard.
template <typename T>
std::optional<T> await_on(asio::io_context& io, asio::awaitable<T> work) {
  std::optional<T> out;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { out = co_await std::move(work); }, asio::detached);
  if (!sluice::test::run_until(io, [&] { return out.has_value(); })) return std::nullopt;
  return out;
}

inline bool await_on(asio::io_context& io, asio::awaitable<void> work) {
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await std::move(work);
        done = true;
      },
      asio::detached);
  return sluice::test::run_until(io, [&] { return done; });
}

inline std::vector<ServerListing> load(asio::io_context& io, CatalogStore& store) {
  std::optional<std::vector<ServerListing>> all = await_on(io, store.load_all());
  EXPECT_TRUE(all.has_value()) << "load_all did not resume";
  return all ? std::move(*all) : std::vector<ServerListing>{};
}

inline void flush(asio::io_context& io, CatalogStore& store) {
  EXPECT_TRUE(await_on(io, store.flush())) << "flush did not resume";
}

// Waits until the loop has seen the worker's report after everything queued so far.
inline StoreStatus settled_status(asio::io_context& io, CatalogStore& store) {
  flush(io, store);
  return store.status();
}

}  // namespace sluice::store::test

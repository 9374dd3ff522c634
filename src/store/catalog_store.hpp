#pragma once
// The persistent catalog: what every configured server listed (tools, prompts, resources,
// resource templates, as received), kept in <state_dir>/catalog.sqlite3 so that search covers
// servers that are not running. docs/state.md describes the file.
//
// It holds descriptions only: the fields of ServerListing, never call arguments, results,
// env values or header values (a server is keyed by its name and store::fingerprint(), which
// holds names only).
//
// Threading: a CatalogStore is made, used and destroyed on the loop thread of `io`, which
// must outlive it. All SQLite work runs on one worker thread the store owns; results and
// status come back to the loop by asio::post, so no call blocks the loop, whatever the file
// does (locked by another process, on a full or read-only disk, corrupt).
//
// Guarantees on error: nothing throws for a bad file or directory. Without a usable file the
// store is unavailable (status().available false, problem says why, value-free) and sluice
// serves without the cache: load_all() answers an empty list, save() is counted failed.
// A corrupt file is moved aside (catalog.sqlite3.corrupt-<unix time>) and rebuilt empty; a
// file written by a newer sluice (a higher schema version) is left untouched. Each problem is
// logged once.
//
// Bounds: a write waits for a lock at most kBusyWait, on the worker; one that still cannot
// go is counted failed and retried with the next save (at most kMaxRetainedWrites listings
// and kMaxQueuedBytes are kept for that; beyond it the oldest are let go). At most
// kMaxQueuedWrites writes and kMaxQueuedBytes of listings wait for the worker; a later save
// of the same server and fingerprint replaces the queued one; a save beyond the bound is
// dropped and counted (dropped_writes). A listing over kMaxListingBytes is refused and
// counted (refused_listings). Each server name keeps its kFingerprintsKept most recently
// saved fingerprints. SQLite's page cache is kept small (kCacheKiB).
//
// Destruction finishes the jobs already queued (writes wait for a lock no longer than
// kShutdownWait in all; a load or flush is answered through `io`), then joins the worker.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace sluice::store {

namespace asio = boost::asio;

inline constexpr std::chrono::milliseconds kBusyWait{2000};
inline constexpr std::chrono::milliseconds kShutdownWait{2000};
inline constexpr std::size_t kMaxQueuedWrites = 256;
inline constexpr std::size_t kMaxQueuedBytes = 64u << 20;
inline constexpr std::size_t kMaxRetainedWrites = 64;  // failed saves kept for the next one
inline constexpr std::size_t kMaxListingBytes = 64u << 20;
inline constexpr int kFingerprintsKept = 3;
inline constexpr int kCacheKiB = 512;

struct ServerListing {
  std::string server;          // configured name
  std::string fingerprint;     // store::fingerprint() of its definition
  std::int64_t listed_at_ms;   // unix ms (system_clock) when listed
  std::string server_name;     // serverInfo.name it reported ("" if none)
  std::string server_version;  // serverInfo.version
  std::string protocol_version;
  // Each item's JSON text as received.
  std::vector<std::string> tools, prompts, resources, resource_templates;
  // How long the server said its tool list stays valid (a 2026-07-28 server's ttlMs); -1: it
  // did not say.
  std::int64_t list_ttl_ms = -1;
};

// The bytes a listing takes in the cache (its texts), as kMaxListingBytes counts them.
std::size_t stored_size(const ServerListing& listing);

struct StoreStatus {
  bool available = false;  // false: sluice serves without the cache
  std::string path;        // the database file
  std::string problem;     // value-free, display-safe; empty when fine
  std::uint64_t writes = 0, failed_writes = 0;
  std::uint64_t dropped_writes = 0;    // saves the full queue turned away
  std::uint64_t refused_listings = 0;  // listings over kMaxListingBytes
};

class CatalogStore {
 public:
  // Opens or creates <state_dir>/catalog.sqlite3 on its own worker thread (the directory is
  // created 0700 if missing, files 0600). An empty `state_dir` (no HOME) makes the store
  // unavailable. Never throws for a bad file: status() says.
  CatalogStore(asio::io_context& io, std::filesystem::path state_dir);
  ~CatalogStore();
  CatalogStore(const CatalogStore&) = delete;
  CatalogStore& operator=(const CatalogStore&) = delete;

  // Every stored listing (all names, all fingerprints; a server's newest first), read on the
  // worker; resumes on the loop. Listings other processes committed are included.
  asio::awaitable<std::vector<ServerListing>> load_all();
  // The stored JSON text of tool `name` in the newest listing of (server, fingerprint), read
  // on the worker; resumes on the loop. Nothing when the cache does not hold it or cannot be
  // read.
  asio::awaitable<std::optional<std::string>> load_tool(std::string server, std::string fingerprint,
                                                        std::string name);
  // Upserts the listing of (server, fingerprint) on the worker; never blocks the caller.
  void save(ServerListing listing);
  // Forgets every listing of `server` (a removed server).
  void forget(std::string server);
  // Resumes once every write queued before the call is done (tests, `sluice index`,
  // shutdown).
  asio::awaitable<void> flush();
  // Loop thread; updated when the worker reports back.
  StoreStatus status() const;

 private:
  struct Save {
    ServerListing listing;
    std::size_t bytes;  // stored_size(listing)
  };
  struct Forget {
    std::string server;
  };
  struct Load {
    std::function<void(std::vector<ServerListing>)> done;
  };
  struct LoadTool {
    std::string server, fingerprint, name;
    std::function<void(std::optional<std::string>)> done;
  };
  struct Flush {
    std::function<void()> done;
  };
  using Job = std::variant<Save, Forget, Load, LoadTool, Flush>;
  struct Shared;  // the status the loop reads, kept alive by what the worker posts

  void enqueue(Job job);
  void run_worker();
  static void answer_unrun(Job& job) noexcept;
  bool stop_waiting() const;

  asio::io_context& io_;
  std::filesystem::path state_dir_;
  std::shared_ptr<Shared> shared_;  // the loop's view; written only on the loop
  bool said_dropped_ = false;       // loop thread
  bool said_refused_ = false;

  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::size_t queued_writes_ = 0;
  std::size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_{};  // core::Clock's time

  std::thread worker_;  // last: started once everything above exists
};

}  // namespace sluice::store

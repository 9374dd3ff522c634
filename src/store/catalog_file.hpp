#pragma once
// The catalog cache file as the store's worker thread sees it: one SQLite connection, opened
// when first needed and again after a failure that may pass (a lock held too long), kept
// closed for good once the file cannot be used (no state directory, read-only, written by a
// newer sluice). A corrupt file is moved aside and rebuilt empty. Two processes may hold the
// same file: WAL journal, one transaction per write, and each read in one transaction, so a
// load sees every listing another connection committed before it.
//
// Schema (PRAGMA user_version kSchemaVersion): `listing` (one row per server name and
// fingerprint: the reported name and versions, the time listed, how long the server said its
// tool list stays valid; a higher id is a later save) and `item` (one row per tool, prompt,
// resource or template: its JSON text as received).
//
// Threading: the worker thread only (one connection, no locks). Errors: never throws; a
// failed operation says so by its result, and problem() holds the latest problem, value-free
// and without the path. Each distinct problem is logged once, with the path.
#include "store/catalog_store.hpp"
#include "store/sqlite.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sluice::store::detail {

inline constexpr int kSchemaVersion = 2;

class CatalogFile {
 public:
  // `stop_waiting` is asked while a lock is waited for: true ends the wait at once.
  CatalogFile(std::filesystem::path state_dir, std::function<bool()> stop_waiting);
  // Not movable: the connection's busy handler holds its address.
  CatalogFile(const CatalogFile&) = delete;
  CatalogFile& operator=(const CatalogFile&) = delete;

  // Open: connected and every statement prepared.
  bool is_open() const { return statements_ != nullptr; }
  // False once the file cannot be used at all (a failed write is then not worth keeping).
  bool retryable() const { return lasting_problem_.empty(); }

  // Opens the file if it is not open and may be opened; true when it is usable now.
  bool usable();
  // Upserts the listing and prunes the server's older fingerprints, in one transaction.
  bool save(const ServerListing& listing);
  bool forget(const std::string& server);
  // Every listing; empty when the file cannot be read. The pages it read are let go after.
  std::vector<ServerListing> load_all();
  // The JSON text of tool `name` in the newest listing of (server, fingerprint), if held.
  std::optional<std::string> load_tool(const std::string& server, const std::string& fingerprint,
                                       const std::string& name);

  // The problem to show: one that keeps the file unusable, else the last failure since the
  // last success, else a note that the file was rebuilt; empty when fine.
  std::string problem() const;

 private:
  struct Statements {
    Statement delete_items_of, delete_listing_of, insert_listing, insert_item;
    Statement prune_items, prune_listings, forget_items, forget_listings;
    Statement select_listings, select_items, select_tools;
  };

  static int on_busy(void* self, int attempts);
  int connect();
  int enter_wal();
  int ensure_schema();
  int prepare_statements();
  bool rebuild();
  bool fail_for_good(std::string problem);
  void note_failure(int rc, const char* operation);
  void say_once(const std::string& problem);
  int write_listing(const ServerListing& listing);
  int read_all(std::vector<ServerListing>& out);
  int remove_server(const std::string& server);

  std::filesystem::path dir_;
  std::filesystem::path path_;
  std::function<bool()> stop_waiting_;
  Database db_;
  std::unique_ptr<Statements> statements_;
  std::string lasting_problem_;  // the file cannot be used; never reopened
  std::string failure_;          // the last failure, cleared by a success
  std::string rebuilt_note_;     // the file was corrupt and rebuilt
  std::set<std::string> said_;
};

}  // namespace sluice::store::detail

#include "store/catalog_file.hpp"

#include <sqlite3.h>

#include <boost/json/parse.hpp>

#include "core/log.hpp"
#include "store/cache_file.hpp"

#include <array>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <unordered_map>
#include <utility>

namespace sluice::store::detail {
namespace {

constexpr std::chrono::milliseconds kBusyStep{10};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS listing (
  id INTEGER PRIMARY KEY,
  server TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  listed_at_ms INTEGER NOT NULL,
  server_name TEXT NOT NULL,
  server_version TEXT NOT NULL,
  protocol_version TEXT NOT NULL,
  list_ttl_ms INTEGER NOT NULL DEFAULT -1,
  UNIQUE (server, fingerprint));
CREATE TABLE IF NOT EXISTS item (
  listing INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  ord INTEGER NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (listing, kind, ord)) WITHOUT ROWID;
PRAGMA user_version = 2;
)sql";

// Version 1 had no list_ttl_ms: the column is added, every stored listing "did not say".
constexpr const char* kFromVersion1 = R"sql(
ALTER TABLE listing ADD COLUMN list_ttl_ms INTEGER NOT NULL DEFAULT -1;
PRAGMA user_version = 2;
)sql";

static_assert(kSchemaVersion == 2, "kSchema writes user_version 2");

// The listing ids of server ?1 beyond its kFingerprintsKept most recently saved ones.
std::string stale_ids() {
  return "SELECT id FROM listing WHERE server = ?1 ORDER BY id DESC LIMIT -1 OFFSET " +
         std::to_string(kFingerprintsKept);
}

// The item kinds, in the order of ServerListing's lists.
constexpr int kKinds = 4;

// The "name" of a stored tool's JSON text, or empty (the text was checked when listed; a
// file edited by hand may hold anything).
std::string tool_name(std::string_view json) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(json, ec);
  const auto* name = !ec && v.is_object() ? v.get_object().if_contains("name") : nullptr;
  return name && name->is_string() ? std::string(name->get_string()) : std::string();
}
using ItemLists = std::array<std::vector<std::string> ServerListing::*, kKinds>;
constexpr ItemLists kItemLists{&ServerListing::tools, &ServerListing::prompts,
                               &ServerListing::resources, &ServerListing::resource_templates};

// Steps a statement that returns no rows, then resets it.
int run(Statement& statement) {
  const int rc = statement.step();
  statement.reset();
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// Rolls the open transaction back unless it was committed.
class Transaction {
 public:
  Transaction(sqlite3* db, const char* begin) : db_(db), rc_(execute(db, begin)) {}
  ~Transaction() {
    if (rc_ == SQLITE_OK && !done_) execute(db_, "ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  int begin_rc() const { return rc_; }
  int commit() {
    const int rc = execute(db_, "COMMIT");
    done_ = rc == SQLITE_OK;
    return rc;
  }

 private:
  sqlite3* db_;
  int rc_;
  bool done_ = false;
};

}  // namespace

CatalogFile::CatalogFile(std::filesystem::path state_dir, std::function<bool()> stop_waiting)
    : dir_(std::move(state_dir)), stop_waiting_(std::move(stop_waiting)) {
  if (!dir_.empty()) path_ = dir_ / kCacheFileName;
}

std::string CatalogFile::problem() const {
  if (!lasting_problem_.empty()) return lasting_problem_;
  if (!failure_.empty()) return failure_;
  return rebuilt_note_;
}

void CatalogFile::say_once(const std::string& problem) {
  if (!said_.insert(problem).second) return;
  core::log::warn("catalog cache {}: {}", path_.empty() ? "(none)" : path_.string(), problem);
}

bool CatalogFile::fail_for_good(std::string problem) {
  statements_.reset();
  db_.reset();
  lasting_problem_ = std::move(problem);
  say_once(lasting_problem_ + "; sluice serves without the cache");
  return false;
}

void CatalogFile::note_failure(int rc, const char* operation) {
  const int primary = rc & 0xff;
  std::string what;
  if (is_busy(rc)) {
    what = "is locked by another process";
  } else if (primary == SQLITE_FULL) {
    what = "cannot grow: the disk is full";
  } else if (primary == SQLITE_READONLY) {
    what = "has become read-only";
  } else if (primary == SQLITE_IOERR) {
    what = "met an I/O error";
  } else {
    what = std::string("met an error (") + sqlite3_errstr(rc) + ")";
  }
  const bool vowel = std::string_view("aeiou").find(operation[0]) != std::string_view::npos;
  failure_ = std::string(vowel ? "an " : "a ") + operation + " failed: the cache file " + what;
  if (std::string_view(operation) == "write") failure_ += "; it is retried with the next save";
  say_once(failure_);
}

int CatalogFile::on_busy(void* self, int attempts) {
  const auto* file = static_cast<const CatalogFile*>(self);
  if (attempts * kBusyStep >= kBusyWait || file->stop_waiting_()) return 0;
  std::this_thread::sleep_for(kBusyStep);  // on the worker, never the loop
  return 1;
}

bool CatalogFile::rebuild() {
  statements_.reset();
  db_.reset();
  const std::string aside = move_aside(path_);
  if (aside.empty()) return fail_for_good("the cache file is corrupt and cannot be moved aside");
  rebuilt_note_ =
      "the cache file was corrupt: it was moved aside as " + aside + " and rebuilt empty";
  say_once(rebuilt_note_);
  return true;
}

bool CatalogFile::usable() {
  if (!lasting_problem_.empty()) return false;
  if (is_open()) return true;
  if (std::string problem = prepare_directory(dir_); !problem.empty()) {
    return fail_for_good(std::move(problem));
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    const CacheFileCheck check = prepare_file(path_);
    if (!check.problem.empty()) return fail_for_good(check.problem);
    if (check.header.kind == CacheHeader::Kind::database &&
        check.header.user_version > static_cast<std::uint32_t>(kSchemaVersion)) {
      return fail_for_good("the cache file was written by a newer sluice (schema version " +
                           std::to_string(check.header.user_version) + "); it is left untouched");
    }
    int rc = SQLITE_CORRUPT;
    if (check.header.kind != CacheHeader::Kind::not_a_database) rc = connect();
    if (rc == SQLITE_OK) return true;
    statements_.reset();
    db_.reset();
    if (!lasting_problem_.empty()) return false;
    if (!is_corrupt(rc)) {
      note_failure(rc, "open");
      return false;
    }
    if (!rebuild()) return false;
  }
  return false;
}

int CatalogFile::connect() {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path_.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, nullptr);
  db_.reset(raw);
  if (rc != SQLITE_OK) return rc;
  if (sqlite3_db_readonly(raw, "main") == 1) {
    fail_for_good("the cache file is read-only");
    return SQLITE_READONLY;
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_handler(raw, &CatalogFile::on_busy, this);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  const std::string cache = "PRAGMA cache_size = -" + std::to_string(kCacheKiB);
  if ((rc = execute(raw, cache.c_str())) != SQLITE_OK) return rc;
  if ((rc = enter_wal()) != SQLITE_OK) return rc;
  // NORMAL is durable in WAL mode up to the last checkpoint; the log is cut back to 4 MiB
  // after a checkpoint instead of keeping the size of the largest listing ever written.
  rc = execute(raw, "PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = 4194304");
  if (rc != SQLITE_OK) return rc;
  if ((rc = ensure_schema()) != SQLITE_OK) return rc;
  return prepare_statements();
}

// Turning a new file to WAL takes its write lock from inside a read of its header, where SQLite
// does not call the busy handler (waiting there could deadlock two upgrading readers): a second
// sluice turning the same new file to WAL at the same moment gets SQLITE_BUSY at once. The
// pragma is retried on the busy handler's steps and bound.
int CatalogFile::enter_wal() {
  for (int attempts = 0;; ++attempts) {
    int rc = SQLITE_OK;
    pragma_text(db_.get(), "journal_mode = WAL", rc);
    if (!is_busy(rc) || on_busy(this, attempts) == 0) return rc;
  }
}

int CatalogFile::ensure_schema() {
  Transaction transaction(db_.get(), "BEGIN IMMEDIATE");
  if (transaction.begin_rc() != SQLITE_OK) return transaction.begin_rc();
  int rc = SQLITE_OK;
  const std::string version = pragma_text(db_.get(), "user_version", rc);
  if (rc != SQLITE_OK) return rc;
  const long long found = std::atoll(version.c_str());
  if (found > kSchemaVersion) {
    fail_for_good("the cache file was written by a newer sluice (schema version " +
                  std::to_string(found) + "); it is left untouched");
    return SQLITE_ERROR;
  }
  if (found == 0 && (rc = execute(db_.get(), kSchema)) != SQLITE_OK) return rc;
  if (found == 1 && (rc = execute(db_.get(), kFromVersion1)) != SQLITE_OK) return rc;
  return transaction.commit();
}

int CatalogFile::prepare_statements() {
  auto made = std::make_unique<Statements>();
  sqlite3* db = db_.get();
  made->delete_items_of = Statement(db,
                                    "DELETE FROM item WHERE listing IN (SELECT id FROM listing "
                                    "WHERE server = ?1 AND fingerprint = ?2)");
  made->delete_listing_of =
      Statement(db, "DELETE FROM listing WHERE server = ?1 AND fingerprint = ?2");
  made->insert_listing = Statement(db,
                                   "INSERT INTO listing (server, fingerprint, listed_at_ms, "
                                   "server_name, server_version, protocol_version, list_ttl_ms) "
                                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  made->insert_item =
      Statement(db, "INSERT INTO item (listing, kind, ord, json) VALUES (?1, ?2, ?3, ?4)");
  made->prune_items = Statement(db, "DELETE FROM item WHERE listing IN (" + stale_ids() + ")");
  made->prune_listings = Statement(db, "DELETE FROM listing WHERE id IN (" + stale_ids() + ")");
  made->forget_items =
      Statement(db, "DELETE FROM item WHERE listing IN (SELECT id FROM listing WHERE server = ?1)");
  made->forget_listings = Statement(db, "DELETE FROM listing WHERE server = ?1");
  made->select_listings = Statement(db,
                                    "SELECT id, server, fingerprint, listed_at_ms, server_name, "
                                    "server_version, protocol_version, list_ttl_ms FROM listing "
                                    "ORDER BY server, id DESC");
  made->select_items =
      Statement(db, "SELECT listing, kind, json FROM item ORDER BY listing, kind, ord");
  // The tools (kind 0) of (server, fingerprint), the newest listing first.
  made->select_tools = Statement(db,
                                 "SELECT item.listing, item.json FROM item JOIN listing ON "
                                 "item.listing = listing.id WHERE listing.server = ?1 AND "
                                 "listing.fingerprint = ?2 AND item.kind = 0 "
                                 "ORDER BY item.listing DESC, item.ord");
  for (const Statement* s :
       {&made->delete_items_of, &made->delete_listing_of, &made->insert_listing, &made->insert_item,
        &made->prune_items, &made->prune_listings, &made->forget_items, &made->forget_listings,
        &made->select_listings, &made->select_items, &made->select_tools}) {
    // A version-1 file without our tables (or with other ones) is not a cache we wrote.
    if (s->prepare_rc() != SQLITE_OK)
      return is_busy(s->prepare_rc()) ? s->prepare_rc() : SQLITE_CORRUPT;
  }
  statements_ = std::move(made);
  return SQLITE_OK;
}

int CatalogFile::write_listing(const ServerListing& listing) {
  Transaction transaction(db_.get(), "BEGIN IMMEDIATE");
  if (transaction.begin_rc() != SQLITE_OK) return transaction.begin_rc();
  Statements& s = *statements_;
  int rc = SQLITE_OK;
  for (Statement* remove : {&s.delete_items_of, &s.delete_listing_of}) {
    remove->bind(1, listing.server);
    remove->bind(2, listing.fingerprint);
    if ((rc = run(*remove)) != SQLITE_OK) return rc;
  }
  s.insert_listing.bind(1, listing.server);
  s.insert_listing.bind(2, listing.fingerprint);
  s.insert_listing.bind(3, listing.listed_at_ms);
  s.insert_listing.bind(4, listing.server_name);
  s.insert_listing.bind(5, listing.server_version);
  s.insert_listing.bind(6, listing.protocol_version);
  s.insert_listing.bind(7, listing.list_ttl_ms);
  if ((rc = run(s.insert_listing)) != SQLITE_OK) return rc;
  const std::int64_t id = sqlite3_last_insert_rowid(db_.get());
  for (int kind = 0; kind < kKinds; ++kind) {
    const std::vector<std::string>& items = listing.*kItemLists[kind];
    for (std::size_t ord = 0; ord < items.size(); ++ord) {
      s.insert_item.bind(1, id);
      s.insert_item.bind(2, std::int64_t{kind});
      s.insert_item.bind(3, static_cast<std::int64_t>(ord));
      s.insert_item.bind(4, items[ord]);
      if ((rc = run(s.insert_item)) != SQLITE_OK) return rc;
    }
  }
  for (Statement* prune : {&s.prune_items, &s.prune_listings}) {
    prune->bind(1, listing.server);
    if ((rc = run(*prune)) != SQLITE_OK) return rc;
  }
  return transaction.commit();
}

int CatalogFile::remove_server(const std::string& server) {
  Transaction transaction(db_.get(), "BEGIN IMMEDIATE");
  if (transaction.begin_rc() != SQLITE_OK) return transaction.begin_rc();
  for (Statement* remove : {&statements_->forget_items, &statements_->forget_listings}) {
    remove->bind(1, server);
    if (const int rc = run(*remove); rc != SQLITE_OK) return rc;
  }
  return transaction.commit();
}

int CatalogFile::read_all(std::vector<ServerListing>& out) {
  // One read transaction: both queries see the same committed state.
  Transaction transaction(db_.get(), "BEGIN");
  if (transaction.begin_rc() != SQLITE_OK) return transaction.begin_rc();
  std::unordered_map<std::int64_t, std::size_t> index_of;
  Statement& listings = statements_->select_listings;
  int rc = SQLITE_OK;
  while ((rc = listings.step()) == SQLITE_ROW) {
    index_of.emplace(listings.integer(0), out.size());
    out.push_back(ServerListing{std::string(listings.text(1)),
                                std::string(listings.text(2)),
                                listings.integer(3),
                                std::string(listings.text(4)),
                                std::string(listings.text(5)),
                                std::string(listings.text(6)),
                                {},
                                {},
                                {},
                                {},
                                listings.integer(7)});
  }
  listings.reset();
  if (rc != SQLITE_DONE) return rc;
  Statement& items = statements_->select_items;
  while ((rc = items.step()) == SQLITE_ROW) {
    const auto found = index_of.find(items.integer(0));
    const std::int64_t kind = items.integer(1);
    if (found == index_of.end() || kind < 0 || kind >= kKinds) continue;  // not ours: skipped
    (out[found->second].*kItemLists[static_cast<std::size_t>(kind)]).emplace_back(items.text(2));
  }
  items.reset();
  if (rc != SQLITE_DONE) return rc;
  return transaction.commit();
}

bool CatalogFile::save(const ServerListing& listing) {
  if (!usable()) return false;
  int rc = write_listing(listing);
  if (is_corrupt(rc) && rebuild() && usable()) rc = write_listing(listing);
  if (rc == SQLITE_OK) {
    failure_.clear();
    return true;
  }
  if (lasting_problem_.empty()) note_failure(rc, "write");
  return false;
}

bool CatalogFile::forget(const std::string& server) {
  if (!usable()) return false;
  int rc = remove_server(server);
  if (is_corrupt(rc)) rc = rebuild() && usable() ? SQLITE_OK : rc;  // rebuilt empty: forgotten
  if (rc == SQLITE_OK) return true;
  if (lasting_problem_.empty()) note_failure(rc, "removal");
  return false;
}

std::optional<std::string> CatalogFile::load_tool(const std::string& server,
                                                  const std::string& fingerprint,
                                                  const std::string& name) {
  if (!usable()) return std::nullopt;
  Statement& select = statements_->select_tools;
  select.bind(1, server);
  select.bind(2, fingerprint);
  std::optional<std::string> found;
  std::optional<std::int64_t> newest;
  int rc = SQLITE_OK;
  while (!found && (rc = select.step()) == SQLITE_ROW) {
    if (newest.value_or(select.integer(0)) != select.integer(0)) break;  // an older listing
    newest = select.integer(0);
    if (tool_name(select.text(1)) == name) found.emplace(select.text(1));
  }
  select.reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    if (is_corrupt(rc)) {
      if (rebuild()) usable();
    } else if (lasting_problem_.empty()) {
      note_failure(rc, "read");
    }
  }
  return found;
}

std::vector<ServerListing> CatalogFile::load_all() {
  std::vector<ServerListing> out;
  if (!usable()) return out;
  int rc = read_all(out);
  // The whole file went through the page cache: nothing reads it again soon (a tool's
  // description at most), so its pages are not kept.
  sqlite3_db_release_memory(db_.get());
  if (rc == SQLITE_OK) return out;
  out.clear();
  if (is_corrupt(rc)) {
    if (rebuild()) usable();
  } else if (lasting_problem_.empty()) {
    note_failure(rc, "read");
  }
  return out;
}

}  // namespace sluice::store::detail

#pragma once
// Owners of SQLite C API handles for the catalog store's worker thread (nothing else in
// sluice talks to SQLite). A Database closes its connection and a Statement finalizes itself
// on destruction; neither throws. Threading: one thread (the store's worker) at a time.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::store::detail {

struct CloseDatabase {
  void operator()(sqlite3* db) const noexcept;
};
using Database = std::unique_ptr<sqlite3, CloseDatabase>;

// One prepared statement. Texts are bound without a copy (SQLITE_STATIC): a bound value
// must outlive the statement's next reset().
class Statement {
 public:
  Statement() = default;
  // Prepares `sql` on `db`; prepare_rc() says whether it worked.
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  int prepare_rc() const { return prepare_rc_; }
  // Each returns SQLITE_OK or an error code.
  int bind(int index, std::string_view text);
  int bind(int index, std::int64_t value);
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step();
  // Resets the statement and clears its bindings, so that it holds no borrowed text.
  void reset();
  // The column of the current row; text is empty for NULL.
  std::string_view text(int column) const;
  std::int64_t integer(int column) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int prepare_rc_ = 0;
};

// Runs one or more statements that return no rows; SQLITE_OK or an error code.
int execute(sqlite3* db, const char* sql);

// Runs `PRAGMA <name>` and returns its first column as text ("" when it returns no row);
// `rc` gets SQLITE_OK or an error code.
std::string pragma_text(sqlite3* db, const std::string& pragma, int& rc);

// True for the result codes that mean the file is not a usable database (not a database at
// all, or malformed).
bool is_corrupt(int rc);
// True when another connection holds the lock the operation needed.
bool is_busy(int rc);

}  // namespace sluice::store::detail

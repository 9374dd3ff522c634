#include "store/sqlite.hpp"

#include <sqlite3.h>

#include <utility>

namespace sluice::store::detail {

void CloseDatabase::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

Statement::Statement(sqlite3* db, std::string_view sql) {
  prepare_rc_ = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                   SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (prepare_rc_ != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), prepare_rc_(other.prepare_rc_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    prepare_rc_ = other.prepare_rc_;
  }
  return *this;
}

int Statement::bind(int index, std::string_view text) {
  return sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

int Statement::bind(int index, std::int64_t value) {
  return sqlite3_bind_int64(stmt_, index, value);
}

int Statement::step() { return sqlite3_step(stmt_); }

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string_view Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (!data) return {};
  return {data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

int execute(sqlite3* db, const char* sql) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
}

std::string pragma_text(sqlite3* db, const std::string& pragma, int& rc) {
  Statement statement(db, "PRAGMA " + pragma);
  rc = statement.prepare_rc();
  if (rc != SQLITE_OK) return {};
  rc = statement.step();
  std::string value;
  if (rc == SQLITE_ROW) value = std::string(statement.text(0));
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
  return value;
}

bool is_corrupt(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

bool is_busy(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

}  // namespace sluice::store::detail

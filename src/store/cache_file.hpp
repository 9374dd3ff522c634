#pragma once
// The catalog cache's place on disk, before and around SQLite: the state directory (created
// 0700 whatever the umask, and refused unless it is the user's own and not writable by
// others), the file (created 0600, never through a symbolic link, set 0600 when it is ours),
// a look at its header before SQLite touches it, and moving a corrupt file aside.
// Every problem is a value-free sentence without the path (the caller logs the path).
// Threading: plain functions; the store calls them on its worker thread only.
#include <cstdint>
#include <filesystem>
#include <string>

namespace sluice::store::detail {

inline constexpr const char* kCacheFileName = "catalog.sqlite3";

// What the first 100 bytes of the file say.
struct CacheHeader {
  enum class Kind { empty, database, not_a_database };
  Kind kind = Kind::empty;
  std::uint32_t user_version = 0;  // the schema version a sluice wrote (kind database)
};

// Creates `dir` and any missing parent 0700. Empty when it is usable, else the problem.
std::string prepare_directory(const std::filesystem::path& dir);

struct CacheFileCheck {
  std::string problem;  // empty when the file is ours, writable and its header was read
  CacheHeader header;
};
// Creates `file` 0600 when missing (never following a symbolic link), sets 0600 on an
// existing one of ours, and reads its header.
CacheFileCheck prepare_file(const std::filesystem::path& file);

// Moves `file` aside as `<file>.corrupt-<unix seconds>` (its `-wal` beside it as
// `<that>-wal`; its `-shm`, an index SQLite rebuilds, is removed). Returns the new file name
// (no directory), or "" when it could not be moved.
std::string move_aside(const std::filesystem::path& file);

}  // namespace sluice::store::detail

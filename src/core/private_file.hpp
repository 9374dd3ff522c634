#pragma once
// Files only their owner may read or write: the OAuth tokens, the trust approvals and the
// secrets. One way to read them (refusing what is not safe to trust), one way to replace them
// (atomically, 0600 whatever the umask), one lock for a read-change-write.
//
// Contract: plain blocking file calls on small files, any thread. Nothing here throws or
// echoes a file's content; the words a fault is described with name the file (escaped) and,
// where one exists, the command that fixes it.
#include "core/error.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::core {

enum class PrivateFileFault {
  symlink,         // the path is a symbolic link (never followed)
  not_permitted,   // the system refused to open, create or rename it
  not_regular,     // a directory, FIFO or device where the file should be
  foreign_owner,   // another user's file
  open_to_others,  // group or others have some access
  too_large,       // larger than the caller's bound
  unreadable,      // a read failed part-way
  disk_full,       // a write or fsync failed part-way
};

struct PrivateFileProblem {
  PrivateFileFault fault;
  unsigned mode = 0;  // the file's permission bits, for open_to_others
};

// Why `file` (called `noun`, e.g. "the trust file") cannot be used, in one value-free sentence
// ending with the fix where there is one: "the trust file /p is open to other users (mode
// 0644); run: chmod 600 /p".
std::string describe(const PrivateFileProblem& problem, std::string_view noun,
                     const std::filesystem::path& file);

struct PrivateRead {
  std::optional<std::string> text;  // nullopt: there is no file (or `problem` is set)
  std::optional<PrivateFileProblem> problem;
};

// The bytes of `file` when it is a regular file of the effective user, with no access for
// group or others, at most `max_bytes` long. Opened without following a symbolic link and
// without blocking on a FIFO.
PrivateRead read_private_file(const std::filesystem::path& file, std::size_t max_bytes);

// read_private_file as a Result: "" when there is no file, else its text; a refusal is
// describe()d with `noun`.
Result<std::string> read_private_text(const std::filesystem::path& file, std::size_t max_bytes,
                                      std::string_view noun);

// Writes `bytes` to `<file>.tmp-<pid>` (0600, fsynced), renames it over `file` and fsyncs the
// folder. The temporary file is removed on failure; `file` is then unchanged.
std::optional<PrivateFileProblem> replace_private_file(const std::filesystem::path& file,
                                                       std::string_view bytes);

// Writes all of `bytes` to `fd`, resuming after EINTR and short writes; false on an error
// (errno says which).
bool write_all(int fd, std::string_view bytes);

// Creates `dir` and each missing parent 0700 (whatever the umask); true when it exists after.
// What an existing one must be is the caller's rule.
bool make_private_directories(const std::filesystem::path& dir);

// An exclusive flock of `<file>.lock` (created 0600) for one read-change-write, taken in the
// constructor and released by the destructor. held() is false when the lock file cannot be
// opened.
class PrivateFileLock {
 public:
  explicit PrivateFileLock(const std::filesystem::path& file);
  ~PrivateFileLock();
  PrivateFileLock(const PrivateFileLock&) = delete;
  PrivateFileLock& operator=(const PrivateFileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace sluice::core

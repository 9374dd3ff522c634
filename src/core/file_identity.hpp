#pragma once
// Which file a path names, and whether it is still that file: device, inode and modification
// time. Used to notice a binary replaced on disk (sluice's own, a downstream's) and to tell
// two commands that resolve to the same executable apart from two that do not.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::core {

struct FileIdentity {
  std::string path;  // as resolved when the identity was taken
  dev_t dev = 0;
  ino_t ino = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
  // The same file (device and inode), whatever its modification time.
  bool same_file(const FileIdentity& other) const { return dev == other.dev && ino == other.ino; }
};

// The identity of what `path` names now (symlinks followed); nullopt when it names nothing.
std::optional<FileIdentity> identity_of(const std::string& path);
// The executable a running process was started from (/proc/<pid>/exe, resolved), with its
// identity; nullopt when it cannot be read (the process is gone, or not ours to read).
std::optional<FileIdentity> executable_of(pid_t pid);
// Whether `before` no longer describes what its path names: replaced, modified or removed.
bool changed_since(const FileIdentity& before);

}  // namespace sluice::core

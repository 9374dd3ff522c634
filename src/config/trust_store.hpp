#pragma once
// The operator's approvals of project configuration files, in <state_dir>/trust.json
// (docs/state.md describes the file; docs/configuration.md the rule it serves).
//
// A `.mcp.json` found in the project directory (Origin::project) was written by whoever wrote
// the repository: its servers are untrusted until the operator approves the file's exact
// bytes. An approval is keyed by the file's real path (symlinks resolved) and the SHA-256 of
// those bytes, so any change to the file, a single byte included, needs a new approval; the
// user's own files (~/.mcp.json, ~/.claude/.mcp.json, --config files) are never subject to it.
//
// The file is the operator's: it must be a regular file of the user, mode 0600 (no access for
// group or others); a looser one is refused, with the chmod that fixes it, and then approves
// nothing. Written as a temporary file renamed over the old one under an exclusive flock of
// <file>.lock, so two sluice processes approving at once lose neither approval.
//
// Threading: plain synchronous calls on the caller's thread; the file is small (capped at
// kMaxTrustFileBytes) and read once per discovery. Error messages name the trust file's path
// (never a configuration file's content).
#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

inline constexpr const char* kTrustFileName = "trust.json";
inline constexpr std::size_t kMaxTrustFileBytes = 1u << 20;

// The SHA-256 of `bytes`, as 64 lowercase hexadecimal digits.
std::string content_digest(std::string_view bytes);

// `file` absolute, lexically normal, with symlinks resolved as far as it exists.
std::filesystem::path real_path_of(const std::filesystem::path& file);

// The exact command that approves `file`: `sluice trust approve <file>`, the path
// single-quoted for a POSIX shell when it holds anything but [A-Za-z0-9_./+,:@%=-].
std::string approve_command(std::string_view file);

struct TrustApproval {
  std::string path;                 // the file's real path
  std::string sha256;               // content_digest() of the exact bytes approved
  std::int64_t approved_at_ms = 0;  // unix ms (wall clock)

  bool operator==(const TrustApproval&) const = default;
};

// Value type over the file; nothing is touched until the first call.
class TrustStore {
 public:
  // An empty `state_dir` (no HOME) approves nothing and refuses to record.
  explicit TrustStore(std::filesystem::path state_dir);

  // Every approval, in the order recorded; a missing file holds none. An error when the file
  // is not a regular file of the user, is accessible to group or others (the message gives
  // the chmod to run), is larger than its bound or is not the format.
  core::Result<std::vector<TrustApproval>> list() const;
  // Whether the file at `real_path` is approved with exactly these bytes (`sha256`).
  core::Result<bool> approves(std::string_view real_path, std::string_view sha256) const;
  // Records `approval`, replacing any earlier one of the same path (creating the 0700
  // directory and the 0600 file).
  core::Result<void> approve(const TrustApproval& approval);
  // Removes the approval of `real_path`; whether there was one.
  core::Result<bool> revoke(std::string_view real_path);

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path file_;
};

}  // namespace sluice::config

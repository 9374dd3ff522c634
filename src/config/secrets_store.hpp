#pragma once
// The secrets store: values for `${NAME}` references that should not live in a config file
// or in the environment of every program, in one file, <dir>/secrets.json, where <dir> is
// secrets_dir_of() ($XDG_CONFIG_HOME/sluice, else ~/.config/sluice). docs/state.md describes
// the file.
//
// Guarantees:
// - The directory is 0700 and the file 0600, both yours, neither a symbolic link. A looser
//   mode (or another owner, or a link) is refused, never repaired: every call fails with a
//   message that names the path and the command that fixes it (`chmod 600 PATH`), because a
//   file others could read may already have been read, and the operator should know.
// - Writes are all-or-nothing: the new content goes to a temporary file in the same
//   directory (0600, fsynced), which is renamed over the old one; the directory is fsynced.
//   Each read-change-write holds an exclusive flock of <dir>/secrets.json.lock, so two
//   `sluice secrets set` never lose each other's secret. Readers take no lock (a rename is
//   atomic).
// - Value-free: no error message holds a value (names, paths and modes only).
//
// Ownership and threading: a SecretsStore is a path and nothing else; every call opens, reads
// or writes and closes the file synchronously on the caller's thread (it is small, capped at
// kMaxSecretsFileBytes, and read once per configuration load).
#include "config/gateway_config.hpp"
#include "core/error.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::config {

inline constexpr std::string_view kSecretsFileName = "secrets.json";
inline constexpr std::size_t kMaxSecretsFileBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxSecretValueBytes = 64 * 1024;

// Every secret of the store, by name (sorted).
using Secrets = std::map<std::string, std::string, std::less<>>;

// The names a secret may have, those `${NAME}` can reference: [A-Za-z_][A-Za-z0-9_]*, at most
// 128 characters.
bool is_valid_secret_name(std::string_view name);

// $XDG_CONFIG_HOME/sluice when XDG_CONFIG_HOME is an absolute path, else $HOME/.config/sluice
// when HOME is; empty when neither is (there is then no store). `getenv` reads the process
// environment (injected for tests).
std::filesystem::path secrets_dir_of(const EnvLookup& getenv);

// `${NAME}` lookups for config interpolation: `environment` first, then `secrets` (a variable
// set in the environment wins, even when empty). Holds its own copy of the secrets.
EnvLookup environment_then_secrets(EnvLookup environment, Secrets secrets);

class SecretsStore {
 public:
  // Touches nothing until the first call. An empty `dir` (no HOME) makes every call fail.
  explicit SecretsStore(std::filesystem::path dir);

  // Every secret. No directory or no file: none (not an error). Refused (an error naming the
  // path and the fix): a directory or file others may read or write, or not yours, or a
  // symbolic link; a file over kMaxSecretsFileBytes or not in the store's format.
  core::Result<Secrets> load() const;
  // Adds or replaces `name` (a valid name) with `value` (1..kMaxSecretValueBytes bytes of
  // UTF-8 text without NUL), creating the 0700 directory and the 0600 file when missing.
  core::Result<void> set(std::string_view name, std::string_view value);
  // Removes `name`; false when the store has no such secret.
  core::Result<bool> remove(std::string_view name);

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path file_;
};

}  // namespace sluice::config

#pragma once
// The OAuth tokens of protected remote servers, and the client identities sluice registered
// for them, in <state_dir>/oauth-tokens.json (docs/state.md describes the file).
//
// Why a JSON file and not SQLite like the catalog: it holds a handful of small records, read
// once per server and written only at a login, a registration or a refresh (at most once per
// token lifetime), so a whole-file rewrite costs nothing; written as a temporary file and
// renamed over the old one, it is all-or-nothing with no journal files beside it (whose modes
// SQLite sets itself), and its one mode is easy to hold at 0600.
//
// One record per server name, tied to store::fingerprint() of the server's definition: when
// the definition changes (another URL), load() finds nothing for the new one, so a token is
// never sent to a server it was not issued for, and the next save() replaces the old record.
//
// Secrets stay secret: tokens, refresh tokens and client secrets are in the file only. Every
// error message is a value-free sentence without them (and without the path, which the
// caller may log).
//
// Threading: plain synchronous calls on the caller's thread; the file is small (capped at
// kMaxTokenFileBytes) and touched only at logins and refreshes. Several processes (a serving
// sluice and its login command) may share it: save() and forget() read, change and replace
// it under an exclusive flock of <file>.lock, so one's record never erases another's.
#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::store {

inline constexpr const char* kTokenFileName = "oauth-tokens.json";
inline constexpr std::size_t kMaxTokenFileBytes = 1u << 20;

// The client identity the tokens were issued to (pre-registered, a metadata document URL, or
// one dynamic registration returned, which is reused until the server changes).
struct OAuthClientRecord {
  std::string client_id;
  std::string client_secret;  // empty for a public client
  std::string auth_method;    // "none" | "client_secret_basic" | "client_secret_post"
  bool registered = false;    // from dynamic client registration (RFC 7591)

  bool operator==(const OAuthClientRecord&) const = default;
};

struct TokenRecord {
  std::string server;       // the configured server name
  std::string fingerprint;  // store::fingerprint() of its definition
  std::string issuer;       // the authorization server's issuer identifier
  std::string token_endpoint;
  std::string resource;  // the protected-resource metadata's `resource`, byte for byte
  OAuthClientRecord client;
  std::string access_token;        // empty: a registration without tokens yet
  std::string refresh_token;       // empty: none was issued
  std::string scope;               // space-separated, as granted (or as requested)
  std::int64_t expires_at_ms = 0;  // unix ms (wall clock); 0: the server gave no expiry

  bool operator==(const TokenRecord&) const = default;
};

class TokenStore {
 public:
  // Nothing is touched until the first call. An empty `state_dir` (no HOME) makes every
  // call fail with a value-free error.
  explicit TokenStore(std::filesystem::path state_dir);

  // The record of `server` when it was saved for the same `fingerprint`; nullopt when there
  // is none (or only one for another definition). A missing file is no record.
  core::Result<std::optional<TokenRecord>> load(std::string_view server,
                                                std::string_view fingerprint) const;
  // Replaces the record of record.server (creating the 0700 directory and the 0600 file).
  core::Result<void> save(const TokenRecord& record);
  // Removes the record of `server`, if any (a logout, a removed server).
  core::Result<void> forget(std::string_view server);

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path file_;
};

}  // namespace sluice::store

#pragma once
// The encodings of OAuth 2.1: base64 and base64url, PKCE (RFC 7636, S256), random state and
// verifiers (OpenSSL RAND_bytes), application/x-www-form-urlencoded bodies, and scope lists.
// Threading: pure functions (random_urlsafe reads OpenSSL's thread-safe generator).
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::gateway::auth {

std::string base64(std::string_view bytes);
std::string base64url(std::string_view bytes);  // no padding

// `bytes` random bytes from RAND_bytes, base64url (32 bytes: a 43-character PKCE verifier).
// Throws std::runtime_error when the generator fails (it never returns a weak value).
std::string random_urlsafe(std::size_t bytes);

// The S256 code challenge of `verifier`: base64url(SHA-256(verifier)).
std::string s256_challenge(std::string_view verifier);

// Percent-encodes everything but ALPHA, DIGIT and "-._~".
std::string percent_encode(std::string_view text);
using FormFields = std::vector<std::pair<std::string, std::string>>;
std::string form_encode(const FormFields& fields);

// A space-separated scope string as a set, and back (sorted, single spaces).
std::set<std::string> split_scopes(std::string_view scope);
std::string join_scopes(const std::set<std::string>& scopes);

}  // namespace sluice::gateway::auth

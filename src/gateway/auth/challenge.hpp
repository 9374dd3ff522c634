#pragma once
// The Bearer challenge of a WWW-Authenticate header (RFC 9110 section 11.6.1, RFC 6750 section 3,
// RFC 9728 section 5.1): which protected-resource metadata to read, the scope the server asks for,
// and why a token was refused. The header may hold several challenges (`Basic realm="x", Bearer
// scope="a b"`); only the Bearer one counts. Parameter values may be tokens or quoted strings
// with backslash escapes; names compare ignoring case.
// Threading: pure functions.
#include <optional>
#include <string>
#include <string_view>

namespace sluice::gateway::auth {

struct BearerChallenge {
  std::optional<std::string> resource_metadata;  // an absolute URL
  std::optional<std::string> scope;              // space-separated
  std::optional<std::string> error;              // "invalid_token", "insufficient_scope"...
  std::optional<std::string> error_description;  // never shown: it is the server's text

  bool insufficient_scope() const { return error == "insufficient_scope"; }
};

// The Bearer challenge of `header`, or nullopt when it holds none or is malformed (the
// caller says so without quoting the header).
std::optional<BearerChallenge> parse_bearer_challenge(std::string_view header);

}  // namespace sluice::gateway::auth

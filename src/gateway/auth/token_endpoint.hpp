#pragma once
// The requests sluice sends to an authorization server's token and registration endpoints:
// - token requests (authorization_code with the PKCE verifier, refresh_token), form-encoded,
//   always with the `resource` parameter (RFC 8707) and the client's authentication: none
//   (client_id in the body), client_secret_basic (an Authorization: Basic header of the
//   form-encoded id and secret, RFC 6749 section 2.3.1) or client_secret_post (both in the body);
// - dynamic client registration (RFC 7591) of a native public client with sluice's redirect
//   URI and the authorization_code and refresh_token grants.
// Responses are parsed strictly: a token response needs a non-empty access_token and
// token_type Bearer. Errors name the OAuth error code only when it is one of the registered
// codes (RFC 6749 section 5.2), never the server's description.
// Threading: the loop thread of the Fetch.
#include "gateway/auth/codec.hpp"
#include "gateway/auth/fetch.hpp"
#include "gateway/auth/metadata.hpp"
#include "store/token_store.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::gateway::auth {

// The authentication method for a client with (or without) a secret, from what the server
// lists: for a secret client_secret_basic, then client_secret_post (basic when the server
// lists neither, RFC 8414's default); without one "none".
std::string choose_auth_method(const AuthServerMetadata& server, bool has_secret);

struct TokenGrant {
  std::string access_token;
  std::string refresh_token;       // empty: none issued
  std::string scope;               // empty: the server did not say
  std::int64_t expires_at_ms = 0;  // 0: no expires_in
};

// Parses a token endpoint's 200 answer; `now_ms` is when it arrived (unix ms).
AuthResult<TokenGrant> parse_token_response(std::string_view body, std::int64_t now_ms);

// POSTs `grant` (grant_type and its parameters; `resource` and the client's authentication
// are added) to `token_endpoint`.
boost::asio::awaitable<AuthResult<TokenGrant>> request_token(const Fetch& fetch,
                                                             std::string token_endpoint,
                                                             const store::OAuthClientRecord& client,
                                                             FormFields grant, std::string resource,
                                                             std::int64_t now_ms);

// Registers sluice with `server`'s registration endpoint; the record has registered = true.
boost::asio::awaitable<AuthResult<store::OAuthClientRecord>> register_client(
    const Fetch& fetch, const AuthServerMetadata& server, std::string redirect_uri,
    std::string scope);

}  // namespace sluice::gateway::auth

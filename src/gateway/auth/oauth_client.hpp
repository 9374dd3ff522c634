#pragma once
// One protected remote server's OAuth 2.1 client, as the MCP authorization specification
// (2025-11-25) describes it. The remote transport of that server owns one and asks it, per
// request, which bearer token to send, and tells it when the server refused one:
//
//   if (auto cached = oauth.cached_bearer()) send with *cached;          // no allocation, no wait
//   else { auto token = co_await oauth.bearer(); ... }                    // "" means send none
//   on 401/403: Unauthorized refusal{status, www_authenticate, sent};
//               auto retry = co_await oauth.on_unauthorized(std::move(refusal));
//               retry once with *retry, or report retry.error() (AuthFailure::auth_required:
//               health shows auth_required; the caller names the login command, which this
//               client's messages leave out).
//   the login command (sluice auth login SERVER): co_await oauth.login(print_url, challenge);
//
// The flow (authorize()): protected-resource metadata from the challenge's resource_metadata
// or the well-known URLs; the authorization server's metadata (RFC 8414, then OpenID Connect
// discovery) with issuer and PKCE S256 checks (metadata.hpp); the client identity in the
// specified order: pre-registered (the entry's oauth.clientId/clientSecret), a Client ID
// Metadata Document (oauth.clientMetadataUrl, when the server supports them), dynamic
// registration (stored, and reused while the issuer stays the same); authorization code with
// PKCE S256, a random state that must come back, the `resource` parameter byte for byte as
// the metadata published it, the scope of the challenge (else oauth.scopes, else the
// resource's scopes_supported, else none), iss checked when present or advertised
// (RFC 9207); then the token request, and the tokens stored (store::TokenStore).
//
// The authorization response comes either from the redirect listener (login(): the operator's
// browser) or, for an automatic authorization (on_unauthorized() with no token to refresh),
// headlessly: the authorization URL is fetched without following the redirect, and when the
// authorization server redirects at once to the redirect URI, its code and state are taken
// from Location. A server that shows a login page instead gives auth_required.
//
// Refusals: a 401 refreshes once (refresh_token grant); a token the refresh just gave that is
// refused again, or none to refresh, leads to one automatic authorization, unless the last
// one completed less than reauthorize_after ago: then auth_required. A 401 after which the
// protected resource metadata no longer names the issuer of the token held (the resource moved
// to another authorization server) skips the refresh and that bound: sluice authorizes at the
// new server, registering there, and never presents the old registration to it. A 403 with
// error="insufficient_scope" re-authorizes with the union of the scopes held and those the
// challenge names, only when that adds a scope and at most max_step_ups times, so a server
// that always refuses cannot make sluice loop. An expired token (expires_at within
// expiry_margin) is refreshed before it is sent.
//
// Secrets: tokens, codes, verifiers and client secrets are never in an error message or a log
// line; every AuthError is value-free (fetch.hpp).
//
// Threading and ownership: the io_context thread given to the constructor; `store` is
// borrowed and must outlive the client. One flow runs at a time: concurrent callers of
// bearer(), on_unauthorized() and login() wait for the running one and then see its result
// (a burst of 401s refreshes once). Destroying the client while a flow waits is not allowed:
// its owner ends the flows (they are bounded by the Fetch's deadlines and login's wait) first.
// The token store is read (once) and written (at a registration, an authorization or a
// refresh) synchronously on the loop: a file of a few KiB (store/token_store.hpp). The flows
// throw only when OpenSSL's random generator fails (codec.hpp random_urlsafe); every other
// failure is an AuthError.
#include "config/gateway_config.hpp"
#include "core/event.hpp"
#include "gateway/auth/challenge.hpp"
#include "gateway/auth/fetch.hpp"
#include "gateway/auth/metadata.hpp"
#include "gateway/auth/redirect_listener.hpp"
#include "store/token_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sluice::gateway::auth {

struct OAuthClientOptions {
  std::string server;       // the configured name (the token store's key)
  std::string fingerprint;  // store::fingerprint() of the server's definition
  std::string server_url;   // the MCP endpoint
  config::OAuthSettings settings;
  // Unix ms now (wall clock: expiries are stored across processes); empty: core::unix_ms_now.
  std::function<std::int64_t()> now_ms;
  // A token this close to its expiry is refreshed before it is sent.
  std::chrono::milliseconds expiry_margin{60'000};
  // Whether on_unauthorized() may authorize headlessly (see above).
  bool headless_authorization = true;
  int max_step_ups = 2;
  // After an authorization, a 401 leads to another automatic one only once this has passed
  // (a refresh may still run): a server that refuses every token cannot make sluice loop.
  std::chrono::milliseconds reauthorize_after{60'000};
  // How long login() waits for the browser's redirect.
  std::chrono::milliseconds login_wait{300'000};
};

// A refused request, as the transport saw it.
struct Unauthorized {
  int status = 401;              // 401 or 403
  std::string www_authenticate;  // the header's value; "" when absent
  std::string bearer_sent;       // the token the request carried; "" for none
};

class OAuthClient {
 public:
  OAuthClient(boost::asio::io_context& io, OAuthClientOptions options, Fetch fetch,
              store::TokenStore& store);
  OAuthClient(const OAuthClient&) = delete;
  OAuthClient& operator=(const OAuthClient&) = delete;

  // The token to send now when one is held in memory, unexpired, and no flow is running;
  // nullopt otherwise (then co_await bearer()). The view lives until the next flow.
  std::optional<std::string_view> cached_bearer() const;

  // The token to send: the stored one (read from the store once), refreshed first when it
  // has expired. "" when none is held: send the request without one, and pass the 401 to
  // on_unauthorized(). Fails only when the store cannot be read (store_failed).
  boost::asio::awaitable<AuthResult<std::string>> bearer();

  // After a 401 or 403: the token to retry the request with, or why there is none. Inside a
  // coroutine, pass a named Unauthorized (std::move it): GCC 12 destroys a braced temporary
  // argument of a co_await expression twice.
  boost::asio::awaitable<AuthResult<std::string>> on_unauthorized(Unauthorized refusal);

  // The interactive authorization: opens the redirect listener (oauth.callbackPort, or the
  // port of oauth.redirectUri), calls `on_authorize_url` with the URL for the operator's
  // browser, waits for the redirect up to login_wait, and stores the tokens. `www_authenticate`
  // is the challenge of a request sent without a token, when the caller has one.
  boost::asio::awaitable<AuthResult<void>> login(
      std::function<void(std::string_view)> on_authorize_url, std::string www_authenticate = {});

 private:
  // Where the authorization response comes from.
  struct Channel {
    std::string redirect_uri;
    std::function<boost::asio::awaitable<AuthResult<QueryParams>>(std::string url)> obtain;
  };
  class Busy;

  boost::asio::awaitable<void> enter();
  void leave();
  AuthResult<void> ensure_loaded();
  AuthResult<void> save();
  bool expired(const store::TokenRecord& record) const;
  std::int64_t now() const;
  static AuthError auth_required(std::string_view why);

  boost::asio::awaitable<AuthResult<std::string>> after_401(const Unauthorized& refusal,
                                                            const BearerChallenge& challenge);
  boost::asio::awaitable<AuthResult<std::string>> step_up(const BearerChallenge& challenge);
  // Whether the server's protected resource metadata no longer names the authorization server
  // that issued the token held (it moved to another one: SEP-2352).
  boost::asio::awaitable<bool> issuer_moved(const BearerChallenge& challenge);
  boost::asio::awaitable<AuthResult<void>> refresh();
  boost::asio::awaitable<AuthResult<void>> authorize(const BearerChallenge& challenge,
                                                     std::set<std::string> scopes,
                                                     const Channel& channel);
  boost::asio::awaitable<AuthResult<store::OAuthClientRecord>> identity(
      const AuthServerMetadata& server, const ProtectedResourceMetadata& resource,
      const std::string& redirect_uri, const std::string& scope);
  std::set<std::string> choose_scopes(const BearerChallenge& challenge,
                                      const ProtectedResourceMetadata& resource,
                                      std::set<std::string> extra) const;
  Channel headless_channel() const;

  boost::asio::io_context& io_;
  OAuthClientOptions options_;
  Fetch fetch_;
  store::TokenStore& store_;

  bool loaded_ = false;
  std::optional<store::TokenRecord> record_;           // what the store holds for this server
  std::shared_ptr<core::Event> busy_;                  // set while a flow runs; waiters wait on it
  std::string refreshed_token_;                        // the token the last refresh gave
  std::optional<std::int64_t> last_authorization_ms_;  // when the last one completed
  int step_ups_ = 0;
};

}  // namespace sluice::gateway::auth

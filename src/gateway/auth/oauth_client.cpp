#include "gateway/auth/oauth_client.hpp"

#include "core/wall_clock.hpp"
#include "gateway/auth/codec.hpp"
#include "gateway/auth/token_endpoint.hpp"
#include "gateway/auth/url.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace sluice::gateway::auth {
namespace asio = boost::asio;
namespace {

constexpr std::size_t kVerifierBytes = 32;  // a 43-character verifier
constexpr std::size_t kStateBytes = 16;

// RFC 6749 section 4.1.2.1: the codes an authorization error may be named by.
constexpr std::array<std::string_view, 7> kAuthorizationErrors{
    "invalid_request", "unauthorized_client", "access_denied",          "unsupported_response_type",
    "invalid_scope",   "server_error",        "temporarily_unavailable"};

std::optional<std::string_view> param(const QueryParams& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

AuthError refused(std::string message) {
  return auth_error(AuthFailure::authorization_failed, std::move(message));
}

// The code of an authorization response, once its error, state and iss are checked.
AuthResult<std::string> code_of(const QueryParams& params, std::string_view state,
                                const AuthServerMetadata& server) {
  if (std::optional<std::string_view> error = param(params, "error")) {
    auto known = std::find(kAuthorizationErrors.begin(), kAuthorizationErrors.end(), *error);
    if (known == kAuthorizationErrors.end()) return refused("the authorization server refused");
    return refused(fmt::format("the authorization server refused ({})", *known));
  }
  if (param(params, "state") != state) {
    return refused("the authorization response's state is not the one sent; refused");
  }
  std::optional<std::string_view> iss = param(params, "iss");
  if (iss ? *iss != server.issuer : server.iss_parameter_supported) {
    return refused("the authorization response's iss is not the authorization server's issuer");
  }
  std::optional<std::string_view> code = param(params, "code");
  if (!code || code->empty()) return refused("the authorization response holds no code");
  return std::string(*code);
}

}  // namespace

// Marks a flow as running for its scope; leaving wakes the callers that wait.
class OAuthClient::Busy {
 public:
  explicit Busy(OAuthClient& client) : client_(client) {}
  ~Busy() { client_.leave(); }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  OAuthClient& client_;
};

OAuthClient::OAuthClient(asio::io_context& io, OAuthClientOptions options, Fetch fetch,
                         store::TokenStore& store)
    : io_(io), options_(std::move(options)), fetch_(std::move(fetch)), store_(store) {}

std::int64_t OAuthClient::now() const {
  return options_.now_ms ? options_.now_ms() : core::unix_ms_now();
}

bool OAuthClient::expired(const store::TokenRecord& record) const {
  return record.expires_at_ms != 0 &&
         now() + options_.expiry_margin.count() >= record.expires_at_ms;
}

AuthError OAuthClient::auth_required(std::string_view why) {
  return auth_error(AuthFailure::auth_required, std::string(why));
}

std::optional<std::string_view> OAuthClient::cached_bearer() const {
  if (busy_ || !record_ || record_->access_token.empty() || expired(*record_)) {
    return std::nullopt;
  }
  return std::string_view(record_->access_token);
}

asio::awaitable<void> OAuthClient::enter() {
  while (busy_) {
    std::shared_ptr<core::Event> running = busy_;
    co_await running->wait();
  }
  busy_ = std::make_shared<core::Event>(io_);
}

void OAuthClient::leave() {
  std::shared_ptr<core::Event> done = std::move(busy_);
  if (done) done->set();
}

AuthResult<void> OAuthClient::ensure_loaded() {
  if (loaded_) return {};
  core::Result<std::optional<store::TokenRecord>> stored =
      store_.load(options_.server, options_.fingerprint);
  if (!stored) return auth_error(AuthFailure::store_failed, stored.error().message);
  record_ = std::move(*stored);
  loaded_ = true;
  return {};
}

AuthResult<void> OAuthClient::save() {
  if (!record_) return {};
  core::Result<void> saved = store_.save(*record_);
  if (!saved) return auth_error(AuthFailure::store_failed, saved.error().message);
  return {};
}

asio::awaitable<AuthResult<std::string>> OAuthClient::bearer() {
  co_await enter();
  Busy busy(*this);
  if (AuthResult<void> loaded = ensure_loaded(); !loaded) co_return loaded.error();
  if (!record_ || record_->access_token.empty()) co_return std::string();
  if (expired(*record_)) {
    if (record_->refresh_token.empty() || !(co_await refresh())) co_return std::string();
  }
  co_return record_->access_token;
}

asio::awaitable<AuthResult<std::string>> OAuthClient::on_unauthorized(Unauthorized refusal) {
  co_await enter();
  Busy busy(*this);
  if (AuthResult<void> loaded = ensure_loaded(); !loaded) co_return loaded.error();
  BearerChallenge challenge =
      parse_bearer_challenge(refusal.www_authenticate).value_or(BearerChallenge{});
  if (refusal.status == 403) {
    if (!challenge.insufficient_scope()) {
      co_return auth_required("the server refused the token (HTTP 403)");
    }
    co_return co_await step_up(challenge);
  }
  co_return co_await after_401(refusal, challenge);
}

asio::awaitable<AuthResult<std::string>> OAuthClient::after_401(const Unauthorized& refusal,
                                                                const BearerChallenge& challenge) {
  const std::string current = record_ ? record_->access_token : std::string();
  // Another request's refusal already replaced the token this one carried.
  if (!current.empty() && current != refusal.bearer_sent) co_return current;
  // A resource that moved to another authorization server refuses every token of the old
  // one: neither a refresh there nor the old registration is of use, and a new authorization
  // (with a registration at the new server) is due even moments after the last one.
  const bool moved = !current.empty() && co_await issuer_moved(challenge);
  if (!moved && !current.empty() && !record_->refresh_token.empty() &&
      current != refreshed_token_) {
    if (co_await refresh()) co_return record_->access_token;
  }
  if (!moved && last_authorization_ms_ &&
      now() - *last_authorization_ms_ < options_.reauthorize_after.count()) {
    co_return auth_required("the server refused a token it authorized moments ago");
  }
  if (!options_.headless_authorization) {
    co_return auth_required("the server needs an OAuth authorization");
  }
  std::set<std::string> held;
  if (record_) held = split_scopes(record_->scope);
  AuthResult<void> done = co_await authorize(challenge, std::move(held), headless_channel());
  if (!done) co_return done.error();
  co_return record_->access_token;
}

asio::awaitable<bool> OAuthClient::issuer_moved(const BearerChallenge& challenge) {
  if (!record_ || record_->issuer.empty()) co_return false;
  AuthResult<ProtectedResourceMetadata> resource = co_await discover_protected_resource(
      fetch_, options_.server_url, challenge.resource_metadata);
  if (!resource) co_return false;
  auto bare = [](std::string_view s) {
    while (!s.empty() && s.back() == '/') s.remove_suffix(1);
    return s;
  };
  for (const auto& server : resource->authorization_servers) {
    if (bare(server) == bare(record_->issuer)) co_return false;
  }
  co_return true;
}

asio::awaitable<AuthResult<std::string>> OAuthClient::step_up(const BearerChallenge& challenge) {
  std::set<std::string> held;
  if (record_) held = split_scopes(record_->scope);
  std::set<std::string> wanted = held;
  if (challenge.scope) wanted.merge(split_scopes(*challenge.scope));
  if (wanted == held) {
    co_return auth_required("the server asks for scopes already granted (insufficient_scope)");
  }
  if (step_ups_ >= options_.max_step_ups) {
    co_return auth_required("the server asked for more scopes too many times");
  }
  ++step_ups_;
  AuthResult<void> done = co_await authorize(challenge, std::move(wanted), headless_channel());
  if (!done) co_return done.error();
  co_return record_->access_token;
}

asio::awaitable<AuthResult<void>> OAuthClient::refresh() {
  FormFields grant{{"grant_type", "refresh_token"}, {"refresh_token", record_->refresh_token}};
  AuthResult<TokenGrant> got = co_await request_token(
      fetch_, record_->token_endpoint, record_->client, std::move(grant), record_->resource, now());
  if (!got) {
    // A refused refresh token is not tried again; the registration is kept.
    record_->access_token.clear();
    record_->refresh_token.clear();
    (void)save();
    co_return got.error();
  }
  record_->access_token = std::move(got->access_token);
  if (!got->refresh_token.empty()) record_->refresh_token = std::move(got->refresh_token);
  if (!got->scope.empty()) record_->scope = std::move(got->scope);
  record_->expires_at_ms = got->expires_at_ms;
  refreshed_token_ = record_->access_token;
  if (AuthResult<void> saved = save(); !saved) co_return saved.error();
  co_return AuthResult<void>{};
}

std::set<std::string> OAuthClient::choose_scopes(const BearerChallenge& challenge,
                                                 const ProtectedResourceMetadata& resource,
                                                 std::set<std::string> extra) const {
  std::set<std::string> out = std::move(extra);
  if (challenge.scope) out.merge(split_scopes(*challenge.scope));
  if (!out.empty()) return out;
  if (!options_.settings.scopes.empty()) {
    return {options_.settings.scopes.begin(), options_.settings.scopes.end()};
  }
  return {resource.scopes_supported.begin(), resource.scopes_supported.end()};
}

asio::awaitable<AuthResult<store::OAuthClientRecord>> OAuthClient::identity(
    const AuthServerMetadata& server, const ProtectedResourceMetadata& resource,
    const std::string& redirect_uri, const std::string& scope) {
  const config::OAuthSettings& s = options_.settings;
  if (!s.client_id.empty()) {
    co_return store::OAuthClientRecord{s.client_id, s.client_secret,
                                       choose_auth_method(server, !s.client_secret.empty()), false};
  }
  if (!s.client_metadata_url.empty() && server.client_id_metadata_document_supported) {
    co_return store::OAuthClientRecord{s.client_metadata_url, "", "none", false};
  }
  if (record_ && record_->client.registered && record_->issuer == server.issuer) {
    co_return record_->client;
  }
  if (server.registration_endpoint.empty()) {
    co_return auth_error(AuthFailure::no_client_identity,
                         "the authorization server offers no registration and the server entry "
                         "sets no oauth.clientId (or oauth.clientMetadataUrl)");
  }
  AuthResult<store::OAuthClientRecord> registered =
      co_await register_client(fetch_, server, redirect_uri, scope);
  if (!registered) co_return registered.error();
  // The registration is kept even if the authorization fails, and reused next time.
  store::TokenRecord record;
  record.server = options_.server;
  record.fingerprint = options_.fingerprint;
  record.issuer = server.issuer;
  record.token_endpoint = server.token_endpoint;
  record.resource = resource.resource;
  record.client = *registered;
  record_ = std::move(record);
  if (AuthResult<void> saved = save(); !saved) co_return saved.error();
  co_return registered;
}

asio::awaitable<AuthResult<void>> OAuthClient::authorize(const BearerChallenge& challenge,
                                                         std::set<std::string> scopes,
                                                         const Channel& channel) {
  AuthResult<ProtectedResourceMetadata> resource = co_await discover_protected_resource(
      fetch_, options_.server_url, challenge.resource_metadata);
  if (!resource) co_return resource.error();
  AuthResult<AuthServerMetadata> server =
      co_await discover_auth_server(fetch_, resource->authorization_servers.front());
  if (!server) co_return server.error();
  const std::string scope = join_scopes(choose_scopes(challenge, *resource, std::move(scopes)));
  AuthResult<store::OAuthClientRecord> client =
      co_await identity(*server, *resource, channel.redirect_uri, scope);
  if (!client) co_return client.error();

  const std::string verifier = random_urlsafe(kVerifierBytes);
  const std::string state = random_urlsafe(kStateBytes);
  std::vector<std::pair<std::string, std::string>> query{
      {"response_type", "code"},
      {"client_id", client->client_id},
      {"redirect_uri", channel.redirect_uri},
      {"code_challenge", s256_challenge(verifier)},
      {"code_challenge_method", "S256"},
      {"state", state},
      {"resource", resource->resource}};
  if (!scope.empty()) query.emplace_back("scope", scope);
  AuthResult<QueryParams> response =
      co_await channel.obtain(with_query(server->authorization_endpoint, query));
  if (!response) co_return response.error();
  AuthResult<std::string> code = code_of(*response, state, *server);
  if (!code) co_return code.error();

  FormFields grant{{"grant_type", "authorization_code"},
                   {"code", std::move(*code)},
                   {"redirect_uri", channel.redirect_uri},
                   {"code_verifier", verifier}};
  AuthResult<TokenGrant> got = co_await request_token(fetch_, server->token_endpoint, *client,
                                                      std::move(grant), resource->resource, now());
  if (!got) co_return got.error();
  store::TokenRecord record{options_.server,
                            options_.fingerprint,
                            server->issuer,
                            server->token_endpoint,
                            resource->resource,
                            std::move(*client),
                            std::move(got->access_token),
                            std::move(got->refresh_token),
                            got->scope.empty() ? scope : std::move(got->scope),
                            got->expires_at_ms};
  record_ = std::move(record);
  last_authorization_ms_ = now();
  refreshed_token_.clear();
  co_return save();
}

OAuthClient::Channel OAuthClient::headless_channel() const {
  std::string redirect_uri = options_.settings.redirect_uri;
  if (redirect_uri.empty()) {
    redirect_uri =
        options_.settings.callback_port == 0
            ? std::string("http://127.0.0.1/callback")
            : fmt::format("http://127.0.0.1:{}/callback", options_.settings.callback_port);
  }
  Channel channel;
  channel.redirect_uri = redirect_uri;
  channel.obtain = [this,
                    redirect_uri](std::string url) -> asio::awaitable<AuthResult<QueryParams>> {
    auto response = co_await fetch_(make_request("GET", std::move(url)));
    if (!response) co_return transport_error(response.error(), "the authorization endpoint");
    std::optional<std::string_view> location = transport::field(response->headers, "Location");
    if (response->status < 300 || response->status > 399 || !location) {
      co_return auth_required("the authorization server needs the operator's login");
    }
    auto params = redirect_params(*location, redirect_uri);
    if (!params) co_return refused("the authorization server redirected elsewhere than sluice");
    co_return std::move(*params);
  };
  return channel;
}

asio::awaitable<AuthResult<void>> OAuthClient::login(
    std::function<void(std::string_view)> on_authorize_url, std::string www_authenticate) {
  co_await enter();
  Busy busy(*this);
  if (AuthResult<void> loaded = ensure_loaded(); !loaded) co_return loaded.error();
  const config::OAuthSettings& s = options_.settings;
  LoopbackTarget target{s.callback_port, "/callback"};
  if (!s.redirect_uri.empty()) {
    std::optional<LoopbackTarget> configured = loopback_target(s.redirect_uri);
    if (!configured) co_return refused("oauth.redirectUri is not a loopback http URI");
    target = *configured;
    if (target.port == 0) target.port = s.callback_port;
  }
  AuthResult<std::unique_ptr<RedirectListener>> listener =
      RedirectListener::open(io_, target.port, target.path);
  if (!listener) co_return listener.error();
  RedirectListener& at = **listener;
  Channel channel;
  channel.redirect_uri = s.redirect_uri.empty() ? at.redirect_uri() : s.redirect_uri;
  channel.obtain = [&](std::string url) -> asio::awaitable<AuthResult<QueryParams>> {
    on_authorize_url(url);
    co_return co_await at.wait(options_.login_wait);
  };
  BearerChallenge challenge = parse_bearer_challenge(www_authenticate).value_or(BearerChallenge{});
  step_ups_ = 0;
  co_return co_await authorize(challenge, {}, channel);
}

}  // namespace sluice::gateway::auth

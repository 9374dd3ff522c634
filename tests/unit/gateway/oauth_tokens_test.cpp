// The OAuth client's identity, token and refusal handling against an in-memory authorization
// server (fake_auth_server.hpp): which client identity is used (pre-registered with
// client_secret_basic or _post, a metadata document URL, dynamic registration, stored and
// reused), refresh on expiry and on a 401, step-up on insufficient_scope without a loop, the
// interactive login through the loopback redirect listener, and that no token, code or
// secret ever appears in an error.
#include "fake_auth_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <string>
#include <thread>

namespace sluice::gateway::auth::test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

const std::string kOauthTokensPrmPath =
    std::string(kRs) + "/.well-known/oauth-protected-resource/mcp";

std::string basic_of(const FakeAuthServer& fake) {
  for (const auto& r : fake.requests) {
    if (without_query(r.url) != std::string(kAs) + "/token") continue;
    if (auto v = transport::field(r.headers, "Authorization")) return std::string(*v);
  }
  return {};
}

TEST(OAuthIdentity, DynamicRegistrationComesFirstThenTheTokenForTheRegisteredClient) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(token) << token.error().message;
  ASSERT_THAT(h.fake.registrations, SizeIs(1));
  const auto& reg = h.fake.registrations[0];
  EXPECT_EQ(reg.at("application_type"), boost::json::value("native"));
  EXPECT_EQ(reg.at("token_endpoint_auth_method"), boost::json::value("none"));
  EXPECT_EQ(reg.at("redirect_uris").as_array().at(0),
            boost::json::value(h.fake.authorize_queries.at(0)["redirect_uri"]));
  const auto& grants = reg.at("grant_types").as_array();
  EXPECT_NE(std::find(grants.begin(), grants.end(), boost::json::value("refresh_token")),
            grants.end());
  EXPECT_EQ(h.fake.authorize_queries.at(0)["client_id"], "dyn-client");
  EXPECT_EQ(h.fake.token_forms.at(0)["client_id"], "dyn-client");
  EXPECT_EQ(*token, h.fake.issued.at(0));
}

TEST(OAuthIdentity, AStoredRegistrationIsReusedByTheNextProcess) {
  OAuthHarness h;
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kOauthTokensPrmPath)));
  auto stored = h.store.load("remote", "fp-1");
  ASSERT_TRUE(stored && stored->has_value());
  EXPECT_TRUE((*stored)->client.registered);
  EXPECT_EQ((*stored)->client.client_id, "dyn-client");
  // A later process whose token was refused outright authorizes again without registering.
  (*stored)->refresh_token.clear();
  ASSERT_TRUE(h.store.save(**stored));
  OAuthClient next(h.io, h.options, h.fake.fetch(), h.store);
  auto again =
      run(h.io,
          next.on_unauthorized({401, challenge_for(kOauthTokensPrmPath), (*stored)->access_token}));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_THAT(h.fake.registrations, SizeIs(1));
  EXPECT_THAT(h.fake.authorize_queries, SizeIs(2));
}

TEST(OAuthIdentity, APreRegisteredClientUsesClientSecretBasicWhenTheServerListsIt) {
  config::OAuthSettings settings;
  settings.client_id = "pre-client";
  settings.client_secret = "pre-secret";
  OAuthHarness h(settings);
  h.fake.auth_methods = {"client_secret_post", "client_secret_basic"};
  h.fake.registration = false;
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kOauthTokensPrmPath)));
  EXPECT_EQ(basic_of(h.fake), "Basic " + base64("pre-client:pre-secret"));
  EXPECT_FALSE(h.fake.token_forms.at(0).contains("client_secret"));
  EXPECT_EQ(h.fake.authorize_queries.at(0)["client_id"], "pre-client");
  EXPECT_THAT(h.fake.registrations, IsEmpty());
}

TEST(OAuthIdentity, APreRegisteredClientPostsItsSecretWhenOnlyClientSecretPostIsListed) {
  config::OAuthSettings settings;
  settings.client_id = "pre-client";
  settings.client_secret = "pre-secret";
  OAuthHarness h(settings);
  h.fake.auth_methods = {"client_secret_post"};
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kOauthTokensPrmPath)));
  EXPECT_EQ(basic_of(h.fake), "");
  EXPECT_EQ(h.fake.token_forms.at(0)["client_id"], "pre-client");
  EXPECT_EQ(h.fake.token_forms.at(0)["client_secret"], "pre-secret");
  EXPECT_THAT(h.fake.registrations, IsEmpty());
}

TEST(OAuthIdentity, ARegisteredConfidentialClientAuthenticatesAsTheRegistrationSays) {
  OAuthHarness h;
  h.fake.auth_methods = {"client_secret_basic"};
  h.fake.registered_secret = "dyn-secret";
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kOauthTokensPrmPath)));
  EXPECT_EQ(h.fake.registrations.at(0).at("token_endpoint_auth_method"),
            boost::json::value("client_secret_basic"));
  EXPECT_EQ(basic_of(h.fake), "Basic " + base64("dyn-client:dyn-secret"));
}

TEST(OAuthIdentity, AMetadataDocumentUrlIsTheClientIdWhereTheServerSupportsThem) {
  config::OAuthSettings settings;
  settings.client_metadata_url = "https://conformance-test.local/client-metadata.json";
  OAuthHarness h(settings);
  h.fake.as_extra["client_id_metadata_document_supported"] = true;
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kOauthTokensPrmPath)));
  EXPECT_EQ(h.fake.authorize_queries.at(0)["client_id"], settings.client_metadata_url);
  EXPECT_EQ(h.fake.token_forms.at(0)["client_id"], settings.client_metadata_url);
  EXPECT_THAT(h.fake.registrations, IsEmpty());
}

TEST(OAuthIdentity, WithoutAnyWayToIdentifyItselfTheFlowSaysWhatToConfigure) {
  OAuthHarness h;
  h.fake.registration = false;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::no_client_identity);
  EXPECT_THAT(token.error().message, HasSubstr("oauth.clientId"));
}

TEST(OAuthTokens, AnExpiredTokenIsRefreshedBeforeItIsSent) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(first);
  ASSERT_TRUE(h.client().cached_bearer().has_value());
  EXPECT_EQ(*h.client().cached_bearer(), *first);
  h.now_ms += 3600'000;  // past expires_in
  EXPECT_FALSE(h.client().cached_bearer().has_value());
  auto second = run(h.io, h.client().bearer());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, h.fake.issued.at(1));
  ASSERT_THAT(h.fake.token_forms, SizeIs(2));
  EXPECT_EQ(h.fake.token_forms[1]["grant_type"], "refresh_token");
  EXPECT_EQ(h.fake.token_forms[1]["refresh_token"], "refresh-1-" + std::string(kSecretMark));
  EXPECT_EQ(h.fake.token_forms[1]["resource"], std::string(kRs) + "/mcp");
  auto stored = h.store.load("remote", "fp-1");
  ASSERT_TRUE(stored && stored->has_value());
  EXPECT_EQ((*stored)->access_token, *second);
}

TEST(OAuthTokens, A401RefreshesOnceThenIsAuthRequiredRightAfterAnAuthorization) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(first);
  auto refreshed = h.unauthorized(401, "Bearer error=\"invalid_token\"", *first);
  ASSERT_TRUE(refreshed);
  EXPECT_EQ(h.fake.token_forms.back()["grant_type"], "refresh_token");
  // The refreshed token refused too, moments after the authorization: no new one.
  auto refused = h.unauthorized(401, challenge_for(kOauthTokensPrmPath), *refreshed);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(h.fake.authorize_queries, SizeIs(1));
  EXPECT_THAT(h.fake.token_forms, SizeIs(2));
}

TEST(OAuthTokens, ALaterRefusalAfterTheRefreshLeadsToOneNewAuthorization) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(first);
  h.now_ms += 120'000;
  auto refreshed = h.unauthorized(401, "Bearer", *first);
  ASSERT_TRUE(refreshed);
  auto authorized = h.unauthorized(401, challenge_for(kOauthTokensPrmPath), *refreshed);
  ASSERT_TRUE(authorized) << authorized.error().message;
  EXPECT_THAT(h.fake.authorize_queries, SizeIs(2));
  // That token refused at once: refreshed once more, then auth_required.
  auto again = h.unauthorized(401, "Bearer", *authorized);
  ASSERT_TRUE(again);
  auto refused = h.unauthorized(401, "Bearer", *again);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(h.fake.authorize_queries, SizeIs(2));
}

TEST(OAuthTokens, ARequestThatCarriedAReplacedTokenRetriesWithTheNewOneWithoutAFlow) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(first);
  const std::size_t before = h.fake.requests.size();
  auto again = h.unauthorized(401, challenge_for(kOauthTokensPrmPath), "an-older-token");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(h.fake.requests.size(), before);
}

TEST(OAuthTokens, ManyConcurrent401sRefreshOnce) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
  ASSERT_TRUE(first);
  h.fake.suspend = true;
  int done = 0;
  std::vector<std::string> got;
  for (int i = 0; i < 5; ++i) {
    asio::co_spawn(
        h.io,
        [&]() -> asio::awaitable<void> {
          Unauthorized refusal{401, "Bearer", *first};  // named: see on_unauthorized()
          auto t = co_await h.client().on_unauthorized(std::move(refusal));
          got.push_back(t ? *t : std::string());
          ++done;
        },
        asio::detached);
  }
  ASSERT_TRUE(sluice::test::run_until(h.io, [&] { return done == 5; }));
  EXPECT_THAT(h.fake.token_forms, SizeIs(2));  // the code, then one refresh
  for (const auto& t : got) EXPECT_EQ(t, h.fake.issued.at(1));
}

TEST(OAuthTokens, InsufficientScopeReauthorizesWithTheUnionOfScopesOnce) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath, "mcp:basic"));
  ASSERT_TRUE(first);
  auto stepped = h.unauthorized(
      403,
      "Bearer error=\"insufficient_scope\", scope=\"mcp:write\", resource_metadata=\"" +
          kOauthTokensPrmPath + "\"",
      *first);
  ASSERT_TRUE(stepped) << stepped.error().message;
  ASSERT_THAT(h.fake.authorize_queries, SizeIs(2));
  EXPECT_EQ(h.fake.authorize_queries[1]["scope"], "mcp:basic mcp:write");
  // The same refusal again adds no scope: no third authorization.
  auto again =
      h.unauthorized(403, "Bearer error=\"insufficient_scope\", scope=\"mcp:write\"", *stepped);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(h.fake.authorize_queries, SizeIs(2));
}

TEST(OAuthTokens, A403WithoutInsufficientScopeIsAuthRequiredWithoutAFlow) {
  OAuthHarness h;
  h.fake.serve_standard();
  auto refused = h.unauthorized(403, "Bearer error=\"invalid_token\"");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(h.fake.requests, IsEmpty());
}

TEST(OAuthTokens, NoErrorMessageEverCarriesATokenACodeOrASecret) {
  std::vector<std::string> messages;
  {
    OAuthHarness h;  // a refused refresh whose description quotes a secret
    h.fake.serve_standard();
    auto first = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
    ASSERT_TRUE(first);
    h.fake.refuse_refresh = true;
    h.fake.authorize = FakeAuthServer::Authorize::login_page;
    h.now_ms += 7200'000;
    auto refreshed = h.unauthorized(401, "Bearer", *first);
    ASSERT_FALSE(refreshed);
    messages.push_back(refreshed.error().message);
  }
  {
    OAuthHarness h;  // a forged state on a redirect whose code is secret
    h.fake.authorize = FakeAuthServer::Authorize::wrong_state;
    h.fake.serve_standard();
    auto t = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
    ASSERT_FALSE(t);
    messages.push_back(t.error().message);
  }
  {
    OAuthHarness h;  // the authorization server refuses
    h.fake.authorize = FakeAuthServer::Authorize::error;
    h.fake.serve_standard();
    auto t = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
    ASSERT_FALSE(t);
    EXPECT_THAT(t.error().message, HasSubstr("access_denied"));
    messages.push_back(t.error().message);
  }
  {
    config::OAuthSettings settings;  // a pre-registered secret refused at the token endpoint
    settings.client_id = "id";
    settings.client_secret = "pre-" + std::string(kSecretMark);
    OAuthHarness h(settings);
    h.fake.serve_standard();
    h.fake.documents.erase(std::string(kAs) + "/.well-known/oauth-authorization-server");
    auto t = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
    ASSERT_FALSE(t);
    messages.push_back(t.error().message);
  }
  {
    OAuthHarness h;  // the token endpoint refuses the code, its body quoting a secret
    h.fake.refuse_code = true;
    h.fake.serve_standard();
    auto t = h.unauthorized(401, challenge_for(kOauthTokensPrmPath));
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().failure, AuthFailure::token_failed);
    EXPECT_THAT(t.error().message, HasSubstr("HTTP 400"));
    messages.push_back(t.error().message);
  }
  for (const auto& m : messages) {
    EXPECT_THAT(m, Not(HasSubstr(std::string(kSecretMark)))) << m;
    EXPECT_FALSE(m.empty());
  }
}

// Plays the operator's browser: follows the authorization URL's redirect_uri with a code and
// the state it was given, on a thread of its own (a blocking client on loopback).
std::string browse(const std::string& authorize_url, std::string state_override = {}) {
  auto q = query_of(authorize_url);
  const std::string redirect = q["redirect_uri"];
  const auto port_at = redirect.find(':', 7);
  const auto path_at = redirect.find('/', port_at);
  const std::string port = redirect.substr(port_at + 1, path_at - port_at - 1);
  const std::string state = state_override.empty() ? q["state"] : state_override;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  asio::ip::tcp::resolver resolver(io);
  asio::connect(socket, resolver.resolve("127.0.0.1", port));
  const std::string request = "GET " + redirect.substr(path_at) + "?code=c-" +
                              std::string(kSecretMark) + "&state=" + percent_encode(state) +
                              "&iss=" + percent_encode(std::string(kAs)) +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string reply;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(reply), ec);
  return reply;
}

TEST(OAuthLogin, TheBrowsersRedirectToTheLoopbackListenerCompletesTheLogin) {
  OAuthHarness h;
  h.fake.serve_standard();
  std::string url;
  std::string page;
  std::thread browser;
  auto done = run(h.io, h.client().login([&](std::string_view u) {
    url = std::string(u);
    browser = std::thread([&] { page = browse(url); });
  }));
  if (browser.joinable()) browser.join();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_THAT(url, HasSubstr(std::string(kAs) + "/authorize?"));
  EXPECT_THAT(page, HasSubstr("200 OK"));
  EXPECT_THAT(h.fake.authorize_queries, IsEmpty());  // the browser went, not sluice
  ASSERT_THAT(h.fake.token_forms, SizeIs(1));
  EXPECT_EQ(h.fake.token_forms[0]["code"], "c-" + std::string(kSecretMark));
  EXPECT_THAT(h.fake.token_forms[0]["redirect_uri"], HasSubstr("http://127.0.0.1:"));
  EXPECT_EQ(*h.client().cached_bearer(), h.fake.issued.at(0));
}

TEST(OAuthLogin, ARedirectWithAnotherStateIsRefused) {
  OAuthHarness h;
  h.fake.serve_standard();
  std::thread browser;
  auto done = run(h.io, h.client().login([&](std::string_view u) {
    browser = std::thread([url = std::string(u)] { browse(url, "forged"); });
  }));
  if (browser.joinable()) browser.join();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().failure, AuthFailure::authorization_failed);
  EXPECT_THAT(h.fake.token_forms, IsEmpty());
}

TEST(OAuthLogin, TheLoginEndsAtItsDeadlineWhenNoRedirectComes) {
  OAuthHarness h;
  h.options.login_wait = std::chrono::milliseconds(50);
  h.fake.serve_standard();
  auto done = run(h.io, h.client().login([](std::string_view) {}));
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().failure, AuthFailure::authorization_failed);
  EXPECT_THAT(done.error().message, HasSubstr("in time"));
}

}  // namespace
}  // namespace sluice::gateway::auth::test

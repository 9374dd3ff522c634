// The OAuth client's discovery and authorization request against an in-memory authorization
// server (fake_auth_server.hpp): where metadata is looked for and in which order, what is
// refused (issuer, resource, state), and what the authorization and token requests carry
// (PKCE S256, the resource byte for byte, the chosen scope).
#include "fake_auth_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace sluice::gateway::auth::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kPrmPath = std::string(kRs) + "/.well-known/oauth-protected-resource/mcp";
const std::string kPrmRoot = std::string(kRs) + "/.well-known/oauth-protected-resource";
const std::string kAsMeta = std::string(kAs) + "/.well-known/oauth-authorization-server";

TEST(OAuthDiscovery, WithoutAChallengeUrlThePathInsertedLocationComesFirstThenTheRoot) {
  OAuthHarness h;
  h.fake.serve_standard();
  h.fake.documents[kPrmRoot] = h.fake.documents[kPrmPath];
  h.fake.documents.erase(kPrmPath);
  auto token = h.unauthorized(401, "Bearer");
  ASSERT_TRUE(token) << token.error().message;
  const auto urls = h.fake.urls();
  ASSERT_GE(urls.size(), 3u);
  EXPECT_EQ(urls[0], kPrmPath);
  EXPECT_EQ(urls[1], kPrmRoot);
  EXPECT_EQ(urls[2], kAsMeta);
}

TEST(OAuthDiscovery, TheChallengesResourceMetadataUrlIsReadInsteadOfTheWellKnownOnes) {
  OAuthHarness h;
  h.fake.serve_standard();
  const std::string custom = std::string(kRs) + "/custom/metadata.json";
  h.fake.documents[custom] = h.fake.documents[kPrmPath];
  h.fake.documents.erase(kPrmPath);
  auto token = h.unauthorized(401, challenge_for(custom));
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_EQ(h.fake.urls().front(), custom);
}

TEST(OAuthDiscovery, AnIssuerWithAPathFallsBackThroughTheOpenIdLocationsInOrder) {
  OAuthHarness h;
  h.fake.issuer = std::string(kAs) + "/tenant1";
  h.fake.documents[kPrmPath] = h.fake.prm();
  h.fake.documents[std::string(kAs) + "/tenant1/.well-known/openid-configuration"] =
      h.fake.as_metadata();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_TRUE(token) << token.error().message;
  const auto urls = h.fake.urls();
  ASSERT_GE(urls.size(), 4u);
  EXPECT_EQ(urls[1], std::string(kAs) + "/.well-known/oauth-authorization-server/tenant1");
  EXPECT_EQ(urls[2], std::string(kAs) + "/.well-known/openid-configuration/tenant1");
  EXPECT_EQ(urls[3], std::string(kAs) + "/tenant1/.well-known/openid-configuration");
}

TEST(OAuthDiscovery, MetadataWhoseIssuerIsNotTheOneItWasFetchedForIsRefused) {
  OAuthHarness h;
  h.fake.serve_standard();
  h.fake.documents[kAsMeta] = [&] {
    FakeAuthServer other;
    other.issuer = "http://localhost:7999";
    return other.as_metadata();
  }();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::metadata_invalid);
  EXPECT_THAT(token.error().message, HasSubstr("issuer"));
  EXPECT_THAT(h.fake.authorize_queries, IsEmpty());
}

TEST(OAuthDiscovery, AnAuthorizationServerWithoutPkceS256IsRefused) {
  OAuthHarness h;
  h.fake.as_extra["code_challenge_methods_supported"] = boost::json::array{"plain"};
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_THAT(token.error().message, HasSubstr("S256"));
  EXPECT_THAT(h.fake.authorize_queries, IsEmpty());
}

TEST(OAuthDiscovery, AProtectedResourceThatNamesAnotherServerIsRefusedBeforeAuthorizing) {
  OAuthHarness h;
  h.fake.prm_resource = "https://evil.example.com/mcp";
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::metadata_invalid);
  EXPECT_THAT(h.fake.authorize_queries, IsEmpty());
}

TEST(OAuthAuthorization, ThePkceChallengeIsTheS256OfTheVerifierSentForTheToken) {
  OAuthHarness h;
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kPrmPath)));
  ASSERT_EQ(h.fake.authorize_queries.size(), 1u);
  ASSERT_EQ(h.fake.token_forms.size(), 1u);
  auto& query = h.fake.authorize_queries[0];
  auto& form = h.fake.token_forms[0];
  EXPECT_EQ(query["code_challenge_method"], "S256");
  EXPECT_EQ(form["code_verifier"].size(), 43u);
  EXPECT_EQ(query["code_challenge"], s256_challenge(form["code_verifier"]));
  EXPECT_EQ(form["grant_type"], "authorization_code");
  EXPECT_EQ(form["redirect_uri"], query["redirect_uri"]);
  EXPECT_EQ(query["response_type"], "code");
  EXPECT_GE(query["state"].size(), 22u);
}

TEST(OAuthAuthorization, TheResourceParameterIsThePublishedResourceByteForByte) {
  OAuthHarness h;
  h.fake.prm_resource = std::string(kRs);  // no path, and no "/" may be added
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kPrmPath)));
  EXPECT_EQ(h.fake.authorize_queries.at(0)["resource"], std::string(kRs));
  EXPECT_EQ(h.fake.token_forms.at(0)["resource"], std::string(kRs));
}

TEST(OAuthAuthorization, TheChallengesScopeIsAskedForRatherThanScopesSupported) {
  OAuthHarness h;
  h.fake.prm_scopes = {"mcp:basic", "mcp:read", "mcp:write"};
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kPrmPath, "mcp:basic")));
  EXPECT_EQ(h.fake.authorize_queries.at(0)["scope"], "mcp:basic");
}

TEST(OAuthAuthorization, WithoutAChallengeScopeEveryScopeSupportedIsAskedFor) {
  OAuthHarness h;
  h.fake.prm_scopes = {"mcp:write", "mcp:basic", "mcp:read"};
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kPrmPath)));
  EXPECT_EQ(h.fake.authorize_queries.at(0)["scope"], "mcp:basic mcp:read mcp:write");
}

TEST(OAuthAuthorization, NoScopeParameterIsSentWhenNothingNamesOne) {
  OAuthHarness h;
  h.fake.serve_standard();
  ASSERT_TRUE(h.unauthorized(401, challenge_for(kPrmPath)));
  EXPECT_FALSE(h.fake.authorize_queries.at(0).contains("scope"));
}

TEST(OAuthAuthorization, AResponseWithAnotherStateIsRefusedAndNoTokenIsRequested) {
  OAuthHarness h;
  h.fake.authorize = FakeAuthServer::Authorize::wrong_state;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::authorization_failed);
  EXPECT_THAT(token.error().message, HasSubstr("state"));
  EXPECT_THAT(h.fake.token_forms, IsEmpty());
}

TEST(OAuthAuthorization, AMissingIssWhenTheServerAdvertisesItIsRefused) {
  OAuthHarness h;
  h.fake.send_iss = false;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_THAT(token.error().message, HasSubstr("iss"));
  EXPECT_THAT(h.fake.token_forms, IsEmpty());
}

TEST(OAuthAuthorization, AServerThatShowsALoginPageNeedsTheOperatorsLogin) {
  OAuthHarness h;
  h.fake.authorize = FakeAuthServer::Authorize::login_page;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(token.error().message, HasSubstr("login"));
}

TEST(OAuthAuthorization, WithHeadlessAuthorizationOffA401IsAuthRequired) {
  OAuthHarness h;
  h.options.headless_authorization = false;
  h.fake.serve_standard();
  auto token = h.unauthorized(401, challenge_for(kPrmPath));
  ASSERT_FALSE(token);
  EXPECT_EQ(token.error().failure, AuthFailure::auth_required);
  EXPECT_THAT(h.fake.requests, IsEmpty());
}

}  // namespace
}  // namespace sluice::gateway::auth::test

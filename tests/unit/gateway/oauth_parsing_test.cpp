// The pure parts of the OAuth client: WWW-Authenticate Bearer challenges, PKCE and the other
// encodings, and the URL rules of discovery (well-known locations in the specified order,
// which resource identifiers cover a server URL, redirect responses).
#include "gateway/auth/challenge.hpp"
#include "gateway/auth/codec.hpp"
#include "gateway/auth/url.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace sluice::gateway::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(BearerChallenge, ReadsQuotedAndTokenParametersOfTheBearerChallenge) {
  auto c = parse_bearer_challenge(
      R"(Bearer error="insufficient_scope", scope="files:read files:write", )"
      R"(resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", )"
      R"(error_description="needs \"write\"")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->error, "insufficient_scope");
  EXPECT_TRUE(c->insufficient_scope());
  EXPECT_EQ(c->scope, "files:read files:write");
  EXPECT_EQ(c->resource_metadata, "https://mcp.example.com/.well-known/oauth-protected-resource");
  EXPECT_EQ(c->error_description, "needs \"write\"");
}

TEST(BearerChallenge, FindsTheBearerChallengeAmongSeveralAndIgnoresCaseOfNames) {
  auto c = parse_bearer_challenge(
      R"(Basic realm="x", Newauth realm="apps", type=1, BEARER Scope=read, ERROR=invalid_token)");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scope, "read");
  EXPECT_EQ(c->error, "invalid_token");
  EXPECT_FALSE(c->insufficient_scope());
}

TEST(BearerChallenge, ABareBearerSchemeIsAChallengeWithoutParameters) {
  auto c = parse_bearer_challenge("Bearer");
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->scope.has_value());
  EXPECT_FALSE(c->resource_metadata.has_value());
}

TEST(BearerChallenge, ABearerChallengeAfterAToken68CredentialIsFound) {
  auto c = parse_bearer_challenge(R"(Basic dXNlcjpwYXNz==, Bearer scope="a")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scope, "a");
}

TEST(BearerChallenge, NoBearerOrAMalformedHeaderGivesNothing) {
  EXPECT_FALSE(parse_bearer_challenge(R"(Basic realm="x")").has_value());
  EXPECT_FALSE(parse_bearer_challenge("").has_value());
  EXPECT_FALSE(parse_bearer_challenge(R"(Bearer scope="unterminated)").has_value());
  EXPECT_FALSE(parse_bearer_challenge(R"(Bearer scope="a" error="b")").has_value());
}

TEST(Pkce, TheS256ChallengeIsTheBase64UrlOfTheVerifiersSha256) {
  // RFC 7636 Appendix B.
  EXPECT_EQ(s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(Pkce, VerifiersAre43UrlSafeCharactersAndNeverRepeat) {
  const std::string a = random_urlsafe(32);
  const std::string b = random_urlsafe(32);
  EXPECT_EQ(a.size(), 43u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
}

TEST(Codec, Base64PadsAndBase64UrlDoesNot) {
  EXPECT_EQ(base64("client:secret"), "Y2xpZW50OnNlY3JldA==");
  EXPECT_EQ(base64url("\xfb\xff"), "-_8");
  EXPECT_EQ(form_encode({{"a b", "c&d=e/é"}}), "a%20b=c%26d%3De%2F%C3%A9");
}

TEST(Codec, ScopesSplitOnSpacesIntoASetAndJoinSorted) {
  EXPECT_EQ(join_scopes(split_scopes("  write read  write ")), "read write");
  EXPECT_TRUE(split_scopes("").empty());
}

TEST(DiscoveryUrls, TheProtectedResourceIsLookedForPathInsertedFirstThenAtTheRoot) {
  EXPECT_THAT(
      protected_resource_urls("https://MCP.example.com:8443/public/mcp?x=1"),
      ElementsAre("https://mcp.example.com:8443/.well-known/oauth-protected-resource/public/mcp",
                  "https://mcp.example.com:8443/.well-known/oauth-protected-resource"));
  EXPECT_THAT(protected_resource_urls("https://mcp.example.com/"),
              ElementsAre("https://mcp.example.com/.well-known/oauth-protected-resource"));
}

TEST(DiscoveryUrls, AnIssuerWithAPathIsLookedForInTheSpecifiedOrder) {
  EXPECT_THAT(auth_server_metadata_urls("https://auth.example.com/tenant1"),
              ElementsAre("https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                          "https://auth.example.com/.well-known/openid-configuration/tenant1",
                          "https://auth.example.com/tenant1/.well-known/openid-configuration"));
  EXPECT_THAT(auth_server_metadata_urls("https://auth.example.com"),
              ElementsAre("https://auth.example.com/.well-known/oauth-authorization-server",
                          "https://auth.example.com/.well-known/openid-configuration"));
}

TEST(ResourceIdentity, AResourceCoversItsOwnUrlAndTheUrlsBelowItOnly) {
  EXPECT_TRUE(resource_covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
  EXPECT_TRUE(resource_covers("https://mcp.example.com", "https://mcp.example.com/mcp"));
  EXPECT_TRUE(resource_covers("https://MCP.example.com:443/", "https://mcp.example.com/mcp/"));
  EXPECT_FALSE(resource_covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp"));
  EXPECT_FALSE(resource_covers("https://mcp.example.com/mc", "https://mcp.example.com/mcp"));
  EXPECT_FALSE(resource_covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp"));
  EXPECT_FALSE(resource_covers("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp"));
  EXPECT_FALSE(resource_covers("https://mcp.example.com/mcp#x", "https://mcp.example.com/mcp"));
}

TEST(Endpoints, OnlyHttpsOrLoopbackHttpEndpointsAreAccepted) {
  EXPECT_TRUE(is_acceptable_endpoint("https://auth.example.com/token"));
  EXPECT_TRUE(is_acceptable_endpoint("http://localhost:9000/token"));
  EXPECT_TRUE(is_acceptable_endpoint("http://127.0.0.1/token"));
  EXPECT_FALSE(is_acceptable_endpoint("http://auth.example.com/token"));
  EXPECT_FALSE(is_acceptable_endpoint("ftp://auth.example.com/token"));
  EXPECT_FALSE(is_acceptable_endpoint("/token"));
}

TEST(Redirects, ARedirectToTheRedirectUriGivesItsDecodedQuery) {
  auto params = redirect_params("http://127.0.0.1:5555/callback?code=a%2Fb&state=s",
                                "http://127.0.0.1:5555/callback");
  ASSERT_TRUE(params.has_value());
  EXPECT_THAT(*params, ElementsAre(Pair("code", "a/b"), Pair("state", "s")));
  EXPECT_FALSE(
      redirect_params("http://127.0.0.1:5556/callback?code=a", "http://127.0.0.1:5555/callback"));
  EXPECT_FALSE(
      redirect_params("https://evil.example/callback?code=a", "http://127.0.0.1:5555/callback"));
}

TEST(Redirects, ALoopbackRedirectUriNamesItsPortAndPath) {
  auto t = loopback_target("http://127.0.0.1:4321/oauth/cb");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->port, 4321);
  EXPECT_EQ(t->path, "/oauth/cb");
  EXPECT_FALSE(loopback_target("https://127.0.0.1:4321/cb").has_value());
  EXPECT_FALSE(loopback_target("http://example.com:4321/cb").has_value());
}

}  // namespace
}  // namespace sluice::gateway::auth

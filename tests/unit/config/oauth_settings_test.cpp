// A remote server entry's "oauth" object: every field read, `${VAR}` in clientSecret like in
// headers (a missing variable named, never a value), and value-free refusals of what cannot
// be used (a non-loopback redirect URI, a metadata URL that is not https, an unknown key).
#include "config/mcp_json.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kOauthSettingsFile = "/projects/app/.mcp.json";

const RemoteServer& remote_of(const ConfigFile& file) {
  return std::get<RemoteServer>(file.servers.at(0).transport);
}

TEST(OAuthSettings, EveryFieldOfTheOAuthObjectIsRead) {
  auto file = parse_text(R"({"mcpServers": {"r": {"type": "http", "url": "https://h/mcp",
      "oauth": {"clientId": "id", "clientSecret": "${SECRET}", "scopes": ["a", "b:c"],
                "clientMetadataUrl": "https://sluice.example/client.json",
                "redirectUri": "http://127.0.0.1:4000/callback", "callbackPort": 4000}}}})",
                         kOauthSettingsFile, Origin::user,
                         [](std::string_view name) -> std::optional<std::string> {
                           if (name == "SECRET") return "s3cr3t";
                           return std::nullopt;
                         });
  ASSERT_TRUE(file) << file.error().message;
  const RemoteServer& r = remote_of(*file);
  ASSERT_TRUE(r.oauth.has_value());
  EXPECT_EQ(r.oauth->client_id, "id");
  EXPECT_EQ(r.oauth->client_secret, "s3cr3t");
  EXPECT_THAT(r.oauth->scopes, ElementsAre("a", "b:c"));
  EXPECT_EQ(r.oauth->client_metadata_url, "https://sluice.example/client.json");
  EXPECT_EQ(r.oauth->redirect_uri, "http://127.0.0.1:4000/callback");
  EXPECT_EQ(r.oauth->callback_port, 4000);
}

TEST(OAuthSettings, AnEntryWithoutOAuthHasNone) {
  auto file = parse_text(R"({"mcpServers": {"r": {"url": "https://h/mcp"}}})", kOauthSettingsFile,
                         Origin::user, EnvLookup{});
  ASSERT_TRUE(file);
  EXPECT_FALSE(remote_of(*file).oauth.has_value());
  EXPECT_TRUE(file->warnings.empty());
}

TEST(OAuthSettings, AnUnsetSecretVariableIsNamedAsMissing) {
  auto file = parse_text(R"({"mcpServers": {"r": {"url": "https://h/mcp",
      "oauth": {"clientId": "id", "clientSecret": "${NOPE}"}}}})",
                         kOauthSettingsFile, Origin::user, EnvLookup{});
  ASSERT_TRUE(file);
  EXPECT_THAT(file->servers.at(0).missing_variables, ElementsAre("NOPE"));
}

std::string refusal(std::string_view oauth) {
  auto file = parse_text(std::string(R"({"mcpServers": {"r": {"url": "https://h/mcp", "oauth": )") +
                             std::string(oauth) + "}}}",
                         kOauthSettingsFile, Origin::user, EnvLookup{});
  EXPECT_FALSE(file);
  return file ? std::string() : file.error().message;
}

TEST(OAuthSettings, WhatCannotBeUsedIsRefusedWithItsPathAndNeverItsValue) {
  EXPECT_THAT(refusal(R"({"redirectUri": "https://evil.example/cb"})"),
              HasSubstr("oauth.redirectUri"));
  EXPECT_THAT(refusal(R"({"redirectUri": "https://evil.example/cb"})"), Not(HasSubstr("evil")));
  EXPECT_THAT(refusal(R"({"clientMetadataUrl": "http://sluice.example/c.json"})"),
              HasSubstr("not an https:// URL"));
  EXPECT_THAT(refusal(R"({"scopes": ["a b"]})"), HasSubstr("oauth.scopes[0]"));
  EXPECT_THAT(refusal(R"({"callbackPort": 70000})"), HasSubstr("oauth.callbackPort"));
  EXPECT_THAT(refusal(R"({"clientSecret": "x"})"), HasSubstr("without a clientId"));
  EXPECT_THAT(refusal(R"({"clientid": "typo"})"), HasSubstr("a key sluice does not know"));
  EXPECT_THAT(refusal(R"({"clientid": "typo"})"), Not(HasSubstr("typo")));
  EXPECT_THAT(refusal(R"("id")"), HasSubstr("expected an object"));
}

}  // namespace
}  // namespace sluice::config

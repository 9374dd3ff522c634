// Redaction of secrets in tool results and output caps (gateway/policy/): the screen over the
// raw bytes, each built-in pattern, the operator's patterns, and the cut at a UTF-8 boundary.
#include "gateway/policy/redactor.hpp"
#include "gateway/policy/result_guard.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway {
namespace {

namespace bj = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string repeat(std::string_view unit, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += unit;
  return out;
}

// One sample per built-in label (fake credentials of each format).
std::vector<std::pair<std::string, std::string>> samples() {
  return {
      {"private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + repeat("Ab", 30) +
                          "\n-----END RSA PRIVATE KEY-----"},
      {"authorization-header", "Authorization: Basic dXNlcjpwYXNzd29yZA=="},
      {"bearer-token", "Bearer abcDEF123456.ghiJKL-789"},
      {"aws-access-key", "AKIA" + repeat("Z7", 8)},
      {"github-token", "ghp_" + repeat("a1B2", 9)},
      {"github-token", "github_pat_" + repeat("x9", 15)},
      {"gitlab-token", "glpat-" + repeat("q", 20)},
      {"slack-token", "xoxb-1234567890-abcdef"},
      {"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"},
      {"google-api-key", "AIza" + repeat("k", 35)},
      {"stripe-key", "sk_live_" + repeat("4eC3", 6)},
      {"api-key", "sk-ant-" + repeat("Zz9_", 9)},
      {"npm-token", "npm_" + repeat("n", 36)},
  };
}

TEST(Redactor, EachBuiltInPatternIsReplacedByItsLabel) {
  Redactor r(config::RedactSettings{});
  for (const auto& [label, secret] : samples()) {
    std::string text = "before " + secret + " after";
    EXPECT_TRUE(r.may_hold_secret(bj::serialize(bj::value(text)))) << label;
    EXPECT_EQ(r.redact(text), 1u) << label;
    EXPECT_EQ(text, "before [REDACTED:" + label + "] after") << label;
  }
}

// The screen reads 16 bytes at a time, the last few byte by byte: a secret is seen wherever
// it starts.
TEST(Redactor, TheScreenSeesASecretAtEveryOffset) {
  Redactor r(config::RedactSettings{});
  for (const auto& [label, secret] : samples()) {
    for (std::size_t offset = 0; offset < 40; ++offset) {
      const std::string prefix = repeat("w", offset);
      EXPECT_TRUE(r.may_hold_secret(bj::serialize(bj::value(prefix + secret + " after"))))
          << label << " after " << prefix.size() << " bytes";
    }
  }
  const std::string escaped = R"("x\u0067hp_)" + repeat("a1B2", 9) + "\"";
  EXPECT_TRUE(r.may_hold_secret(escaped));
  EXPECT_TRUE(r.may_hold_secret(escaped.substr(0, 1) + escaped.substr(2)));
}

TEST(Redactor, OrdinaryTextIsNotTouchedAndPassesTheScreen) {
  Redactor r(config::RedactSettings{});
  std::string text =
      "The bearer of this note asks: is ghp_ a prefix? The sky is blue; eyJ alone is not a "
      "token, nor is AKIA1 or sk-short. -----BEGIN CERTIFICATE-----";
  std::string json = bj::serialize(bj::value(text));
  EXPECT_EQ(r.redact(text), 0u);
  const std::string plain = R"({"content":[{"type":"text","text":"hello, world: 42 results"}]})";
  EXPECT_FALSE(r.may_hold_secret(plain));
}

TEST(Redactor, AnEscapedAsciiCharacterSendsTheResultToTheSlowPath) {
  Redactor r(config::RedactSettings{});
  // "ghp_..." spelled with \u0067 for the g: the raw bytes hold no literal.
  const std::string json = R"({"text":"\u0067hp_)" + repeat("a1B2", 9) + R"("})";
  EXPECT_TRUE(r.may_hold_secret(json));
  auto filtered = filter_result(json, std::nullopt, r, 64);
  ASSERT_FALSE(filtered.has_value());  // not a CallToolResult's content: nothing to redact
  const std::string result =
      R"({"content":[{"type":"text","text":"\u0067hp_)" + repeat("a1B2", 9) + R"("}]})";
  filtered = filter_result(result, std::nullopt, r, 64);
  ASSERT_TRUE(filtered.has_value());
  EXPECT_EQ(filtered->redactions, 1u);
  EXPECT_THAT(filtered->json, HasSubstr("[REDACTED:github-token]"));
}

TEST(Redactor, OperatorPatternsAreScreenedAndLabelledByTheirPosition) {
  config::RedactSettings settings;
  settings.built_in = false;
  settings.patterns = {"never_[0-9]+", "acme_[0-9a-f]{8}"};
  Redactor r(settings);
  EXPECT_TRUE(r.may_hold_secret(R"("key acme_0123abcd here")"));
  EXPECT_FALSE(r.may_hold_secret(R"("ghp_)" + repeat("a1B2", 9) + R"(")"));
  std::string text = "key acme_0123abcd here";
  EXPECT_EQ(r.redact(text), 1u);
  EXPECT_EQ(text, "key [REDACTED:pattern-2] here");
}

TEST(Redactor, WithBuiltInsOffAndNoPatternsItIsEmpty) {
  config::RedactSettings settings;
  settings.built_in = false;
  EXPECT_TRUE(Redactor(settings).empty());
  EXPECT_FALSE(Redactor(config::RedactSettings{}).empty());
}

TEST(ResultFilter, RedactsTextItemsEmbeddedResourcesAndStructuredStrings) {
  Redactor r(config::RedactSettings{});
  const std::string token = "ghp_" + repeat("a1B2", 9);
  bj::object result{
      {"content", bj::array{bj::object{{"type", "text"}, {"text", "t=" + token}},
                            bj::object{{"type", "resource"},
                                       {"resource", bj::object{{"uri", "x:a"}, {"text", token}}}},
                            bj::object{{"type", "image"}, {"data", "AAAA"}}}},
      {"structuredContent",
       bj::object{{"nested", bj::array{bj::object{{"k", "AKIA" + repeat("Z7", 8)}}}}, {"n", 1}}}};
  auto filtered = filter_result(bj::serialize(result), std::nullopt, r, 64);
  ASSERT_TRUE(filtered.has_value());
  EXPECT_EQ(filtered->redactions, 3u);
  EXPECT_THAT(filtered->json, Not(HasSubstr(token)));
  EXPECT_THAT(filtered->json, Not(HasSubstr("AKIAZ7")));
  bj::value out = bj::parse(filtered->json);
  EXPECT_EQ(out.at("content").at(0).at("text"), "t=[REDACTED:github-token]");
  EXPECT_EQ(out.at("content").at(1).at("resource").at("text"), "[REDACTED:github-token]");
  EXPECT_EQ(out.at("structuredContent").at("nested").at(0).at("k"), "[REDACTED:aws-access-key]");
}

TEST(ResultFilter, AResultWithNothingToDoIsLeftAsItCame) {
  Redactor r(config::RedactSettings{});
  const std::string result = R"({"content":[{"type":"text","text":"short"}],"n":1.0})";
  EXPECT_FALSE(filter_result(result, 1024, r, 64).has_value());
}

TEST(ResultFilter, TextOverTheCapIsCutAtAUtf8BoundaryAndSaysHowMuchWasCut) {
  config::RedactSettings off;
  off.built_in = false;
  Redactor r(off);
  // 300 bytes of 'a', then "é" (2 bytes) straddling the cap of 301, then more.
  std::string text = repeat("a", 300) + "\xC3\xA9" + repeat("b", 98);
  bj::object result{{"content", bj::array{bj::object{{"type", "text"}, {"text", text}},
                                          bj::object{{"type", "text"}, {"text", "later"}},
                                          bj::object{{"type", "image"}, {"data", "AAAA"}}}}};
  auto filtered = filter_result(bj::serialize(result), 301, r, 64);
  ASSERT_TRUE(filtered.has_value());
  EXPECT_EQ(filtered->text_bytes, 405u);
  EXPECT_EQ(filtered->omitted_bytes, 105u);
  bj::value out = bj::parse(filtered->json);  // valid JSON, so valid UTF-8
  const bj::array& content = out.at("content").as_array();
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(std::string(content[0].at("text").as_string()), repeat("a", 300));
  EXPECT_EQ(content[1].at("type"), "image");
  EXPECT_EQ(content[2].at("text"),
            "[sluice: output cut: 105 of 405 bytes omitted (maxOutputBytes 301)]");
}

TEST(ResultFilter, SecretsAreRedactedBeforeTheCutSoNoHalfSecretSurvives) {
  Redactor r(config::RedactSettings{});
  const std::string token = "ghp_" + repeat("a1B2", 9);
  std::string text = repeat("x", 289) + " " + token + " " + repeat("y", 100);
  bj::object result{{"content", bj::array{bj::object{{"type", "text"}, {"text", text}}}}};
  auto filtered = filter_result(bj::serialize(result), 300, r, 64);
  ASSERT_TRUE(filtered.has_value());
  EXPECT_EQ(filtered->redactions, 1u);
  EXPECT_THAT(filtered->json, Not(HasSubstr("ghp_a1")));
}

}  // namespace
}  // namespace sluice::gateway

// `pattern` is ECMA-262 syntax; the validator runs it with RE2 after rewriting the spellings
// the two differ in. Each test drives one rewrite through a compiled schema.
#include "schema/schema.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace sluice::schema {
namespace {

namespace bj = boost::json;

// A schema whose only keyword is `pattern`, written as JSON text (escapes and all); nullopt,
// and a test failure, when it does not compile.
std::optional<Schema> pattern_schema(std::string_view pattern_json) {
  auto compiled = Schema::compile(bj::parse(R"({"pattern": )" + std::string(pattern_json) + "}"));
  if (!compiled) {
    ADD_FAILURE() << pattern_json << ": " << compiled.error().message;
    return std::nullopt;
  }
  return *compiled;
}

bool matches(const std::optional<Schema>& schema, std::string_view text) {
  return schema && schema->is_valid(bj::value(bj::string_view(text.data(), text.size())));
}

constexpr std::string_view kGrinning = "\xF0\x9F\x98\x80";   // U+1F600, outside the BMP
constexpr std::string_view kNoBreakSpace = "\xC2\xA0";       // U+00A0
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";  // U+FEFF

// "a", then `middle`, then "b".
std::string a_b(std::string_view middle) { return "a" + std::string(middle) + "b"; }

TEST(EcmaPattern, ASurrogatePairEscapeMatchesTheOneCharacterItEncodes) {
  auto schema = pattern_schema(R"("^\\uD83D\\uDE00$")");
  EXPECT_TRUE(matches(schema, kGrinning));
  EXPECT_FALSE(matches(schema, "x"));
}

TEST(EcmaPattern, ABracedCodePointEscapeMatchesThatCharacter) {
  auto schema = pattern_schema(R"("^\\u{1F600}$")");
  EXPECT_TRUE(matches(schema, kGrinning));
  EXPECT_FALSE(matches(schema, "x"));
}

TEST(EcmaPattern, AFourDigitEscapeMatchesThatCharacter) {
  auto schema = pattern_schema(R"("^\\u0041\\u00e9$")");
  EXPECT_TRUE(matches(schema, "A\xC3\xA9"));
  EXPECT_FALSE(matches(schema, "Ae"));
}

TEST(EcmaPattern, AControlEscapeMatchesItsControlCharacter) {
  auto schema = pattern_schema(R"("^a\\cJ\\cZb$")");
  EXPECT_TRUE(matches(schema, a_b("\n\x1A")));
  EXPECT_FALSE(matches(schema, a_b("\t\x1A")));
}

TEST(EcmaPattern, LongUnicodePropertyNamesAreUnderstood) {
  auto schema = pattern_schema(R"("^\\p{Letter}+\\P{Letter}$")");
  EXPECT_TRUE(matches(schema, "abc1"));
  EXPECT_FALSE(matches(schema, "abcd"));
}

TEST(EcmaPattern, WhiteSpaceIncludesUnicodeSpacesInAndOutOfClasses) {
  auto outside = pattern_schema(R"("^a\\sb$")");
  EXPECT_TRUE(matches(outside, a_b(kNoBreakSpace)));
  EXPECT_TRUE(matches(outside, a_b(kByteOrderMark)));
  EXPECT_FALSE(matches(outside, "a-b"));
  auto inside = pattern_schema(R"("^a[\\s-]b$")");
  EXPECT_TRUE(matches(inside, a_b(kNoBreakSpace)));
  EXPECT_TRUE(matches(inside, "a-b"));
  auto negated = pattern_schema(R"("^a\\Sb$")");
  EXPECT_TRUE(matches(negated, "a-b"));
  EXPECT_FALSE(matches(negated, a_b(kNoBreakSpace)));
  auto negated_in_class = pattern_schema(R"("^a[\\S]b$")");
  EXPECT_TRUE(matches(negated_in_class, "a-b"));
  EXPECT_FALSE(matches(negated_in_class, "a b"));
}

TEST(EcmaPattern, AnEmptyClassMatchesNothingAndItsNegationAnything) {
  EXPECT_FALSE(matches(pattern_schema(R"("a[]")"), "ab"));
  auto any = pattern_schema(R"("^a[^]b$")");
  EXPECT_TRUE(matches(any, "a\nb"));
  EXPECT_TRUE(matches(any, "axb"));
}

TEST(EcmaPattern, NamedGroupsCompile) {
  auto schema = pattern_schema(R"("^(?<year>[0-9]{4})-(?<month>[0-9]{2})$")");
  EXPECT_TRUE(matches(schema, "2026-12"));
  EXPECT_FALSE(matches(schema, "26-12"));
}

}  // namespace
}  // namespace sluice::schema

#include "config/interpolate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sluice::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

EnvLookup env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

bool rejects_line_break(char c) { return c == '\n' || c == '\r'; }

TEST(Interpolate, TextWithoutReferencesIsUnchanged) {
  Expansion e = interpolate("plain $text {with} $ signs", env_of({}));
  EXPECT_EQ(e.text, "plain $text {with} $ signs");
  EXPECT_THAT(e.unset, IsEmpty());
  EXPECT_THAT(e.unusable, IsEmpty());
}

TEST(Interpolate, ReplacesEveryReferenceWithItsValue) {
  Expansion e = interpolate("Bearer ${TOKEN}/${A}${A}_${B_2}",
                            env_of({{"TOKEN", "t"}, {"A", "a"}, {"B_2", "b"}}));
  EXPECT_EQ(e.text, "Bearer t/aa_b");
  EXPECT_THAT(e.unset, IsEmpty());
}

TEST(Interpolate, DefaultAppliesWhenUnsetOrEmpty) {
  EnvLookup env = env_of({{"EMPTY", ""}, {"SET", "value"}});
  EXPECT_EQ(interpolate("${UNSET:-fallback}", env).text, "fallback");
  EXPECT_EQ(interpolate("${EMPTY:-fallback}", env).text, "fallback");
  EXPECT_EQ(interpolate("${SET:-fallback}", env).text, "value");
  EXPECT_EQ(interpolate("${UNSET:-}", env).text, "");
  EXPECT_THAT(interpolate("${UNSET:-fallback}", env).unset, IsEmpty());
}

TEST(Interpolate, DefaultIsLiteralTextUpToTheFirstClosingBrace) {
  Expansion e = interpolate("${UNSET:-${OTHER}}", env_of({{"OTHER", "other"}}));
  EXPECT_EQ(e.text, "${OTHER}");
  EXPECT_THAT(e.unset, IsEmpty());
}

TEST(Interpolate, UnsetWithoutDefaultBecomesEmptyAndIsReportedOnce) {
  Expansion e = interpolate("a${MISSING}b${MISSING}c${ALSO}", env_of({}));
  EXPECT_EQ(e.text, "abc");
  EXPECT_THAT(e.unset, ElementsAre("MISSING", "ALSO"));
}

TEST(Interpolate, SetButEmptyWithoutDefaultIsNotReported) {
  Expansion e = interpolate("x${EMPTY}y", env_of({{"EMPTY", ""}}));
  EXPECT_EQ(e.text, "xy");
  EXPECT_THAT(e.unset, IsEmpty());
}

TEST(Interpolate, MalformedReferencesStayLiteral) {
  EnvLookup env = env_of({{"VAR", "v"}});
  EXPECT_EQ(interpolate("$VAR", env).text, "$VAR");
  EXPECT_EQ(interpolate("${1}", env).text, "${1}");
  EXPECT_EQ(interpolate("${", env).text, "${");
  EXPECT_EQ(interpolate("${VAR", env).text, "${VAR");
  EXPECT_EQ(interpolate("${VAR:x}", env).text, "${VAR:x}");
  EXPECT_EQ(interpolate("${VAR:-unclosed", env).text, "${VAR:-unclosed");
  EXPECT_EQ(interpolate("${}", env).text, "${}");
  EXPECT_EQ(interpolate("$${VAR}", env).text, "$v");
}

TEST(Interpolate, RejectedValueIsDroppedAndReportedByName) {
  EnvLookup env = env_of({{"TOKEN", "abc\r\nInjected: yes"}});
  Expansion e = interpolate("Bearer ${TOKEN}", env, rejects_line_break);
  EXPECT_EQ(e.text, "Bearer ");
  EXPECT_THAT(e.unusable, ElementsAre("TOKEN"));
  EXPECT_THAT(e.unset, IsEmpty());

  Expansion with_default = interpolate("${TOKEN:-none}", env, rejects_line_break);
  EXPECT_EQ(with_default.text, "none");
  EXPECT_THAT(with_default.unusable, ElementsAre("TOKEN"));
}

TEST(Interpolate, EmptyLookupMeansNothingIsSet) {
  Expansion e = interpolate("${HOME}", EnvLookup{});
  EXPECT_EQ(e.text, "");
  EXPECT_THAT(e.unset, ElementsAre("HOME"));
}

TEST(Interpolate, LooksUpExactlyTheReferencedNames) {
  std::vector<std::string> asked;
  EnvLookup env = [&](std::string_view name) -> std::optional<std::string> {
    asked.emplace_back(name);
    return std::nullopt;
  };
  interpolate("${A}${B:-x}$C ${1}", env);
  EXPECT_THAT(asked, ElementsAre("A", "B"));
}

}  // namespace
}  // namespace sluice::config

// core::ascii: only A-Z fold (UTF-8 bytes and the rest stay), whole-text and prefix equality
// in any case, and a search for a lower-case needle in text of any case.
#include "core/ascii.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sluice::core::ascii {
namespace {

TEST(Ascii, OnlyTheLettersAToZFold) {
  EXPECT_EQ(lowered("Content-Type: Application/JSON; Charset=UTF-8"),
            "content-type: application/json; charset=utf-8");
  // "Ä" in UTF-8 and the bytes around the letters ('@' before 'A', '[' after 'Z').
  EXPECT_EQ(lowered("\xC3\x84@[Z"), "\xC3\x84@[z");
  static_assert(to_lower('Q') == 'q' && to_lower('q') == 'q' && to_lower('@') == '@');
  static_assert(to_lower(static_cast<unsigned char>(0xC4)) == 0xC4);
}

TEST(Ascii, EqualityAndPrefixesIgnoreCaseButNotLength) {
  EXPECT_TRUE(iequals("Bearer", "bEARER"));
  EXPECT_FALSE(iequals("Bearer", "Bearer "));
  EXPECT_FALSE(iequals("bearer", "bearen"));
  EXPECT_TRUE(starts_with_in_any_case("HTTPS://Example", "https://"));
  EXPECT_FALSE(starts_with_in_any_case("http:/", "http://"));
  EXPECT_FALSE(starts_with_in_any_case("xhttp://", "http://"));
}

TEST(Ascii, ALowerCaseNeedleIsFoundInTextOfAnyCase) {
  EXPECT_TRUE(contains_in_any_case("Text/HTML, Text/Event-Stream", "text/event-stream"));
  EXPECT_TRUE(contains_in_any_case("APPLICATION/JSON", "application/json"));
  EXPECT_FALSE(contains_in_any_case("application/jso", "application/json"));
  EXPECT_FALSE(contains_in_any_case("text/event_stream", "text/event-stream"));
  EXPECT_TRUE(contains_in_any_case("anything", ""));
}

}  // namespace
}  // namespace sluice::core::ascii

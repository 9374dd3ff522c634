#include "core/json.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::core::json {
namespace {
namespace bj = boost::json;

const ParseLimits kLimits{64};

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::optional<ParseProblem> strict_problem(std::string_view text,
                                           const ParseLimits& limits = kLimits) {
  auto r = parse_strict(text, limits);
  if (r) return std::nullopt;
  return r.error().problem;
}

// --- parse_strict ---

TEST(JsonParseStrict, AValidDocumentBecomesItsDom) {
  auto r = parse_strict(R"({"a":[1,"x",{"b":null}],"c":true})", kLimits);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at("a").at(1).as_string(), "x");
  EXPECT_TRUE(r->at("a").at(2).at("b").is_null());
  EXPECT_TRUE(r->at("c").as_bool());
}

// A DOM in an arena shares it with its values: what is copied or moved out of it stays valid
// after the DOM is gone (under ASan, a use after free otherwise).
TEST(JsonParseStrict, AValueTakenOutOfTheDomOutlivesIt) {
  const std::string long_text(1000, 'x');
  std::optional<bj::value> copied, moved;
  {
    auto dom =
        parse_strict(R"({"a":{"key with a long name":[1,2,")" + long_text + R"("]},"b":{"c":"d"}})",
                     {}, Storage::arena);
    ASSERT_TRUE(dom);
    copied.emplace(dom->at("a"));
    moved.emplace(std::move(dom->as_object()["b"]));
  }
  EXPECT_EQ(copied->at("key with a long name").at(2).as_string(), long_text);
  EXPECT_EQ(moved->at("c").as_string(), "d");
}

TEST(JsonParseStrict, ScalarsAndEmptyContainersAreDocuments) {
  for (std::string_view text : {"1", "\"s\"", "null", "{}", "[]", " [ ] "}) {
    EXPECT_TRUE(parse_strict(text, kLimits)) << text;
  }
}

TEST(JsonParseStrict, DuplicateKeysAtTheTopAreRejected) {
  EXPECT_EQ(strict_problem(R"({"a":1,"a":2})"), ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"a":1,"b":2,"a":1})"), ParseProblem::duplicate_key);
}

TEST(JsonParseStrict, DuplicateKeysDeepInsideAreRejected) {
  EXPECT_EQ(strict_problem(R"({"a":{"b":{"c":{"d":1,"d":1}}}})"), ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"x":1,"a":[[{"k":[],"k":{}}]],"y":2})"),
            ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"([{},{"z":1},{"q":1,"q":2}])"), ParseProblem::duplicate_key);
}

TEST(JsonParseStrict, ALargeObjectIsCheckedForDuplicatesToo) {
  std::string distinct = "{";
  for (int i = 0; i < 40; ++i) {
    distinct += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  }
  EXPECT_TRUE(parse_strict(distinct + "}", kLimits));
  EXPECT_EQ(strict_problem(distinct + R"(,"k17":0})"), ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"inner":)" + distinct + R"(,"k0":1},"z":1})"),
            ParseProblem::duplicate_key);
}

TEST(JsonParseStrict, DuplicateKeysSpelledWithDifferentEscapesAreRejected) {
  EXPECT_EQ(strict_problem(R"({"a":1,"\u0061":2})"), ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"\u00e9":1,"é":2})"), ParseProblem::duplicate_key);
  // Keys decoded from escapes are compared as decoded, however many there are in the document.
  EXPECT_EQ(strict_problem(R"({"\u0061x":1,"b":{"\u0063":1,"\u0064":2},"\u0061x":2})"),
            ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"\u0061":{"\u0062":1,"b":2}})"), ParseProblem::duplicate_key);
  auto distinct = parse_strict(R"({"\u0061":{"\u0062":1,"\u0063":2},"\u0062":3,"a\n":4})", kLimits);
  ASSERT_TRUE(distinct);
  EXPECT_EQ(distinct->at("a").at("c"), 2);
  EXPECT_EQ(distinct->at("a\n"), 4);
}

// Regression test; the bug it pins (now fixed): duplicates are found by comparing, in post-order,
// each object's parsed member count with its size in the DOM. The discarded duplicate's value is
// not in the DOM, so its nested objects shift the sequence; when the counts happen to line up again
// the duplicate passes. Input {"a":{"x":1},"a":{"y":1}}: expected duplicate_key, actual: accepted
// as {"a":{"y":1}}.
TEST(JsonParseStrict, DuplicateKeysWhoseFirstValueHoldsAnObjectAreRejected) {
  EXPECT_EQ(strict_problem(R"({"a":{"x":1},"a":{"y":1}})"), ParseProblem::duplicate_key);
  EXPECT_EQ(strict_problem(R"({"p":{"a":{"u":{"v":{}},"b":1,"c":1,"d":1},"a":{}},"q":1,"r":1})"),
            ParseProblem::duplicate_key);
}

TEST(JsonParseStrict, TheSameKeyInDifferentObjectsIsNotADuplicate) {
  EXPECT_TRUE(parse_strict(R"({"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]})", kLimits));
  EXPECT_TRUE(parse_strict(R"([{"k":1},{"k":1}])", kLimits));
}

TEST(JsonParseStrict, NestingUpToTheLimitIsAccepted) {
  EXPECT_TRUE(parse_strict(nested_arrays(4), ParseLimits{4}));
  EXPECT_TRUE(parse_strict(R"({"a":{"b":{"c":[]}}})", ParseLimits{4}));
}

TEST(JsonParseStrict, NestingBeyondTheLimitIsTooDeep) {
  EXPECT_EQ(strict_problem(nested_arrays(5), ParseLimits{4}), ParseProblem::too_deep);
  EXPECT_EQ(strict_problem(R"({"a":{"b":{"c":{"d":1}}}})", ParseLimits{3}), ParseProblem::too_deep);
  auto r = parse_strict(nested_arrays(5), ParseLimits{4});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find('4'), std::string::npos) << r.error().message;
}

TEST(JsonParseStrict, AHugelyNestedDocumentIsRefusedWithoutRecursing) {
  EXPECT_EQ(strict_problem(nested_arrays(1000000)), ParseProblem::too_deep);
}

TEST(JsonParseStrict, SyntaxErrorsAreReportedAsSyntax) {
  for (std::string_view text : {"", "  ", "{", "{\"a\":}", "[1,]", "tru", "'a'", "{\"a\" 1}",
                                "\"\x01\"", "{\"a\":1,}", "01", "NaN"}) {
    EXPECT_EQ(strict_problem(text), ParseProblem::syntax) << text;
  }
}

TEST(JsonParseStrict, ErrorMessagesContainNoInputText) {
  for (std::string_view text :
       {R"({"SENTINELq7": SENTINELq7})", R"(["SENTINELq7",)", R"({"SENTINELq7":1,"SENTINELq7":2})",
        R"([[[[[["SENTINELq7"]]]]]])", R"(SENTINELq7)", "\"SENTINELq7\x7f\x02\""}) {
    auto r = parse_strict(text, ParseLimits{4});
    ASSERT_FALSE(r) << text;
    EXPECT_FALSE(r.error().message.empty());
    EXPECT_EQ(r.error().message.find("SENTINEL"), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find("q7"), std::string::npos) << r.error().message;
  }
}

// basic_parser::write_some stops after one complete value; what follows must be refused, not
// ignored (HEAD accepted {"a":1} x as {"a":1}).
TEST(JsonParseStrict, TextAfterTheDocumentIsASyntaxError) {
  for (std::string_view text : {R"({"a":1} x)", R"({"a":1}{"b":2})", R"([1]])", "1 2"}) {
    EXPECT_EQ(strict_problem(text), ParseProblem::syntax) << text;
    auto v = validate(text, kLimits);
    ASSERT_TRUE(v.has_value()) << text;
    EXPECT_EQ(v->problem, ParseProblem::syntax) << text;
  }
}

TEST(JsonParseStrict, TrailingWhitespaceIsAllowed) {
  EXPECT_TRUE(parse_strict("{\"a\":1} \r\n\t", kLimits));
  EXPECT_FALSE(validate("{\"a\":1} \r\n\t", kLimits).has_value());
}

// --- validate ---

TEST(JsonValidate, AcceptsWellFormedJsonIncludingDuplicateKeys) {
  EXPECT_FALSE(validate(R"({"a":[1,2,{"b":"}"}]})", kLimits).has_value());
  EXPECT_FALSE(validate(R"({"a":1,"a":2})", kLimits).has_value());
}

TEST(JsonValidate, SyntaxErrorIsSyntaxWithoutInputText) {
  auto v = validate(R"({"SENTINELq7":)", kLimits);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->problem, ParseProblem::syntax);
  EXPECT_EQ(v->message.find("SENTINEL"), std::string::npos) << v->message;
  EXPECT_TRUE(validate("", kLimits).has_value());
}

// Long strings are checked by validate's own bulk routine, not by Boost.JSON: it must accept
// and refuse exactly what Boost.JSON does, whatever the string holds and wherever it is.
bool boost_accepts(std::string_view text) {
  bj::error_code ec;
  bj::parse_options opt;
  opt.max_depth = kLimits.max_depth;
  bj::parse(text, ec, {}, opt);
  return !ec;
}

TEST(JsonValidate, LongStringsAreJudgedAsBoostJsonJudgesThem) {
  const std::string pad(300, 'x');  // not a hex digit: a short \u stays short
  // Each body is put in a long string (as a value, as a key, twice, in an array).
  const std::vector<std::pair<std::string, bool>> bodies = {
      {"", true},
      {R"(\" \\ \/ \b \f \n \r \t)", true},
      {R"(\u0041\u00e9\u20AC)", true},
      {R"(\ud83d\ude00)", true},                              // a surrogate pair
      {"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f", true},  // UTF-8 of 2, 3, 4 bytes; DEL
      {"\xef\xbf\xbf \xf4\x8f\xbf\xbf", true},                // U+FFFF, U+10FFFF
      {R"(\x)", false},                                       // not an escape
      {R"(\u12)", false},                                     // a short \u
      {R"(\u12g4)", false},                                   // not hex
      {R"(\ude00)", false},                                   // a lone trailing surrogate
      {R"(\ud83d)", false},                                   // a lone leading surrogate
      {R"(\ud83d\u0041)", false},  // a leading surrogate without its pair
      {"\x01", false},             // a raw control character
      {"\n", false},
      {"\xc0\xaf", false},          // overlong
      {"\xe0\x80\xaf", false},      // overlong
      {"\xed\xa0\x80", false},      // a surrogate in UTF-8
      {"\xf4\x90\x80\x80", false},  // past U+10FFFF
      {"\xf5\x80\x80\x80", false},
      {"\xc3", false},  // cut short
      {"\xe2\x82", false},
      {"\x80", false},  // a lone continuation byte
      {"\xff", false},
  };
  for (const auto& [body, valid] : bodies) {
    for (const std::string& s : {pad + body, body + pad, pad + body + pad}) {
      const std::string lit = "\"" + s + "\"";
      for (const std::string& text :
           {"{\"a\":" + lit + "}", "{" + lit + ":1}", "[" + lit + "," + lit + "]", lit,
            "{\"a\":" + lit + ",\"b\":[" + lit + "]}"}) {
        EXPECT_EQ(!validate(text, kLimits).has_value(), valid) << text.substr(0, 40);
        EXPECT_EQ(!validate(text, kLimits).has_value(), boost_accepts(text));
        // parse_strict decodes long values itself: the same DOM as Boost.JSON's.
        auto strict = parse_strict(text, kLimits);
        EXPECT_EQ(strict.has_value(), valid) << text.substr(0, 40);
        if (strict && valid) {
          EXPECT_EQ(*strict, bj::parse(text)) << text.substr(0, 40);
        }
      }
    }
  }
}

TEST(JsonValidate, ALongStringIsJudgedWhereverItsSpecialByteFalls) {
  // Plain bytes are passed over 32 or 16 at a time: a byte that needs a look is found at any
  // offset from the string's start (every alignment of both steps, and their ends).
  const std::vector<std::pair<std::string, bool>> specials = {
      {"\\n", true},   {"\\\"", true},  {"\xc3\xa9", true}, {"\x01", false},
      {"\x1f", false}, {"\x80", false}, {"\\q", false},     {"\"", false},
  };
  for (const auto& [special, valid] : specials) {
    for (std::size_t at = 0; at < 80; ++at) {
      const std::string text =
          "[\"" + std::string(at, 'x') + special + std::string(300, 'y') + "\"]";
      EXPECT_EQ(!validate(text, kLimits).has_value(), valid) << at << " " << special;
      EXPECT_EQ(parse_strict(text, kLimits).has_value(), valid) << at << " " << special;
    }
  }
}

TEST(JsonParseStrict, LongValuesAmongOthersLandInTheirPlaces) {
  const std::string a = std::string(300, 'a') + "\\n\\u00e9";
  const std::string b = "\\ud83d\\ude00" + std::string(400, 'b');
  const std::string c = std::string(256, 'c');
  const std::string text = R"(["x",")" + a + R"(",{"k":"v",")" + std::string(260, 'k') + R"(":")" +
                           b + R"(","e":""},"",")" + c + R"(",1,")" + c + "\"]";
  auto strict = parse_strict(text, kLimits);
  ASSERT_TRUE(strict);
  EXPECT_EQ(*strict, bj::parse(text));
  EXPECT_EQ(strict->at(1).as_string(), std::string(300, 'a') + "\n\xc3\xa9");
  // A duplicate key beside long values is still refused as one.
  const std::string dup = R"({"a":")" + a + R"(","a":")" + b + "\"}";
  auto refused = parse_strict(dup, kLimits);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().problem, ParseProblem::duplicate_key);
}

TEST(JsonValidate, AroundLongStringsTheDocumentIsStillChecked) {
  const std::string lit = "\"" + std::string(1000, 'x') + "\\n\"";
  for (const std::string& text :
       {"{\"a\":" + lit, "{\"a\":" + lit + "}}", "{\"a\" " + lit + "}", "{\"a\":" + lit + " x}",
        "[" + lit + lit + "]", "{\"a\":" + lit + "} x", "\"" + std::string(1000, 'x'),
        "{\"a\":tru" + lit + "}", nested_arrays(70) + lit}) {
    auto v = validate(text, kLimits);
    EXPECT_TRUE(v.has_value()) << text.substr(0, 40);
    EXPECT_FALSE(boost_accepts(text));
    EXPECT_FALSE(parse_strict(text, kLimits)) << text.substr(0, 40);
  }
  EXPECT_FALSE(validate("{\"a\":" + lit + ",\"b\":[" + lit + ",1.5e3,null]}", kLimits));
  // Depth counts with long strings inside.
  auto deep = validate("[[[[[" + lit + "]]]]]", ParseLimits{4});
  ASSERT_TRUE(deep.has_value());
  EXPECT_EQ(deep->problem, ParseProblem::too_deep);
}

TEST(JsonValidate, DepthIsBounded) {
  EXPECT_FALSE(validate(nested_arrays(4), ParseLimits{4}).has_value());
  auto v = validate(nested_arrays(5), ParseLimits{4});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->problem, ParseProblem::too_deep);
  auto huge = validate(nested_arrays(1000000), kLimits);
  ASSERT_TRUE(huge.has_value());
  EXPECT_EQ(huge->problem, ParseProblem::too_deep);
}

// --- member_span ---

TEST(JsonMemberSpan, FindsEachMemberByName) {
  std::string_view obj = R"({"a":1,"b":"x","c":null,"d":-1.5e3})";
  EXPECT_EQ(member_span(obj, "a"), "1");
  EXPECT_EQ(member_span(obj, "b"), "\"x\"");
  EXPECT_EQ(member_span(obj, "c"), "null");
  EXPECT_EQ(member_span(obj, "d"), "-1.5e3");
}

TEST(JsonMemberSpan, MatchesKeysAfterUnescaping) {
  EXPECT_EQ(member_span(R"({"\u0069d":5})", "id"), "5");
  EXPECT_EQ(member_span(R"({"a\"b":1,"a\\":2})", "a\"b"), "1");
  EXPECT_EQ(member_span(R"({"a\"b":1,"a\\":2})", "a\\"), "2");
  EXPECT_EQ(member_span(R"({"\u00e9":3})", "é"), "3");
}

TEST(JsonMemberSpan, SkipsNestedValuesHoldingBracesAndQuotes) {
  std::string_view obj =
      R"({"p":{"q":"}{\"]","r":[1,{"s":"]"},[]],"id":1},"t":"\\","u":[["}"]],"id":7})";
  EXPECT_EQ(member_span(obj, "id"), "7");
  EXPECT_EQ(member_span(obj, "p"), R"({"q":"}{\"]","r":[1,{"s":"]"},[]],"id":1})");
  EXPECT_EQ(member_span(obj, "t"), R"("\\")");
  EXPECT_EQ(member_span(obj, "u"), R"([["}"]])");
}

TEST(JsonMemberSpan, AQuoteEndsAStringOnlyAfterAnEvenRunOfBackslashes) {
  // Odd runs escape the quote, even runs are escaped backslashes before the closing quote.
  const std::string obj = R"({"a":"\\","b":"x\\\"y\"","c":"\\\\","d":"\"\"\"","e":"","f":1})";
  EXPECT_EQ(member_span(obj, "a"), R"("\\")");
  EXPECT_EQ(member_span(obj, "b"), R"("x\\\"y\"")");
  EXPECT_EQ(member_span(obj, "c"), R"("\\\\")");
  EXPECT_EQ(member_span(obj, "d"), R"("\"\"\"")");
  EXPECT_EQ(member_span(obj, "e"), R"("")");
  EXPECT_EQ(member_span(obj, "f"), "1");
  // A long string, so the search runs over many bytes before its quote.
  const std::string text(100000, 'x');
  EXPECT_EQ(member_span(R"({"s":")" + text + R"(\\","n":2})", "n"), "2");
}

TEST(JsonMemberSpan, ToleratesWhitespaceEverywhere) {
  std::string_view obj = " \n{ \"a\" :\t[ 1 , 2 ] ,\r\n \"b\" : true , \"c\":3 } \n";
  EXPECT_EQ(member_span(obj, "a"), "[ 1 , 2 ]");
  EXPECT_EQ(member_span(obj, "b"), "true");
  EXPECT_EQ(member_span(obj, "c"), "3");
}

TEST(JsonMemberSpan, AMissingKeyIsNotFound) {
  EXPECT_FALSE(member_span(R"({"a":1})", "b"));
  EXPECT_FALSE(member_span(R"({})", "a"));
  EXPECT_FALSE(member_span(R"({ })", "a"));
  EXPECT_FALSE(member_span(R"({"a":1})", "A"));
  EXPECT_FALSE(member_span(R"({"ab":1})", "a"));
}

TEST(JsonMemberSpan, KeysOfNestedObjectsAreNotMembers) {
  EXPECT_FALSE(member_span(R"({"p":{"id":1},"q":[{"id":2}],"r":"\"id\":3"})", "id"));
}

TEST(JsonMemberSpan, ANonObjectHasNoMembers) {
  for (std::string_view text : {R"([{"a":1}])", R"("a")", "1", "null", "", "  "}) {
    EXPECT_FALSE(member_span(text, "a")) << text;
  }
}

TEST(JsonMemberSpan, TheFirstOfDuplicateKeysIsReturned) {
  EXPECT_EQ(member_span(R"({"a":1,"a":2})", "a"), "1");
}

// --- trim ---

TEST(JsonTrim, RemovesJsonWhitespaceOnBothSides) {
  EXPECT_EQ(trim(" \t\r\n {\"a\" : 1} \n\r\t "), "{\"a\" : 1}");
  EXPECT_EQ(trim("x"), "x");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \n\t\r"), "");
}

TEST(JsonTrim, KeepsNonJsonWhitespace) {
  EXPECT_EQ(trim("\v1\f"), "\v1\f");
  EXPECT_EQ(trim("\xc2\xa0"
                 "1"),
            "\xc2\xa0"
            "1");
}

// --- quote ---

TEST(JsonQuote, ProducesAJsonStringThatDecodesToTheInput) {
  std::string all_ascii;
  for (int c = 0; c < 128; ++c) all_ascii.push_back(static_cast<char>(c));
  for (std::string s : {std::string(), std::string("plain"), std::string("a\"b\\c/d"),
                        std::string("line\nfeed\ttab\r\x01\x1f"), std::string("é漢😀"), all_ascii}) {
    std::string q = quote(s);
    ASSERT_GE(q.size(), 2u);
    EXPECT_EQ(q.front(), '"');
    EXPECT_EQ(q.back(), '"');
    bj::error_code ec;
    bj::value v = bj::parse(q, ec);
    ASSERT_FALSE(ec) << q;
    ASSERT_TRUE(v.is_string());
    EXPECT_EQ(std::string_view(v.get_string()), s);
  }
}

TEST(JsonQuote, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote("\n"), R"("\n")");
  std::string q = quote(std::string("\x01\x1b", 2));
  for (char c : q) EXPECT_GE(static_cast<unsigned char>(c), 0x20u) << q;
}

TEST(JsonQuote, WritesTheSameBytesAsBoostJsonsSerializer) {
  // Every byte alone, then plain text, UTF-8, invalid UTF-8 and escapes mixed in one string:
  // the quick path for plain strings and the serializer must agree on every one.
  std::vector<std::string> inputs;
  for (int c = 0; c < 256; ++c) inputs.emplace_back(1, static_cast<char>(c));
  inputs.emplace_back("tools/call");
  inputs.emplace_back("\xc3\xa9\xe6\xbc\xa2 \xff\xfe \x7f");
  inputs.emplace_back(
      std::string("a\"b\\c\x00\x1f\x20"
                  "d",
                  9));
  for (const std::string& s : inputs) {
    EXPECT_EQ(quote(s), bj::serialize(bj::string_view(s.data(), s.size())))
        << "byte " << static_cast<int>(static_cast<unsigned char>(s.front()));
  }
}

// --- single_line ---

TEST(JsonSingleLine, LineBreaksBetweenTokensBecomeSpaces) {
  std::string text = "{\"a\":\r\n1,\n\"b\":\"x\"}";
  single_line(text);
  EXPECT_EQ(text, "{\"a\":  1, \"b\":\"x\"}");
  std::string carriage_returns_only = "{\"a\":\r1}";
  single_line(carriage_returns_only);
  EXPECT_EQ(carriage_returns_only, "{\"a\": 1}");
}

TEST(JsonSingleLine, ALineBreakInsideAStringIsLeftForTheParser) {
  std::string text = "{\"a\":\"x\ny\",\n\"b\":\"\\\"\r\"}";
  single_line(text);
  EXPECT_EQ(text, "{\"a\":\"x\ny\", \"b\":\"\\\"\r\"}");
}

// The rule walked byte by byte: the reference the bulk search must agree with.
std::string single_line_by_bytes(std::string text) {
  bool in_string = false, escaped = false;
  for (char& c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return text;
}

TEST(JsonSingleLine, AgreesWithAByteByByteWalkOnRandomTexts) {
  // Quotes, runs of backslashes, line breaks and unterminated strings in every arrangement.
  std::mt19937 random(20261207);
  const std::string alphabet = "\"\\\n\r a{";
  for (int round = 0; round < 20000; ++round) {
    std::string text(random() % 24, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    std::string bulk = text;
    single_line(bulk);
    ASSERT_EQ(bulk, single_line_by_bytes(text)) << "round " << round;
  }
}

TEST(JsonSingleLine, TextWithoutLineBreaksIsUnchanged) {
  std::string text = R"({"a":"b\\n", "c" : [1, 2]})";
  const std::string before = text;
  single_line(text);
  EXPECT_EQ(text, before);
}

}  // namespace
}  // namespace sluice::core::json

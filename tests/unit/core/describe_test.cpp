#include "core/describe.hpp"

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>

namespace sluice::core {
namespace {
namespace bj = boost::json;

TEST(DescribeValue, AStringIsDescribedByItsCodePointCount) {
  EXPECT_EQ(describe_value(bj::value("hello world!")), "a string of 12 characters");
  // 12 code points, 17 bytes.
  EXPECT_EQ(describe_value(bj::value("héllo wörld😀")), "a string of 12 characters");
  EXPECT_EQ(describe_value(bj::value("漢字")), "a string of 2 characters");
}

TEST(DescribeValue, OneCharacterIsSingular) {
  EXPECT_EQ(describe_value(bj::value("x")), "a string of 1 character");
  EXPECT_EQ(describe_value(bj::value("é")), "a string of 1 character");
  EXPECT_EQ(describe_value(bj::value("")), "a string of 0 characters");
}

TEST(DescribeValue, AnObjectIsDescribedByItsKeyCount) {
  EXPECT_EQ(describe_value(bj::parse(R"({"a":1})")), "an object with 1 key");
  EXPECT_EQ(describe_value(bj::parse(R"({"a":1,"b":{"c":2},"d":[]})")), "an object with 3 keys");
  EXPECT_EQ(describe_value(bj::parse("{}")), "an object with 0 keys");
}

TEST(DescribeValue, AnArrayIsDescribedByItsItemCount) {
  EXPECT_EQ(describe_value(bj::parse("[1]")), "an array of 1 item");
  EXPECT_EQ(describe_value(bj::parse(R"([1,"x",[2,3]])")), "an array of 3 items");
  EXPECT_EQ(describe_value(bj::parse("[]")), "an array of 0 items");
}

TEST(DescribeValue, NumbersBooleansAndNullAreDescribedByKind) {
  EXPECT_EQ(describe_value(bj::value(std::int64_t{-42})), "an integer");
  EXPECT_EQ(describe_value(bj::value(std::uint64_t{18446744073709551615u})), "an integer");
  EXPECT_EQ(describe_value(bj::value(1.5)), "a number");
  EXPECT_EQ(describe_value(bj::value(true)), "a boolean");
  EXPECT_EQ(describe_value(bj::value(false)), "a boolean");
  EXPECT_EQ(describe_value(bj::value(nullptr)), "null");
}

TEST(DescribeKind, NamesEachKindWithItsArticle) {
  EXPECT_EQ(describe_kind(bj::value("abc")), "a string");
  EXPECT_EQ(describe_kind(bj::parse(R"({"a":1})")), "an object");
  EXPECT_EQ(describe_kind(bj::parse("[1,2]")), "an array");
  EXPECT_EQ(describe_kind(bj::value(7)), "an integer");
  EXPECT_EQ(describe_kind(bj::value(0.5)), "a number");
  EXPECT_EQ(describe_kind(bj::value(false)), "a boolean");
  EXPECT_EQ(describe_kind(bj::value(nullptr)), "null");
}

TEST(DescribeValue, NeverContainsTheValue) {
  for (const char* text : {R"("SENTINELq7")", R"({"SENTINELq7":"SENTINELq7"})", R"(["SENTINELq7"])",
                           "31337", "3.25e7", "true"}) {
    bj::value v = bj::parse(text);
    for (const std::string& d : {describe_value(v), describe_kind(v)}) {
      EXPECT_EQ(d.find("SENTINEL"), std::string::npos) << d;
      EXPECT_EQ(d.find("31337"), std::string::npos) << d;
      EXPECT_EQ(d.find("3.25"), std::string::npos) << d;
      EXPECT_EQ(d.find("true"), std::string::npos) << d;
    }
  }
}

}  // namespace
}  // namespace sluice::core

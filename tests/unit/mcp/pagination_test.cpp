// The one pagination codec: cursors are the decimal position of the next item (the texts
// clients already hold keep working), and a page holds at most page_size items.
#include "mcp/pagination.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <limits>
#include <string>
#include <vector>

namespace sluice::mcp {
namespace {
namespace bj = boost::json;

std::vector<bj::value> numbers(std::size_t n) {
  std::vector<bj::value> out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(i);
  return out;
}

TEST(Pagination, ACursorIsTheDecimalPositionOfTheNextItem) {
  EXPECT_EQ(encode_cursor(0), "0");
  EXPECT_EQ(encode_cursor(100), "100");
  EXPECT_EQ(decode_cursor("100"), 100u);
  EXPECT_EQ(decode_cursor(encode_cursor(12345)), 12345u);
}

TEST(Pagination, TextThatIsNotACursorSluiceGaveDecodesToNothing) {
  for (std::string_view bad : {"", "-1", "1x", " 1", "offset-1", "99999999999999999999999"}) {
    EXPECT_EQ(decode_cursor(bad), std::nullopt) << bad;
  }
}

TEST(Pagination, TheFirstPageHoldsPageSizeItemsAndTheCursorOfTheNext) {
  Page page = select_page(250, "", 100);
  EXPECT_EQ(page.begin, 0u);
  EXPECT_EQ(page.end, 100u);
  EXPECT_EQ(page.next_cursor, "100");
  Page last = select_page(250, "200", 100);
  EXPECT_EQ(last.begin, 200u);
  EXPECT_EQ(last.end, 250u);
  EXPECT_EQ(last.next_cursor, std::nullopt);
}

TEST(Pagination, AListThatFitsExactlyHasNoNextCursor) {
  Page page = select_page(100, "", 100);
  EXPECT_EQ(page.end, 100u);
  EXPECT_EQ(page.next_cursor, std::nullopt);
}

TEST(Pagination, AForeignOrPastTheEndCursorSelectsAnEmptyLastPage) {
  for (std::string_view cursor : {"junk", "250", "1000", "18446744073709551615"}) {
    Page page = select_page(250, cursor, 100);
    EXPECT_EQ(page.begin, page.end) << cursor;
    EXPECT_EQ(page.next_cursor, std::nullopt) << cursor;
  }
}

TEST(Pagination, APageResultNamesItsItemsUnderTheListsKey) {
  std::string first = page_result(numbers(3), "", 2, "prompts");
  EXPECT_EQ(first, R"({"prompts":[0,1],"nextCursor":"2"})");
  std::string second = page_result(numbers(3), "2", 2, "prompts");
  EXPECT_EQ(second, R"({"prompts":[2]})");
}

TEST(Pagination, OnlyThePagesItemsAreBuilt) {
  std::vector<std::size_t> built;
  std::string out = page_result(1000, "500", 3, "tools", [&](std::size_t i) {
    built.push_back(i);
    return bj::value(i);
  });
  EXPECT_EQ(out, R"({"tools":[500,501,502],"nextCursor":"503"})");
  EXPECT_EQ(built, (std::vector<std::size_t>{500, 501, 502}));
}

}  // namespace
}  // namespace sluice::mcp

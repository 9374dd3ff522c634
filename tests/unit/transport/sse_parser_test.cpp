// The incremental SSE parser: fields, line ends split across reads, the BOM, the event cap.
#include "transport/sse_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::transport {
namespace {

struct Collected {
  std::vector<SseEvent> events;
  SseSink sink() {
    return [this](SseEvent e) { events.push_back(std::move(e)); };
  }
};

// Feeds `text` one byte at a time, the hardest split there is.
std::vector<SseEvent> parse_bytewise(std::string_view text, std::size_t cap = 1 << 20) {
  Collected got;
  SseParser parser(cap);
  auto sink = got.sink();
  for (char c : text) EXPECT_TRUE(parser.feed(std::string_view(&c, 1), sink));
  return got.events;
}

std::vector<SseEvent> parse_whole(std::string_view text, std::size_t cap = 1 << 20) {
  Collected got;
  SseParser parser(cap);
  EXPECT_TRUE(parser.feed(text, got.sink()));
  return got.events;
}

TEST(SseParser, ReadsEventDataIdAndRetry) {
  auto events = parse_whole("event: ping\ndata: {\"a\":1}\nid: 7\nretry: 450\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "ping");
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].retry, std::chrono::milliseconds(450));
}

TEST(SseParser, AnEventWithoutANameIsAMessage) {
  auto events = parse_whole("data: x\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "message");
  EXPECT_FALSE(events[0].id.has_value());
  EXPECT_FALSE(events[0].retry.has_value());
}

TEST(SseParser, JoinsDataLinesWithANewline) {
  auto events = parse_whole("data: one\ndata:two\ndata\ndata:  three\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "one\ntwo\n\n three");
}

TEST(SseParser, SkipsCommentsAndUnknownFields) {
  auto events = parse_whole(": keep-alive\nfoo: bar\ndata: x\n: more\n\n: alone\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, TakesLfCrlfAndCrLineEndsSplitAnywhere) {
  const std::string text = "data: a\r\ndata: b\rdata: c\n\r\nid: 2\rdata: d\r\r";
  for (const auto& events : {parse_whole(text), parse_bytewise(text)}) {
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].data, "a\nb\nc");
    EXPECT_EQ(events[1].data, "d");
    EXPECT_EQ(events[1].id, "2");
  }
}

TEST(SseParser, ACrAtTheEndOfOnePieceAndItsLfInTheNextEndOneLine) {
  Collected got;
  SseParser parser(1024);
  auto sink = got.sink();
  EXPECT_TRUE(parser.feed("data: a\r", sink));
  EXPECT_TRUE(parser.feed("\n", sink));
  EXPECT_TRUE(got.events.empty());
  EXPECT_TRUE(parser.feed("\r\n", sink));
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].data, "a");
}

TEST(SseParser, SkipsOneLeadingByteOrderMarkEvenWhenSplit) {
  auto events = parse_bytewise(
      "\xEF\xBB\xBF"
      "data: x\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
  // Only the first: a second BOM is part of the field name, so the line is an unknown field.
  events = parse_whole(
      "\xEF\xBB\xBF\xEF\xBB\xBF"
      "data: x\n\ndata: y\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "y");
}

TEST(SseParser, AStartThatIsNotAByteOrderMarkIsKeptAsText) {
  auto events = parse_bytewise(
      "\xEF"
      "data: x\n\ndata: y\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "y");
}

TEST(SseParser, ARetryThatIsNotDigitsIsIgnored) {
  auto events = parse_whole("retry: 1e3\ndata: a\n\nretry: -5\ndata: b\n\nretry:  7\ndata: c\n\n");
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events) EXPECT_FALSE(e.retry.has_value());
}

TEST(SseParser, ABlockWithOnlyAnIdOrARetryIsDeliveredWithEmptyData) {
  auto events = parse_whole("id: 5\n\nretry: 1000\n\nevent: x\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, "5");
  EXPECT_EQ(events[0].data, "");
  EXPECT_EQ(events[1].retry, std::chrono::milliseconds(1000));
}

TEST(SseParser, AnIdWithANulIsIgnored) {
  auto events = parse_whole(std::string("id: a\0b\ndata: x\n\n", 17));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].id.has_value());
}

TEST(SseParser, AnUnfinishedEventIsNotDelivered) {
  auto events = parse_whole("data: a\n\ndata: b\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
}

TEST(SseParser, AnEventOverTheCapIsRefusedWhileReading) {
  Collected got;
  SseParser parser(64);
  auto sink = got.sink();
  EXPECT_TRUE(parser.feed("data: small\n\n", sink));
  EXPECT_TRUE(parser.feed("data: " + std::string(40, 'a') + "\n", sink));
  EXPECT_FALSE(parser.feed("data: " + std::string(40, 'b') + "\n", sink));
  EXPECT_FALSE(parser.feed("\n", sink));
  ASSERT_EQ(got.events.size(), 1u);
}

TEST(SseParser, ALineThatNeverEndsIsRefusedAtTheCap) {
  Collected got;
  SseParser parser(64);
  auto sink = got.sink();
  EXPECT_TRUE(parser.feed(": " + std::string(50, 'c'), sink));
  EXPECT_FALSE(parser.feed(std::string(50, 'c'), sink));
}

TEST(SseParser, ManySmallEventsUnderTheCapAllPass) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "data: " + std::to_string(i) + "\n\n";
  auto events = parse_whole(text, 16);
  ASSERT_EQ(events.size(), 100u);
  EXPECT_EQ(events[99].data, "99");
}

}  // namespace
}  // namespace sluice::transport

#include "core/line_splitter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core {
namespace {

// A reported line, copied (Line::text is only valid during the callback).
struct Seen {
  std::string text;
  bool truncated = false;
  std::size_t total_bytes = 0;
};

class Collector {
 public:
  explicit Collector(LineSplitter& splitter) : splitter_(splitter) {}
  void feed(std::string_view chunk) {
    splitter_.feed(chunk, [this](const Line& l) {
      lines.push_back({std::string(l.text), l.truncated, l.total_bytes});
    });
  }
  void finish() {
    splitter_.finish([this](const Line& l) {
      lines.push_back({std::string(l.text), l.truncated, l.total_bytes});
    });
  }
  std::vector<Seen> lines;

 private:
  LineSplitter& splitter_;
};

TEST(LineSplitter, ALineSplitAcrossChunksIsJoined) {
  LineSplitter s(1024, 64);
  Collector c(s);
  c.feed("hel");
  EXPECT_TRUE(c.lines.empty());
  c.feed("lo\nwor");
  ASSERT_EQ(c.lines.size(), 1u);
  c.feed("l");
  c.feed("d\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].text, "hello");
  EXPECT_EQ(c.lines[0].total_bytes, 5u);
  EXPECT_FALSE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[1].text, "world");
  EXPECT_EQ(c.lines[1].total_bytes, 5u);
  EXPECT_EQ(s.buffered_bytes(), 0u);
}

TEST(LineSplitter, ALineGatheredOverSeveralReadsMayBeMovedOutAndTheNextStartsClean) {
  LineSplitter s(1024, 64);
  std::vector<std::string> taken;
  std::vector<bool> owned;
  auto take = [&](const Line& l) {
    owned.push_back(l.owned != nullptr);
    if (l.owned) {
      EXPECT_EQ(l.owned->data(), l.text.data());
      EXPECT_EQ(l.owned->size(), l.text.size());
      taken.push_back(std::move(*l.owned));
    } else {
      taken.emplace_back(l.text);
    }
  };
  s.feed("first ", take);
  s.feed("line\nsecond\nthi", take);  // "second" lies inside one chunk: not owned
  s.feed("rd", take);
  s.finish(take);
  ASSERT_EQ(taken, (std::vector<std::string>{"first line", "second", "third"}));
  EXPECT_EQ(owned, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(s.buffered_bytes(), 0u);
  // A truncated line offers nothing to take: its text is only the kept head.
  LineSplitter small(8, 4);
  small.feed("0123456789", take);
  small.feed("\n", take);
  EXPECT_FALSE(owned.back());
}

TEST(LineSplitter, ManyLinesInOneChunkAreReportedInOrder) {
  LineSplitter s(1024, 64);
  Collector c(s);
  c.feed("a\nbb\n\nccc\nrest");
  ASSERT_EQ(c.lines.size(), 4u);
  EXPECT_EQ(c.lines[0].text, "a");
  EXPECT_EQ(c.lines[1].text, "bb");
  EXPECT_EQ(c.lines[2].text, "");
  EXPECT_EQ(c.lines[2].total_bytes, 0u);
  EXPECT_EQ(c.lines[3].text, "ccc");
  for (const auto& l : c.lines) {
    EXPECT_FALSE(l.truncated);
    EXPECT_EQ(l.total_bytes, l.text.size());
  }
  EXPECT_EQ(s.buffered_bytes(), 4u);
}

TEST(LineSplitter, ANewlineAtTheStartOfAChunkEndsTheBufferedLine) {
  LineSplitter s(1024, 64);
  Collector c(s);
  c.feed("abc");
  c.feed("\n");
  c.feed("\ndef\n");
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[0].text, "abc");
  EXPECT_EQ(c.lines[1].text, "");
  EXPECT_EQ(c.lines[2].text, "def");
}

TEST(LineSplitter, ALineOfExactlyTheCapIsNotTruncated) {
  LineSplitter s(8, 4);
  Collector c(s);
  c.feed("12345678\n");
  c.feed("1234");
  c.feed("5678\n");
  ASSERT_EQ(c.lines.size(), 2u);
  for (const auto& l : c.lines) {
    EXPECT_EQ(l.text, "12345678");
    EXPECT_FALSE(l.truncated);
    EXPECT_EQ(l.total_bytes, 8u);
  }
}

TEST(LineSplitter, OneByteOverTheCapIsTruncated) {
  LineSplitter s(8, 4);
  Collector c(s);
  c.feed("12345678");
  c.feed("9\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, 9u);
  EXPECT_EQ(c.lines[0].text, "1234");
}

TEST(LineSplitter, AnOverlongLineIsReportedOnceWithItsFullSizeAndTheNextLineIsIntact) {
  LineSplitter s(16, 4);
  Collector c(s);
  std::string longline;
  for (int i = 0; i < 100; ++i) longline.push_back(static_cast<char>('a' + i % 26));
  for (std::size_t i = 0; i < longline.size(); i += 7) c.feed(longline.substr(i, 7));
  EXPECT_TRUE(c.lines.empty());
  c.feed("\nnext line\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, 100u);
  EXPECT_EQ(c.lines[0].text, "abcd");
  EXPECT_EQ(c.lines[1].text, "next line");
  EXPECT_FALSE(c.lines[1].truncated);
  EXPECT_EQ(c.lines[1].total_bytes, 9u);
}

TEST(LineSplitter, AnOverlongLineInsideOneChunkIsTruncatedToo) {
  LineSplitter s(16, 4);
  Collector c(s);
  c.feed("ok\n" + std::string(50, 'y') + "\nafter\n");
  ASSERT_EQ(c.lines.size(), 3u);
  EXPECT_EQ(c.lines[0].text, "ok");
  EXPECT_TRUE(c.lines[1].truncated);
  EXPECT_EQ(c.lines[1].total_bytes, 50u);
  EXPECT_EQ(c.lines[1].text, "yyyy");
  EXPECT_EQ(c.lines[2].text, "after");
  EXPECT_FALSE(c.lines[2].truncated);
}

TEST(LineSplitter, KeepsTheWholeCapWhenAskedForMore) {
  LineSplitter s(8, 1000);
  Collector c(s);
  c.feed("0123456789abcdef\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0].text, "01234567");
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, 16u);
}

TEST(LineSplitter, KeepsNothingWhenAskedForNothing) {
  LineSplitter s(8, 0);
  Collector c(s);
  c.feed("0123456789\nz\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].text, "");
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, 10u);
  EXPECT_EQ(c.lines[1].text, "z");
}

TEST(LineSplitter, MemoryStaysBoundedWhileA32MiBLineWithoutNewlineArrives) {
  constexpr std::size_t kCap = 1024 * 1024;
  constexpr std::size_t kKeep = 256;
  constexpr std::size_t kChunk = 64 * 1024;
  constexpr std::size_t kTotal = 32 * 1024 * 1024;
  LineSplitter s(kCap, kKeep);
  Collector c(s);
  std::string chunk(kChunk, 'z');
  std::size_t max_seen = 0;
  for (std::size_t fed = 0; fed < kTotal; fed += kChunk) {
    c.feed(chunk);
    max_seen = std::max(max_seen, s.buffered_bytes());
    ASSERT_LE(s.buffered_bytes(), kCap) << "after " << fed + kChunk << " bytes";
    if (fed + kChunk > kCap) {
      ASSERT_LE(s.buffered_bytes(), kKeep) << "after overflow";
    }
  }
  EXPECT_TRUE(c.lines.empty());
  c.feed("\n{\"ok\":true}\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, kTotal);
  EXPECT_EQ(c.lines[0].text, std::string(kKeep, 'z'));
  EXPECT_EQ(c.lines[1].text, "{\"ok\":true}");
  EXPECT_EQ(s.buffered_bytes(), 0u);
  EXPECT_EQ(max_seen, kCap);
}

TEST(LineSplitter, FinishReportsAnUnterminatedLastLine) {
  LineSplitter s(1024, 64);
  Collector c(s);
  c.feed("first\nlast");
  c.finish();
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[1].text, "last");
  EXPECT_FALSE(c.lines[1].truncated);
  EXPECT_EQ(c.lines[1].total_bytes, 4u);
  EXPECT_EQ(s.buffered_bytes(), 0u);
}

TEST(LineSplitter, FinishReportsAnUnterminatedOverlongLineAsTruncated) {
  LineSplitter s(8, 2);
  Collector c(s);
  c.feed("0123456789");
  c.finish();
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[0].total_bytes, 10u);
  EXPECT_EQ(c.lines[0].text, "01");
}

TEST(LineSplitter, FinishWithNothingPendingReportsNothing) {
  LineSplitter s(1024, 64);
  Collector c(s);
  c.finish();
  c.feed("done\n");
  c.finish();
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0].text, "done");
}

TEST(LineSplitter, TheSplitterStartsCleanAfterATruncatedLine) {
  LineSplitter s(8, 4);
  Collector c(s);
  c.feed(std::string(20, 'x'));
  c.feed("\n");
  c.feed("abc");
  c.feed("defgh\n");  // exactly the cap again, buffered across chunks
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_TRUE(c.lines[0].truncated);
  EXPECT_EQ(c.lines[1].text, "abcdefgh");
  EXPECT_FALSE(c.lines[1].truncated);
  EXPECT_EQ(c.lines[1].total_bytes, 8u);
}

TEST(LineSplitter, LongLinesOfChangingSizesArriveWholeAndKeepNoRoomFarBeyondThemselves) {
  // Long lines are given room for the size of the last long one at once: lines growing,
  // shrinking and alike, fed in the 64 KiB reads of a stream, each arrive byte for byte,
  // and a line moved out holds no more than twice its size (plus one read) of room.
  constexpr std::size_t kRead = 64 * 1024;
  LineSplitter s(16u << 20, 4096);
  std::vector<std::size_t> sizes = {
      1u << 20, (1u << 20) + 5000, 300'000, 1u << 20, 3u << 20, 70'000, 100, 2u << 20, 2u << 20};
  std::string stream;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    for (std::size_t k = 0; k < sizes[i]; ++k) stream += static_cast<char>('a' + (k * 7 + i) % 26);
    stream += '\n';
  }
  std::vector<std::string> got;
  auto take = [&](const Line& l) {
    ASSERT_FALSE(l.truncated);
    if (l.owned) {
      EXPECT_LE(l.owned->capacity(), 2 * l.owned->size() + kRead) << l.owned->size();
      got.push_back(std::move(*l.owned));
    } else {
      got.emplace_back(l.text);
    }
  };
  for (std::size_t at = 0; at < stream.size(); at += kRead) {
    s.feed(std::string_view(stream).substr(at, kRead), take);
  }
  s.finish(take);
  ASSERT_EQ(got.size(), sizes.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(got[i], stream.substr(at, sizes[i])) << "line " << i;
    at += sizes[i] + 1;
  }
}

}  // namespace
}  // namespace sluice::core

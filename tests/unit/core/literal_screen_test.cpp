#include "core/literal_screen.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core {
namespace {

// Every candidate position of `text`, batch after batch, the fast way or byte by byte.
std::vector<std::size_t> all_candidates(const LiteralScreen& screen, std::string_view text,
                                        bool bytewise) {
  std::vector<std::size_t> found;
  LiteralScreen::Batch batch;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t n = bytewise ? screen.candidates_bytewise(text, from, batch)
                                   : screen.candidates(text, from, batch);
    found.insert(found.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return found;
}

bool has(const std::vector<std::size_t>& found, std::size_t at) {
  return std::find(found.begin(), found.end(), at) != found.end();
}

// Ten first bytes: more than the 8 buckets, so some literals share one.
const std::vector<LiteralScreen::Literal> kLiterals{
    {"-----BEGIN", false}, {"authorization", true}, {"bearer", true}, {"AKIA", false},
    {"ghp_", false},       {"xox", false},          {"eyJ", false},   {"sk-", false},
    {"npm_", false},       {"\\u0", false},
};

const std::string_view kProse =
    "the quick brown fox jumps over the lazy dog; they asked whether a key, a token or a "
    "bearer of news would be seen here, because authors write such words every day. ";

TEST(LiteralScreen, EveryLiteralIsFoundAtEveryOffsetAndNearTheEnd) {
  const LiteralScreen screen(kLiterals);
  for (const auto& literal : kLiterals) {
    // Offsets across two 16-byte blocks, and texts that end right after the literal (the
    // last positions are read byte by byte).
    for (std::size_t offset = 0; offset < 40; ++offset) {
      for (std::string_view after : {"", "x", " and then some more text after it"}) {
        const std::string text =
            std::string(offset, '.') + std::string(literal.text) + std::string(after);
        for (bool bytewise : {false, true}) {
          EXPECT_TRUE(has(all_candidates(screen, text, bytewise), offset))
              << literal.text << " at " << offset << (bytewise ? " byte by byte" : "");
        }
      }
    }
  }
}

TEST(LiteralScreen, ALiteralThatIgnoresCaseIsFoundInAnyCase) {
  const LiteralScreen screen(kLiterals);
  for (std::string_view spelled :
       {"AUTHORIZATION", "Authorization", "aUtHorization", "BEARER", "bEaRer"}) {
    const std::string text = std::string(21, ' ') + std::string(spelled) + std::string(30, ' ');
    EXPECT_TRUE(has(all_candidates(screen, text, false), 21)) << spelled;
  }
  // A literal that keeps its case is not found in another.
  const std::string text = std::string(21, ' ') + "akia npM_ XOX" + std::string(30, ' ');
  EXPECT_TRUE(all_candidates(screen, text, false).empty());
}

TEST(LiteralScreen, SixteenAtATimeFindsWhatByteByByteFinds) {
  const LiteralScreen screen(kLiterals);
  std::mt19937 random(7);
  // Random bytes drawn mostly from the literals' own, so that candidates are dense.
  const std::string alphabet = "-aAuUtTbBeErRKIghp_xoyJsknm\\0 .\x80\xff";
  for (int round = 0; round < 200; ++round) {
    std::string text(random() % 300, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    EXPECT_EQ(all_candidates(screen, text, false), all_candidates(screen, text, true))
        << "round " << round;
  }
  std::string prose;
  while (prose.size() < 100000) prose += kProse;
  EXPECT_EQ(all_candidates(screen, prose, false), all_candidates(screen, prose, true));
}

TEST(LiteralScreen, CandidatesComeInOrderAcrossBatches) {
  const LiteralScreen screen(std::vector<LiteralScreen::Literal>{{"aaa", false}});
  const std::string text(1000, 'a');  // a candidate at every position but the last two
  const std::vector<std::size_t> found = all_candidates(screen, text, false);
  ASSERT_EQ(found.size(), 998u);
  for (std::size_t i = 0; i < found.size(); ++i) ASSERT_EQ(found[i], i);
  // any() stops at the first confirmation.
  std::size_t asked = 0;
  EXPECT_TRUE(screen.any(text, [&](std::size_t i) {
    ++asked;
    return i == 200;
  }));
  EXPECT_EQ(asked, 201u);
  EXPECT_FALSE(screen.any(text, [](std::size_t) { return false; }));
}

// The screen is worth having only if ordinary text gives it little to confirm.
TEST(LiteralScreen, OrdinaryProseGivesFewCandidates) {
  const LiteralScreen screen(kLiterals);
  std::string prose;
  while (prose.size() < 100000) prose += kProse;
  const std::size_t found = all_candidates(screen, prose, false).size();
  EXPECT_LT(found, prose.size() / 40) << found << " candidates in " << prose.size() << " bytes";
}

TEST(LiteralScreen, ALiteralShorterThanThreeBytesIsRefused) {
  EXPECT_THROW(LiteralScreen(std::vector<LiteralScreen::Literal>{{"ab", false}}), std::logic_error);
}

}  // namespace
}  // namespace sluice::core

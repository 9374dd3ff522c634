#include "core/display.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core {
namespace {

// UTF-8 encoding of any value up to 0x10FFFF, surrogates included (as the 3-byte form a
// broken encoder would produce), so the sweep can feed them too.
std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

// Decodes well-formed UTF-8; returns false at the first invalid sequence.
bool decode_all(std::string_view s, std::vector<char32_t>& cps) {
  for (std::size_t i = 0; i < s.size();) {
    auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t len = b0 < 0x80             ? 1
                      : (b0 & 0xE0) == 0xC0 ? 2
                      : (b0 & 0xF0) == 0xE0 ? 3
                      : (b0 & 0xF8) == 0xF0 ? 4
                                            : 0;
    if (len == 0 || i + len > s.size()) return false;
    char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    cps.push_back(cp);
    i += len;
  }
  return true;
}

// Code points that must never reach a terminal raw.
bool dangerous(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) ||  // C0, DEL, C1
         cp == 0x00AD || cp == 0x061C ||             // soft hyphen, Arabic letter mark
         (cp >= 0x200B && cp <= 0x200F) ||           // zero-width, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202E) ||           // separators, bidi embeddings
         (cp >= 0x2060 && cp <= 0x2069) ||           // word joiner, bidi isolates
         cp == 0xFEFF ||                             // zero-width no-break space
         (cp >= 0xD800 && cp <= 0xDFFF);             // surrogates
}

bool printable_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7E) return false;
  }
  return true;
}

TEST(DisplaySafe, EscapeSequencesAreDefused) {
  EXPECT_EQ(display_safe("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(display_safe("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
}

TEST(DisplaySafe, C0ControlsAndDelAreEscaped) {
  EXPECT_EQ(display_safe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(display_safe("\x07"), "\\x07");
  EXPECT_EQ(display_safe("\x7f"), "\\x7f");
  EXPECT_EQ(display_safe("\b\f\v"), "\\x08\\x0c\\x0b");
  EXPECT_EQ(display_safe("a\r\nb\tc"), "a\\r\\nb\\tc");
}

TEST(DisplaySafe, C1ControlsAreEscaped) {
  EXPECT_EQ(display_safe("\xc2\x85"), "\\u{0085}");
  EXPECT_EQ(display_safe("\xc2\x9b"
                         "31m"),
            "\\u{009b}31m");
  EXPECT_EQ(display_safe("\xc2\x80\xc2\x9f"), "\\u{0080}\\u{009f}");
}

TEST(DisplaySafe, BidiControlsAreEscaped) {
  EXPECT_EQ(display_safe("abc\u202Eevil"), "abc\\u{202e}evil");
  for (char32_t cp :
       {0x2066, 0x2067, 0x2068, 0x2069, 0x202A, 0x202B, 0x202C, 0x202D, 0x200E, 0x200F, 0x061C}) {
    std::string out = display_safe("x" + utf8(cp) + "y");
    EXPECT_TRUE(printable_ascii(out)) << std::hex << static_cast<std::uint32_t>(cp) << ": " << out;
    EXPECT_NE(out, "x" + utf8(cp) + "y");
  }
}

TEST(DisplaySafe, ZeroWidthCodePointsAreEscaped) {
  EXPECT_EQ(display_safe("a\u200Bb"), "a\\u{200b}b");
  EXPECT_EQ(display_safe("\uFEFFbom"), "\\u{feff}bom");
  EXPECT_EQ(display_safe("\u200C\u200D\u2060"), "\\u{200c}\\u{200d}\\u{2060}");
}

TEST(DisplaySafe, LineAndParagraphSeparatorsAreEscaped) {
  EXPECT_EQ(display_safe("a\u2028b\u2029c"), "a\\u{2028}b\\u{2029}c");
  EXPECT_EQ(display_safe("a\u2028b", DisplayOptions{true}), "a\\u{2028}b");
}

TEST(DisplaySafe, SoftHyphenAndNonAsciiSpacesAreEscaped) {
  EXPECT_EQ(display_safe("ad\u00ADmin"), "ad\\u{00ad}min");
  EXPECT_EQ(display_safe("a\u00A0b"), "a\\u{00a0}b");
  for (char32_t cp : {0x1680, 0x2000, 0x2007, 0x200A, 0x202F, 0x205F, 0x3000}) {
    EXPECT_TRUE(printable_ascii(display_safe(utf8(cp))))
        << std::hex << static_cast<std::uint32_t>(cp);
  }
}

TEST(DisplaySafe, PrivateUseNoncharactersAndUnassignedAreEscaped) {
  EXPECT_EQ(display_safe("\uE000"), "\\u{e000}");
  EXPECT_EQ(display_safe(utf8(0xF8FF)), "\\u{f8ff}");
  EXPECT_EQ(display_safe(utf8(0x10FFFD)), "\\u{10fffd}");
  EXPECT_EQ(display_safe(utf8(0xFFFE)), "\\u{fffe}");
  EXPECT_EQ(display_safe(utf8(0xFDD0)), "\\u{fdd0}");
  EXPECT_EQ(display_safe(utf8(0x0378)), "\\u{0378}");
  EXPECT_EQ(display_safe(utf8(0xE0001)), "\\u{e0001}");  // language tag
}

TEST(DisplaySafe, InvalidUtf8BytesAreEscapedOneByOne) {
  EXPECT_EQ(display_safe("a\x80"
                         "b"),
            "a\\x80b");                                        // lone continuation byte
  EXPECT_EQ(display_safe("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(display_safe("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong, 3 bytes
  EXPECT_EQ(display_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate U+D800
  EXPECT_EQ(display_safe("\xe2\x82"), "\\xe2\\x82");           // truncated at the end
  EXPECT_EQ(display_safe("\xe2\x82"
                         "A"),
            "\\xe2\\x82A");                                             // truncated mid-text
  EXPECT_EQ(display_safe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(display_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(display_safe("\xf8\x88\x80\x80\x80"), "\\xf8\\x88\\x80\\x80\\x80");
}

TEST(DisplaySafe, EveryHostileInputBecomesPurePrintableText) {
  const std::vector<std::string> hostile = {"\x1b[2J\x1b[H",
                                            std::string("\0", 1),
                                            "\x07",
                                            "\x7f",
                                            "\xc2\x85",
                                            "\xc2\x9b",
                                            "\u202E",
                                            "\u2066",
                                            "\u2067",
                                            "\u2068",
                                            "\u2069",
                                            "\u200B",
                                            "\uFEFF",
                                            "\u2028",
                                            "\u2029",
                                            "\u00AD",
                                            "\u00A0",
                                            "\uE000",
                                            utf8(0x0378),
                                            "\x80",
                                            "\xc0\xaf",
                                            "\xed\xa0\x80",
                                            "\xe2\x82",
                                            "\xf0\x9f\x98",
                                            "\r",
                                            "\n",
                                            "\t"};
  for (const auto& h : hostile) {
    std::string out = display_safe("<" + h + ">");
    EXPECT_TRUE(printable_ascii(out)) << out;
    EXPECT_NE(out, "<" + h + ">");
  }
}

TEST(DisplaySafe, PrintableTextPassesUnchanged) {
  for (std::string_view s :
       {"plain ASCII: ~!@#$%^&*()_+{}|:\"<>? `-=[]\\;',./", "Grüße, café, naïve, Ærøskøbing",
        "漢字かなカナ한국어", "emoji 😀🎉👍🏽", "Ελληνικά Кириллица العربية עברית", ""}) {
    EXPECT_EQ(display_safe(s), s);
  }
}

TEST(DisplaySafe, NewlinesAndTabsAreKeptOnlyWhenAsked) {
  EXPECT_EQ(display_safe("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(display_safe("a\nb\tc", DisplayOptions{true}), "a\nb\tc");
  // Carriage return can rewrite a terminal line: escaped even in multi-line text.
  EXPECT_EQ(display_safe("a\r\nb", DisplayOptions{true}), "a\\r\nb");
  EXPECT_EQ(display_safe("\x1b\n", DisplayOptions{true}), "\\x1b\n");
}

TEST(DisplaySafe, NoBmpCodePointReachesTheOutputRaw) {
  for (char32_t cp = 0; cp <= 0xFFFF; ++cp) {
    std::string in = "a" + utf8(cp) + "b";
    std::string out = display_safe(in);
    std::vector<char32_t> cps;
    ASSERT_TRUE(decode_all(out, cps))
        << "invalid UTF-8 out for U+" << std::hex << static_cast<std::uint32_t>(cp);
    for (char32_t o : cps) {
      ASSERT_FALSE(dangerous(o)) << "U+" << std::hex << static_cast<std::uint32_t>(cp) << " let U+"
                                 << static_cast<std::uint32_t>(o) << " through";
    }
    if (dangerous(cp)) {
      ASSERT_TRUE(printable_ascii(out)) << std::hex << static_cast<std::uint32_t>(cp);
    }
  }
}

TEST(DisplaySafe, NoSupplementaryFormatOrTagCodePointReachesTheOutputRaw) {
  for (char32_t cp = 0x10000; cp <= 0x10FFFF; ++cp) {
    bool must_escape = (cp >= 0xE0000 && cp <= 0xE0FFF) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
                       cp >= 0xF0000 || (cp & 0xFFFE) == 0xFFFE;
    if (!must_escape) continue;
    std::string out = display_safe(utf8(cp));
    ASSERT_TRUE(printable_ascii(out)) << std::hex << static_cast<std::uint32_t>(cp);
  }
}

}  // namespace
}  // namespace sluice::core

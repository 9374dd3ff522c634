#include "core/display.hpp"

#include "core/utf8.hpp"

#include <fmt/format.h>

#include <locale.h>
#include <clocale>
#include <cwctype>

namespace sluice::core {
namespace {

// glibc's C.UTF-8 classifies every Unicode code point; iswprint_l is false for unassigned
// and control code points. Without the locale we fall back to the explicit lists only.
locale_t utf8_ctype() {
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return loc;
}

bool is_invisible_format(char32_t cp) {
  if (cp == 0x00AD || cp == 0x034F || cp == 0x061C || cp == 0x115F || cp == 0x1160 ||
      cp == 0x17B4 || cp == 0x17B5 || cp == 0x180E || cp == 0x3164 || cp == 0xFEFF || cp == 0xFFA0)
    return true;
  if (cp >= 0x180B && cp <= 0x180F) return true;    // Mongolian selectors
  if (cp >= 0x200B && cp <= 0x200F) return true;    // zero-width, LRM, RLM
  if (cp >= 0x2028 && cp <= 0x202E) return true;    // separators, bidi embeddings
  if (cp >= 0x2060 && cp <= 0x206F) return true;    // word joiner, invisible ops, isolates
  if (cp >= 0xFE00 && cp <= 0xFE0F) return true;    // variation selectors
  if (cp >= 0xFFF0 && cp <= 0xFFFB) return true;    // specials, interlinear annotation
  if (cp >= 0xE0000 && cp <= 0xE0FFF) return true;  // tags, variation selectors supplement
  if (cp >= 0x1D173 && cp <= 0x1D17A) return true;  // musical format controls
  return false;
}

bool is_nonascii_space(char32_t cp) {
  return cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool is_private_or_nonchar(char32_t cp) {
  if (cp >= 0xE000 && cp <= 0xF8FF) return true;
  if (cp >= 0xF0000) return true;  // planes 15-16 are private use
  if (cp >= 0xFDD0 && cp <= 0xFDEF) return true;
  return (cp & 0xFFFE) == 0xFFFE;
}

bool printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp < 0x7F) return true;
  if (cp >= 0x80 && cp <= 0x9F) return false;
  if (is_invisible_format(cp) || is_nonascii_space(cp) || is_private_or_nonchar(cp)) return false;
  if (locale_t loc = utf8_ctype()) return iswprint_l(static_cast<wint_t>(cp), loc) != 0;
  return true;
}

}  // namespace

std::string display_safe(std::string_view text, DisplayOptions opts) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (opts.keep_newlines && (cp == '\n' || cp == '\t')) {
      out.push_back(static_cast<char>(cp));
    } else if (printable(cp)) {
      out.append(text.substr(i, len));
    } else if (cp < 0x80) {
      switch (cp) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
      }
    } else {
      out += fmt::format("\\u{{{:04x}}}", static_cast<std::uint32_t>(cp));
    }
    i += len;
  }
  return out;
}

}  // namespace sluice::core

#pragma once
// ASCII letter case: the only case that HTTP header names and tokens, URL schemes and hosts,
// auth schemes and config keys have. A-Z fold to a-z; every other byte (UTF-8 included)
// stays as it is, whatever the C locale (unlike std::tolower).
// Threading: pure functions.
#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::core::ascii {

constexpr char to_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr unsigned char to_lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c - 'A' + 'a') : c;
}

inline void lower_in_place(std::string& text) {
  for (char& c : text) c = to_lower(c);
}

inline std::string lowered(std::string_view text) {
  std::string out(text);
  lower_in_place(out);
  return out;
}

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

constexpr bool starts_with_in_any_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

// Whether `text` holds `lowered_needle` (given in lower case) in any letter case.
constexpr bool contains_in_any_case(std::string_view text, std::string_view lowered_needle) {
  for (std::size_t i = 0; i + lowered_needle.size() <= text.size(); ++i) {
    std::size_t k = 0;
    while (k < lowered_needle.size() && to_lower(text[i + k]) == lowered_needle[k]) ++k;
    if (k == lowered_needle.size()) return true;
  }
  return false;
}

}  // namespace sluice::core::ascii

#pragma once
// UTF-8 as RFC 3629 has it: one sequence decoded and checked (no overlong form, no surrogate,
// nothing past U+10FFFF, nothing cut short), and one code point encoded. Shared by the display
// escaping (core/display) and the bulk JSON string routines (core/json_strings).
// Threading: pure functions.
#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::core {

// Decodes the sequence at s[i] into `cp`; returns its length, or 0 when it is not valid.
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp);

// Appends the UTF-8 form of `cp` (a Unicode scalar value) to `out`.
void append_utf8(std::string& out, char32_t cp);

}  // namespace sluice::core

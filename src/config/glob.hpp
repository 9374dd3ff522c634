#pragma once
// The glob patterns of the operator's policy (sluice.policy): `*` matches any run of
// characters, none included; `?` matches exactly one character (one UTF-8 code point); every
// other character matches itself, case-sensitively. There are no character classes and no
// escapes. Pure functions; time O(|pattern| * |text|) at worst, no allocation.
#include <string_view>

namespace sluice::config {

// Whether `text` as a whole matches `pattern`.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace sluice::config

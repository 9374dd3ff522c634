#pragma once
// `${VAR}` interpolation of config strings.
//
// Syntax: `${NAME}` and `${NAME:-default}`, NAME matching [A-Za-z_][A-Za-z0-9_]*. The default
// is the literal text up to the first '}' (no nesting, no further interpolation) and applies
// when the variable is unset, empty or unusable (see below). Anything else, `$NAME`, `${1}`,
// `${` without a closing brace, is kept literally. There is no escape syntax.
//
// A variable's value is unusable where `rejects` returns true for one of its characters (for
// instance a line break in an HTTP header); it is then treated as unset. An unusable variable
// is always reported by name; an unset one only when it has no default. Either, without a
// default, is substituted with the empty string. A set but empty variable without a default
// expands to the empty string and is not reported. Values are never reported.
// Pure function of its arguments; `lookup` is called once per reference.
#include "config/gateway_config.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

struct Expansion {
  std::string text;
  std::vector<std::string> unset;     // referenced without default, unset; unique, in order
  std::vector<std::string> unusable;  // value rejected by `rejects`; unique, in order
};

// True for a character that may not appear in the expanded text.
using CharFilter = bool (*)(char c);

Expansion interpolate(std::string_view text, const EnvLookup& lookup, CharFilter rejects = nullptr);

}  // namespace sluice::config

#include "config/detail/fields.hpp"

#include "core/describe.hpp"

#include <algorithm>

namespace sluice::config::detail {
namespace bj = boost::json;

core::Error problem(const Where& at, std::string_view what, std::string_view hint) {
  std::string where =
      at.entry == 0 ? at.path : fmt::format("{} (server entry {})", at.path, at.entry);
  if (hint.empty()) return core::make_error(fmt::format("{}: {}", where, what));
  return core::make_error(fmt::format("{}: {}; {}", where, what, hint));
}

core::Error wrong_type(const Where& at, std::string_view expected, const bj::value& found) {
  return problem(at, fmt::format("expected {}, found {}", expected, core::describe_value(found)));
}

bool is_ascii_alnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

bool rejects_nul(char c) { return c == '\0'; }
bool rejects_in_url(char c) { return is_control(c) || c == ' '; }
bool rejects_in_header(char c) { return is_control(c) && c != '\t'; }

core::Result<std::string_view> read_text(const bj::value& v, const Where& at, const TextRule& rule,
                                         bool non_empty) {
  const bj::string* s = v.if_string();
  if (s == nullptr) return wrong_type(at, non_empty ? "a non-empty string" : "a string", v);
  std::string_view text(s->data(), s->size());
  if (non_empty && text.empty())
    return problem(at, "expected a non-empty string, found an empty one");
  if (std::any_of(text.begin(), text.end(), rule.rejects)) {
    return problem(at, fmt::format("{} contains {}", core::describe_value(v), rule.found));
  }
  return text;
}

// An integer within `range`. A number with a fraction or an exponent (4.0, 1e3) is not an
// integer.
core::Result<std::uint64_t> read_integer(const bj::value& v, const Where& at, Range range) {
  std::uint64_t n = 0;
  bool negative = false;
  if (const std::int64_t* i = v.if_int64()) {
    negative = *i < 0;
    if (!negative) n = static_cast<std::uint64_t>(*i);
  } else if (const std::uint64_t* u = v.if_uint64()) {
    n = *u;
  } else {
    return wrong_type(at, "an integer", v);
  }
  if (negative || n < range.min) {
    return problem(at, fmt::format("must be at least {} ({})", range.min, core::describe_value(v)));
  }
  if (n > range.max) {
    return problem(at, fmt::format("must be at most {} ({})", range.max, core::describe_value(v)));
  }
  return n;
}

core::Result<std::uint64_t> read_integer_or_zero(const bj::value& v, const Where& at, Range range) {
  const std::int64_t* i = v.if_int64();
  const bool negative = i != nullptr && *i < 0;
  if (!negative) {
    core::Result<std::uint64_t> n = read_integer(v, at, Range{0, range.max});
    if (!n || *n == 0 || *n >= range.min) return n;
  }
  return problem(at,
                 fmt::format("must be 0 or at least {} ({})", range.min, core::describe_value(v)));
}

}  // namespace sluice::config::detail

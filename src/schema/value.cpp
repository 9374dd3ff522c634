// JSON value helpers for the schema validator: JSON equality (numbers by value), hashing
// consistent with it, exact number comparison, multipleOf, code points, and the rewriting
// of ECMA-262 pattern spellings for RE2.
#include "schema/detail/compiled.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

namespace sluice::schema::detail {
namespace bj = boost::json;

namespace {

// Every int64, uint64 and double converts to long double exactly where long double has a
// 64-bit significand (x86-64, and the 113-bit one of aarch64), so comparisons are exact.
static_assert(std::numeric_limits<long double>::digits >= 64);

long double as_long_double(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::int64:
      return static_cast<long double>(v.get_int64());
    case bj::kind::uint64:
      return static_cast<long double>(v.get_uint64());
    default:
      return static_cast<long double>(v.get_double());
  }
}

// The magnitude of an integral number when it fits in 64 bits.
bool integral_magnitude(const bj::value& v, std::uint64_t& out) {
  switch (v.kind()) {
    case bj::kind::int64: {
      std::int64_t i = v.get_int64();
      out =
          i < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i);
      return true;
    }
    case bj::kind::uint64:
      out = v.get_uint64();
      return true;
    case bj::kind::double_: {
      double d = std::fabs(v.get_double());
      if (std::trunc(d) != d || d >= 18446744073709551616.0) return false;
      out = static_cast<std::uint64_t>(d);
      return true;
    }
    default:
      return false;
  }
}

std::size_t mix(std::size_t seed, std::size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Numbers that compare equal hash equal: integral values that fit in 64 bits hash as
// integers whatever their representation.
std::size_t number_hash(const bj::value& v) {
  std::uint64_t magnitude = 0;
  if (integral_magnitude(v, magnitude)) {
    bool negative = as_long_double(v) < 0;
    return mix(std::hash<std::uint64_t>{}(magnitude), negative ? 1 : 0);
  }
  return std::hash<double>{}(v.get_double());
}

void append_code_point(std::string& out, std::uint32_t cp) {
  out += fmt::format("\\x{{{:X}}}", cp);
}

bool parse_hex(std::string_view digits, std::uint32_t& out) {
  if (digits.empty() || digits.size() > 6) return false;
  out = 0;
  for (char c : digits) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return false;
    out = out * 16 + static_cast<std::uint32_t>(d);
  }
  return true;
}

// ECMA-262 `\p{...}` spells general categories long ("Letter") or with a prefix
// ("gc=L", "Script=Greek"); RE2 takes the short category names and bare script names.
std::string unicode_property(std::string_view name) {
  for (std::string_view prefix :
       {"General_Category=", "gc=", "Script=", "sc=", "Script_Extensions=", "scx="}) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kCategories[] = {
      {"Letter", "L"},
      {"Lowercase_Letter", "Ll"},
      {"Uppercase_Letter", "Lu"},
      {"Titlecase_Letter", "Lt"},
      {"Modifier_Letter", "Lm"},
      {"Other_Letter", "Lo"},
      {"Mark", "M"},
      {"Nonspacing_Mark", "Mn"},
      {"Spacing_Mark", "Mc"},
      {"Enclosing_Mark", "Me"},
      {"Number", "N"},
      {"Decimal_Number", "Nd"},
      {"digit", "Nd"},
      {"Letter_Number", "Nl"},
      {"Other_Number", "No"},
      {"Punctuation", "P"},
      {"punct", "P"},
      {"Connector_Punctuation", "Pc"},
      {"Dash_Punctuation", "Pd"},
      {"Open_Punctuation", "Ps"},
      {"Close_Punctuation", "Pe"},
      {"Initial_Punctuation", "Pi"},
      {"Final_Punctuation", "Pf"},
      {"Other_Punctuation", "Po"},
      {"Symbol", "S"},
      {"Math_Symbol", "Sm"},
      {"Currency_Symbol", "Sc"},
      {"Modifier_Symbol", "Sk"},
      {"Other_Symbol", "So"},
      {"Separator", "Z"},
      {"Space_Separator", "Zs"},
      {"Line_Separator", "Zl"},
      {"Paragraph_Separator", "Zp"},
      {"Other", "C"},
      {"Control", "Cc"},
      {"Format", "Cf"},
      {"Surrogate", "Cs"},
      {"Private_Use", "Co"},
  };
  for (const auto& [long_name, short_name] : kCategories) {
    if (name == long_name) return std::string(short_name);
  }
  return std::string(name);
}

// ECMA-262 `\s`: white space and line terminators.
constexpr std::string_view kEcmaSpace =
    "\\t\\n\\x{B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}\\x{FEFF}";

}  // namespace

bool is_number(const bj::value& v) { return v.is_int64() || v.is_uint64() || v.is_double(); }

bool is_integral(const bj::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  if (!v.is_double()) return false;
  double d = v.get_double();
  return std::isfinite(d) && std::trunc(d) == d;
}

int compare_numbers(const bj::value& a, const bj::value& b) {
  long double x = as_long_double(a);
  long double y = as_long_double(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool is_multiple_of(const bj::value& value, const bj::value& divisor) {
  std::uint64_t x = 0;
  std::uint64_t d = 0;
  if (integral_magnitude(value, x) && integral_magnitude(divisor, d) && d != 0) return x % d == 0;
  double xv = static_cast<double>(as_long_double(value));
  double dv = static_cast<double>(as_long_double(divisor));
  if (is_integral(divisor)) return std::fmod(xv, dv) == 0.0;
  double q = xv / dv;
  // fmod is exact; it decides when the quotient overflows.
  if (!std::isfinite(q)) return std::fmod(xv, dv) == 0.0;
  double r = std::fabs(q - std::nearbyint(q));
  return r <= 8 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::fabs(q));
}

bool json_equal(const bj::value& a, const bj::value& b) {
  if (is_number(a) && is_number(b)) return compare_numbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case bj::kind::null:
      return true;
    case bj::kind::bool_:
      return a.get_bool() == b.get_bool();
    case bj::kind::string:
      return a.get_string() == b.get_string();
    case bj::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case bj::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (const auto& member : x) {
        auto it = y.find(member.key());
        if (it == y.end() || !json_equal(member.value(), it->value())) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

std::size_t json_hash(const bj::value& v) {
  switch (v.kind()) {
    case bj::kind::null:
      return 0x6e756c6c;
    case bj::kind::bool_:
      return v.get_bool() ? 0x74727565 : 0x66616c73;
    case bj::kind::int64:
    case bj::kind::uint64:
    case bj::kind::double_:
      return number_hash(v);
    case bj::kind::string:
      return std::hash<std::string_view>{}(v.get_string());
    case bj::kind::array: {
      std::size_t h = 0x61727261;
      for (const auto& item : v.get_array()) h = mix(h, json_hash(item));
      return h;
    }
    case bj::kind::object: {
      // Order-independent: members combine by sum.
      std::size_t h = 0x6f626a65;
      for (const auto& member : v.get_object()) {
        h += mix(std::hash<std::string_view>{}(member.key()), json_hash(member.value()));
      }
      return h;
    }
  }
  return 0;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string format_number(const bj::value& number) {
  if (number.is_int64()) return fmt::format("{}", number.get_int64());
  if (number.is_uint64()) return fmt::format("{}", number.get_uint64());
  double d = number.get_double();
  if (is_integral(number) && std::fabs(d) < 9007199254740992.0) {
    return fmt::format("{}", static_cast<std::int64_t>(d));
  }
  return fmt::format("{}", d);
}

std::size_t first_duplicate(const bj::array& items) {
  constexpr std::size_t kPairwise = 8;
  if (items.size() <= kPairwise) {
    for (std::size_t j = 1; j < items.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (json_equal(items[i], items[j])) return j;
      }
    }
    return kNoIndex;
  }
  std::vector<std::pair<std::size_t, std::size_t>> hashed;  // (hash, index)
  hashed.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) hashed.emplace_back(json_hash(items[i]), i);
  std::sort(hashed.begin(), hashed.end());
  std::size_t found = kNoIndex;
  for (std::size_t begin = 0; begin < hashed.size();) {
    std::size_t end = begin + 1;
    while (end < hashed.size() && hashed[end].first == hashed[begin].first) ++end;
    for (std::size_t j = begin + 1; j < end; ++j) {
      for (std::size_t i = begin; i < j; ++i) {
        if (json_equal(items[hashed[i].second], items[hashed[j].second])) {
          found = std::min(found, std::max(hashed[i].second, hashed[j].second));
        }
      }
    }
    begin = end;
  }
  return found;
}

namespace {

// Rewrites the escape that starts at p[i] (a backslash, with p[i + 1] the escaped character)
// into `out`; returns the index of the escape's last character.
std::size_t rewrite_escape(std::string_view p, std::size_t i, bool in_class, std::string& out) {
  char e = p[i + 1];
  std::uint32_t cp = 0;
  if (e == 'u' && i + 2 < p.size() && p[i + 2] == '{') {
    std::size_t close = p.find('}', i + 3);
    if (close != std::string_view::npos && parse_hex(p.substr(i + 3, close - i - 3), cp)) {
      append_code_point(out, cp);
      return close;
    }
  } else if (e == 'u' && i + 6 <= p.size() && parse_hex(p.substr(i + 2, 4), cp)) {
    std::uint32_t low = 0;
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 12 <= p.size() && p[i + 6] == '\\' && p[i + 7] == 'u' &&
        parse_hex(p.substr(i + 8, 4), low) && low >= 0xDC00 && low <= 0xDFFF) {
      append_code_point(out, 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00));
      return i + 11;
    }
    append_code_point(out, cp);
    return i + 5;
  } else if (e == 'c' && i + 2 < p.size() && std::isalpha(static_cast<unsigned char>(p[i + 2]))) {
    append_code_point(out, static_cast<std::uint32_t>(p[i + 2]) % 32);
    return i + 2;
  } else if ((e == 'p' || e == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
    std::size_t close = p.find('}', i + 3);
    if (close != std::string_view::npos) {
      out += '\\';
      out += e;
      out += '{';
      out += unicode_property(p.substr(i + 3, close - i - 3));
      out += '}';
      return close;
    }
  } else if (e == 's' || e == 'S') {
    if (in_class && e == 's') {
      out += kEcmaSpace;
    } else if (!in_class) {
      out += e == 's' ? "[" : "[^";
      out += kEcmaSpace;
      out += ']';
    } else {
      out += "\\S";
    }
    return i + 1;
  }
  out += p[i];
  out += e;
  return i + 1;
}

}  // namespace

std::string ecma_to_re2(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 8);
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      i = rewrite_escape(p, i, in_class, out);
      continue;
    }
    if (!in_class && c == '[') {
      if (p.substr(i, 2) == "[]") {
        out += "[^\\x{0}-\\x{10FFFF}]";
        ++i;
        continue;
      }
      if (p.substr(i, 3) == "[^]") {
        out += "[\\x{0}-\\x{10FFFF}]";
        i += 2;
        continue;
      }
      in_class = true;
    } else if (in_class && c == ']') {
      in_class = false;
    } else if (!in_class && c == '(' && p.substr(i, 3) == "(?<" && i + 3 < p.size() &&
               p[i + 3] != '=' && p[i + 3] != '!') {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace sluice::schema::detail

#include "core/describe.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sluice::core {
namespace {

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string describe_kind(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64: return "an integer";
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

std::string describe_value(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::string:
      return fmt::format("a string of {}", plural(code_points(v.get_string()), "character",
                                                  "characters"));
    case boost::json::kind::array:
      return fmt::format("an array of {}", plural(v.get_array().size(), "item", "items"));
    case boost::json::kind::object:
      return fmt::format("an object with {}", plural(v.get_object().size(), "key", "keys"));
    default:
      return describe_kind(v);
  }
}

}  // namespace sluice::core

namespace sluice::core {

bool is_plain_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string describe_text(std::string_view text) {
  return describe_value(boost::json::value(boost::json::string_view(text.data(), text.size())));
}

std::string show_name(std::string_view name) {
  if (is_plain_name(name)) return std::string(name);
  return describe_text(name);
}

namespace {

// Levenshtein distance, stopping early once every cell of a row is over `cap`.
std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    std::size_t row_min = cur[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > cap) return cap + 1;
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string_view>& candidates,
                                       std::size_t max) {
  std::vector<std::pair<std::size_t, std::string_view>> found;
  if (!is_plain_name(name)) return {};
  for (std::string_view c : candidates) {
    if (c == name || !is_plain_name(c)) continue;
    std::size_t longer = std::max(name.size(), c.size());
    std::size_t cap = std::clamp<std::size_t>(longer / 3, 1, 3);
    // Lengths that far apart cannot be within the cap.
    std::size_t gap = name.size() > c.size() ? name.size() - c.size() : c.size() - name.size();
    if (gap > cap) continue;
    std::size_t d = edit_distance(name, c, cap);
    if (d <= cap) found.emplace_back(d, c);
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size() && out.size() < max; ++i) {
    out.emplace_back(found[i].second);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates) {
  std::vector<std::string> close = closest_names(name, candidates);
  if (close.empty()) return {};
  std::string out = " (did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i) {
    if (i > 0) out += i + 1 == close.size() ? " or " : ", ";
    out += close[i];
  }
  return out + "?)";
}

}  // namespace sluice::core

#include "rpc/members.hpp"

#include <boost/json/parse.hpp>

#include <string>

namespace sluice::rpc {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_ws(std::string_view t, std::size_t i) {
  while (i < t.size() && is_space(t[i])) ++i;
  return i;
}

// One past the closing quote of the string starting at t[i].
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return t.size();
}

// One past the end of the value starting at t[i] (valid JSON assumed).
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return i;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] == '{' || t[i] == '[') {
    int depth = 0;
    while (i < t.size()) {
      char c = t[i];
      if (c == '"') {
        i = skip_string(t, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return i;
  }
  while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && !is_space(t[i])) ++i;
  return i;
}

}  // namespace

std::optional<std::string_view> string_value(std::string_view literal, std::string& scratch) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"') return std::nullopt;
  std::string_view inner = literal.substr(1, literal.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner;
  boost::json::error_code ec;
  boost::json::value v = boost::json::parse(literal, ec);
  if (ec || !v.is_string()) return std::nullopt;
  scratch.assign(v.get_string().data(), v.get_string().size());
  return std::string_view(scratch);
}

void scan_members(std::string_view t, std::span<const std::string_view> keys,
                  std::span<std::optional<std::string_view>> found) {
  for (auto& f : found) f.reset();
  std::size_t i = skip_ws(t, 0);
  if (i >= t.size() || t[i] != '{') return;
  i = skip_ws(t, i + 1);
  std::string scratch;
  while (i < t.size() && t[i] == '"') {
    std::size_t key_end = skip_string(t, i);
    std::optional<std::string_view> key = string_value(t.substr(i, key_end - i), scratch);
    i = skip_ws(t, key_end);
    if (i >= t.size() || t[i] != ':') return;
    i = skip_ws(t, i + 1);
    std::size_t value_end = skip_value(t, i);
    for (std::size_t k = 0; key && k < keys.size(); ++k) {
      if (!found[k] && keys[k] == *key) found[k] = t.substr(i, value_end - i);
    }
    i = skip_ws(t, value_end);
    if (i < t.size() && t[i] == ',') i = skip_ws(t, i + 1);
  }
}

}  // namespace sluice::rpc

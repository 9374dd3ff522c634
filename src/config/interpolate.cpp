#include "config/interpolate.hpp"

#include <algorithm>
#include <optional>

namespace sluice::config {
namespace {

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

void add_unique(std::vector<std::string>& names, std::string_view name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
}

// One `${NAME}` or `${NAME:-default}` reference starting at text[0] == '$'.
struct Reference {
  std::string_view name;
  std::optional<std::string_view> fallback;
  std::size_t length = 0;  // of the whole reference text
};

std::optional<Reference> parse_reference(std::string_view text) {
  if (text.size() < 4 || text[1] != '{' || !is_name_start(text[2])) return std::nullopt;
  std::size_t i = 3;
  while (i < text.size() && is_name_char(text[i])) ++i;
  Reference ref;
  ref.name = text.substr(2, i - 2);
  if (i < text.size() && text[i] == '}') {
    ref.length = i + 1;
    return ref;
  }
  if (text.substr(i, 2) != ":-") return std::nullopt;
  std::size_t close = text.find('}', i + 2);
  if (close == std::string_view::npos) return std::nullopt;
  ref.fallback = text.substr(i + 2, close - i - 2);
  ref.length = close + 1;
  return ref;
}

}  // namespace

Expansion interpolate(std::string_view text, const EnvLookup& lookup, CharFilter rejects) {
  Expansion out;
  out.text.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t dollar = text.find("${", i);
    if (dollar == std::string_view::npos) break;
    out.text.append(text.substr(i, dollar - i));
    std::optional<Reference> ref = parse_reference(text.substr(dollar));
    if (!ref) {
      out.text.push_back('$');
      i = dollar + 1;
      continue;
    }
    std::optional<std::string> value;
    if (lookup) value = lookup(ref->name);
    bool usable =
        value && (rejects == nullptr || std::none_of(value->begin(), value->end(), rejects));
    if (value && !usable) add_unique(out.unusable, ref->name);
    if (usable && !value->empty()) {
      out.text.append(*value);
    } else if (ref->fallback) {
      out.text.append(*ref->fallback);
    } else if (!value) {
      add_unique(out.unset, ref->name);
    }
    i = dollar + ref->length;
  }
  if (i < text.size()) out.text.append(text.substr(i));
  return out;
}

}  // namespace sluice::config

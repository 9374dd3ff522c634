#include "config/json_text.hpp"

#include "core/json.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>

#include <algorithm>

namespace sluice::config {
namespace bj = boost::json;
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The scanner below runs only over texts Boost.JSON accepted, so it finds the spans of
// members; it never decides what is valid.
std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size()) {
    if (is_blank(t[i])) {
      ++i;
    } else if (t.substr(i, 2) == "//") {
      std::size_t end = t.find('\n', i);
      i = end == npos ? t.size() : end + 1;
    } else if (t.substr(i, 2) == "/*") {
      std::size_t end = t.find("*/", i + 2);
      i = end == npos ? t.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

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
      if (c == '/' && (t.substr(i, 2) == "//" || t.substr(i, 2) == "/*")) {
        i = skip_space(t, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return i;
  }
  while (i < t.size() && !is_blank(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']' &&
         t[i] != '/') {
    ++i;
  }
  return i;
}

struct Member {
  std::string key;
  std::size_t key_begin = 0, value_begin = 0, value_end = 0;
  std::size_t comma = npos;  // the comma after the value
};

struct ObjectView {
  std::size_t open = 0, close = 0;
  std::vector<Member> members;
  const Member* find(std::string_view key) const {
    for (const Member& m : members) {
      if (m.key == key) return &m;
    }
    return nullptr;
  }
};

ObjectView object_at(std::string_view t, std::size_t open) {
  ObjectView view;
  view.open = open;
  std::size_t i = skip_space(t, open + 1);
  std::string scratch;
  while (i < t.size() && t[i] == '"') {
    Member m;
    m.key_begin = i;
    std::size_t key_end = skip_string(t, i);
    std::optional<std::string_view> key =
        core::json::string_value(t.substr(i, key_end - i), scratch);
    m.key = key ? std::string(*key) : std::string();
    i = skip_space(t, skip_space(t, key_end) + 1);  // past the ':'
    m.value_begin = i;
    m.value_end = skip_value(t, i);
    i = skip_space(t, m.value_end);
    if (i < t.size() && t[i] == ',') {
      m.comma = i;
      i = skip_space(t, i + 1);
    }
    view.members.push_back(std::move(m));
  }
  view.close = i;
  return view;
}

std::size_t root_begin(std::string_view t) {
  return skip_space(t, t.starts_with(kBom) ? kBom.size() : 0);
}

std::size_t line_start(std::string_view t, std::size_t i) {
  std::size_t nl = i == 0 ? npos : t.rfind('\n', i - 1);
  return nl == npos ? 0 : nl + 1;
}

// Whether only spaces and tabs are between the start of i's line and i.
bool first_on_line(std::string_view t, std::size_t i) {
  std::size_t start = line_start(t, i);
  return t.substr(start, i - start).find_first_not_of(" \t") == npos;
}

std::string indent_of(std::string_view t, std::size_t i) {
  std::size_t start = line_start(t, i);
  std::string_view line = t.substr(start, i - start);
  return std::string(line.substr(0, std::min(line.find_first_not_of(" \t"), line.size())));
}

std::string pretty(const bj::value& v, const std::string& indent, const std::string& unit,
                   std::string_view nl) {
  std::string out;
  const std::string inner = indent + unit;
  if (v.is_object() && !v.get_object().empty()) {
    out += '{';
    bool first = true;
    for (const auto& member : v.get_object()) {
      out += first ? "" : ",";
      first = false;
      out.append(nl).append(inner).append(core::json::quote(member.key())).append(": ");
      out += pretty(member.value(), inner, unit, nl);
    }
    out.append(nl).append(indent) += '}';
    return out;
  }
  if (v.is_array() && !v.get_array().empty()) {
    out += '[';
    bool first = true;
    for (const bj::value& item : v.get_array()) {
      out += first ? "" : ",";
      first = false;
      out.append(nl).append(inner) += pretty(item, inner, unit, nl);
    }
    out.append(nl).append(indent) += ']';
    return out;
  }
  return bj::serialize(v);
}

std::optional<bj::value> parse_value(std::string_view body, bool jsonc, std::size_t& offset,
                                     std::string& problem) {
  bj::parse_options options;
  options.allow_comments = jsonc;
  options.allow_trailing_commas = jsonc;
  options.max_depth = 1000;
  bj::stream_parser parser({}, options);
  bj::error_code ec;
  offset = parser.write_some(body.data(), body.size(), ec);
  if (!ec) {
    parser.finish(ec);
    if (ec) offset = body.size();
  }
  if (ec) {
    problem = "invalid JSON: " + ec.message();
    return std::nullopt;
  }
  return parser.release();
}

}  // namespace

JsonTextFailure place_of(std::string_view text, std::size_t offset, std::string problem) {
  JsonTextFailure failure;
  failure.offset = std::min(offset, text.size());
  std::string_view before = text.substr(0, failure.offset);
  failure.line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  failure.column = failure.offset - line_start(text, failure.offset) + 1;
  failure.problem = std::move(problem);
  return failure;
}

std::optional<JsonText> JsonText::parse(std::string text, bool jsonc, JsonTextFailure& failure) {
  std::string_view body = text;
  std::size_t base = 0;
  if (body.starts_with(kBom)) {
    body.remove_prefix(kBom.size());
    base = kBom.size();
  }
  if (body.find_first_not_of(" \t\r\n") == npos) return JsonText(std::move(text), jsonc, nullptr);
  std::size_t offset = 0;
  std::string problem;
  std::optional<bj::value> value = parse_value(body, jsonc, offset, problem);
  if (!value) {
    failure = place_of(text, base + offset, std::move(problem));
    return std::nullopt;
  }
  if (!value->is_object()) {
    failure = place_of(text, root_begin(text), "the top level is not an object");
    return std::nullopt;
  }
  return JsonText(std::move(text), jsonc, std::move(*value));
}

bool JsonText::commit(std::string text) {
  JsonTextFailure failure;
  std::optional<JsonText> again = parse(std::move(text), jsonc_, failure);
  if (!again) {
    edit_failed_ = true;
    return false;
  }
  text_ = std::move(again->text_);
  value_ = std::move(again->value_);
  return true;
}

std::optional<std::size_t> JsonText::offset_of(const Path& path) const {
  if (value_.is_null()) return std::nullopt;
  std::size_t pos = root_begin(text_);
  for (const std::string& key : path) {
    if (pos >= text_.size() || text_[pos] != '{') return std::nullopt;
    ObjectView view = object_at(text_, pos);
    const Member* member = view.find(key);
    if (member == nullptr) return std::nullopt;
    pos = member->value_begin;
  }
  return pos;
}

std::optional<std::string> JsonText::duplicate_key(const Path& path) const {
  std::optional<std::size_t> pos = offset_of(path);
  if (!pos || text_[*pos] != '{') return std::nullopt;
  ObjectView view = object_at(text_, *pos);
  std::vector<std::string_view> keys;
  for (const Member& m : view.members) keys.push_back(m.key);
  std::sort(keys.begin(), keys.end());
  auto twice = std::adjacent_find(keys.begin(), keys.end());
  if (twice == keys.end()) return std::nullopt;
  return std::string(*twice);
}

bool JsonText::remove(const Path& path) {
  if (path.empty()) return false;
  std::optional<std::size_t> open = offset_of(Path(path.begin(), path.end() - 1));
  if (!open || text_[*open] != '{') return false;
  ObjectView view = object_at(text_, *open);
  auto it = std::find_if(view.members.begin(), view.members.end(),
                         [&](const Member& m) { return m.key == path.back(); });
  if (it == view.members.end()) return false;
  std::string_view t = text_;
  std::size_t begin = it->key_begin, end = it->value_end;
  if (it->comma != npos) {
    end = it->comma + 1;
    std::size_t eol = t.find('\n', end);
    std::string_view rest = eol == npos ? std::string_view() : t.substr(end, eol - end);
    std::size_t word = rest.find_first_not_of(" \t\r");
    // A comment after the comma, on the member's own line, is about the member.
    bool rest_blank = eol != npos && (word == npos || rest.substr(word, 2) == "//");
    if (first_on_line(t, begin) && rest_blank) {
      begin = line_start(t, begin);
      end = eol + 1;
    } else {
      end = std::min(t.find_first_not_of(" \t", end), t.size());
    }
  } else if (it != view.members.begin()) {
    begin = std::prev(it)->comma;  // the last member: the comma before it goes with it
  } else {
    begin = view.open + 1;  // the only member
    end = view.close;
  }
  std::string edited = text_;
  edited.erase(begin, end - begin);
  return commit(std::move(edited));
}

std::string JsonText::unit() const {
  std::size_t root = root_begin(text_);
  if (root < text_.size() && text_[root] == '{') {
    ObjectView view = object_at(text_, root);
    if (!view.members.empty() && first_on_line(text_, view.members.front().key_begin)) {
      std::string indent = indent_of(text_, view.members.front().key_begin);
      if (!indent.empty()) return indent;
    }
  }
  return "  ";
}

bool JsonText::insert_member(std::size_t open, const std::string& key, const bj::value& value) {
  std::string_view t = text_;
  const std::string_view nl = t.find("\r\n") != npos ? "\r\n" : "\n";
  ObjectView view = object_at(t, open);
  const std::string key_text = core::json::quote(key) + ": ";
  std::string edited = text_;
  if (view.members.empty()) {
    const std::size_t root = root_begin(t);
    if (t.substr(root, skip_value(t, root) - root).find('\n') == npos) {  // a one-line file
      edited.replace(open + 1, view.close - open - 1, key_text + bj::serialize(value));
    } else {
      const std::string base = indent_of(t, open);
      const std::string inner = base + unit();
      std::string member = std::string(nl) + inner + key_text + pretty(value, inner, unit(), nl);
      edited.replace(open + 1, view.close - open - 1, member + std::string(nl) + base);
    }
    return commit(std::move(edited));
  }
  const Member& last = view.members.back();
  const bool trailing_comma = last.comma != npos;
  const std::size_t after = trailing_comma ? last.comma + 1 : last.value_end;
  if (!first_on_line(t, last.key_begin)) {  // a compact object: `{"a": 1, "b": 2}`
    std::string member = key_text + bj::serialize(value);
    edited.insert(after, trailing_comma ? " " + member + "," : ", " + member);
    return commit(std::move(edited));
  }
  const std::string indent = indent_of(t, last.key_begin);
  std::size_t at = after;
  std::size_t eol = t.find('\n', after);
  if (eol != npos && eol < view.close) {
    std::string_view rest = t.substr(after, eol - after);
    std::size_t word = rest.find_first_not_of(" \t\r");
    if (word == npos || rest.substr(word, 2) == "//")
      at = (eol > 0 && t[eol - 1] == '\r') ? eol - 1 : eol;
  }
  std::string member = std::string(nl) + indent + key_text + pretty(value, indent, unit(), nl);
  edited.insert(at, trailing_comma ? member + "," : member);
  if (!trailing_comma) edited.insert(last.value_end, ",");
  return commit(std::move(edited));
}

bool JsonText::set(const Path& path, const bj::value& value) {
  if (path.empty()) return false;
  if (value_.is_null() && !commit("{\n}\n")) return false;
  std::size_t pos = root_begin(text_);
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (pos >= text_.size() || text_[pos] != '{') return false;
    ObjectView view = object_at(text_, pos);
    const Member* member = view.find(path[i]);
    if (member == nullptr) {
      bj::value wrapped = value;
      for (std::size_t j = path.size() - 1; j > i; --j) wrapped = bj::object{{path[j], wrapped}};
      return insert_member(pos, path[i], wrapped);
    }
    if (i + 1 == path.size()) {
      const std::string_view nl = text_.find("\r\n") != npos ? "\r\n" : "\n";
      std::string replacement = first_on_line(text_, member->key_begin)
                                    ? pretty(value, indent_of(text_, member->key_begin), unit(), nl)
                                    : bj::serialize(value);
      std::string edited = text_;
      edited.replace(member->value_begin, member->value_end - member->value_begin, replacement);
      return commit(std::move(edited));
    }
    pos = member->value_begin;
  }
  return false;
}

std::string masked_json(std::string_view t, const std::vector<std::string_view>& shown) {
  struct Frame {
    bool object;
    bool shown;  // an array's items are shown
    std::string key;
    bool expecting_key;
  };
  auto is_shown = [&](std::string_view key) {
    return std::find(shown.begin(), shown.end(), key) != shown.end();
  };
  std::vector<Frame> stack;
  std::string out;
  out.reserve(t.size());
  std::string scratch;
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t j = skip_space(t, i);
    out.append(t.substr(i, j - i));
    if ((i = j) >= t.size()) break;
    const char c = t[i];
    if (c == '{' || c == '[') {
      bool items_shown =
          !stack.empty() && (stack.back().object ? is_shown(stack.back().key) : stack.back().shown);
      stack.push_back({c == '{', c == '[' && items_shown, {}, c == '{'});
      out += c;
      ++i;
    } else if (c == '}' || c == ']' || c == ':' || c == ',') {
      if ((c == '}' || c == ']') && !stack.empty()) stack.pop_back();
      if (c == ':' && !stack.empty()) stack.back().expecting_key = false;
      if (c == ',' && !stack.empty() && stack.back().object) stack.back().expecting_key = true;
      out += c;
      ++i;
    } else if (c == '"') {
      std::size_t end = skip_string(t, i);
      std::string_view literal = t.substr(i, end - i);
      if (!stack.empty() && stack.back().object && stack.back().expecting_key) {
        std::optional<std::string_view> key = core::json::string_value(literal, scratch);
        stack.back().key = key ? std::string(*key) : std::string();
        out.append(literal);
      } else {
        bool show = !stack.empty() &&
                    (stack.back().object ? is_shown(stack.back().key) : stack.back().shown);
        out.append(show ? literal : std::string_view("\"\u2026\""));
      }
      i = end;
    } else {
      std::size_t end = std::max(skip_value(t, i), i + 1);
      out.append(t.substr(i, end - i));
      i = end;
    }
  }
  return out;
}

}  // namespace sluice::config

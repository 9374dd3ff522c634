// Where a Codex server sits in config.toml, by line: the regions toml++ records for every key
// and value (node.source()) say which lines hold what, so an edit removes exactly a server's
// lines and keeps every other byte of the file.
#include "config/detail/codex_toml.hpp"

namespace sluice::config::detail {
namespace {

std::string_view trim_left(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_header_table(const toml::table& table, const TextLines& lines) {
  return !table.is_inline() && lines.is_header(table.source().begin.line);
}

// Every line that starts a table header, in the whole document ([x] and [[x]]).
void collect_headers(const toml::table& table, const TextLines& lines, std::set<std::size_t>& out) {
  for (auto&& [key, node] : table) {
    if (const toml::table* sub = node.as_table(); sub != nullptr && !sub->is_inline()) {
      if (is_header_table(*sub, lines)) out.insert(sub->source().begin.line);
      collect_headers(*sub, lines, out);
    } else if (const toml::array* array = node.as_array(); array != nullptr) {
      for (const toml::node& element : *array) {
        const toml::table* item = element.as_table();
        if (item == nullptr || item->is_inline()) continue;
        if (is_header_table(*item, lines)) out.insert(item->source().begin.line);
        collect_headers(*item, lines, out);
      }
    }
  }
}

void add_range(std::set<std::size_t>& out, std::size_t first, std::size_t last) {
  for (std::size_t l = first; l != 0 && l <= last; ++l) out.insert(l);
}

// The lines of one key-value (a multi-line array or string spans several).
void add_key_value(const toml::key& key, const toml::node& node, std::set<std::size_t>& out) {
  add_range(out, key.source().begin.line, node.source().end.line);
}

// The headers and the key-value lines of a non-inline table and everything below it.
void collect_subtree(const toml::table& table, const TextLines& lines,
                     std::set<std::size_t>& headers, std::set<std::size_t>& key_values) {
  if (is_header_table(table, lines)) headers.insert(table.source().begin.line);
  for (auto&& [key, node] : table) {
    const toml::table* sub = node.as_table();
    const toml::array* array = node.as_array();
    if (sub != nullptr && !sub->is_inline()) {
      collect_subtree(*sub, lines, headers, key_values);
    } else if (array != nullptr && array->is_array_of_tables() && !array->empty() &&
               !array->front().as_table()->is_inline()) {
      for (const toml::node& element : *array) {
        collect_subtree(*element.as_table(), lines, headers, key_values);
      }
    } else {
      add_key_value(key, node, key_values);
    }
  }
}

// Each header's block: the header line through the last key-value line before the next header
// (the comments between them included; those after the last key-value stay).
void add_blocks(const std::set<std::size_t>& own_headers, const std::set<std::size_t>& all_headers,
                const std::set<std::size_t>& key_values, std::set<std::size_t>& out) {
  for (std::size_t header : own_headers) {
    auto next = all_headers.upper_bound(header);
    std::size_t limit = next == all_headers.end() ? static_cast<std::size_t>(-1) : *next;
    std::size_t last = header;
    for (auto it = key_values.upper_bound(header); it != key_values.end() && *it < limit; ++it) {
      last = *it;
    }
    add_range(out, header, last);
  }
}

// A removal that leaves two blank lines where it took a run of lines takes one of them too.
void drop_doubled_blanks(const TextLines& lines, std::set<std::size_t>& drop) {
  std::set<std::size_t> extra;
  auto blank = [&](std::size_t l) {
    return l >= 1 && l <= lines.size() && trim(lines.line(l)).empty();
  };
  for (auto it = drop.begin(); it != drop.end();) {
    std::size_t first = *it;
    std::size_t last = first;
    while (++it != drop.end() && *it == last + 1) last = *it;
    bool before = first == 1 || blank(first - 1);
    if (before && blank(last + 1)) {
      extra.insert(last + 1);
    } else if (last == lines.size() && first > 1 && blank(first - 1)) {
      extra.insert(first - 1);
    }
  }
  drop.merge(extra);
}

}  // namespace

TextLines::TextLines(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines_.push_back(text.substr(start, end - start));
    start = end;
  }
  if (!lines_.empty() && lines_.front().ends_with("\r\n")) newline_ = "\r\n";
}

std::string_view TextLines::line(std::size_t number) const {
  if (number == 0 || number > lines_.size()) return {};
  std::string_view l = lines_[number - 1];
  if (l.ends_with('\n')) l.remove_suffix(1);
  if (l.ends_with('\r')) l.remove_suffix(1);
  return l;
}

bool TextLines::is_blank_or_comment(std::size_t number) const {
  std::string_view l = trim(line(number));
  return l.empty() || l.front() == '#';
}

bool TextLines::is_header(std::size_t number) const {
  std::string_view l = trim_left(line(number));
  return !l.empty() && l.front() == '[';
}

bool TextLines::is_header_of(std::size_t number, std::string_view name) const {
  std::string_view l = trim_left(line(number));
  if (!l.starts_with('[') || l.starts_with("[[")) return false;
  std::size_t close = l.find(']');
  if (close == std::string_view::npos) return false;
  std::string_view key = trim(l.substr(1, close - 1));
  if (key.size() == name.size() + 2 && (key.front() == '"' || key.front() == '\'') &&
      key.back() == key.front()) {
    key = key.substr(1, key.size() - 2);
  }
  return key == name;
}

std::string TextLines::without(const std::set<std::size_t>& drop) const {
  std::string out;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    if (!drop.contains(i + 1)) out += lines_[i];
  }
  return out;
}

std::string TextLines::with_after(std::size_t after, std::string_view insert) const {
  std::string out;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    out += lines_[i];
    if (i + 1 == after) {
      if (!lines_[i].ends_with('\n')) out += newline_;
      out += insert;
    }
  }
  if (after == 0 || after > lines_.size()) out += insert;
  return out;
}

std::set<std::size_t> codex_server_lines(const toml::table& root, const TextLines& lines,
                                         std::string_view name) {
  std::set<std::size_t> drop;
  const toml::table* servers = root["mcp_servers"].as_table();
  if (servers == nullptr) return drop;
  auto found = servers->find(name);
  if (found == servers->end()) return drop;
  const toml::table* server = found->second.as_table();
  if (server == nullptr || server->is_inline()) {
    add_key_value(found->first, found->second, drop);
  } else {
    std::set<std::size_t> all_headers;
    collect_headers(root, lines, all_headers);
    std::set<std::size_t> own_headers;
    std::set<std::size_t> key_values;
    collect_subtree(*server, lines, own_headers, key_values);
    drop = key_values;
    add_blocks(own_headers, all_headers, key_values, drop);
  }
  drop_doubled_blanks(lines, drop);
  return drop;
}

std::size_t codex_servers_block_end(const toml::table& root, const TextLines& lines) {
  const toml::table* servers = root["mcp_servers"].as_table();
  if (servers == nullptr) return 0;
  std::size_t header = servers->source().begin.line;
  if (!lines.is_header_of(header, "mcp_servers")) return 0;
  std::set<std::size_t> all_headers;
  collect_headers(root, lines, all_headers);
  auto next = all_headers.upper_bound(header);
  std::size_t limit = next == all_headers.end() ? lines.size() + 1 : *next;
  std::set<std::size_t> own_headers;
  std::set<std::size_t> key_values;
  collect_subtree(*servers, lines, own_headers, key_values);
  std::size_t last = header;
  for (auto it = key_values.upper_bound(header); it != key_values.end() && *it < limit; ++it) {
    last = *it;
  }
  return last;
}

}  // namespace sluice::config::detail

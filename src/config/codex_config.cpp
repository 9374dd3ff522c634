// Codex's config.toml (~/.codex/config.toml, or $CODEX_HOME/config.toml) as a ClientDocument.
// An edit works on lines: it removes the lines toml++ says a server occupies
// (detail::codex_server_lines), adds the new entry in the file's style, then parses the result
// again and keeps it only when it parses to exactly the old document with that one change;
// every other byte (comments, other tables, key order, line endings) stays as it was. An edit
// that would not come out so is not made: the document stays as it was (and the caller's own
// check of the result, that the entry is there or the server gone, refuses to write).
#include "config/client_config.hpp"
#include "config/detail/codex_toml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>

namespace sluice::config {
namespace {

using detail::TextLines;

// A toml++ description with every quoted part (a key name, a character of the file) elided,
// so that the message stays value-free.
std::string value_free(std::string_view description) {
  std::string out;
  char quote = 0;
  for (char c : description) {
    if (quote != 0) {
      if (c == quote) {
        out += "...";
        out += c;
        quote = 0;
      }
      continue;
    }
    out += c;
    if (c == '\'' || c == '"' || c == '`') quote = c;
  }
  return out;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04X}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string toml_key(std::string_view key) {
  bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return bare ? std::string(key) : toml_string(key);
}

std::string toml_args(const std::vector<std::string>& args) {
  std::string out = "[";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ", ";
    out += toml_string(args[i]);
  }
  return out + "]";
}

// Servers as the file lists them: toml++ keeps a table's keys sorted, the file's order is in
// the keys' source regions.
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(
    const toml::table& servers) {
  std::vector<std::pair<const toml::key*, const toml::node*>> out;
  for (auto&& [key, node] : servers) out.emplace_back(&key, &node);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const toml::source_position& pa = a.first->source().begin;
    const toml::source_position& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return out;
}

// `root` with an empty `mcp_servers` table taken out: a file whose last server went may keep
// its `[mcp_servers]` header or lose the table entirely, and both say the same.
toml::table normalized(toml::table root) {
  if (const toml::table* servers = root["mcp_servers"].as_table();
      servers != nullptr && servers->empty()) {
    root.erase("mcp_servers");
  }
  return root;
}

// Where a layout sluice cannot edit line by line is, or nullopt when every server can be.
std::optional<ParseFailure> uneditable(const toml::table& root) {
  const toml::node* servers = root.get("mcp_servers");
  if (servers == nullptr) return std::nullopt;
  const toml::source_position& at = servers->source().begin;
  if (!servers->is_table()) {
    return ParseFailure{at.line, at.column,
                        fmt::format("`mcp_servers` is {}; Codex expects a table",
                                    detail::toml_type_name(*servers))};
  }
  if (servers->as_table()->is_inline()) {
    return ParseFailure{
        at.line, at.column,
        "`mcp_servers` is an inline table, which sluice cannot edit without rewriting it: "
        "write each server as an [mcp_servers.NAME] table"};
  }
  return std::nullopt;
}

class CodexDocument final : public ClientDocument {
 public:
  CodexDocument(std::string text, toml::table root)
      : text_(std::move(text)), root_(std::move(root)) {}

  ClientServers servers() const override {
    ClientServers out;
    const toml::table* servers = root_["mcp_servers"].as_table();
    if (servers == nullptr) return out;
    for (auto [key, node] : in_file_order(*servers)) {
      auto server = detail::codex_server(key->str(), *node);
      if (auto* taken = std::get_if<ClientServer>(&server)) {
        out.servers.push_back(std::move(*taken));
      } else {
        out.skipped.push_back(std::get<SkippedServer>(std::move(server)));
      }
    }
    return out;
  }

  std::optional<std::string> sluice_entry() const override {
    const toml::table* servers = root_["mcp_servers"].as_table();
    if (servers == nullptr) return std::nullopt;
    for (auto [key, node] : in_file_order(*servers)) {
      const toml::table* server = node->as_table();
      std::optional<std::string> command =
          server == nullptr ? std::nullopt : (*server)["command"].value<std::string>();
      if (command && std::filesystem::path(*command).filename() == "sluice") {
        return std::string(key->str());
      }
    }
    return std::nullopt;
  }

  void remove_server(std::string_view name, std::string_view scope) override {
    if (scope != "user" || !has_server(name)) return;
    TextLines lines(text_);
    std::string edited = lines.without(detail::codex_server_lines(root_, lines, name));
    toml::table expected = root_;
    expected["mcp_servers"].as_table()->erase(name);
    commit(std::move(edited), expected);
  }

  void set_sluice_entry(std::string_view name, const SluiceLaunch& launch) override {
    TextLines lines(text_);
    std::string base = lines.without(detail::codex_server_lines(root_, lines, name));
    std::optional<toml::table> base_root = try_parse(base);
    if (!base_root) return;
    bool inline_style = uses_inline_entries(name);
    TextLines base_lines(base);
    std::string_view nl = base_lines.newline();
    std::size_t block_end = detail::codex_servers_block_end(*base_root, base_lines);
    std::string edited;
    if (inline_style && block_end != 0) {
      edited = base_lines.with_after(
          block_end, fmt::format("{} = {{ command = {}, args = {} }}{}", toml_key(name),
                                 toml_string(launch.command), toml_args(launch.args), nl));
    } else {
      edited = base;
      if (!edited.empty() && !edited.ends_with('\n')) edited += nl;
      if (!edited.empty() && !base_lines.is_blank_or_comment(base_lines.size())) edited += nl;
      edited += fmt::format("[mcp_servers.{}]{}command = {}{}args = {}{}", toml_key(name), nl,
                            toml_string(launch.command), nl, toml_args(launch.args), nl);
    }
    toml::table expected = root_;
    if (!expected.contains("mcp_servers")) expected.insert("mcp_servers", toml::table{});
    toml::table entry;
    entry.insert("command", launch.command);
    toml::array args;
    for (const std::string& arg : launch.args) args.push_back(arg);
    entry.insert("args", std::move(args));
    expected["mcp_servers"].as_table()->insert_or_assign(name, std::move(entry));
    commit(std::move(edited), expected);
  }

  std::string text() const override { return text_; }

 private:
  bool has_server(std::string_view name) const {
    const toml::table* servers = root_["mcp_servers"].as_table();
    return servers != nullptr && servers->contains(name);
  }

  // True when the file writes its other servers as `NAME = { ... }` lines under
  // `[mcp_servers]`: the new entry follows them.
  bool uses_inline_entries(std::string_view except) const {
    const toml::table* servers = root_["mcp_servers"].as_table();
    if (servers == nullptr) return false;
    for (auto&& [key, node] : *servers) {
      const toml::table* server = node.as_table();
      if (key.str() != except && server != nullptr && server->is_inline()) return true;
    }
    return false;
  }

  static std::optional<toml::table> try_parse(const std::string& text) {
    try {
      return toml::parse(text);
    } catch (const toml::parse_error&) {
      return std::nullopt;
    }
  }

  // Keeps `edited` only when it parses to `expected`; else the document stays as it was.
  void commit(std::string edited, const toml::table& expected) {
    std::optional<toml::table> parsed = try_parse(edited);
    if (!parsed || normalized(*parsed) != normalized(expected)) return;
    text_ = std::move(edited);
    root_ = *std::move(parsed);
  }

  std::string text_;
  toml::table root_;
};

}  // namespace

ParsedClientConfig parse_codex_config(std::string_view text) {
  ParsedClientConfig out;
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    out.failure = ParseFailure{e.source().begin.line, e.source().begin.column,
                               "not valid TOML: " + value_free(e.description())};
    return out;
  }
  if (std::optional<ParseFailure> failure = uneditable(root)) {
    out.failure = *std::move(failure);
    return out;
  }
  out.document = std::make_unique<CodexDocument>(std::string(text), std::move(root));
  return out;
}

}  // namespace sluice::config

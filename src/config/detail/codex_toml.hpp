#pragma once
// Internal to src/config: the parts of Codex's config.toml support (codex_config.cpp) that read
// one server table into sluice's entry shape (codex_entry.cpp) and find the lines a server
// occupies in the file (codex_layout.cpp). Only src/config includes this header (toml++ is
// linked privately to sluice_config).
//
// Pure functions over a parsed toml++ document and the text it was parsed from; value-free
// reasons and notes by construction (Codex's key names, counts and TOML types, never a value);
// safe from any thread.
#include "config/client_config.hpp"

#include <toml++/toml.h>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::config::detail {

// "a string", "an integer", "a table", ... for a TOML node (value-free).
std::string_view toml_type_name(const toml::node& node);

// One entry of `[mcp_servers]`, in sluice's `.mcp.json` entry shape, or why sluice cannot take
// it (a shape Codex itself refuses, or a key sluice cannot carry over and must not drop).
std::variant<ClientServer, SkippedServer> codex_server(std::string_view name,
                                                       const toml::node& node);

// The text split into lines, each with its terminator. It holds views into the text it was
// built from, which must outlive it; a plain value, no thread rules.
class TextLines {
 public:
  explicit TextLines(std::string_view text);
  std::size_t size() const { return lines_.size(); }
  // Line `number` (from 1) without its terminator; empty past the end.
  std::string_view line(std::size_t number) const;
  // True when line `number` holds only blanks, or only a comment.
  bool is_blank_or_comment(std::size_t number) const;
  // True when line `number` starts (after blanks) with a table header `[`.
  bool is_header(std::size_t number) const;
  // True when line `number` is the header of exactly the table `[NAME]` (a bare or quoted key).
  bool is_header_of(std::size_t number, std::string_view name) const;
  // "\r\n" when the text's first line ends so, else "\n".
  std::string_view newline() const { return newline_; }
  // The text without the lines in `drop`.
  std::string without(const std::set<std::size_t>& drop) const;
  // The text with `insert` (whole lines, terminated) placed after line `after` (0: first).
  std::string with_after(std::size_t after, std::string_view insert) const;

 private:
  std::vector<std::string_view> lines_;  // each with its terminator
  std::string_view newline_ = "\n";
};

// The lines that hold the server `name` of the root's `[mcp_servers]`: its `[mcp_servers.NAME]`
// table and sub-tables (each header with the key-values and comments under it), its dotted keys
// and its inline table; blank lines left doubled by the removal go too. Empty when the root has
// no such server. The root's `mcp_servers` must not be an inline table (parse refuses that).
std::set<std::size_t> codex_server_lines(const toml::table& root, const TextLines& lines,
                                         std::string_view name);

// The last line of the block of the `[mcp_servers]` header (its header or its last key-value),
// or 0 when the file has no `[mcp_servers]` header.
std::size_t codex_servers_block_end(const toml::table& root, const TextLines& lines);

}  // namespace sluice::config::detail

#pragma once
// A JSON (or JSONC: comments and trailing commas, as VS Code writes them) document edited in
// place, byte by byte, for the client config files that `sluice setup` and `sluice import`
// change (client_config.hpp) and for sluice's own user-level `mcp.json`.
//
// Contract: parse() accepts a text Boost.JSON accepts (with comments and trailing commas when
// `jsonc`), or a blank text (an empty document). An edit touches only the bytes of the member
// it names: every other member keeps its text, its key order, its number spelling (1.0 stays
// 1.0, 1e400 stays 1e400) and the comments around it. A member that is added goes at the end
// of its object, indented like its siblings (or like the file, in an empty object), pretty-
// printed the way JSON.stringify(value, null, indent) does; a compact one-line file gets a
// compact member. After every edit the text is parsed again; should that ever fail, the edit
// is undone and edit_failed() says so, so a caller never writes a text that does not parse.
// Keys are compared after unescaping. Nothing here throws for anything in the text.
// Threading: none; a plain value owned by its caller.
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

// Where and why a text could not be parsed (line and column from 1).
struct JsonTextFailure {
  std::size_t line = 0;
  std::size_t column = 0;
  std::size_t offset = 0;
  std::string problem;
};

// The line and column (from 1) of byte `offset` of `text`.
JsonTextFailure place_of(std::string_view text, std::size_t offset, std::string problem);

class JsonText {
 public:
  using Path = std::vector<std::string>;

  // The text as a document, or where it fails to parse.
  static std::optional<JsonText> parse(std::string text, bool jsonc, JsonTextFailure& failure);

  const std::string& text() const { return text_; }
  // The document (null for a blank text).
  const boost::json::value& value() const { return value_; }
  bool edit_failed() const { return edit_failed_; }

  // The byte offset where the value at `path` starts; nullopt when it is not there.
  std::optional<std::size_t> offset_of(const Path& path) const;
  // The first key that occurs twice in the object at `path` (nullopt: none, or no object).
  std::optional<std::string> duplicate_key(const Path& path) const;

  // Removes the member at `path`; false when there is none.
  bool remove(const Path& path);
  // Sets the member at `path` to `value`: replaces its value, or adds it at the end of its
  // object, creating the objects on the way. False when something on the way is not an object.
  bool set(const Path& path, const boost::json::value& value);

 private:
  JsonText(std::string text, bool jsonc, boost::json::value value)
      : text_(std::move(text)), jsonc_(jsonc), value_(std::move(value)) {}
  // Replaces the text; parses it again; keeps the old one (edit_failed_) when that fails.
  bool commit(std::string text);
  bool insert_member(std::size_t open, const std::string& key, const boost::json::value& value);
  std::string unit() const;

  std::string text_;
  bool jsonc_ = false;
  boost::json::value value_;
  bool edit_failed_ = false;
};

// `text` (JSON or JSONC that parses) with every string value replaced by "…" except those of
// members named in `shown` (and the items of arrays such members hold): what a dry run may
// print of a file that holds secrets. Keys, numbers and the layout are kept, so a line diff of
// two masked texts is the diff of the texts.
std::string masked_json(std::string_view text, const std::vector<std::string_view>& shown);

}  // namespace sluice::config

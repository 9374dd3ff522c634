#pragma once
// Strict JSON parsing over Boost.JSON and raw-span access for byte-exact forwarding.
//
// parse_strict() builds the one editable DOM (boost::json::value), rejects duplicate keys
// at every level and bounds nesting depth. With Storage::arena (a client message's, parsed on
// every call) the DOM lives in one arena, a shared boost::json::monotonic_resource freed with the
// last value that uses it: what is copied out of it, or added to it, keeps and grows that arena;
// a DOM kept long (a listing, a file) stays on the heap. Its error text names the kind of problem
// and the byte offset, never the text. member_span() finds the raw text of a member of an object
// that parse_strict() already accepted, so ids and payloads can be spliced through untouched
// (Boost.JSON rewrites numbers when it serialises: 1.0 -> 1E0, huge integers -> doubles).
#include "core/error.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sluice::core::json {

struct ParseLimits {
  std::size_t max_depth = 64;
};

enum class ParseProblem { syntax, too_deep, duplicate_key };

struct ParseError {
  ParseProblem problem = ParseProblem::syntax;
  std::string message;  // value-free
};

enum class Storage { heap, arena };

boost::system::result<boost::json::value, ParseError> parse_strict(std::string_view text,
                                                                   const ParseLimits& limits,
                                                                   Storage storage = Storage::heap);

// Checks that `text` is one well-formed JSON document within the depth limit, without
// building a DOM (for payloads that are only spliced through).
std::optional<ParseError> validate(std::string_view text, const ParseLimits& limits);

// The raw text of member `key` of the JSON object whose text is `object_text` (leading and
// trailing whitespace allowed). Precondition: `object_text` is valid JSON (it came from a
// document parse_strict accepted). Returns nullopt when the text is not an object or has no
// such member. Keys are compared after unescaping.
std::optional<std::string_view> member_span(std::string_view object_text, std::string_view key);

// The value of the string member `key` of the object `object_text`; nullopt when there is no
// such member or it is not a string. Same precondition as member_span.
std::optional<std::string> string_member(std::string_view object_text, std::string_view key);

// Replaces the value of member `key` of the object `object_text` with `value_json`, everything
// else byte for byte; false (nothing changed) when there is no such member. Same precondition
// as member_span.
bool replace_member(std::string& object_text, std::string_view key, std::string_view value_json);

// One pass over the top-level members of an object text: for each key in `keys`, the raw
// text of that member in `found` at the same position (nullopt when absent, or every one when
// the text is not an object). Same precondition and key comparison as member_span; the first
// occurrence of a key wins, and the scan stops once every key is found. A frame is scanned
// once for all its parts instead of once per part.
void scan_members(std::string_view object_text, std::span<const std::string_view> keys,
                  std::span<std::optional<std::string_view>> found);

// The value of a JSON string literal `literal` (with its quotes): a view into the literal
// when it holds no escape, else decoded into `scratch`. nullopt when it is not a string.
std::optional<std::string_view> string_value(std::string_view literal, std::string& scratch);

// The text of a JSON value with surrounding whitespace removed.
std::string_view trim(std::string_view text);

// Replaces CR and LF outside JSON strings with spaces, making valid JSON text single-line
// (a raw line break inside a string is invalid JSON and is left for the parser to refuse).
void single_line(std::string& text);

// Serialise a string as a JSON string literal (with quotes).
std::string quote(std::string_view s);

}  // namespace sluice::core::json

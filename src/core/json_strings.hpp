#pragma once
// Long JSON strings handled in bulk, beside Boost.JSON (core/json.cpp): Boost.JSON's parser
// goes byte by byte through the rest of a string once it meets an escape, and escapes are
// common in the large texts tools take and return (a newline is one). validate() and
// parse_strict() give Boost.JSON a skeleton of the text, each long string in it emptied,
// once that string's content is checked here (escapes, no raw control character, UTF-8 as
// RFC 3629 has it); parse_strict() puts each long value's decoded text in its place.
//
// Threading: pure functions. Guarantees: what is judged here is judged as Boost.JSON judges
// it (unit-tested over every kind of string content; the rpc fuzz target compares the two).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::core::json {

// Strings of at least this many bytes (between the quotes) are taken out.
inline constexpr std::size_t kLongStringBytes = 256;

struct LongStrings {
  enum class Take { values, keys_and_values };
  struct Value {
    std::size_t ordinal;    // among the string values of the text (keys are not values)
    std::string_view body;  // as written, between the quotes
  };
  std::string skeleton;       // the text with each taken string emptied; empty: none taken
  std::vector<Value> values;  // the taken string values, in text order
  bool doubtful = false;      // a string is not valid or not ended: judge the whole text
};

// The skeleton of `text` (any text: nothing is assumed of it). A string found where a JSON
// string can start (a quote outside strings) whose content is not valid makes it doubtful.
LongStrings take_out_long_strings(std::string_view text, LongStrings::Take take);

// The index of the first byte at or after `i` that is not JSON whitespace (space, tab, line
// feed, carriage return).
std::size_t skip_whitespace(std::string_view text, std::size_t i);

// The decoded text of a string body that take_out_long_strings found valid.
void decode_string(std::string_view body, std::string& out);

}  // namespace sluice::core::json

#pragma once
// Value descriptions for error text: the structure of a value, never the value itself
// ("a string of 12 characters", "an object with 3 keys", "a number", "an array of 2 items").
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sluice::core {

std::string describe_value(const boost::json::value& v);

// describe_value of `text` as a JSON string: "a string of 12 characters".
std::string describe_text(std::string_view text);

// "a string", "an object", ... (the JSON kind with its article).
std::string describe_kind(const boost::json::value& v);

// A name that may be shown as it is: 1 to 128 of A-Z a-z 0-9 _ . - (a server or tool name as
// MCP and .mcp.json spell them; "server::tool" is two such names). Names are not secrets;
// anything else is described, not shown.
bool is_plain_name(std::string_view name);

// `name` itself when it is plain, else its description ("a string of 12 characters").
std::string show_name(std::string_view name);

// Up to `max` of `candidates` closest to `name` by edit distance (close enough to be a typo:
// at most a third of the longer name, at least 1, at most 3 edits), closest first.
// Empty when `name` is not plain.
std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string_view>& candidates,
                                       std::size_t max = 3);

// " (did you mean a, b?)" or "" : closest_names as a clause for an error message.
std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates);

}  // namespace sluice::core

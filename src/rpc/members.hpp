#pragma once
// One pass over the top-level members of a JSON object text, recording the raw text of the
// members asked for. A frame is scanned once for all of its parts instead of once per part.
//
// Precondition: the text is one valid JSON document (a strict parse or a validation already
// accepted it). The first occurrence of a key wins; keys are compared after unescaping.
// Pure functions of their arguments: no state, any thread.
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace sluice::rpc {

// For each key in `keys`, the raw text of that member of the object (trimmed), in `found` at
// the same position; nullopt when absent, or every one when the text is not an object.
void scan_members(std::string_view object_text, std::span<const std::string_view> keys,
                  std::span<std::optional<std::string_view>> found);

// The value of a JSON string literal `literal` (with its quotes): a view into the literal
// when it holds no escape, else decoded into `scratch`. nullopt when it is not a string.
std::optional<std::string_view> string_value(std::string_view literal, std::string& scratch);

}  // namespace sluice::rpc

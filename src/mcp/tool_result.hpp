#pragma once
// The CallToolResult texts sluice builds itself (the meta-tools' answers, its refusals, the
// demo server's results): one builder, so that every one has the same shape.
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace sluice::mcp {

// {"content":[{"type":"text","text":<text>}]} (with "isError":true when `is_error`)
std::string text_result(std::string_view text, bool is_error = false);
// {"content":[{"type":"text","text":<text>}],"isError":true}
inline std::string error_result(std::string_view text) { return text_result(text, true); }
// {"content":[{"type":"text","text":<text>}],"structuredContent":<structured_json>}
// (`structured_json` is spliced as it is: it must be one JSON object's text).
std::string structured_result(std::string_view text, std::string_view structured_json);
// The same with `structured` serialised once, as both the text and the structured content.
std::string structured_result(const boost::json::value& structured);

}  // namespace sluice::mcp

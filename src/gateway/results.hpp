#pragma once
// Builders for MCP CallToolResult texts that sluice itself produces.
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace sluice::gateway {

// {"content":[{"type":"text","text":<json>}],"structuredContent":<json>}
std::string structured_result(const boost::json::value& structured);
// {"content":[{"type":"text","text":<text>}],"isError":true}
std::string error_result(std::string_view text);

// A downstream's error message, passed on only when short and printable; else a fixed
// phrase naming its size.
std::string safe_peer_message(std::string_view message);

}  // namespace sluice::gateway

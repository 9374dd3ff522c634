#pragma once
// What sluice passes on of a downstream's own error text (the CallToolResult builders are
// mcp/tool_result.hpp).
#include <string>
#include <string_view>

namespace sluice::gateway {

// A downstream's error message, passed on only when short and printable; else a fixed
// phrase naming its size.
std::string safe_peer_message(std::string_view message);

}  // namespace sluice::gateway

#pragma once
// The HTTP headers of the 2026-07-28 revision, both ways: a header value's plain or Base64 form
// (`=?base64?...?=`, for a value that is not plain visible ASCII), which params member a
// method's Mcp-Name repeats, and the headers sluice sends with a request of that revision to a
// remote server (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-<name>). The server side
// (http_stateless.cpp) checks them; the client side (remote_mcp.cpp) sends them.
// Pure functions; any thread.
#include "mcp/era.hpp"
#include "transport/http_client.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace sluice::transport {

// A header value as meant: the Base64 form decoded (nullopt: not valid Base64), any other value
// as it is.
std::optional<std::string> decode_header_value(std::string_view value);
// A header value as sent: plain when it is visible ASCII (spaces inside allowed) with no
// whitespace at either end, else the Base64 form of its UTF-8.
std::string encode_header_value(std::string_view text);

// The params member a method's Mcp-Name header repeats: tools/call and prompts/get their name,
// resources/read its uri, tasks/get, tasks/update and tasks/cancel their taskId (the tasks
// extension); empty for the other methods.
std::string_view name_member(std::string_view method);

// Adds to `headers` what an outgoing frame (method `method`, a request when `is_request`,
// its params `params_text` when it has them) says in headers in the 2026-07-28 revision, and
// returns whether it did: a request whose params' _meta names that version gets
// MCP-Protocol-Version (replacing one already there), Mcp-Method, Mcp-Name, and for
// tools/call the Mcp-Param-<name> headers of the tool's x-mcp-header arguments given and not
// null (`params`, may be null); a notification gets the first two when `modern` (the server
// is spoken to in that revision).
bool add_era_headers(HttpFields& headers, std::optional<std::string_view> params_text,
                     std::string_view method, bool is_request, bool modern,
                     const mcp::ParamHeaders* params);

}  // namespace sluice::transport
